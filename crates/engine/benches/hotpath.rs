//! Per-operation cost of the pieces of the worker's hot loop that run once per I/O:
//!
//! * `lathist/record`      — `stats::LatHist::record` fed realistic completion latencies;
//! * `offsets/next_io`     — `engine::io::offsets::OffsetGen::next_io` (4 KiB I/Os) for the random
//!   distributions (uniform, zipf:1.2, pareto:0.2, hotset 90/10) over 2^18 blocks;
//! * `stamp`               — `engine::io::buffers::stamp` on a 4 KiB and a 1 MiB write buffer;
//! * `worker/null`         — the whole worker loop (`engine::io::worker::run`: issue, wait,
//!   reap, account) on the null engine at QD 1 and 32, random reads and a 70/30 mix.
//!
//! Every benchmark declares its operations as `Throughput::Elements`, so criterion's
//! throughput is ops/s; all but `worker/null` do one operation per iteration, so their time
//! is the per-op cost.
//!
//!   cargo bench -p diskmeter-engine --bench hotpath                       # full run
//!   cargo bench -p diskmeter-engine --bench hotpath -- --quick            # a first look
//!   cargo bench -p diskmeter-engine --bench hotpath -- offsets            # one group

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use diskmeter_engine::io::backend::null::Null;
use diskmeter_engine::io::backend::BackendConfig;
use diskmeter_engine::io::buffers::{fill_pattern, stamp, BufferPool, CHUNK};
use diskmeter_engine::io::offsets::{worker_rng, IoLens, OffsetGen};
use diskmeter_engine::io::worker::{self, Channels, WorkerPlan};
use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use spec::{BlockSizes, BsPart, DataPattern, DirSizes, Distribution, RwMode, SizeChoice, Zone};
use stats::LatHist;
use std::hint::black_box;
use std::sync::{mpsc, Arc};
use std::time::Instant;

const SEED: u64 = 0x5EED_D15C;

/// Number of pre-drawn latencies cycled through by the record benchmark (power of two).
const LAT_SAMPLES: usize = 1 << 16;

/// Latencies (ns) shaped like a busy SSD at QD32: a log-normal-ish body around ~80 µs
/// spanning roughly 10 µs .. 1 ms, plus a 0.1 % tail of 1 .. 50 ms outliers. The spread
/// matters: it makes `record` touch many HDR buckets (cache behaviour) instead of one.
fn realistic_latencies() -> Vec<u64> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(SEED);
    let mut unit = move || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (0..LAT_SAMPLES)
        .map(|_| {
            if unit() < 0.001 {
                (1e6 + unit() * 49e6) as u64
            } else {
                // Sum of 4 uniforms ~ normal(2, 0.58); exp() of it gives a right-skewed body.
                let z = (unit() + unit() + unit() + unit() - 2.0) / 0.577;
                (80_000.0 * (0.8 * z).exp()) as u64
            }
        })
        .collect()
}

fn bench_lathist(c: &mut Criterion) {
    let lats = realistic_latencies();
    let mut g = c.benchmark_group("lathist");
    g.throughput(Throughput::Elements(1));
    g.bench_function("record", |b| {
        let mut h = LatHist::new();
        let mut i = 0usize;
        b.iter(|| {
            h.record(black_box(lats[i]));
            i = (i + 1) & (LAT_SAMPLES - 1);
        });
        black_box(h.count());
    });
    // The same values through the clamping path at the extremes (0 and > 1 h).
    g.bench_function("record_out_of_range", |b| {
        let mut h = LatHist::new();
        let vals = [0u64, u64::MAX];
        let mut i = 0usize;
        b.iter(|| {
            h.record(black_box(vals[i & 1]));
            i += 1;
        });
        black_box(h.count());
    });
    g.finish();
}

