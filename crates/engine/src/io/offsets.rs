//! Where each I/O goes and whether it reads or writes.
//!
//! Offsets are bytes inside a worker's region, each with the I/O's length (one size, or
//! fio's per-direction `bs`, `bssplit` and `bsrange`). Sequential workers each walk their own stripe of the region (so several
//! sequential workers do not re-read the same blocks from a device cache); random
//! workers draw over the whole region from the configured distribution.

use crate::error::Invalid;
use crate::io::files::{FileGen, FileWalk};
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
    /// Byte offsets of this worker's stripe: `[start, start + len)`; `next` is the position
    /// of the next I/O inside it.
    Seq {
        start: u64,
        len: u64,
        next: u64,
    },
    Uniform {
        n: u64,
    },
    Zipf {
        n: u64,
        z: rand_distr::Zipf<f64>,
    },
    Pareto {
        n: u64,
        pow: f64,
    },
    /// (cumulative ops threshold out of 2^32, first block, blocks)
    Zoned {
        zones: Vec<(u64, u64, u64)>,
    },
    /// A gaussian over the blocks (fio `normal`); draws outside the region are drawn again.
    Normal {
        n: u64,
        d: rand_distr::Normal<f64>,
    },
    /// Sequential with fio's offset modifier: `add` bytes after each I/O (negative: backwards);
    /// `next` is the position of the next I/O in the stripe.
    SeqStep {
        start: u64,
        len: u64,
        next: i64,
        add: i64,
    },
    /// A random pattern with fio's `rw=MODE:N`, `rw_sequencer` and `percentage_random`.
    Modified(Box<Modified>),
    /// fio's `zonemode=strided`: `inner` walks a zone of `range` bytes starting at `base`
    /// until `size` bytes are done there, then the zone moves `step` bytes on.
    Strided(Box<Strided>),
    /// A job over several files: each draw is their walk's (never the inlined path's).
    Files,
}

struct Strided {
    inner: Pattern,
    base: u64,
    range: u64,
    step: u64,
    size: u64,
    moved: u64,
}

/// How a random walk is changed by fio's `rw=MODE:N`, `rw_sequencer` and `percentage_random`.
struct Modified {
    inner: Pattern,
    /// A new random offset every this many I/Os.
    every: u32,
    /// I/Os left before the next random offset.
    left: u32,
    /// The I/Os between repeat the random offset instead of following it.
    identical: bool,
    /// An I/O due for a random offset gets one when a 32-bit draw is below this (2^32: always).
    random_thr: u64,
    last_off: u64,
    last_end: u64,
}

/// fio's offset modifiers of a job (see [`OffsetGen::walk`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Walk {
    /// `rw=MODE:N`: bytes added after each sequential I/O, or I/Os per random offset.
    pub modifier: i64,
    /// `rw_sequencer=identical`.
    pub identical: bool,
    /// `percentage_random` below 100.
    pub pct_random: Option<u8>,
}

/// fio's `zoned_abs` over `n` blocks of `unit` bytes: zones from the region's start; zones the
/// region cuts off lose their share to the ones that remain, in proportion.
fn zoned_abs(zones: &[spec::ZoneAbs], unit: u64, n: u64) -> Pattern {
    let mut kept = Vec::new();
    let mut first = 0u64;
    for z in zones {
        if first >= n {
            break;
        }
        let blocks = (z.bytes / unit).max(1).min(n - first);
        kept.push((z.ops_pct, first, blocks));
        first += blocks;
    }
    let total: f64 = kept.iter().map(|k| k.0).sum();
    let mut acc = 0.0;
    let mut out: Vec<(u64, u64, u64)> = kept
        .iter()
        .map(|&(ops, first, blocks)| {
            acc += ops;
            let thr = if total > 0.0 { (acc / total * (1u64 << 32) as f64) as u64 } else { 1 << 32 };
            (thr, first, blocks)
        })
        .collect();
    if let Some(last) = out.last_mut() {
        last.0 = 1 << 32;
    }
    if out.is_empty() {
        return Pattern::Uniform { n };
    }
    Pattern::Zoned { zones: out }
}

/// A block index drawn from a random pattern.
fn draw(pattern: &mut Pattern, rng: &mut Xoshiro256PlusPlus) -> u64 {
    match pattern {
        Pattern::Uniform { n } => below(rng, *n),
        Pattern::Zipf { n, z } => {
            let rank = z.sample(rng) as u64; // 1..=n
            scatter(rank.saturating_sub(1), *n)
        }
        Pattern::Pareto { n, pow } => {
            let r: f64 = rng.random::<f64>();
            let rank = ((*n - 1) as f64 * r.powf(*pow)) as u64;
            scatter(rank, *n)
        }
        Pattern::Zoned { zones } => {
            let d = rng.next_u32() as u64;
            let mut chosen = zones[zones.len() - 1];
            for z in zones.iter() {
                if d < z.0 {
                    chosen = *z;
                    break;
                }
            }
            chosen.1 + below(rng, chosen.2)
        }
        Pattern::Normal { n, d } => {
            let top = *n as f64;
            for _ in 0..64 {
                let x = d.sample(rng);
                if x >= 0.0 && x < top {
                    return x as u64;
                }
            }
            (d.mean().clamp(0.0, top - 1.0)) as u64 // a deviation far wider than the region
        }
        Pattern::Seq { .. } | Pattern::SeqStep { .. } | Pattern::Modified(_) | Pattern::Strided(_) | Pattern::Files => {
            0
        }
    }
}

