//! Comparison policies: hand-worked traces, Che's approximation for LRU, OPT as an upper
//! bound, and robustness on arbitrary requests.

use diskmeter_cachesim::{Access, CacheConfig, Lru, Mode, Nhit, Opt, Policy, QsanCache, S3Fifo, Stats};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use trace::{Op, Request};

const U: u64 = 4096;

fn r(op: Op, unit: u64) -> Request {
    Request { t_ns: 0, offset: unit * U, len: U as u32, op, dev: 0 }
}

fn reads(p: &mut dyn Policy, units: &[u64]) -> Vec<Access> {
    units.iter().map(|&u| p.access(&r(Op::Read, u))).collect()
}

use Access::{ReadHit as H, ReadMiss as M};

#[test]
fn lru_by_hand() {
    let mut p = Lru::new(3 * U, U).expect("valid");
    assert_eq!(reads(&mut p, &[1, 2, 3, 1, 4, 2, 1, 3]), [M, M, M, H, M, M, H, M]);
    let s = p.stats();
    assert_eq!((s.evictions, s.blocks_used, s.fills), (3, 3, 6));
    // Writes insert too (write-through): HDD write, SSD copy.
    assert_eq!(p.access(&r(Op::Write, 9)), Access::WriteMiss);
    assert_eq!(p.access(&r(Op::Write, 9)), Access::WriteHit);
    assert_eq!(p.access(&r(Op::Read, 9)), H);
    let s = p.stats();
    assert_eq!((s.write_bytes_hdd, s.hdd_write_ops, s.write_bytes_ssd), (2 * U, 2, 0));
    // A request of 3 units, one cached: partial hit.
    let before = *p.stats();
    let big = Request { t_ns: 0, offset: 8 * U, len: 3 * U as u32, op: Op::Read, dev: 0 };
    assert_eq!(p.access(&big), Access::ReadPartialHit);
    let d = p.stats().since(&before);
    assert_eq!((d.read_bytes_ssd, d.read_bytes_hdd, d.hdd_read_ops), (U, 2 * U, 2));
    // Discard drops whole units only.
    p.access(&Request { t_ns: 0, offset: 9 * U + 1, len: 2 * U as u32, op: Op::Discard, dev: 0 });
    assert_eq!(p.access(&r(Op::Read, 9)), H);
    assert_eq!(p.access(&r(Op::Read, 10)), M);
}

#[test]
fn nhit_by_hand() {
    // 10 lines, trigger 80 %: the first 8 misses are promoted at once.
    let mut p = Nhit::new(10 * U, U).expect("valid");
    reads(&mut p, &(0..8).collect::<Vec<_>>());
    assert_eq!(p.stats().blocks_used, 8);
    // Now at the trigger: line 100 needs 3 accesses (inserted with 1, then 2, then 3 >= 3).
    assert_eq!(reads(&mut p, &[100, 100, 100, 100]), [M, M, M, H]);
    assert_eq!(p.stats().blocks_used, 9);
    // Counters were reset on promotion; the ring holds at most 2 × 10 entries.
    for u in 1000..1100 {
        p.access(&r(Op::Read, u));
    }
    assert_eq!(p.tracked_lines(), 20);
    assert_eq!(p.stats().blocks_used, 9);
    // Trigger 0: always counted; threshold 2.
    let mut q = Nhit::with_params(4 * U, U, 2, 0).expect("valid");
    assert_eq!(reads(&mut q, &[5, 5, 5]), [M, M, H]);
    assert!(Nhit::with_params(4 * U, U, 0, 0).is_err());
    assert!(Nhit::with_params(4 * U, U, 3, 101).is_err());
}

#[test]
fn s3fifo_by_hand() {
    // 10 units: small queue 1, main 9, ghost 9.
    let mut p = S3Fifo::new(10 * U, U).expect("valid");
    // Fill: 0..10 go to the small queue, overflowing into... the cache is not full before 10.
    reads(&mut p, &(0..10).collect::<Vec<_>>());
    assert_eq!(p.stats().blocks_used, 10);
    // Unit 0 hit once: it moves to main when it reaches the small queue's tail.
    assert_eq!(p.access(&r(Op::Read, 0)), H);
    // One-hit wonders 100..110 pass through the small queue and are evicted to the ghost.
    reads(&mut p, &(100..110).collect::<Vec<_>>());
    assert_eq!(p.access(&r(Op::Read, 0)), H, "hot unit survives the scan");
    // A ghost hit goes straight to main.
    let before = p.queue_lens();
    assert_eq!(p.access(&r(Op::Read, 100)), M);
    assert_eq!(p.stats().blocks_used, 10);
    assert!(p.queue_lens().1 >= before.1);
}