fn bench_offsets(c: &mut Criterion) {
    const NBLOCKS: u64 = 1 << 18; // 1 GiB of 4 KiB blocks
    let dists: [(&str, Distribution); 4] = [
        ("uniform", Distribution::Uniform),
        ("zipf:1.2", Distribution::Zipf { theta: 1.2 }),
        ("pareto:0.2", Distribution::Pareto { h: 0.2 }),
        (
            "hotset:90/10",
            Distribution::Zoned {
                zones: vec![Zone { ops_pct: 90.0, area_pct: 10.0 }, Zone { ops_pct: 10.0, area_pct: 90.0 }],
            },
        ),
    ];
    // 4 KiB I/Os over NBLOCKS blocks, as the worker draws them.
    let gen_for = |rw, dist: &Distribution, lens: IoLens| {
        OffsetGen::with_lens(rw, 70, dist, NBLOCKS * 4096, lens, 0, 1, worker_rng(SEED, 0, 0))
    };
    let mut g = c.benchmark_group("offsets/next_io");
    g.throughput(Throughput::Elements(1));
    for (name, dist) in dists {
        g.bench_function(name, |b| {
            let mut gen = gen_for(RwMode::RandRead, &dist, IoLens::One(4096));
            b.iter(|| black_box(gen.next_io(true)));
        });
    }
    // Sequential walk for reference (the cheapest path).
    g.bench_function("sequential", |b| {
        let mut gen = gen_for(RwMode::Read, &Distribution::Uniform, IoLens::One(4096));
        b.iter(|| black_box(gen.next_io(true)));
    });
    // Mixed 70/30 jobs also draw the direction once per I/O.
    g.bench_function("uniform+next_is_read(randrw 70)", |b| {
        let mut gen = gen_for(RwMode::RandRw, &Distribution::Uniform, IoLens::One(4096));
        b.iter(|| {
            let read = gen.next_is_read();
            black_box(gen.next_io(read))
        });
    });
    // Variable sizes: fio's bssplit=4k/50:64k/50 drawn per I/O.
    g.bench_function("uniform+bssplit(4k/50:64k/50)", |b| {
        let parts = vec![BsPart { bs: 4096, pct: 50.0 }, BsPart { bs: 65536, pct: 50.0 }];
        let d = DirSizes { sizes: SizeChoice::Split { parts }, align: None };
        let sizes = BlockSizes { read: d.clone(), write: d, unaligned: false };
        let lens = IoLens::for_job(65536, Some(&sizes), 512).expect("lens");
        let mut gen = gen_for(RwMode::RandRead, &Distribution::Uniform, lens);
        b.iter(|| black_box(gen.next_io(true)));
    });
    g.finish();
}

fn bench_stamp(c: &mut Criterion) {
    let mut g = c.benchmark_group("stamp");
    g.throughput(Throughput::Elements(1));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(SEED);
    for (name, len) in [("4KiB", 4096usize), ("1MiB", 1 << 20)] {
        // Same aligned allocation the worker uses, filled with random data once.
        let mut pool = BufferPool::new(1, len, CHUNK).expect("buffer allocation");
        fill_pattern(pool.slot_mut(0), DataPattern::Random, &mut rng);
        g.bench_function(name, |b| {
            let mut tag = 0u64;
            let mut off = 0u64;
            b.iter(|| {
                tag = tag.wrapping_add(1);
                off = off.wrapping_add(len as u64);
                stamp(black_box(pool.slot_mut(0)), black_box(DataPattern::Random), tag, off);
            });
            black_box(pool.slot_mut(0)[0]);
        });
    }
    g.finish();
}

/// I/Os per `worker/null` iteration: enough that setting up a run is noise.
const WORKER_OPS: u64 = 1 << 16;

fn bench_worker(c: &mut Criterion) {
    let mut g = c.benchmark_group("worker/null");
    g.throughput(Throughput::Elements(WORKER_OPS));
    for (name, rw, depth) in [
        ("randread/qd1", RwMode::RandRead, 1u32),
        ("randread/qd32", RwMode::RandRead, 32),
        ("randrw70/qd32", RwMode::RandRw, 32),
    ] {
        let split = rw == RwMode::RandRw;
        let mut pool = BufferPool::new(depth as usize * if split { 2 } else { 1 }, 4096, 4096).expect("buffers");
        fill_pattern(pool.slot_mut(0), DataPattern::Random, &mut Xoshiro256PlusPlus::seed_from_u64(SEED));
        let (tx, rx) = mpsc::channel();
        let (_recycle_tx, recycle) = mpsc::channel();
        let ch = Channels { tx, recycle, live: Arc::default(), stop: Arc::default() };
        let cfg = BackendConfig {
            fd: -1,
            files: Vec::new(),
            depth,
            buffers: None,
            register_file: false,
            sqpoll: false,
            flags: 0,
        };
        g.bench_function(name, |b| {
            b.iter(|| {
                let plan = WorkerPlan {
                    job: 0,
                    worker: 0,
                    depth,
                    bs: 4096,
                    region_offset: 0,
                    data: DataPattern::Random,
                    fsync_every: 0,
                    rate_iops: None,
                    t_start: Instant::now(),
                    ramp_ns: 0,
                    runtime_ns: u64::MAX,
                    byte_limit: Some(WORKER_OPS * 4096),
                    split_buffers: split,
                    submit_batch: 1,
                    verify: None,
                    flow_share: None,
                    flow: Default::default(),
                    end_on_full: false,
                    poll_ns: 0,
                    edges: true,
                };
                let mut gen = OffsetGen::with_lens(
                    rw,
                    70,
                    &Distribution::Uniform,
                    (1 << 18) * 4096,
                    IoLens::One(4096),
                    0,
                    1,
                    worker_rng(SEED, 0, 0),
                );
                let mut backend = Null::new(&cfg, None);
                let end = worker::run(&plan, &mut backend, &mut pool, &mut gen, &ch);
                // The intervals the run sent (one, or two past a second boundary).
                black_box(rx.try_iter().count());
                black_box(end)
            });
        });
    }
    g.finish();
}

criterion_group!(benches, bench_lathist, bench_offsets, bench_stamp, bench_worker);
criterion_main!(benches);