/// A random offset aligned for its direction and moved back so the I/O fits.
fn place(lens: &IoLens, region: u64, read: bool, off: u64, len: u32) -> u64 {
    let IoLens::Var(v) = lens else { return off.min(region - u64::from(len)) };
    let a = v[usize::from(!read)].align;
    let mut o = off / a * a;
    if o + u64::from(len) > region {
        o = (region - u64::from(len)) / a * a;
    }
    o
}

/// How long each I/O is.
#[derive(Debug, Clone, PartialEq)]
pub enum IoLens {
    /// Every I/O this many bytes.
    One(u32),
    /// Per direction (read, write), with fio's alignment of random offsets.
    Var(Box<[LenDraw; 2]>),
}

/// One direction's lengths and random-offset alignment.
#[derive(Debug, Clone, PartialEq)]
pub struct LenDraw {
    pub pick: LenPick,
    /// Random offsets are multiples of this.
    pub align: u64,
    /// Index of this direction's first size in [`IoLens::table`].
    pub base: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LenPick {
    Fixed(u32),
    /// `(cumulative threshold out of 2^32, length)`: the first entry above a 32-bit draw.
    Split(Vec<(u64, u32)>),
    /// `min + step * k`, `k` uniform in `0..steps`.
    Range {
        min: u32,
        step: u32,
        steps: u32,
    },
}

/// Most distinct lengths one direction may draw (a range with a finer step is refused).
pub const MAX_LENS: u64 = 65_536;

impl LenPick {
    fn count(&self) -> u32 {
        match self {
            Self::Fixed(_) => 1,
            Self::Split(parts) => parts.len() as u32,
            Self::Range { steps, .. } => *steps,
        }
    }
    fn len_at(&self, i: u32) -> u32 {
        match self {
            Self::Fixed(l) => *l,
            Self::Split(parts) => parts[i as usize].1,
            Self::Range { min, step, .. } => min + step * i,
        }
    }
    fn min(&self) -> u32 {
        (0..self.count()).map(|i| self.len_at(i)).min().unwrap_or(1)
    }
}

impl IoLens {
    /// The lengths of a job: `bs` for every I/O, or the job's variable block sizes. `unit` is
    /// the step of `bs_unaligned` ranges (the direct-I/O block, or 1 for buffered I/O).
    /// The error: a range of more than [`MAX_LENS`] sizes.
    pub fn for_job(bs: u64, sizes: Option<&spec::BlockSizes>, unit: u64) -> Result<Self, Invalid> {
        let Some(b) = sizes else { return Ok(Self::One(bs as u32)) };
        let mut base = 0u32;
        let mut dir = |d: &spec::DirSizes| -> Result<LenDraw, Invalid> {
            let pick = match &d.sizes {
                spec::SizeChoice::Fixed { bs } => LenPick::Fixed(*bs as u32),
                spec::SizeChoice::Split { parts } => {
                    let mut acc = 0.0f64;
                    let mut out: Vec<(u64, u32)> = parts
                        .iter()
                        .map(|p| {
                            acc += p.pct;
                            (((acc / 100.0) * (1u64 << 32) as f64) as u64, p.bs as u32)
                        })
                        .collect();
                    // Rounding must never leave a draw unassigned: the last size with a share
                    // takes everything up to the top.
                    let last = parts.iter().rposition(|p| p.pct > 0.0).unwrap_or(parts.len().saturating_sub(1));
                    if let Some(p) = out.get_mut(last) {
                        p.0 = 1 << 32;
                    }
                    LenPick::Split(out)
                }
                spec::SizeChoice::Range { min, max } => {
                    let step = if b.unaligned { unit.max(1) } else { *min };
                    let steps = if b.unaligned { (max - min) / step + 1 } else { max / min };
                    if steps > MAX_LENS {
                        return Err(Invalid::TooManySizes { min: *min, max: *max, step, steps, limit: MAX_LENS });
                    }
                    LenPick::Range { min: *min as u32, step: step as u32, steps: steps as u32 }
                }
            };
            let align = d.align.unwrap_or(u64::from(pick.min())).max(1);
            let draw = LenDraw { pick, align, base };
            base += draw.pick.count();
            Ok(draw)
        };
        let r = dir(&b.read)?;
        let w = dir(&b.write)?;
        Ok(Self::Var(Box::new([r, w])))
    }

    /// Every length by its index, reads' then writes' (what [`OffsetGen::next_io`]'s index
    /// refers to).
    pub fn table(&self) -> Vec<u32> {
        match self {
            Self::One(l) => vec![*l],
            Self::Var(v) => v.iter().flat_map(|d| (0..d.pick.count()).map(move |i| d.pick.len_at(i))).collect(),
        }
    }

