//! One job over several files (fio `nrfiles`, `filename=a:b:c`): which file each I/O goes to.
//!
//! Every file holds its own copy of the job's region and has its own offset generator, so a
//! sequential job walks each file from its start as fio does. The file of an I/O travels with
//! its offset: the top bits carry the file's index ([`FILE_SHIFT`]), which the backend splits
//! off ([`split`]) to pick the file's descriptor (a registered file with io_uring). Offsets of
//! a single-file job have no file bits, so nothing changes for them.

use rand_xoshiro::Xoshiro256PlusPlus;
use spec::{Distribution, FileService, FileServiceKind};

/// Offsets below 2^48 (256 TiB) are in the file; the bits above are the file's index.
pub const FILE_SHIFT: u32 = 48;
/// The in-file part of an offset.
pub const OFFSET_MASK: u64 = (1 << FILE_SHIFT) - 1;

/// (file index, offset in that file) of an offset that may carry a file index.
#[inline(always)]
pub fn split(offset: u64) -> (usize, u64) {
    ((offset >> FILE_SHIFT) as usize, offset & OFFSET_MASK)
}

/// A file's offset generator, as the walk drives it. The generator is `offsets::OffsetGen`,
/// which sits above this module: a generator of a job over several files walks them with a
/// [`FileWalk`] of generators.
pub trait FileGen {
    /// The next I/O in this file: (offset, length, index of the length).
    fn next_io(&mut self, read: bool) -> (u64, u32, u32);
    /// A one-byte-block generator of indices below `n` drawn from `dist`: the pick of a
    /// skewed file service.
    fn picker(dist: &Distribution, n: u64, rng: Xoshiro256PlusPlus) -> Self;
    /// The next index of a [`picker`](FileGen::picker).
    fn next_block(&mut self) -> u64;
}

/// How the next file is chosen.
enum Pick<G> {
    RoundRobin,
    /// Stay on a file until its region's bytes are done.
    Sequential,
    Random(Xoshiro256PlusPlus),
    /// A draw over the files from a skewed distribution (a one-byte-block generator).
    Skewed(Box<G>),
}

/// A worker's files: one generator each and the rule that picks the file of each I/O.
pub struct FileWalk<G> {
    gens: Vec<G>,
    pick: Pick<G>,
    /// I/Os to a file before the next pick (fio's `:N`).
    every: u32,
    left: u32,
    cur: usize,
    /// Sequential service: bytes issued to the current file, and a file's region.
    done: u64,
    region: u64,
}

impl<G: FileGen> FileWalk<G> {
    /// `gens[k]` walks file k; `region` is this worker's share of a file (its bytes there before
    /// sequential service moves on); `rng` draws random picks.
    pub fn new(gens: Vec<G>, service: &FileService, region: u64, rng: Xoshiro256PlusPlus) -> Self {
        let n = gens.len().max(1);
        let pick = match &service.kind {
            FileServiceKind::RoundRobin => Pick::RoundRobin,
            FileServiceKind::Sequential => Pick::Sequential,
            FileServiceKind::Random => Pick::Random(rng),
            FileServiceKind::Skewed { dist } => Pick::Skewed(Box::new(G::picker(dist, n as u64, rng))),
        };
        // Round robin starts with the first file: the pick before the first I/O moves to it.
        Self { gens, pick, every: service.switch_every.max(1), left: 0, cur: n - 1, done: 0, region: region.max(1) }
    }

    /// The files walked.
    pub fn len(&self) -> usize {
        self.gens.len()
    }

    /// Never empty: a walk has at least one file.
    pub fn is_empty(&self) -> bool {
        self.gens.is_empty()
    }

    /// The next I/O of direction `read`: (offset with the file's index in its top bits, length,
    /// index of the length). One call per I/O; nothing allocated.
    #[inline(never)]
    pub fn next_io(&mut self, read: bool) -> (u64, u32, u32) {
        let n = self.gens.len();
        match &mut self.pick {
            Pick::Sequential => {
                if self.left == 0 {
                    // The first I/O: the first file.
                    (self.cur, self.left) = (0, 1);
                } else if self.done >= self.region {
                    self.cur = (self.cur + 1) % n;
                    self.done = 0;
                }
            }
            pick => {
                if self.left == 0 {
                    self.cur = match pick {
                        Pick::Random(rng) => below(rng, n as u64) as usize,
                        Pick::Skewed(g) => (g.next_block() as usize).min(n - 1),
                        _ => (self.cur + 1) % n,
                    };
                    self.left = self.every;
                }
                self.left -= 1;
            }
        }
        let (off, len, i) = self.gens[self.cur].next_io(read);
        self.done += u64::from(len);
        (((self.cur as u64) << FILE_SHIFT) | off, len, i)
    }
}

