//! Synthetic block traces: uniform, Zipf and hot-set access over `blocks` fixed-size blocks,
//! deterministic for a given seed.
//!
//! ```
//! use diskmeter_trace::{parse_dist, SynthSpec};
//! let spec = SynthSpec { dist: parse_dist("zipf:0.9")?, blocks: 1 << 20, requests: 1000, ..SynthSpec::default() };
//! let trace: Vec<_> = spec.iter()?.collect();
//! assert_eq!(trace.len(), 1000);
//! # Ok::<(), diskmeter_trace::TraceError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_distr::Distribution;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::TraceError;
use crate::request::{Op, Request};

/// Which blocks the requests go to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Every block equally likely.
    Uniform,
    /// Zipf with exponent θ ≥ 0 over block ranks: rank k (1-based) has probability
    /// ∝ k^-θ. θ = 0 is uniform; θ ≈ 0.9–1.0 is typical of real workloads.
    Zipf(f64),
    /// `ops_pct` % of requests go uniformly to the first `area_pct` % of the blocks, the
    /// rest uniformly to the remainder (e.g. 90 % of the I/O to the first 9.5 GB).
    Hotset {
        /// Share of the requests that hit the hot area, in percent.
        ops_pct: f64,
        /// Size of the hot area, in percent of the blocks.
        area_pct: f64,
    },
}

const DIST_FORMS: &str = "uniform, zipf:THETA (e.g. zipf:0.9) or hotset:OPS%/AREA% (e.g. hotset:90/10)";

/// Parses `uniform`, `zipf:0.9` or `hotset:90/10` (percent signs optional: `hotset:90%/9.5%`).
pub fn parse_dist(s: &str) -> Result<Dist, TraceError> {
    let s = s.trim();
    let (head, arg) = match s.split_once(':') {
        Some((h, a)) => (h.trim().to_ascii_lowercase(), Some(a.trim())),
        None => (s.to_ascii_lowercase(), None),
    };
    let bad = |m: String| TraceError::Invalid(format!("distribution {s:?}: {m}"));
    let dist = match (head.as_str(), arg) {
        ("uniform", None) => Dist::Uniform,
        ("zipf", Some(theta)) => {
            let t: f64 = theta.parse().map_err(|_| bad(format!("theta {theta:?} is not a number (e.g. zipf:0.9)")))?;
            Dist::Zipf(t)
        }
        ("zipf", None) => return Err(bad("zipf needs its exponent, e.g. zipf:0.9".to_string())),
        ("hotset", Some(a)) => {
            let Some((ops, area)) = a.split_once('/') else {
                return Err(bad(format!("expected hotset:OPS%/AREA%, e.g. hotset:90/10, got {a:?}")));
            };
            let pct = |what: &str, v: &str| -> Result<f64, TraceError> {
                let v = v.trim();
                v.trim_end_matches('%')
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| bad(format!("{what} {v:?} is not a percentage (e.g. hotset:90/10)")))
            };
            Dist::Hotset { ops_pct: pct("OPS%", ops)?, area_pct: pct("AREA%", area)? }
        }
        ("hotset", None) => return Err(bad("hotset needs OPS%/AREA%, e.g. hotset:90/10".to_string())),
        ("uniform", Some(_)) => return Err(bad("uniform takes no argument".to_string())),
        _ => return Err(TraceError::Invalid(format!("unknown distribution {s:?}: expected {DIST_FORMS}"))),
    };
    dist.validate().map_err(bad)?;
    Ok(dist)
}

impl Dist {
    fn validate(&self) -> Result<(), String> {
        match *self {
            Dist::Uniform => Ok(()),
            Dist::Zipf(t) if t.is_finite() && t >= 0.0 => Ok(()),
            Dist::Zipf(t) => Err(format!("zipf theta must be a finite number ≥ 0, got {t}")),
            Dist::Hotset { ops_pct, area_pct } => {
                if !(0.0..=100.0).contains(&ops_pct) {
                    Err(format!("hot-set OPS% must be within 0–100, got {ops_pct}"))
                } else if !(area_pct > 0.0 && area_pct <= 100.0) {
                    Err(format!("hot-set AREA% must be within (0, 100], got {area_pct}"))
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Uniform => f.write_str("uniform"),
            Dist::Zipf(t) => write!(f, "zipf:{t}"),
            Dist::Hotset { ops_pct, area_pct } => write!(f, "hotset:{ops_pct}/{area_pct}"),
        }
    }
}

impl FromStr for Dist {
    type Err = TraceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_dist(s)
    }
}

/// A synthetic trace: `requests` requests of `block_size` bytes at block-aligned offsets in
/// `[0, blocks × block_size)`, on device 0, evenly spaced in time at `iops`.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthSpec {
    /// Access distribution over the blocks.
    pub dist: Dist,
    /// Number of distinct blocks (the working area is `blocks × block_size` bytes).
    pub blocks: u64,
    /// Request and block size in bytes (default 4096).
    pub block_size: u32,
    /// Number of requests.
    pub requests: u64,
    /// Share of reads in percent (0–100); the rest are writes.
    pub read_pct: u8,
    /// Request rate: request `i` is at `t = i / iops` seconds.
    pub iops: f64,
    /// Seed: the same spec and seed always give the same trace.
    pub seed: u64,
    /// Zipf only: scatter the popularity ranks over the blocks with a seeded bijective hash,
    /// so hot blocks are spread over the device (default). `false` keeps rank k at block
    /// k − 1: the hottest blocks are contiguous at the start.
    pub scatter: bool,
}