#[test]
fn opt_by_hand() {
    // Belady on 3 units: 1 2 3 4 1 2 5 1 2 3 4 5 gives 5 hits (textbook: 7 faults).
    let seq = [1u64, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5];
    let reqs: Vec<Request> = seq.iter().map(|&u| r(Op::Read, u)).collect();
    let mut p = Opt::new(&reqs, 3 * U, U).expect("valid");
    for q in &reqs {
        p.access(q);
    }
    assert_eq!(p.stats().read_hits, 5);
    let mut l = Lru::new(3 * U, U).expect("valid");
    for q in &reqs {
        l.access(q);
    }
    assert_eq!(l.stats().read_hits, 2);
    // Bypass: with one unit, A B A keeps A (B is never read again).
    let reqs: Vec<Request> = [1u64, 2, 1].iter().map(|&u| r(Op::Read, u)).collect();
    let mut p = Opt::new(&reqs, U, U).expect("valid");
    let out: Vec<Access> = reqs.iter().map(|q| p.access(q)).collect();
    assert_eq!(out, [M, M, H]);
    // A request that is not the expected one does not derail it.
    let mut p = Opt::new(&reqs, U, U).expect("valid");
    p.access(&r(Op::Read, 7));
    assert!(p.stats().reads == 1);
}