#[inline]
fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    use rand::RngCore;
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::io::offsets::{worker_rng, IoLens, OffsetGen};
    use spec::RwMode;

    fn walk(rw: RwMode, kind: FileServiceKind, every: u32, files: usize, region: u64) -> FileWalk<OffsetGen> {
        let gens = (0..files)
            .map(|f| {
                OffsetGen::with_lens(
                    rw,
                    100,
                    &Distribution::Uniform,
                    region,
                    IoLens::One(4096),
                    0,
                    1,
                    worker_rng(7, 0, f),
                )
            })
            .collect();
        FileWalk::new(gens, &FileService { kind, switch_every: every }, region, worker_rng(9, 0, 99))
    }

    fn files_of(w: &mut FileWalk<OffsetGen>, n: usize) -> Vec<usize> {
        (0..n).map(|_| split(w.next_io(true).0).0).collect()
    }

    #[test]
    fn round_robin_takes_each_file_in_turn_from_the_first() {
        let mut w = walk(RwMode::Read, FileServiceKind::RoundRobin, 1, 3, 1 << 20);
        assert_eq!(files_of(&mut w, 7), [0, 1, 2, 0, 1, 2, 0]);
        let mut w = walk(RwMode::Read, FileServiceKind::RoundRobin, 2, 3, 1 << 20);
        assert_eq!(files_of(&mut w, 7), [0, 0, 1, 1, 2, 2, 0]);
    }

    #[test]
    fn each_file_is_walked_sequentially_on_its_own() {
        let mut w = walk(RwMode::Read, FileServiceKind::RoundRobin, 1, 2, 1 << 20);
        let offs: Vec<(usize, u64)> = (0..6).map(|_| split(w.next_io(true).0)).collect();
        assert_eq!(offs, [(0, 0), (1, 0), (0, 4096), (1, 4096), (0, 8192), (1, 8192)]);
    }

    #[test]
    fn sequential_service_finishes_a_file_before_the_next() {
        // Four blocks per file.
        let mut w = walk(RwMode::Read, FileServiceKind::Sequential, 1, 3, 4 * 4096);
        assert_eq!(files_of(&mut w, 14), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0]);
    }

    #[test]
    fn random_service_spreads_over_every_file() {
        let mut w = walk(RwMode::RandRead, FileServiceKind::Random, 1, 4, 1 << 20);
        let mut counts = [0u32; 4];
        for f in files_of(&mut w, 40_000) {
            counts[f] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
        // random:8 keeps each pick for 8 I/Os.
        let mut w = walk(RwMode::RandRead, FileServiceKind::Random, 8, 4, 1 << 20);
        let f = files_of(&mut w, 64);
        assert!(f.chunks(8).all(|c| c.iter().all(|x| *x == c[0])), "{f:?}");
    }

    #[test]
    fn zipf_service_favours_one_file() {
        let kind = FileServiceKind::Skewed { dist: Distribution::Zipf { theta: 1.5 } };
        let mut w = walk(RwMode::RandRead, kind, 1, 8, 1 << 20);
        let mut counts = [0u32; 8];
        for f in files_of(&mut w, 20_000) {
            counts[f] += 1;
        }
        let max = *counts.iter().max().unwrap();
        assert!(max > 20_000 / 3, "the hottest file gets far more than 1/8: {counts:?}");
        // normal with no deviation: always the middle file (fio's gauss with dev 0).
        let kind = FileServiceKind::Skewed { dist: Distribution::Normal { dev_pct: 0.0, center: 0.5 } };
        let mut w = walk(RwMode::RandRead, kind, 1, 5, 1 << 20);
        assert!(files_of(&mut w, 100).iter().all(|f| *f == 2));
    }

    #[test]
    fn offsets_stay_inside_each_file_region() {
        let mut w = walk(RwMode::RandRead, FileServiceKind::Random, 1, 3, 64 * 4096);
        for _ in 0..10_000 {
            let (o, len, _) = w.next_io(true);
            let (f, off) = split(o);
            assert!(f < 3 && off + u64::from(len) <= 64 * 4096);
        }
    }
}