    /// The largest length (what a buffer must hold).
    pub fn max(&self) -> u32 {
        self.table().into_iter().max().unwrap_or(1)
    }

    fn min(&self) -> u32 {
        self.table().into_iter().min().unwrap_or(1)
    }
}

/// Generator of (direction, offset, length) for one worker.
pub struct OffsetGen {
    rng: Xoshiro256PlusPlus,
    pattern: Pattern,
    /// Reads happen when a 32-bit draw is below this threshold.
    read_threshold: u64,
    always: Option<bool>,
    lens: IoLens,
    /// Bytes per random block (the pattern draws block indices; sequential patterns are in
    /// bytes already).
    unit: u64,
    /// The region's length in bytes.
    region: u64,
    /// A job over several files: their generators and the pick of each I/O's file (the offset
    /// then carries the file's index, see [`crate::io::files`]).
    files: Option<Box<FileWalk<OffsetGen>>>,
}

impl OffsetGen {
    /// Single-size I/O of length 1 over `nblocks` bytes: offsets are block indices (what
    /// tests and benchmarks of the distributions want). See [`OffsetGen::with_lens`].
    pub fn new(
        rw: RwMode,
        mix: u8,
        dist: &Distribution,
        nblocks: u64,
        worker: usize,
        workers: usize,
        rng: Xoshiro256PlusPlus,
    ) -> Self {
        Self::with_lens(rw, mix, dist, nblocks.max(1), IoLens::One(1), worker, workers, rng)
    }

    /// A generator over a region of `region` bytes with I/Os of `lens`; `worker`/`workers`
    /// select the stripe for sequential modes. A region shorter than the largest I/O is
    /// the caller's to refuse.
    #[allow(clippy::too_many_arguments)]
    pub fn with_lens(
        rw: RwMode,
        mix: u8,
        dist: &Distribution,
        region: u64,
        lens: IoLens,
        worker: usize,
        workers: usize,
        rng: Xoshiro256PlusPlus,
    ) -> Self {
        let max = u64::from(lens.max()).max(1);
        let region = region.max(max);
        // Random blocks: the I/O length when there is one, else the finest alignment; the
        // last block is the last place the smallest I/O fits (fio's last_block).
        let unit = match &lens {
            IoLens::One(l) => u64::from(*l).max(1),
            IoLens::Var(v) => v[0].align.min(v[1].align),
        };
        let n = match &lens {
            IoLens::One(_) => region / unit,
            IoLens::Var(_) => (region - u64::from(lens.min())) / unit + 1,
        }
        .max(1);
        let pattern = if !rw.is_random() {
            // Stripes in whole largest I/Os, so each holds at least one of any length.
            let blocks = region / max;
            let w = workers.max(1) as u64;
            let i = worker as u64 % w;
            let start = blocks * i / w;
            let end = (blocks * (i + 1) / w).max(start + 1).min(blocks);
            let len = end.saturating_sub(start).max(1);
            Pattern::Seq { start: start * max, len: len * max, next: 0 }
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
                Distribution::Normal { dev_pct, center } => {
                    let sd = (dev_pct / 100.0 * n as f64).max(f64::MIN_POSITIVE);
                    match rand_distr::Normal::new(center * n as f64, sd) {
                        Ok(d) => Pattern::Normal { n, d },
                        Err(_) => Pattern::Uniform { n },
                    }
                }
                Distribution::ZonedAbs { zones } => zoned_abs(zones, unit, n),
            }
        };
        let read_pct = rw.read_pct(mix) as u64;
        let always = match read_pct {
            100 => Some(true),
            0 => Some(false),
            _ => None,
        };
        Self { rng, pattern, read_threshold: (read_pct << 32) / 100, always, lens, unit, region, files: None }
    }

    /// The lengths this generator draws.
    pub fn lens(&self) -> &IoLens {
        &self.lens
    }

    /// True when the next I/O is a read.
    #[inline]
    pub fn next_is_read(&mut self) -> bool {
        match self.always {
            Some(r) => r,
            None => (self.rng.next_u32() as u64) < self.read_threshold,
        }
    }

    /// The next I/O of direction `read`: `(offset in the region, length, index of the length
    /// in [`IoLens::table`])`. The I/O lies inside the region. Per I/O: single-size
    /// sequential and uniform draws are inlined into the worker loop; variable lengths and
    /// the skewed distributions, which cost tens of nanoseconds anyway, are a call.
    #[inline(always)]
    pub fn next_io(&mut self, read: bool) -> (u64, u32, u32) {
        if let IoLens::One(len) = self.lens {
            let l = u64::from(len);
            match &mut self.pattern {
                Pattern::Seq { start, len: stripe, next } => {
                    let off = *start + *next;
                    *next += l;
                    if *next + l > *stripe {
                        *next = 0;
                    }
                    return (off, len, 0);
                }
                Pattern::Uniform { n } => return (below(&mut self.rng, *n) * l, len, 0),
                _ => {}
            }
        }
        self.next_slow(read)
    }

