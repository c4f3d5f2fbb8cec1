//! Throughput of the cache simulators on an in-memory `Vec<Request>`, in block operations
//! per second (requests × cache blocks / units touched):
//!
//! * `lru4k/fits` — plain LRU, 4 KiB units, 64 MiB cache (16 Ki units), 1 M requests of
//!   4–16 KiB (1–4 units) over a 32 MiB working set: all hits after the first pass;
//! * `lru4k/thrash` — plain LRU, 4 KiB units, 1 GiB cache (256 Ki units), 1 M requests of
//!   4–16 KiB over 64 GiB: the working set is 64 × the cache, almost every unit misses and
//!   evicts;
//! * `qsan/database` — the QSAN model with the `database` preset (1 MiB blocks, 8 KiB
//!   sub-blocks, PoR 2, write-through), 4 GiB cache, 1 M 8 KiB requests (90 % reads), 80 %
//!   of them in a 2 GiB hot region, 20 % over 64 GiB.
//!
//! Each iteration builds a fresh cache and replays the whole vector; criterion's element
//! rate is the block-operation rate.
//!
//!   cargo bench -p diskmeter-cachesim --bench sim -- --warm-up-time 1 --measurement-time 3

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use diskmeter_cachesim::{CacheConfig, Lru, Policy, QsanCache};
use trace::{Op, Request};

const REQS: usize = 1_000_000;
const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

/// A seeded generator with a `below(n)` shorthand.
struct Rng(rand::rngs::SmallRng);
impl Rng {
    fn new(seed: u64) -> Self {
        Rng(rand::SeedableRng::seed_from_u64(seed))
    }
    fn below(&mut self, n: u64) -> u64 {
        rand::Rng::random_range(&mut self.0, 0..n)
    }
}

/// 4 KiB-aligned requests of 1, 2 or 4 units within `span` bytes; returns them and the units
/// touched.
fn unit_trace(span: u64, seed: u64) -> (Vec<Request>, u64) {
    let mut rng = Rng::new(seed);
    let mut units = 0;
    let reqs = (0..REQS)
        .map(|i| {
            let n = [1u64, 2, 4][rng.below(3) as usize];
            let off = rng.below(span / (4 * KIB) - n) * 4 * KIB;
            units += n;
            let op = if rng.below(10) == 0 { Op::Write } else { Op::Read };
            Request { t_ns: i as u64 * 1000, offset: off, len: (n * 4 * KIB) as u32, op, dev: 0 }
        })
        .collect();
    (reqs, units)
}

fn db_trace() -> (Vec<Request>, u64) {
    let mut rng = Rng::new(7);
    let mut blocks = 0;
    let reqs = (0..REQS)
        .map(|i| {
            let span = if rng.below(10) < 8 { 2 * GIB } else { 64 * GIB };
            let off = rng.below(span / (8 * KIB)) * 8 * KIB;
            blocks += 1; // 8 KiB-aligned 8 KiB never crosses a 1 MiB block
            let op = if rng.below(10) == 0 { Op::Write } else { Op::Read };
            Request { t_ns: i as u64 * 1000, offset: off, len: 8 * KIB as u32, op, dev: 0 }
        })
        .collect();
    (reqs, blocks)
}

fn replay(p: &mut dyn Policy, reqs: &[Request]) -> u64 {
    for r in reqs {
        black_box(p.access(r));
    }
    p.stats().read_hits
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("lru4k");
    let (fits, fits_units) = unit_trace(32 * MIB, 1);
    g.throughput(Throughput::Elements(fits_units));
    g.bench_function("fits", |b| {
        b.iter(|| {
            let mut lru = Lru::new(64 * MIB, 4 * KIB).expect("valid");
            replay(&mut lru, &fits)
        })
    });
    let (thrash, thrash_units) = unit_trace(64 * GIB, 2);
    g.throughput(Throughput::Elements(thrash_units));
    g.bench_function("thrash", |b| {
        b.iter(|| {
            let mut lru = Lru::new(GIB, 4 * KIB).expect("valid");
            replay(&mut lru, &thrash)
        })
    });
    g.finish();

    let mut g = c.benchmark_group("qsan");
    let (db, db_blocks) = db_trace();
    g.throughput(Throughput::Elements(db_blocks));
    g.bench_function("database", |b| {
        b.iter(|| {
            let mut q = QsanCache::new(CacheConfig::database(4 * GIB)).expect("valid");
            replay(&mut q, &db)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
