//! Reader throughput on ~1 M generated requests held in memory (no disk I/O measured):
//! MSR-like CSV (plain and gzip'd), blkparse text, and the binary format; plus synthetic
//! trace generation. `blkparse_paired/*`: 256 Ki requests as Q, G, D and C lines with 32 in
//! flight, read keeping D (each paired with its C for the recorded latency) and keeping C
//! (no pairing), so the difference is the cost of pairing.
//!
//! `cargo bench -p diskmeter-trace --bench parse -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::io::{Cursor, Write};
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use diskmeter_trace::{
    parse_dist, BinaryReader, BinaryWriter, Op, ReadOptions, Request, SynthSpec, TraceFormat, TraceReader,
};

const N: u64 = 1_000_000;

/// A cheap deterministic pseudo-random sequence (the benchmark must not depend on rand's
/// output staying the same).
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 32)
}

fn msr_text() -> Vec<u8> {
    let mut out = Vec::with_capacity(64 * N as usize);
    for i in 0..N {
        let r = mix(i);
        let ty = if r & 3 == 0 { "Write" } else { "Read" };
        let offset = (r >> 8) % (1 << 26) * 4096;
        let size = 4096 << (r >> 60 & 3);
        // One disk, as in the MSR files (one file per host volume, e.g. hm_0.csv).
        let _ = writeln!(out, "{},hm,0,{ty},{offset},{size},{}", 128166372003061629 + i * 1733, r % 50000);
    }
    out
}

fn blkparse_text() -> Vec<u8> {
    let mut out = Vec::with_capacity(80 * N as usize);
    for i in 0..N {
        let r = mix(i);
        let rwbs = if r & 3 == 0 { "WS" } else { "R" };
        let t = i * 17_331;
        let _ = writeln!(
            out,
            "  8,16   {:>1} {:>8} {:>5}.{:09} {:>5}  Q {:>3} {} + {} [fio]",
            r % 8,
            i + 1,
            t / 1_000_000_000,
            t % 1_000_000_000,
            2923 + r % 4,
            rwbs,
            (r >> 8) % (1 << 29),
            8 << (r >> 60 & 3)
        );
    }
    out
}

/// Requests in the paired blkparse benchmark.
const N_PAIRED: u64 = 256 * 1024;
/// Requests in flight: each C line comes this many requests after its D.
const DEPTH: u64 = 32;

fn blkparse_paired_text() -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * 80 * N_PAIRED as usize);
    let line = |out: &mut Vec<u8>, seq: u64, t: u64, act: &str, i: u64| {
        let r = mix(i);
        let rwbs = if r & 3 == 0 { "WS" } else { "R" };
        let _ = writeln!(
            out,
            "  8,16   {:>1} {:>8} {:>5}.{:09} {:>5}  {act} {:>3} {} + {} [fio]",
            r % 8,
            seq,
            t / 1_000_000_000,
            t % 1_000_000_000,
            2923 + r % 4,
            rwbs,
            (r >> 8) % (1 << 29),
            8 << (r >> 60 & 3)
        );
    };
    let mut seq = 0;
    for i in 0..N_PAIRED + DEPTH {
        let t = i * 17_331;
        if i < N_PAIRED {
            for act in ["Q", "G", "D"] {
                seq += 1;
                line(&mut out, seq, t + seq % 3 * 100, act, i);
            }
        }
        if let Some(done) = i.checked_sub(DEPTH) {
            seq += 1;
            line(&mut out, seq, t + 500, "C", done);
        }
    }
    out
}

fn binary_trace() -> Vec<u8> {
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).expect("in-memory writer");
    let _ = w.define_device("8,16");
    for i in 0..N {
        let r = mix(i);
        let op = if r & 3 == 0 { Op::Write } else { Op::Read };
        let req = Request { t_ns: i * 17_331, offset: (r >> 8) % (1 << 26) * 4096, len: 4096, op, dev: 0 };
        w.push(req).expect("in-memory write");
    }
    w.finish().expect("in-memory finish").into_inner()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = gz.write_all(bytes);
    gz.finish().unwrap_or_default()
}

fn count(input: &Arc<[u8]>, format: &TraceFormat) -> u64 {
    count_n(input, format, N)
}

fn count_n(input: &Arc<[u8]>, format: &TraceFormat, want: u64) -> u64 {
    let mut r =
        TraceReader::from_reader(Cursor::new(Arc::clone(input)), format, &ReadOptions::default()).expect("reader");
    let mut n = 0u64;
    let mut bytes = 0u64;
    let mut lat = 0u64;
    while let Some(req) = r.next() {
        let req = req.expect("valid generated trace");
        bytes += u64::from(req.len);
        lat = lat.wrapping_add(r.recorded_latency_ns().unwrap_or(0));
        n += 1;
    }
    black_box((bytes, lat));
    assert_eq!(n, want);
    n
}

fn bench(c: &mut Criterion) {
    let msr: Arc<[u8]> = msr_text().into();
    let msr_gz: Arc<[u8]> = gzip(&msr).into();
    let blk: Arc<[u8]> = blkparse_text().into();
    let bin: Arc<[u8]> = binary_trace().into();
    let paired: Arc<[u8]> = blkparse_paired_text().into();
    eprintln!(
        "inputs: MSR {} MB ({} MB gzip'd), blkparse {} MB, binary {} MB, {N} requests each",
        msr.len() >> 20,
        msr_gz.len() >> 20,
        blk.len() >> 20,
        bin.len() >> 20
    );

    let mut g = c.benchmark_group("parse");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N));
    g.bench_function("msr_csv", |b| b.iter(|| count(&msr, &TraceFormat::Msr)));
    g.bench_function("msr_csv_gz", |b| b.iter(|| count(&msr_gz, &TraceFormat::Msr)));
    g.bench_function("blkparse", |b| b.iter(|| count(&blk, &TraceFormat::Blkparse { action: 'Q' })));
    g.bench_function("binary_trace_reader", |b| b.iter(|| count(&bin, &TraceFormat::Binary)));
    g.bench_function("binary_raw", |b| {
        b.iter(|| {
            let r = BinaryReader::new(Cursor::new(Arc::clone(&bin))).expect("binary header");
            let mut n = 0u64;
            for req in r {
                black_box(req.expect("valid binary"));
                n += 1;
            }
            assert_eq!(n, N);
        })
    });
    g.finish();

    let mut g = c.benchmark_group("blkparse_paired");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N_PAIRED));
    g.bench_function("keep_d_pair_c", |b| {
        b.iter(|| count_n(&paired, &TraceFormat::Blkparse { action: 'D' }, N_PAIRED))
    });
    g.bench_function("keep_c", |b| b.iter(|| count_n(&paired, &TraceFormat::Blkparse { action: 'C' }, N_PAIRED)));
    g.finish();

    let mut g = c.benchmark_group("synth");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N));
    for dist in ["uniform", "zipf:0.9", "hotset:90/10"] {
        let spec = SynthSpec {
            dist: parse_dist(dist).expect("valid distribution"),
            blocks: 25_000_000,
            requests: N,
            read_pct: 70,
            ..SynthSpec::default()
        };
        g.bench_function(dist, |b| {
            b.iter(|| spec.iter().expect("valid spec").fold(0u64, |acc, r| acc ^ r.offset));
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