    /// [`next_io`](Self::next_io) for variable lengths and the other patterns.
    #[inline(never)]
    fn next_slow(&mut self, read: bool) -> (u64, u32, u32) {
        // A job over several files: its pattern is `Files`, which the inlined path passes here.
        if let Some(f) = self.files.as_deref_mut() {
            return f.next_io(read);
        }
        let (len, idx) = match &self.lens {
            IoLens::One(l) => (*l, 0),
            IoLens::Var(_) => self.draw_len(read),
        };
        let l = u64::from(len);
        match &mut self.pattern {
            Pattern::Seq { start, len: stripe, next } => {
                if *next + l > *stripe {
                    *next = 0;
                }
                let off = *start + *next;
                *next += l;
                (off, len, idx)
            }
            Pattern::Uniform { n } => {
                let b = below(&mut self.rng, *n);
                (self.place(read, b * self.unit, len), len, idx)
            }
            _ => self.next_other(read, len, idx),
        }
    }

    /// A length for a direction with variable sizes, and its index in the table.
    #[inline(never)]
    fn draw_len(&mut self, read: bool) -> (u32, u32) {
        let IoLens::Var(v) = &self.lens else { return (1, 0) };
        let d = &v[usize::from(!read)];
        let i = match &d.pick {
            LenPick::Fixed(_) => 0,
            LenPick::Split(parts) => {
                let r = self.rng.next_u32() as u64;
                parts.iter().position(|p| r < p.0).unwrap_or(parts.len() - 1) as u32
            }
            LenPick::Range { steps, .. } => below(&mut self.rng, u64::from(*steps)) as u32,
        };
        (d.pick.len_at(i), d.base + i)
    }

    /// A random offset aligned for its direction and moved back so the I/O fits.
    #[inline(never)]
    fn place(&self, read: bool, off: u64, len: u32) -> u64 {
        place(&self.lens, self.region, read, off, len)
    }

    /// Draw each I/O from one of several files' generators (this generator still decides the
    /// direction): offsets then carry the file's index in their top bits.
    pub fn over_files(mut self, walk: FileWalk<OffsetGen>) -> Self {
        if walk.len() > 1 {
            self.files = Some(Box::new(walk));
            self.pattern = Pattern::Files;
        }
        self
    }

    /// Apply fio's offset modifiers: `rw=MODE:N` (holes or a backwards walk for sequential
    /// modes; N I/Os per random offset for random ones), `rw_sequencer` and
    /// `percentage_random`. No modifier leaves the generator as it is.
    pub fn walk(mut self, w: Walk) -> Self {
        let pattern = std::mem::replace(&mut self.pattern, Pattern::Uniform { n: 1 });
        self.pattern = match pattern {
            // As fio: the first I/O at the start, even walking backwards (then from the end).
            Pattern::Seq { start, len, .. } if w.modifier != 0 => {
                Pattern::SeqStep { start, len, next: 0, add: w.modifier }
            }
            p @ (Pattern::Seq { .. } | Pattern::SeqStep { .. } | Pattern::Modified(_) | Pattern::Strided(_)) => p,
            inner if w.modifier > 1 || w.pct_random.is_some() => {
                let pct = u64::from(w.pct_random.unwrap_or(100).min(100));
                Pattern::Modified(Box::new(Modified {
                    inner,
                    every: w.modifier.clamp(1, i64::from(u32::MAX)) as u32,
                    left: 0,
                    identical: w.identical,
                    random_thr: (pct << 32) / 100,
                    last_off: 0,
                    last_end: 0,
                }))
            }
            p => p,
        };
        self
    }

    /// fio's `zonemode=strided` with `(zonesize, zonerange, zoneskip)`: the same walk (`rw`,
    /// `dist`, this worker's stripe) inside a zone of zonerange bytes, moved on by zonerange
    /// + zoneskip after zonesize bytes, and back to the region's start after its end.
    #[allow(clippy::too_many_arguments)]
    pub fn strided(
        mut self,
        rw: RwMode,
        mix: u8,
        dist: &Distribution,
        worker: usize,
        workers: usize,
        (size, range, skip): (u64, u64, u64),
    ) -> Self {
        let range = range.min(self.region).max(u64::from(self.lens.max()));
        let zone = OffsetGen::with_lens(rw, mix, dist, range, self.lens.clone(), worker, workers, worker_rng(0, 0, 0));
        self.unit = zone.unit;
        self.pattern = Pattern::Strided(Box::new(Strided {
            inner: zone.pattern,
            base: 0,
            range,
            step: range.saturating_add(skip).max(1),
            size: size.max(1),
            moved: 0,
        }));
        self
    }