/// Che's approximation: hit ratio of LRU with `c` units under independent references with
/// probabilities `lambda` (summing to 1).
fn che(lambda: &[f64], c: f64) -> f64 {
    let occ = |t: f64| lambda.iter().map(|l| 1.0 - (-l * t).exp()).sum::<f64>();
    let (mut lo, mut hi) = (0.0, 1.0);
    while occ(hi) < c {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if occ(mid) < c {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    lambda.iter().map(|l| l * (1.0 - (-l * t).exp())).sum::<f64>()
}

#[test]
fn lru_matches_che_on_zipf() {
    const N: usize = 100_000;
    const WARM: usize = 300_000;
    const MEASURE: usize = 1_000_000;
    for (theta, seed) in [(0.8, 1u64), (1.0, 2)] {
        let h: f64 = (1..=N).map(|i| (i as f64).powf(-theta)).sum();
        let lambda: Vec<f64> = (1..=N).map(|i| (i as f64).powf(-theta) / h).collect();
        let zipf = Zipf::new(N as f64, theta).expect("zipf");
        let mut rng = SmallRng::seed_from_u64(seed);
        let trace: Vec<Request> = (0..WARM + MEASURE)
            .map(|_| {
                let rank = zipf.sample(&mut rng) as u64; // 1..=N
                r(Op::Read, rank - 1)
            })
            .collect();
        for c in [1_000u64, 5_000, 20_000] {
            let mut lru = Lru::new(c * U, U).expect("valid");
            for q in &trace[..WARM] {
                lru.access(q);
            }
            let warm = *lru.stats();
            for q in &trace[WARM..] {
                lru.access(q);
            }
            let sim = lru.stats().since(&warm).read_hit_ratio();
            let model = che(&lambda, c as f64);
            println!("theta {theta} C {c}: simulated {sim:.4}, Che {model:.4}");
            assert!((sim - model).abs() < 0.02, "theta {theta} C {c}: simulated {sim:.4}, Che {model:.4}");
        }
    }
}

/// Every policy under test, for `units` units of `U` bytes.
fn contenders(units: u64) -> Vec<Box<dyn Policy>> {
    let qsan = |mode, por, pow| -> Box<dyn Policy> {
        Box::new(
            QsanCache::new(CacheConfig {
                capacity_bytes: units * U,
                block_bytes: U,
                sub_block_bytes: U,
                por,
                pow,
                mode,
                seq_cutoff: None,
            })
            .expect("valid"),
        )
    };
    vec![
        Box::new(Lru::new(units * U, U).expect("valid")),
        Box::new(Nhit::new(units * U, U).expect("valid")),
        Box::new(Nhit::with_params(units * U, U, 2, 0).expect("valid")),
        Box::new(S3Fifo::new(units * U, U).expect("valid")),
        qsan(Mode::WriteThrough, 1, 1),
        qsan(Mode::WriteThrough, 2, 0),
        qsan(Mode::WriteBack, 2, 1),
        qsan(Mode::WriteBack, 1, 2),
        qsan(Mode::WriteAround, 1, 0),
        qsan(Mode::ReadOnly, 3, 0),
    ]
}

fn run(p: &mut dyn Policy, reqs: &[Request]) -> Stats {
    for q in reqs {
        p.access(q);
    }
    *p.stats()
}

fn small_trace() -> impl Strategy<Value = Vec<Request>> {
    let req = (0u64..12, 0u8..10).prop_map(|(u, op)| {
        let op = match op {
            0..=6 => Op::Read,
            7 | 8 => Op::Write,
            _ => Op::Discard,
        };
        r(op, u)
    });
    proptest::collection::vec(req, 1..120)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// OPT gets at least as many read hits as every other policy on unit-sized requests, and
    /// every policy's hit ratio lies in [0, OPT's].
    #[test]
    fn opt_bounds_every_policy(reqs in small_trace(), units in 1u64..6) {
        let mut opt = Opt::new(&reqs, units * U, U).expect("valid");
        let best = run(&mut opt, &reqs);
        for mut p in contenders(units) {
            let s = run(p.as_mut(), &reqs);
            prop_assert!(s.read_hits <= best.read_hits, "{} {} > opt {}", p.name(), s.read_hits, best.read_hits);
            prop_assert_eq!(s.read_hits + s.read_partial_hits + s.read_misses, s.reads);
            prop_assert_eq!(s.reads, best.reads);
            prop_assert!(s.blocks_used <= units);
            let h = s.read_hit_ratio();
            prop_assert!((0.0..=best.read_hit_ratio() + 1e-12).contains(&h));
        }
    }
}

fn any_request() -> impl Strategy<Value = Request> {
    let offset = prop_oneof![0u64..1 << 24, any::<u64>(), (u64::MAX - (1 << 20))..=u64::MAX];
    let len = prop_oneof![20 => 0u32..70_000, 1 => Just(0u32), 1 => Just(u32::MAX)];
    let op = prop_oneof![Just(Op::Read), Just(Op::Write), Just(Op::Discard), Just(Op::Flush)];
    (any::<u64>(), offset, len, op, prop_oneof![Just(0u32), any::<u32>()])
        .prop_map(|(t_ns, offset, len, op, dev)| Request { t_ns, offset, len, op, dev })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// No policy panics on arbitrary requests (zero length, huge lengths, offsets near the
    /// end of the 64-bit space, any device), and the request counters add up.
    #[test]
    fn never_panics(reqs in proptest::collection::vec(any_request(), 0..40)) {
        const UNIT: u64 = 64 * 1024;
        let mut all: Vec<Box<dyn Policy>> = vec![
            Box::new(Lru::new(8 * UNIT, UNIT).expect("valid")),
            Box::new(Nhit::new(8 * UNIT, UNIT).expect("valid")),
            Box::new(S3Fifo::new(8 * UNIT, UNIT).expect("valid")),
            Box::new(Opt::new(&reqs, 8 * UNIT, UNIT).expect("valid")),
        ];
        for mode in [Mode::WriteThrough, Mode::WriteBack, Mode::WriteAround, Mode::ReadOnly] {
            let cfg = CacheConfig::web(16 << 20).with_mode(mode).with_thresholds(1, 1).with_seq_cutoff(Some(1 << 20));
            all.push(Box::new(QsanCache::new(cfg).expect("valid")));
            all.push(Box::new(QsanCache::with_counter_limit(cfg.with_thresholds(2, 2), 3).expect("valid")));
        }
        for p in &mut all {
            let s = run(p.as_mut(), &reqs);
            let n = reqs.len() as u64;
            prop_assert_eq!(s.reads + s.writes + s.discards + s.flushes + s.empty, n);
            prop_assert_eq!(s.read_hits + s.read_partial_hits + s.read_misses, s.reads);
            prop_assert_eq!(s.write_hits + s.write_misses, s.writes);
            prop_assert!(s.valid_bytes <= s.capacity_bytes);
            prop_assert!(s.dirty_bytes <= s.valid_bytes);
            prop_assert!(s.blocks_used <= s.capacity_blocks);
        }
    }
}

#[test]
fn random_mixed_traces_keep_invariants() {
    let mut rng = SmallRng::seed_from_u64(42);
    let reqs: Vec<Request> = (0..20_000)
        .map(|i| {
            let op = match rng.random_range(0..20) {
                0..=13 => Op::Read,
                14..=17 => Op::Write,
                18 => Op::Discard,
                _ => Op::Flush,
            };
            Request {
                t_ns: i * 1000,
                offset: rng.random_range(0..64u64 << 20) & !511,
                len: rng.random_range(1..64) * 512,
                op,
                dev: rng.random_range(0..2),
            }
        })
        .collect();
    for mut p in contenders(64) {
        let s = run(p.as_mut(), &reqs);
        assert_eq!(s.read_hits + s.read_partial_hits + s.read_misses, s.reads, "{}", p.name());
        assert!(s.dirty_bytes <= s.valid_bytes && s.valid_bytes <= s.capacity_bytes, "{}", p.name());
        assert_eq!(s.hdd_read_bytes, s.read_bytes_hdd + s.fill_hdd_bytes, "{}", p.name());
        assert_eq!(s.hdd_write_bytes, s.write_bytes_hdd + s.dirty_eviction_bytes, "{}", p.name());
    }
}