impl Default for SynthSpec {
    fn default() -> Self {
        SynthSpec {
            dist: Dist::Uniform,
            blocks: 1 << 18,
            block_size: 4096,
            requests: 1_000_000,
            read_pct: 100,
            iops: 1000.0,
            seed: 0,
            scatter: true,
        }
    }
}

/// A [`SynthSpec`] field, as named by [`SynthSpec::check`]'s errors (so a caller can point at
/// its own name for it, e.g. a command-line option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthParam {
    /// [`SynthSpec::dist`].
    Dist,
    /// [`SynthSpec::blocks`].
    Blocks,
    /// [`SynthSpec::block_size`].
    BlockSize,
    /// [`SynthSpec::read_pct`].
    ReadPct,
    /// [`SynthSpec::iops`].
    Iops,
}

impl SynthSpec {
    /// Checks every parameter, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), TraceError> {
        self.check().map_err(|(_, e)| e)
    }

    /// [`validate`](SynthSpec::validate), also telling which field is wrong. When the working
    /// area (`blocks × block_size`) overflows, the field is [`SynthParam::Blocks`].
    pub fn check(&self) -> Result<(), (SynthParam, TraceError)> {
        let bad = |p: SynthParam, m: String| Err((p, TraceError::Invalid(m)));
        if self.blocks == 0 {
            return bad(SynthParam::Blocks, "synthetic trace: blocks must be ≥ 1".to_string());
        }
        if self.block_size == 0 {
            return bad(SynthParam::BlockSize, "synthetic trace: block size must be ≥ 1 byte".to_string());
        }
        if self.blocks.checked_mul(u64::from(self.block_size)).is_none() {
            return bad(
                SynthParam::Blocks,
                format!("synthetic trace: {} blocks of {} bytes exceed 2^64 bytes", self.blocks, self.block_size),
            );
        }
        if self.read_pct > 100 {
            return bad(
                SynthParam::ReadPct,
                format!("synthetic trace: read percentage must be within 0–100, got {}", self.read_pct),
            );
        }
        if !(self.iops.is_finite() && self.iops > 0.0) {
            return bad(
                SynthParam::Iops,
                format!("synthetic trace: iops must be a positive number, got {}", self.iops),
            );
        }
        self.dist.validate().map_err(|m| (SynthParam::Dist, TraceError::Invalid(format!("synthetic trace: {m}"))))
    }

    /// The requests, as an iterator (validates the spec first).
    pub fn iter(&self) -> Result<Synth, TraceError> {
        self.validate()?;
        let sampler = match self.dist {
            Dist::Uniform => Sampler::Uniform,
            Dist::Zipf(theta) => {
                let z = rand_distr::Zipf::new(self.blocks as f64, theta)
                    .map_err(|e| TraceError::Invalid(format!("synthetic trace: zipf: {e}")))?;
                let perm = self.scatter.then(|| Feistel::new(self.blocks, self.seed));
                Sampler::Zipf(z, perm)
            }
            Dist::Hotset { ops_pct, area_pct } => {
                let hot = ((self.blocks as f64) * area_pct / 100.0).round() as u64;
                Sampler::Hotset { hot: hot.clamp(1, self.blocks), p_hot: ops_pct / 100.0 }
            }
        };
        Ok(Synth {
            rng: Xoshiro256PlusPlus::seed_from_u64(self.seed),
            sampler,
            blocks: self.blocks,
            block_size: self.block_size,
            read_pct: self.read_pct,
            ns_per_req: 1e9 / self.iops,
            i: 0,
            n: self.requests,
        })
    }
}

