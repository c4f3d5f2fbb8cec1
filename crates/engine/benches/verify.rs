//! Throughput of data verification on the I/O path, per checksum kind:
//!
//! * `verify/stamp/<kind>/<size>` — `verify::stamp_block` (payload, digest, header) of one
//!   4 KiB or 128 KiB block of 4 KiB chunks;
//! * `verify/check/<kind>/<size>` — `verify::check_block` of the same block;
//! * `verify/fill/<size>` — `verify::fill_payload` alone (the payload generator).
//!
//! Throughput is in bytes, so criterion reports GB/s.
//!
//!   cargo bench -p diskmeter-engine --bench verify -- --quick

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use diskmeter_engine::verify::{check_block, fill_payload, stamp_block, BlockStamp, CheckKind, Context, Expect};
use std::hint::black_box;

const INTERVAL: usize = 4096;
const SIZES: [(usize, &str); 2] = [(4096, "4k"), (128 << 10, "128k")];
const PATTERN: &[u8] = &[0xde, 0xad, 0xbe, 0xef];
const RUN_ID: u64 = 0xfeed;

fn bench_verify(c: &mut Criterion) {
    let mut g = c.benchmark_group("verify");
    let s = BlockStamp { run_id: RUN_ID, job: 0, worker: 0, timestamp_ns: 1 };
    for (size, label) in SIZES {
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_function(BenchmarkId::new("fill", label), |b| {
            let mut buf = vec![0u8; size];
            let mut seed = 0u64;
            b.iter(|| {
                seed += 1;
                fill_payload(seed, black_box(&mut buf));
            });
        });
        for kind in CheckKind::ALL {
            let ctx = Context { run_seed: 42, kind, pattern: PATTERN };
            let mut block = vec![0u8; size];
            g.bench_function(BenchmarkId::new(format!("stamp/{kind}"), label), |b| {
                let mut generation = 0u32;
                b.iter(|| {
                    generation += 1;
                    stamp_block(black_box(&mut block), 1 << 30, INTERVAL, &s, &ctx, |_| generation).ok();
                });
            });
            stamp_block(&mut block, 1 << 30, INTERVAL, &s, &ctx, |_| 3).ok();
            let expect = |offset| Expect { offset, generation: 3, job: 0, run_id: RUN_ID, len: INTERVAL as u32 };
            g.bench_function(BenchmarkId::new(format!("check/{kind}"), label), |b| {
                b.iter(|| {
                    let bad = check_block(black_box(&block), 1 << 30, INTERVAL, &ctx, expect, |_, _| {});
                    assert_eq!(bad, Ok(0));
                });
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_verify);
criterion_main!(benches);
