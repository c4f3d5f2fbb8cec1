//! Throughput of the miss-ratio-curve builders in `diskmeter_cachesim::mrc`:
//!
//! * `mattson/zipf0.9/100k` — exact Mattson stack distances, 5 M references Zipf(0.9) over
//!   100 k keys;
//! * `mattson/uniform/100k`, `mattson/uniform/1M` — 5 M uniform references over 100 k / 1 M
//!   keys (every key is touched, large distances: the Fenwick tree's worst case for caches);
//! * `mattson/zipf0.9/1M` — 5 M Zipf(0.9) references over 1 M keys;
//! * `shards1%/…` — fixed-rate SHARDS at R = 0.01 (with adjustment) on the 1 M-key traces.
//!
//! Each iteration builds one whole curve from 5 M pre-drawn keys (`push_key` + `finish`);
//! the throughput is declared as 5 M elements, so criterion reports references/s.
//!
//!   cargo bench -p diskmeter-cachesim --bench mrc -- --warm-up-time 1 --measurement-time 3

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use diskmeter_cachesim::mrc::{Mattson, OpFilter, Shards, ShardsConfig};
use std::hint::black_box;

const REFS: usize = 5_000_000;

/// `n` keys Zipf(`s`) (or uniform for `s` = 0) over `keys` keys, from the generator behind
/// `diskmeter cache synth`; ranks are scattered over the key space so hot keys are not
/// numerically adjacent.
fn synth_keys(n: usize, keys: u64, s: f64, seed: u64) -> Vec<u64> {
    let spec = trace::SynthSpec {
        dist: if s == 0.0 { trace::Dist::Uniform } else { trace::Dist::Zipf(s) },
        blocks: keys,
        requests: n as u64,
        seed,
        ..trace::SynthSpec::default()
    };
    spec.iter().expect("valid synth spec").map(|r| r.offset / u64::from(spec.block_size)).collect()
}

fn zipf(n: usize, keys: u64, s: f64, seed: u64) -> Vec<u64> {
    synth_keys(n, keys, s, seed)
}

fn uniform(n: usize, keys: u64, seed: u64) -> Vec<u64> {
    synth_keys(n, keys, 0.0, seed)
}

fn distinct(ks: &[u64]) -> usize {
    let mut v = ks.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len()
}

fn bench(c: &mut Criterion) {
    let traces = [
        ("zipf0.9/100k", zipf(REFS, 100_000, 0.9, 1)),
        ("uniform/100k", uniform(REFS, 100_000, 2)),
        ("zipf0.9/1M", zipf(REFS, 1_000_000, 0.9, 3)),
        ("uniform/1M", uniform(REFS, 1_000_000, 4)),
    ];
    for (name, ks) in &traces {
        eprintln!("trace {name}: {} references, {} distinct keys", ks.len(), distinct(ks));
    }

    let mut g = c.benchmark_group("mattson");
    g.sample_size(10);
    g.throughput(Throughput::Elements(REFS as u64));
    for (name, ks) in &traces {
        g.bench_with_input(BenchmarkId::from_parameter(name), ks, |b, ks| {
            b.iter(|| {
                let mut m = Mattson::new(4096, OpFilter::ReadsAndWrites);
                for &k in ks {
                    m.push_key(k);
                }
                black_box(m.finish())
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("shards1%");
    g.sample_size(10);
    g.throughput(Throughput::Elements(REFS as u64));
    let cfg = ShardsConfig::fixed_rate(0.01);
    for (name, ks) in traces.iter().filter(|(n, _)| n.ends_with("1M")) {
        g.bench_with_input(BenchmarkId::from_parameter(name), ks, |b, ks| {
            b.iter(|| {
                let Ok(mut s) = Shards::new(4096, OpFilter::ReadsAndWrites, &cfg) else { return None };
                for &k in ks {
                    s.push_key(k);
                }
                Some(black_box(s.finish()))
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