enum Sampler {
    Uniform,
    Zipf(rand_distr::Zipf<f64>, Option<Feistel>),
    Hotset { hot: u64, p_hot: f64 },
}

/// Iterator over a synthetic trace's requests (see [`SynthSpec::iter`]).
pub struct Synth {
    rng: Xoshiro256PlusPlus,
    sampler: Sampler,
    blocks: u64,
    block_size: u32,
    read_pct: u8,
    ns_per_req: f64,
    i: u64,
    n: u64,
}

impl Synth {
    #[inline]
    fn block(&mut self) -> u64 {
        let rng = &mut self.rng;
        match &self.sampler {
            Sampler::Uniform => rng.random_range(0..self.blocks),
            Sampler::Zipf(z, perm) => {
                let rank = (z.sample(rng) as u64).saturating_sub(1).min(self.blocks - 1);
                match perm {
                    Some(p) => p.apply(rank),
                    None => rank,
                }
            }
            Sampler::Hotset { hot, p_hot } => {
                if *hot >= self.blocks || rng.random::<f64>() < *p_hot {
                    rng.random_range(0..*hot)
                } else {
                    rng.random_range(*hot..self.blocks)
                }
            }
        }
    }
}

impl Iterator for Synth {
    type Item = Request;

    #[inline]
    fn next(&mut self) -> Option<Request> {
        if self.i >= self.n {
            return None;
        }
        let block = self.block();
        let op = if self.rng.random_range(0..100u8) < self.read_pct { Op::Read } else { Op::Write };
        let t_ns = (self.i as f64 * self.ns_per_req).round() as u64;
        self.i += 1;
        Some(Request { t_ns, offset: block * u64::from(self.block_size), len: self.block_size, op, dev: 0 })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.n - self.i).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Synth {}

/// A seeded bijection of `[0, n)`: a 4-round balanced Feistel network on the smallest
/// even-bit power of two ≥ n, cycle-walking values that land outside `[0, n)` (fewer than
/// 4 steps on average).
#[derive(Debug, Clone)]
struct Feistel {
    n: u64,
    half: u32,
    mask: u64,
    keys: [u64; 4],
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Feistel {
    fn new(n: u64, seed: u64) -> Feistel {
        let bits = (64 - n.saturating_sub(1).leading_zeros()).max(2);
        let half = bits.div_ceil(2);
        let mut k = splitmix(seed ^ 0x5EED_F00D);
        let mut keys = [0u64; 4];
        for key in &mut keys {
            *key = k;
            k = splitmix(k);
        }
        Feistel { n, half, mask: (1u64 << half) - 1, keys }
    }

    #[inline]
    fn round_trip(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half, x & self.mask);
        for k in self.keys {
            let f = splitmix(r ^ k) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half) | r
    }

    #[inline]
    fn apply(&self, x: u64) -> u64 {
        let mut y = self.round_trip(x);
        while y >= self.n {
            y = self.round_trip(y);
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feistel_is_a_bijection() {
        for n in [1u64, 2, 3, 5, 16, 17, 1000, 4097] {
            let p = Feistel::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} twice");
                seen[y as usize] = true;
            }
        }
        let big = Feistel::new(u64::MAX, 1);
        assert_ne!(big.apply(0), big.apply(1));
    }

    #[test]
    fn dists_parse() {
        assert_eq!(parse_dist("uniform").unwrap(), Dist::Uniform);
        assert_eq!(parse_dist("zipf:0.9").unwrap(), Dist::Zipf(0.9));
        assert_eq!(parse_dist("hotset:90/10").unwrap(), Dist::Hotset { ops_pct: 90.0, area_pct: 10.0 });
        assert_eq!(parse_dist("HotSet:90%/9.5%").unwrap(), Dist::Hotset { ops_pct: 90.0, area_pct: 9.5 });
        for (s, want) in [
            ("zipf", "needs its exponent"),
            ("zipf:x", "theta \"x\" is not a number"),
            ("zipf:-1", "≥ 0"),
            ("hotset:90", "expected hotset:OPS%/AREA%"),
            ("hotset:190/10", "OPS% must be within 0–100"),
            ("hotset:90/0", "AREA% must be within (0, 100]"),
            ("pareto", "unknown distribution \"pareto\""),
        ] {
            let e = parse_dist(s).unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
        }
        for s in ["uniform", "zipf:0.9", "hotset:90/9.5"] {
            assert_eq!(parse_dist(s).unwrap().to_string(), s);
        }
    }
}