    /// [`next_io`](Self::next_io) for the skewed distributions and fio's offset modifiers.
    #[inline(never)]
    fn next_other(&mut self, read: bool, len: u32, idx: u32) -> (u64, u32, u32) {
        let l = u64::from(len);
        let off = match &mut self.pattern {
            Pattern::SeqStep { start, len: stripe, next, add } => {
                let (stripe_i, l_i) = (*stripe as i64, l as i64);
                let mut p = *next;
                if p < 0 {
                    p = stripe_i + *add; // backwards past the start: from the end again
                }
                if p + l_i > stripe_i {
                    p = if *add >= 0 { 0 } else { stripe_i - l_i };
                }
                let p = p.max(0);
                *next = p + l_i + *add;
                return (*start + p as u64, len, idx);
            }
            Pattern::Modified(m) => {
                let random = m.left == 0 && (m.random_thr >= 1 << 32 || u64::from(self.rng.next_u32()) < m.random_thr);
                let off = if random {
                    m.left = m.every - 1;
                    let b = draw(&mut m.inner, &mut self.rng);
                    place(&self.lens, self.region, read, b * self.unit, len)
                } else {
                    m.left = m.left.saturating_sub(1);
                    let after = if m.identical { m.last_off } else { m.last_end };
                    if after + l > self.region {
                        0
                    } else {
                        after
                    }
                };
                m.last_off = off;
                m.last_end = off + l;
                return (off, len, idx);
            }
            Pattern::Strided(z) => {
                if z.moved >= z.size {
                    z.moved = 0;
                    z.base += z.step;
                    if z.base + z.range > self.region {
                        z.base = 0; // past the end: the first zone again, as fio does
                    }
                    if let Pattern::Seq { next, .. } = &mut z.inner {
                        *next = 0;
                    }
                }
                z.moved += l;
                let off = match &mut z.inner {
                    Pattern::Seq { start, len: stripe, next } => {
                        if *next + l > *stripe {
                            *next = 0;
                        }
                        let off = *start + *next;
                        *next += l;
                        off
                    }
                    p => {
                        let b = draw(p, &mut self.rng);
                        place(&self.lens, z.range, read, b * self.unit, len)
                    }
                };
                return (z.base + off, len, idx);
            }
            p => draw(p, &mut self.rng) * self.unit,
        };
        match &self.lens {
            IoLens::One(_) => (off, len, idx),
            IoLens::Var(_) => (self.place(read, off, len), len, idx),
        }
    }

    /// The next block index (single-size generators from [`OffsetGen::new`]: the offset).
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        self.next_io(true).0 / self.unit
    }

    /// Random draw used by callers that need one (e.g. write tags).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

impl FileGen for OffsetGen {
    #[inline(always)]
    fn next_io(&mut self, read: bool) -> (u64, u32, u32) {
        OffsetGen::next_io(self, read)
    }

    fn picker(dist: &Distribution, n: u64, rng: Xoshiro256PlusPlus) -> Self {
        OffsetGen::new(RwMode::RandRead, 100, dist, n, 0, 1, rng)
    }

