//! Where each I/O goes and whether it reads or writes.
//!
//! Offsets are block indices inside a worker's region, turned into byte offsets by the
//! caller. Sequential workers each walk their own stripe of the region (so several
//! sequential workers do not re-read the same blocks from a device cache); random
//! workers draw over the whole region from the configured distribution.

use rand::{Rng, RngCore, SeedableRng};
use rand_distr::Distribution as _;
use rand_xoshiro::Xoshiro256PlusPlus;
use spec::{Distribution, RwMode};

/// Deterministic per-worker RNG: the job seed mixed with job and worker indices.
pub fn worker_rng(seed: u64, job: usize, worker: usize) -> Xoshiro256PlusPlus {
    let mix =
        seed ^ (job as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (worker as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    Xoshiro256PlusPlus::seed_from_u64(mix)
}

/// fio's 64-bit hash (golden-ratio multiply) used to scatter zipf/pareto ranks so the hot
/// blocks are not all at the start of the region.
#[inline]
fn scatter(rank: u64, n: u64) -> u64 {
    rank.wrapping_mul(0x61C8_8646_80B5_83EB).rotate_left(31) % n
}

#[inline]
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    // Lemire's multiply-high reduction: unbiased enough for n << 2^64, no division.
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

enum Pattern {
    Seq { start: u64, len: u64, next: u64 },
    Uniform { n: u64 },
    Zipf { n: u64, z: rand_distr::Zipf<f64> },
    Pareto { n: u64, pow: f64 },
    Zoned { zones: Vec<(u64, u64, u64)> }, // (cumulative ops threshold out of 2^32, first block, blocks)
}

/// Generator of (direction, block index) pairs for one worker.
pub struct OffsetGen {
    rng: Xoshiro256PlusPlus,
    pattern: Pattern,
    /// Reads happen when a 32-bit draw is below this threshold.
    read_threshold: u64,
    always: Option<bool>,
}

impl OffsetGen {
    /// `nblocks`: blocks in the job's region; `worker`/`workers` select the stripe for
    /// sequential modes.
    pub fn new(
        rw: RwMode,
        mix: u8,
        dist: &Distribution,
        nblocks: u64,
        worker: usize,
        workers: usize,
        rng: Xoshiro256PlusPlus,
    ) -> Self {
        let n = nblocks.max(1);
        let pattern = if !rw.is_random() {
            let w = workers.max(1) as u64;
            let i = worker as u64;
            let start = n * i / w;
            let end = (n * (i + 1) / w).max(start + 1).min(n);
            let len = end.saturating_sub(start).max(1);
            Pattern::Seq { start, len, next: 0 }
        } else {
            match dist {
                Distribution::Uniform => Pattern::Uniform { n },
                Distribution::Zipf { theta } => match rand_distr::Zipf::new(n as f64, *theta) {
                    Ok(z) => Pattern::Zipf { n, z },
                    Err(_) => Pattern::Uniform { n },
                },
                Distribution::Pareto { h } => Pattern::Pareto { n, pow: h.ln() / (1.0 - h).ln() },
                Distribution::Zoned { zones } => {
                    let mut out = Vec::with_capacity(zones.len());
                    let (mut ops_acc, mut area_acc) = (0.0f64, 0.0f64);
                    for z in zones {
                        let first = ((area_acc / 100.0) * n as f64) as u64;
                        area_acc += z.area_pct;
                        let last = (((area_acc / 100.0) * n as f64) as u64).min(n);
                        ops_acc += z.ops_pct;
                        let thr = ((ops_acc / 100.0) * (1u64 << 32) as f64) as u64;
                        out.push((thr, first.min(n - 1), last.saturating_sub(first).max(1)));
                    }
                    if let Some(last) = out.last_mut() {
                        last.0 = 1 << 32; // rounding must never leave a draw unassigned
                    }
                    Pattern::Zoned { zones: out }
                }
            }
        };
        let read_pct = rw.read_pct(mix) as u64;
        let always = match read_pct {
            100 => Some(true),
            0 => Some(false),
            _ => None,
        };
        Self { rng, pattern, read_threshold: (read_pct << 32) / 100, always }
    }

    /// True when the next I/O is a read.
    #[inline]
    pub fn next_is_read(&mut self) -> bool {
        match self.always {
            Some(r) => r,
            None => (self.rng.next_u32() as u64) < self.read_threshold,
        }
    }

    /// The next block index. Per I/O: sequential and uniform draws are inlined into the
    /// worker loop; the skewed distributions, which cost tens of nanoseconds anyway, are a call.
    #[inline(always)]
    pub fn next_block(&mut self) -> u64 {
        match &mut self.pattern {
            Pattern::Seq { start, len, next } => {
                let b = *start + *next;
                *next += 1;
                if *next >= *len {
                    *next = 0;
                }
                b
            }
            Pattern::Uniform { n } => below(&mut self.rng, *n),
            _ => self.next_skewed(),
        }
    }

    /// [`next_block`](Self::next_block) for zipf, pareto and zoned (hot-set) distributions.
    #[inline(never)]
    fn next_skewed(&mut self) -> u64 {
        match &mut self.pattern {
            Pattern::Seq { .. } | Pattern::Uniform { .. } => unreachable!("drawn inline by next_block"),
            Pattern::Zipf { n, z } => {
                let rank = z.sample(&mut self.rng) as u64; // 1..=n
                scatter(rank.saturating_sub(1), *n)
            }
            Pattern::Pareto { n, pow } => {
                let r: f64 = self.rng.random::<f64>();
                let rank = ((*n - 1) as f64 * r.powf(*pow)) as u64;
                scatter(rank, *n)
            }
            Pattern::Zoned { zones } => {
                let d = self.rng.next_u32() as u64;
                let mut chosen = zones[zones.len() - 1];
                for z in zones.iter() {
                    if d < z.0 {
                        chosen = *z;
                        break;
                    }
                }
                chosen.1 + below(&mut self.rng, chosen.2)
            }
        }
    }

    /// Random draw used by callers that need one (e.g. write tags).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spec::Zone;

    fn gen(rw: RwMode, dist: Distribution, n: u64) -> OffsetGen {
        OffsetGen::new(rw, 70, &dist, n, 0, 1, worker_rng(1, 0, 0))
    }

    #[test]
    fn sequential_walks_and_wraps() {
        let mut g = gen(RwMode::Read, Distribution::Uniform, 3);
        let v: Vec<u64> = (0..7).map(|_| g.next_block()).collect();
        assert_eq!(v, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn sequential_workers_get_disjoint_stripes() {
        let mut a = OffsetGen::new(RwMode::Read, 0, &Distribution::Uniform, 10, 0, 2, worker_rng(1, 0, 0));
        let mut b = OffsetGen::new(RwMode::Read, 0, &Distribution::Uniform, 10, 1, 2, worker_rng(1, 0, 1));
        let va: Vec<u64> = (0..5).map(|_| a.next_block()).collect();
        let vb: Vec<u64> = (0..5).map(|_| b.next_block()).collect();
        assert_eq!(va, [0, 1, 2, 3, 4]);
        assert_eq!(vb, [5, 6, 7, 8, 9]);
    }

    #[test]
    fn all_distributions_stay_in_range() {
        let n = 1000;
        for d in [
            Distribution::Uniform,
            Distribution::Zipf { theta: 1.2 },
            Distribution::Pareto { h: 0.2 },
            Distribution::Zoned {
                zones: vec![Zone { ops_pct: 90.0, area_pct: 10.0 }, Zone { ops_pct: 10.0, area_pct: 90.0 }],
            },
        ] {
            let mut g = gen(RwMode::RandRead, d, n);
            for _ in 0..100_000 {
                assert!(g.next_block() < n);
            }
        }
    }

    #[test]
    fn hotset_sends_the_stated_share_to_the_hot_area() {
        let n = 10_000;
        let zones = vec![Zone { ops_pct: 90.0, area_pct: 10.0 }, Zone { ops_pct: 10.0, area_pct: 90.0 }];
        let mut g = gen(RwMode::RandRead, Distribution::Zoned { zones }, n);
        let draws = 200_000;
        let hot = (0..draws).filter(|_| g.next_block() < n / 10).count();
        let share = hot as f64 / draws as f64;
        assert!((share - 0.9).abs() < 0.01, "hot share {share}");
    }

    #[test]
    fn zipf_is_skewed() {
        let n = 10_000;
        let mut g = gen(RwMode::RandRead, Distribution::Zipf { theta: 1.2 }, n);
        let mut counts = vec![0u32; n as usize];
        for _ in 0..100_000 {
            counts[g.next_block() as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top1pct: u32 = counts[..100].iter().sum();
        assert!(top1pct > 50_000, "top 1% of blocks got {top1pct} of 100000");
    }

    #[test]
    fn mix_matches_read_share() {
        let mut g = gen(RwMode::RandRw, Distribution::Uniform, 100);
        let reads = (0..100_000).filter(|_| g.next_is_read()).count();
        assert!((reads as f64 / 100_000.0 - 0.70).abs() < 0.01);
    }

    #[test]
    fn same_seed_same_sequence() {
        let mut a = gen(RwMode::RandRead, Distribution::Uniform, 1 << 30);
        let mut b = gen(RwMode::RandRead, Distribution::Uniform, 1 << 30);
        for _ in 0..1000 {
            assert_eq!(a.next_block(), b.next_block());
        }
    }
}