    #[inline]
    fn next_block(&mut self) -> u64 {
        OffsetGen::next_block(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
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
    fn split(parts: &[(u64, f64)]) -> spec::DirSizes {
        let parts = parts.iter().map(|&(bs, pct)| spec::BsPart { bs, pct }).collect();
        spec::DirSizes { sizes: spec::SizeChoice::Split { parts }, align: None }
    }

    fn var(read: spec::DirSizes, write: spec::DirSizes, unaligned: bool, unit: u64) -> IoLens {
        let b = spec::BlockSizes { read, write, unaligned };
        IoLens::for_job(b.max(), Some(&b), unit).unwrap()
    }

    fn var_gen(rw: RwMode, lens: IoLens, region: u64) -> OffsetGen {
        OffsetGen::with_lens(rw, 50, &Distribution::Uniform, region, lens, 0, 1, worker_rng(7, 0, 0))
    }

    #[test]
    fn bssplit_draws_each_size_at_its_share_and_aligns_to_the_smallest() {
        let d = split(&[(4096, 10.0), (65536, 50.0), (32768, 40.0)]);
        let lens = var(d.clone(), d, false, 512);
        assert_eq!(lens.table(), [4096, 65536, 32768, 4096, 65536, 32768]);
        let region = 64 << 20;
        let mut g = var_gen(RwMode::RandRead, lens, region);
        let mut by = std::collections::BTreeMap::<u32, u32>::new();
        let n = 100_000;
        for _ in 0..n {
            let (off, len, i) = g.next_io(true);
            assert!(off % 4096 == 0 && off + u64::from(len) <= region, "{off}+{len}");
            assert_eq!(g.lens().table()[i as usize], len);
            *by.entry(len).or_default() += 1;
        }
        for (bs, pct) in [(4096, 10.0), (65536, 50.0), (32768, 40.0)] {
            let share = by[&bs] as f64 / n as f64 * 100.0;
            assert!((share - pct).abs() < 1.0, "{bs}: {share}% for {pct}%");
        }
    }

    #[test]
    fn per_direction_sizes_follow_the_direction() {
        let lens = var(spec::DirSizes::fixed(4096), spec::DirSizes::fixed(8192), false, 512);
        let mut g = var_gen(RwMode::RandRw, lens, 1 << 20);
        for _ in 0..10_000 {
            let read = g.next_is_read();
            let (off, len, i) = g.next_io(read);
            assert_eq!(len, if read { 4096 } else { 8192 });
            assert_eq!(i, u32::from(!read));
            assert_eq!(off % u64::from(len), 0, "random offsets align to the direction's smallest size");
        }
    }

    #[test]
    fn bsrange_is_uniform_over_multiples_of_the_minimum() {
        let r = spec::DirSizes { sizes: spec::SizeChoice::Range { min: 1024, max: 4096 }, align: None };
        let mut g = var_gen(RwMode::RandRead, var(r.clone(), r, false, 512), 1 << 20);
        let mut by = std::collections::BTreeMap::<u32, u32>::new();
        for _ in 0..40_000 {
            let (off, len, _) = g.next_io(true);
            assert_eq!(off % 1024, 0);
            *by.entry(len).or_default() += 1;
        }
        assert_eq!(by.keys().copied().collect::<Vec<_>>(), [1024, 2048, 3072, 4096]);
        assert!(by.values().all(|&c| (9_000..11_000).contains(&c)), "{by:?}");
    }

    #[test]
    fn bs_unaligned_ranges_step_by_the_direct_io_unit() {
        let r = spec::DirSizes { sizes: spec::SizeChoice::Range { min: 1024, max: 4096 }, align: None };
        let lens = var(r.clone(), r, true, 512);
        assert_eq!(lens.table().len(), 2 * 7, "1k, 1.5k, … 4k for each direction");
        let mut g = var_gen(RwMode::Read, lens, 1 << 20);
        let mut lens_seen = std::collections::BTreeSet::new();
        let mut pos = 0u64;
        for _ in 0..2000 {
            let (off, len, _) = g.next_io(true);
            if off != 0 {
                assert_eq!(off, pos, "sequential I/Os follow each other");
            }
            assert_eq!(off % 512, 0);
            pos = off + u64::from(len);
            lens_seen.insert(len);
        }
        assert!(lens_seen.contains(&1536) && lens_seen.contains(&3584));
    }

    #[test]
    fn blockalign_sets_random_offsets_alignment() {
        let d = spec::DirSizes { sizes: spec::SizeChoice::Fixed { bs: 4096 }, align: Some(512) };
        let mut g = var_gen(RwMode::RandRead, var(d.clone(), d, false, 512), 1 << 20);
        let unaligned = (0..10_000).filter(|_| !g.next_io(true).0.is_multiple_of(4096)).count();
        assert!(unaligned > 8000, "most offsets are 512-aligned only: {unaligned}");
        let d = spec::DirSizes { sizes: spec::SizeChoice::Fixed { bs: 4096 }, align: Some(65536) };
        let mut g = var_gen(RwMode::RandRead, var(d.clone(), d, false, 512), 1 << 20);
        assert!((0..10_000).all(|_| g.next_io(true).0.is_multiple_of(65536)));
    }

    #[test]
    fn sequential_variable_sizes_advance_by_each_length_and_wrap_to_fit() {
        let d = split(&[(4096, 50.0), (16384, 50.0)]);
        let region = 256 << 10;
        let mut g = var_gen(RwMode::Write, var(d.clone(), d, false, 512), region);
        let (mut pos, mut wraps) = (0u64, 0);
        for _ in 0..5000 {
            let (off, len, _) = g.next_io(false);
            if off == 0 && pos != 0 {
                wraps += 1;
                assert!(pos + u64::from(len) > region, "wrapped only when the I/O would not fit");
            } else {
                assert_eq!(off, pos);
            }
            assert!(off + u64::from(len) <= region);
            pos = off + u64::from(len);
        }
        assert!(wraps > 10);
    }

    #[test]
    fn single_size_keeps_block_offsets() {
        let mut g = OffsetGen::with_lens(
            RwMode::Read,
            0,
            &Distribution::Uniform,
            3 * 4096,
            IoLens::One(4096),
            0,
            1,
            worker_rng(1, 0, 0),
        );
        let v: Vec<(u64, u32, u32)> = (0..4).map(|_| g.next_io(true)).collect();
        assert_eq!(v, [(0, 4096, 0), (4096, 4096, 0), (8192, 4096, 0), (0, 4096, 0)]);
    }

    #[test]
    fn a_range_with_too_many_sizes_is_refused() {
        let r = spec::DirSizes { sizes: spec::SizeChoice::Range { min: 1, max: 1 << 20 }, align: None };
        let b = spec::BlockSizes { read: r.clone(), write: r, unaligned: true };
        let e = IoLens::for_job(1 << 20, Some(&b), 1).unwrap_err();
        assert!(
            matches!(e, Invalid::TooManySizes { min: 1, max: 1_048_576, step: 1, steps: 1_048_576, limit: MAX_LENS }),
            "{e:?}"
        );
    }

    fn walked(rw: RwMode, region: u64, w: Walk) -> OffsetGen {
        OffsetGen::with_lens(rw, 0, &Distribution::Uniform, region, IoLens::One(4096), 0, 1, worker_rng(5, 0, 0))
            .walk(w)
    }

    fn kib(g: &mut OffsetGen, n: usize) -> Vec<u64> {
        (0..n).map(|_| g.next_io(true).0 / 1024).collect()
    }

    #[test]
    fn sequential_holes_and_backwards_walks_match_fio() {
        // fio's iolog for rw=write:4k, bs=4k, size=64k: 0 8 16 … 56, then again from 0.
        let mut g = walked(RwMode::Write, 64 << 10, Walk { modifier: 4096, ..Walk::default() });
        assert_eq!(kib(&mut g, 10), [0, 8, 16, 24, 32, 40, 48, 56, 0, 8]);
        // rw=read:-8k, bs=4k, size=64k: 0, then 56 52 … 4 0 backwards, then from the end again.
        let mut g = walked(RwMode::Read, 64 << 10, Walk { modifier: -8192, ..Walk::default() });
        assert_eq!(kib(&mut g, 18), [0, 56, 52, 48, 44, 40, 36, 32, 28, 24, 20, 16, 12, 8, 4, 0, 56, 52]);
    }

    #[test]
    fn random_offsets_every_n_ios_follow_or_repeat() {
        let mut g = walked(RwMode::RandRead, 1 << 20, Walk { modifier: 4, ..Walk::default() });
        let v = kib(&mut g, 40);
        for run in v.chunks(4) {
            assert_eq!(run, [run[0], run[0] + 4, run[0] + 8, run[0] + 12], "{v:?}");
        }
        assert!(v.chunks(4).map(|r| r[0]).collect::<std::collections::BTreeSet<_>>().len() > 5);
        let mut g = walked(RwMode::RandRead, 1 << 20, Walk { modifier: 4, identical: true, pct_random: None });
        let v = kib(&mut g, 40);
        assert!(v.chunks(4).all(|r| r.iter().all(|&o| o == r[0])), "{v:?}");
    }

    #[test]
    fn percentage_random_mixes_random_and_following_ios() {
        let mut g = walked(RwMode::RandRead, 1 << 30, Walk { pct_random: Some(25), ..Walk::default() });
        let (mut follow, mut last_end) = (0, u64::MAX);
        let n = 40_000;
        for _ in 0..n {
            let (off, len, _) = g.next_io(true);
            follow += usize::from(off == last_end);
            last_end = off + u64::from(len);
        }
        let share = follow as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.02, "{share} of I/Os follow the previous one");
    }

    #[test]
    fn normal_is_a_gaussian_around_its_center() {
        let n = 100_000;
        let mut g = gen(RwMode::RandRead, Distribution::Normal { dev_pct: 5.0, center: 0.25 }, n);
        let draws: Vec<u64> = (0..50_000).map(|_| g.next_block()).collect();
        assert!(draws.iter().all(|&b| b < n));
        let within = |k: f64| {
            let (lo, hi) = ((0.25 - k * 0.05) * n as f64, (0.25 + k * 0.05) * n as f64);
            draws.iter().filter(|&&b| (b as f64) >= lo && (b as f64) < hi).count() as f64 / draws.len() as f64
        };
        assert!((within(1.0) - 0.683).abs() < 0.02, "one deviation: {}", within(1.0));
        assert!((within(2.0) - 0.954).abs() < 0.01, "two deviations: {}", within(2.0));
        // A deviation wider than the region still stays inside it.
        let mut g = gen(RwMode::RandRead, Distribution::Normal { dev_pct: 100.0, center: 1.0 }, 1000);
        assert!((0..10_000).all(|_| g.next_block() < 1000));
    }

    #[test]
    fn zoned_abs_sends_each_share_to_its_bytes() {
        // 4 KiB blocks over 1 MiB: 60 % to the first 64 KiB, 40 % to the next 192 KiB, none beyond.
        let zones =
            vec![spec::ZoneAbs { ops_pct: 60.0, bytes: 64 << 10 }, spec::ZoneAbs { ops_pct: 40.0, bytes: 192 << 10 }];
        let mut g = OffsetGen::with_lens(
            RwMode::RandRead,
            0,
            &Distribution::ZonedAbs { zones },
            1 << 20,
            IoLens::One(4096),
            0,
            1,
            worker_rng(2, 0, 0),
        );
        let offs: Vec<u64> = (0..40_000).map(|_| g.next_io(true).0).collect();
        let first = offs.iter().filter(|&&o| o < 64 << 10).count() as f64 / offs.len() as f64;
        assert!((first - 0.6).abs() < 0.01, "{first}");
        assert!(offs.iter().all(|&o| o < 256 << 10), "nothing past the zones");
        // Zones longer than the region are cut, and the cut share goes to the rest.
        let zones =
            vec![spec::ZoneAbs { ops_pct: 50.0, bytes: 512 << 10 }, spec::ZoneAbs { ops_pct: 50.0, bytes: 1 << 30 }];
        let mut g = OffsetGen::with_lens(
            RwMode::RandRead,
            0,
            &Distribution::ZonedAbs { zones },
            1 << 20,
            IoLens::One(4096),
            0,
            1,
            worker_rng(2, 0, 0),
        );
        let low = (0..40_000).filter(|_| g.next_io(true).0 < 512 << 10).count() as f64 / 40_000.0;
        assert!((low - 0.5).abs() < 0.02, "{low}");
    }

    #[test]
    fn strided_zones_walk_a_zone_then_skip_as_fio_does() {
        // fio's iolog for rw=read, bs=4k, size=1m, zonesize=16k, zonerange=64k, zoneskip=64k:
        // 0 4 8 12, 128 132 136 140, … 896 … 908, then 0 again.
        let mut g = OffsetGen::with_lens(
            RwMode::Read,
            0,
            &Distribution::Uniform,
            1 << 20,
            IoLens::One(4096),
            0,
            1,
            worker_rng(1, 0, 0),
        )
        .strided(RwMode::Read, 0, &Distribution::Uniform, 0, 1, (16 << 10, 64 << 10, 64 << 10));
        let v = kib(&mut g, 36);
        let want: Vec<u64> = (0..9).flat_map(|z| (0..4).map(move |i| (z % 8) * 128 + i * 4)).collect();
        assert_eq!(v, want);
        // Random: each run of 4 I/Os inside its 64 KiB zone.
        let mut g = OffsetGen::with_lens(
            RwMode::RandRead,
            0,
            &Distribution::Uniform,
            1 << 20,
            IoLens::One(4096),
            0,
            1,
            worker_rng(1, 0, 0),
        )
        .strided(RwMode::RandRead, 0, &Distribution::Uniform, 0, 1, (16 << 10, 64 << 10, 64 << 10));
        let v = kib(&mut g, 64);
        for (i, o) in v.iter().enumerate() {
            let base = (i as u64 / 4 % 8) * 128;
            assert!((base..base + 64).contains(o) && o % 4 == 0, "I/O {i} at {o} KiB: {v:?}");
        }
    }

    proptest::proptest! {
        /// Every I/O of any size mix, distribution and mode lies inside the region, starts at
        /// its direction's alignment when random, and has one of the job's lengths.
        #[test]
        fn every_io_fits_and_is_aligned(
            sizes in proptest::collection::vec((1u64..=32, 0u32..=3), 1..4),
            rsizes in proptest::collection::vec((1u64..=32, 0u32..=3), 1..4),
            range in proptest::option::of((1u64..=8, 1u64..=8)),
            align in proptest::option::of(0u32..=4),
            unaligned in proptest::bool::ANY,
            region_blocks in 64u64..2000,
            mode in 0usize..4,
            dist in 0usize..4,
            workers in 1usize..4,
            seed in proptest::num::u64::ANY,
            modifier in -16i64..16,
            identical in proptest::bool::ANY,
            pct_random in proptest::option::of(0u8..100),
        ) {
            let mk = |v: &[(u64, u32)]| {
                let n = v.len() as f64;
                spec::DirSizes {
                    sizes: spec::SizeChoice::Split {
                        parts: v.iter().map(|&(b, _)| spec::BsPart { bs: b * 512, pct: 100.0 / n }).collect(),
                    },
                    align: None,
                }
            };
            let mut read = mk(&sizes);
            let mut write = mk(&rsizes);
            if let Some((lo, hi)) = range {
                let (lo, hi) = (lo.min(hi) * 512, lo.max(hi) * 1024);
                write.sizes = spec::SizeChoice::Range { min: lo, max: hi };
            }
            read.align = align.map(|a| 512u64 << a);
            let b = spec::BlockSizes { read, write, unaligned };
            let lens = IoLens::for_job(b.max(), Some(&b), 512).unwrap();
            let table = lens.table();
            let region = (region_blocks * 512).max(b.max());
            let rw = [RwMode::RandRw, RwMode::ReadWrite, RwMode::RandRead, RwMode::Write][mode];
            let d = [
                Distribution::Uniform,
                Distribution::Zipf { theta: 1.1 },
                Distribution::Pareto { h: 0.3 },
                Distribution::Zoned { zones: vec![Zone { ops_pct: 80.0, area_pct: 20.0 }, Zone { ops_pct: 20.0, area_pct: 80.0 }] },
            ][dist].clone();
            for w in 0..workers {
                let modifier = if rw.is_random() { modifier.max(0) } else { modifier * 512 };
                let walk = Walk { modifier, identical, pct_random };
                let mut g = OffsetGen::with_lens(rw, 50, &d, region, lens.clone(), w, workers, worker_rng(seed, 0, w))
                    .walk(walk);
                for _ in 0..300 {
                    let read = g.next_is_read();
                    let (off, len, i) = g.next_io(read);
                    proptest::prop_assert!(off + u64::from(len) <= region, "{off}+{len} > {region}");
                    proptest::prop_assert_eq!(table[i as usize], len);
                    proptest::prop_assert_eq!(off % 512, 0);
                    if rw.is_random() && modifier <= 1 && pct_random.is_none() {
                        let IoLens::Var(v) = &lens else { unreachable!() };
                        let a = v[usize::from(!read)].align;
                        proptest::prop_assert_eq!(off % a, 0, "aligned to {}", a);
                    }
                }
            }
        }
    }
}
