#![allow(clippy::unwrap_used)]

//! HTML report tests: hand-built documents for each command (the same builders write
//! `tests/data/*.json` for the browser test), structural checks on the page, and a
//! property test that random documents never panic.

use std::time::Duration;

use proptest::prelude::*;
use spec::{DataPattern, Distribution, JobSpec, RwMode};
use stats::{
    codes, Aggregate, BlockCounts, ByteCounts, CachePoint, CacheResult, CacheSetup, CdfPoint, CompareResult,
    CompareRow, CpuUsage, DirStats, ErrorInfo, HostInfo, JobResult, LatHist, LatSummary, MrcPoint, MrcResult,
    PassResult, Percentile, PerfPrediction, PolicyResult, RequestCounts, ResultDoc, SampleStats, SeriesPoint, SlaPoint,
    SlaResult, SlaStream, Subject, TargetInfo, TargetKind, TestKind, Thrash, TraceSummary, Verdict, Versus,
    WarmupEstimate,
};

use diskmeter_report::html::{render_html, MAX_COMPARE_CHARTS, MAX_TIMELINES};
use diskmeter_report::{render, Format};

mod common;

// ---------------------------------------------------------------------------------------
// fixture builders

fn host() -> HostInfo {
    HostInfo {
        kernel: "6.8.0-45-generic".into(),
        cpus: 16,
        memory_bytes: 32 << 30,
        cpu_model: Some("AMD Ryzen 9 7950X 16-Core Processor".into()),
        hostname: Some("bench-01".into()),
        ..HostInfo::default()
    }
}

fn nvme_target(path: &str, kind: TargetKind, size: u64) -> TargetInfo {
    let mut t = TargetInfo::new(path, kind, size);
    t.device = Some("nvme0n1".into());
    t.model = Some("Samsung SSD 990 PRO 2TB".into());
    t.rotational = Some(false);
    t.scheduler = Some("none".into());
    t.physical_block = 4096;
    t.filesystem = if kind == TargetKind::File { Some("ext4".into()) } else { None };
    t.dio_mem_align = Some(4);
    t.dio_offset_align = Some(512);
    t
}

/// Deterministic pseudo-random numbers in [0, 1) (xorshift), for jitter only.
struct Jitter(u64);

impl Jitter {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A latency histogram with a log-logistic shape: median `median_ns`, tail heaviness `s`
/// (0.2 = tight, 0.5 = long tail), plus an occasional stall of `stall_ns`.
fn hist(median_ns: f64, s: f64, stall_ns: f64) -> LatHist {
    let mut h = LatHist::new();
    let n = 20_000;
    for i in 0..n {
        let u = (f64::from(i) + 0.5) / f64::from(n);
        h.record((median_ns * (u / (1.0 - u)).powf(s)).round() as u64);
    }
    if stall_ns > 0.0 {
        h.record_n(stall_ns as u64, 3);
    }
    h
}

/// Figures of one direction: `iops` for `seconds`, latency from `h`.
fn dir(bs: u64, iops: f64, seconds: f64, h: &LatHist, qd: f64) -> DirStats {
    let ops = (iops * seconds).round() as u64;
    DirStats::new(ops, ops * bs, seconds, h, qd)
}

/// A per-second series around `iops` / `p99_ns` with jitter, an optional dip (garbage
/// collection) and, for mixed jobs, a write share.
fn series(
    secs: u32,
    bs: u64,
    iops: f64,
    p99_ns: f64,
    write_share: f64,
    dip_at: Option<u32>,
    seed: u64,
) -> Vec<SeriesPoint> {
    let mut j = Jitter(seed | 1);
    (1..=secs)
        .map(|t| {
            let dip = match dip_at {
                Some(d) if t >= d && t < d + 3 => 0.45,
                _ => 1.0,
            };
            let total = iops * dip * (0.96 + 0.08 * j.next());
            let lat = p99_ns / dip * (0.9 + 0.25 * j.next());
            let (r, w) = (total * (1.0 - write_share), total * write_share);
            SeriesPoint {
                t_s: f64::from(t),
                read_iops: r,
                read_mb_s: r * bs as f64 / 1e6,
                read_lat_mean_ns: lat / 2.4,
                read_lat_p99_ns: if r > 0.0 { lat as u64 } else { 0 },
                write_iops: w,
                write_mb_s: w * bs as f64 / 1e6,
                write_lat_mean_ns: if w > 0.0 { lat / 1.9 } else { 0.0 },
                write_lat_p99_ns: if w > 0.0 { (lat * 1.3) as u64 } else { 0 },
                unix_s: None,
            }
        })
        .collect()
}

fn spec(name: &str, rw: RwMode, bs: u64, qd: u32, threads: u32, runtime: u64) -> JobSpec {
    JobSpec {
        name: name.into(),
        rw,
        bs,
        qd,
        threads,
        runtime: Duration::from_secs(runtime),
        size: Some(8 << 30),
        ..JobSpec::default()
    }
}

/// `mark --profile default` on an NVMe SSD: four tests × three passes, CDFs kept.
fn mark_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("mark", "2025-03-02T09:14:05Z", host());
    doc.tool.version = "0.1.0".into();
    let mut t = nvme_target("/home/user/diskmeter.test", TargetKind::File, 1 << 30);
    t.created_by_diskmeter = true;
    doc.target = Some(t);
    // (label, random, bs, qd, read MB/s, write MB/s)
    let tests = [
        ("SEQ1M Q8T1", false, 1u64 << 20, 8u32, 7105.31, 6712.84),
        ("SEQ1M Q1T1", false, 1 << 20, 1, 3921.07, 4410.22),
        ("RND4K Q32T1", true, 4096, 32, 1874.66, 1503.18),
        ("RND4K Q1T1", true, 4096, 1, 92.41, 301.77),
    ];
    for (k, (label, random, bs, qd, rd, wr)) in tests.into_iter().enumerate() {
        let rw = if random { RwMode::RandRead } else { RwMode::Read };
        let mut s = spec(label, rw, bs, qd, 1, 5);
        s.size = Some(1 << 30);
        let mut r = JobResult::new(s);
        let mut j = Jitter(17 + k as u64);
        let passes = (1..=3)
            .map(|p| {
                let f = 0.97 + 0.04 * j.next();
                let ri = rd * 1e6 / bs as f64 * f;
                let wi = wr * 1e6 / bs as f64 * f;
                let rh = hist(f64::from(qd) / ri * 1e9 * 0.92, if random { 0.35 } else { 0.18 }, 0.0);
                let wh = hist(f64::from(qd) / wi * 1e9 * 0.9, 0.3, if random { 4e6 } else { 0.0 });
                PassResult {
                    pass: p,
                    read: Some(dir(bs, ri, 5.0, &rh, f64::from(qd) * 0.98)),
                    write: Some(dir(bs, wi, 5.0, &wh, f64::from(qd) * 0.97)),
                    histograms: None,
                    whole_bursts: Vec::new(),
                }
            })
            .collect();
        r.set_passes(passes, Aggregate::Max);
        r.cpu = CpuUsage { user_pct: 1.4, sys_pct: 7.9, max_worker_pct: 38.0, poll_us: 0 };
        doc.results.push(r);
    }
    doc.warn(
        codes::SMALL_TEST_AREA,
        "test area 1 GiB is smaller than RAM (32 GiB); use --size 64G to measure past caches",
    );
    doc
}

/// `run` with three jobs: a random read, a mixed job (with a name that needs escaping)
/// and a sequential write with a stall.
fn run_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("run", "2025-03-02T10:02:41Z", host());
    doc.tool.version = "0.1.0".into();
    doc.target = Some(nvme_target("/dev/nvme0n1", TargetKind::Block, 2_000_398_934_016));

    let mut a = JobResult::new(spec("randread-4k", RwMode::RandRead, 4096, 32, 1, 30));
    let h = hist(68_000.0, 0.32, 2.1e6);
    a.read = Some(dir(4096, 452_310.0, 30.0, &h, 31.7));
    a.series = series(30, 4096, 452_310.0, 182_000.0, 0.0, None, 3);
    a.cpu = CpuUsage { user_pct: 4.1, sys_pct: 22.5, max_worker_pct: 61.0, poll_us: 0 };

    let mut s = spec("oltp <b>& mix", RwMode::RandRw, 8192, 16, 4, 60);
    s.mix = 70;
    s.dist = Distribution::Zoned {
        zones: vec![spec::Zone { ops_pct: 90.0, area_pct: 10.0 }, spec::Zone { ops_pct: 10.0, area_pct: 90.0 }],
    };
    s.data = DataPattern::Compress { pct: 50 };
    s.fsync = 64;
    let mut b = JobResult::new(s);
    b.read = Some(dir(8192, 171_220.0, 60.0, &hist(212_000.0, 0.38, 0.0), 44.1));
    b.write = Some(dir(8192, 73_380.0, 60.0, &hist(298_000.0, 0.42, 8e6), 19.6));
    b.series = series(60, 8192, 244_600.0, 640_000.0, 0.3, Some(37), 11);
    b.cpu = CpuUsage { user_pct: 9.4, sys_pct: 41.0, max_worker_pct: 17.9, poll_us: 0 };
    b.fsyncs = 68_791;

    let mut c = JobResult::new(spec("seqwrite-1m", RwMode::Write, 1 << 20, 8, 1, 20));
    c.write = Some(dir(1 << 20, 6_120.0, 20.0, &hist(1_250_000.0, 0.2, 0.0), 7.9));
    c.series = series(20, 1 << 20, 6_120.0, 1_900_000.0, 1.0, Some(12), 5);
    c.cpu = CpuUsage { user_pct: 0.6, sys_pct: 3.2, max_worker_pct: 9.0, poll_us: 0 };

    doc.results = vec![a, b, c];
    doc.warn(codes::ZERO_DATA, "job oltp <b>& mix writes 50% compressible data; compressing devices look faster");
    doc.warn(codes::DEVICE_CACHE_UNKNOWN, "the device's write cache size is unknown: <script>alert(1)</script>");
    doc
}

fn sla_lat(metric_ns: f64) -> LatSummary {
    let p99 = metric_ns.round() as u64;
    LatSummary {
        min: (metric_ns * 0.08) as u64,
        mean: (metric_ns * 0.38).round(),
        stddev: (metric_ns * 0.2).round(),
        p50: (metric_ns * 0.33) as u64,
        p90: (metric_ns * 0.61) as u64,
        p99,
        p99_9: (metric_ns * 1.7) as u64,
        p99_99: (metric_ns * 3.1) as u64,
        max: (metric_ns * 6.0) as u64,
    }
}

fn sla_point(qd: u32, threads: u32, bound: f64, t_s: f64) -> SlaPoint {
    let o = f64::from(qd * threads);
    // Throughput saturates at ~480k IOPS; latency follows Little's law plus a floor, and
    // climbs steeply once the device queue is full.
    let iops = 480_000.0 * o / (o + 22.0) * if threads > 1 { 1.04 } else { 1.0 };
    let metric = (o / iops * 1e9) * 2.6 + 38_000.0 + if o > 64.0 { (o - 64.0) * 9_000.0 } else { 0.0 };
    let mb_s = iops * 4096.0 / 1e6;
    SlaPoint {
        qd,
        threads,
        rate_iops: None,
        outstanding: qd * threads,
        iops,
        mb_s,
        lat_ns: sla_lat(metric),
        metric_ns: metric,
        feasible: metric <= bound,
        windows: if o > 100.0 { 3 } else { 5 },
        cv_iops: 0.012 + o / 8000.0,
        cv_lat: 0.02 + o / 3000.0,
        stable: o < 200.0,
        remeasured: (metric - bound).abs() < bound * 0.12,
        early_reject: metric > bound * 2.5,
        t_s,
        streams: vec![SlaStream { name: "randread".into(), qd, threads, iops, mb_s, lat_ns: sla_lat(metric) }],
    }
}

/// `sla --latency 1ms --percentile 99` on random 4 KiB reads.
fn sla_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("sla", "2025-03-02T11:30:00Z", host());
    doc.tool.version = "0.1.0".into();
    doc.target = Some(nvme_target("/dev/nvme0n1", TargetKind::Block, 2_000_398_934_016));
    let bound = 1_000_000.0;
    let grid =
        [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (32, 1), (64, 1), (128, 1), (256, 1), (32, 2), (64, 2), (48, 2)];
    let points: Vec<SlaPoint> =
        grid.iter().enumerate().map(|(i, &(q, t))| sla_point(q, t, bound, 6.0 * (i as f64 + 1.0))).collect();
    let best = points.iter().filter(|p| p.feasible).max_by(|a, b| a.iops.total_cmp(&b.iops)).cloned();
    let knee = points.iter().find(|p| p.qd == 16 && p.threads == 1).cloned();
    let b = best.clone().unwrap();
    let verdict = format!(
        "/dev/nvme0n1 sustains {:.0} IOPS ({:.1} MB/s) at p99 {} <= 1.00 ms with {} I/Os outstanding (QD {} x {} workers); beyond that latency climbs past the bound (knee at 16 outstanding: {:.0} IOPS, p99 {}; past it latency grows faster than throughput).",
        b.iops,
        b.mb_s,
        diskmeter_report::fmt::lat(b.metric_ns),
        b.outstanding,
        b.qd,
        b.threads,
        knee.as_ref().unwrap().iops,
        diskmeter_report::fmt::lat(knee.as_ref().unwrap().metric_ns),
    );
    // The best point's job result, with its series and CDF.
    let mut r = JobResult::new(spec(
        &format!("best: randread Q{}T{}", b.qd, b.threads),
        RwMode::RandRead,
        4096,
        b.qd,
        b.threads,
        10,
    ));
    // p99 of a log-logistic with s = 0.3 is the median × 99^0.3.
    let median = b.metric_ns / 99f64.powf(0.3);
    r.read = Some(dir(4096, b.iops, 10.0, &hist(median, 0.3, 0.0), f64::from(b.outstanding)));
    r.series = series(10, 4096, b.iops, b.metric_ns, 0.0, None, 23);
    doc.results.push(r);
    doc.sla = Some(SlaResult {
        latency_ns: bound as u64,
        percentile: Percentile::P99,
        mode: "closed-loop".into(),
        exhaustive: false,
        streams: vec!["randread".into()],
        bs: 4096,
        best,
        points,
        knee,
        thrashing: vec![Thrash { threads: 1, from_qd: 128, to_qd: 256, from_iops: 409_000.0, to_iops: 401_500.0 }],
        qd1_misses: false,
        search_seconds: 94.2,
        verdict,
    });
    doc.warn(
        codes::UNSTABLE,
        "1 of 12 points did not settle (coefficient of variation >= 5% after 10 windows): Q256T1",
    );
    doc
}

fn sample(label: &str, values: &[f64], t: f64) -> SampleStats {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = t * sd / n.sqrt();
    SampleStats {
        label: label.into(),
        n: values.len() as u32,
        mean,
        stddev: sd,
        ci_low: mean - half,
        ci_high: mean + half,
        unit: "passes".into(),
        values: values.to_vec(),
    }
}

/// The subject against the baseline by the one rule (`stats::verdict`), as `compare` makes it.
fn versus(base: &SampleStats, s: &SampleStats, higher_is_better: bool) -> Versus {
    stats::compare_docs::compare_samples(
        &s.label,
        (&base.values, "passes"),
        (&s.values, "passes"),
        higher_is_better,
        TestKind::Welch,
    )
}

/// (test, direction, metric, higher is better, [mean A, B, C], relative spread)
type CompareSpec = (&'static str, &'static str, &'static str, bool, [f64; 3], f64);

/// `compare` of three drives, five passes each.
fn compare_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("compare", "2025-03-02T13:45:10Z", host());
    doc.tool.version = "0.1.0".into();
    let subjects = vec![
        Subject {
            label: "A".into(),
            source: "/mnt/a/diskmeter.test".into(),
            device: Some("nvme0n1 · Samsung SSD 990 PRO 2TB".into()),
            folder: None,
        },
        Subject {
            label: "B".into(),
            source: "/mnt/b/diskmeter.test".into(),
            device: Some("nvme1n1 · WD Black SN850X 2TB".into()),
            folder: None,
        },
        Subject {
            label: "C".into(),
            source: "/mnt/c/diskmeter.test".into(),
            device: Some("sda · Crucial MX500 1TB".into()),
            folder: None,
        },
    ];
    let spec: [CompareSpec; 7] = [
        ("SEQ1M Q8T1", "read", "mb_s", true, [7105.0, 7092.0, 561.0], 0.006),
        ("SEQ1M Q8T1", "write", "mb_s", true, [6712.0, 6420.0, 512.0], 0.01),
        ("RND4K Q32T1", "read", "mb_s", true, [1874.0, 2011.0, 352.0], 0.02),
        ("RND4K Q32T1", "write", "mb_s", true, [1503.0, 1496.0, 318.0], 0.03),
        ("RND4K Q1T1", "read", "iops", true, [22_560.0, 21_070.0, 9_210.0], 0.015),
        ("RND4K Q1T1", "read", "lat_mean_ns", false, [44_300.0, 47_460.0, 108_600.0], 0.015),
        ("RND4K Q1T1", "write", "mb_s", true, [301.0, 296.0, 121.0], 0.04),
    ];
    let mut j = Jitter(99);
    let rows = spec
        .iter()
        .map(|&(test, direction, metric, hib, means, spread)| {
            let samples: Vec<SampleStats> = subjects
                .iter()
                .zip(means)
                .map(|(s, m)| {
                    let vals: Vec<f64> = (0..5).map(|_| m * (1.0 + spread * (2.0 * j.next() - 1.0))).collect();
                    sample(&s.label, &vals, 2.776)
                })
                .collect();
            let versus = vec![versus(&samples[0], &samples[1], hib), versus(&samples[0], &samples[2], hib)];
            CompareRow {
                test: test.into(),
                direction: direction.into(),
                metric: metric.into(),
                higher_is_better: hib,
                samples,
                versus,
            }
        })
        .collect();
    doc.compare = Some(CompareResult {
        test: TestKind::Welch,
        confidence: 0.95,
        baseline: "A".into(),
        subjects,
        interleaved: true,
        rows,
    });
    doc.warn(codes::COMPARE_CAVEAT, "C is on a SATA link (6 Gb/s): sequential figures are capped by the interface");
    doc
}

// ---------------------------------------------------------------------------------------
// cache

const GIB: u64 = 1 << 30;

fn cache_trace() -> TraceSummary {
    TraceSummary {
        path: "/srv/traces/oltp-week1.blktrace".into(),
        format: "blkparse".into(),
        requests: 11_342_118,
        reads: 8_204_551,
        writes: 3_118_920,
        other: 18_647,
        read_bytes: 8_204_551 * 16_384,
        write_bytes: 3_118_920 * 12_288,
        span_s: 21_600.0,
        footprint_bytes: 1_410 * GIB,
        devices: vec!["sdb".into(), "sdc".into()],
        skipped_lines: 12,
    }
}

fn cache_setup() -> CacheSetup {
    CacheSetup {
        preset: "database".into(),
        capacity_bytes: 256 * GIB,
        block_bytes: 1 << 20,
        sub_block_bytes: 64 << 10,
        por: 2,
        pow: 1,
        mode: "write-back".into(),
        seq_cutoff_bytes: Some(4 << 20),
        ssd_bytes: 960 * GIB,
    }
}

/// One simulated policy: final hit ratio `hit`, warm-up time constant `tau_s`, time to fill
/// the cache `fill_s`.
fn policy(name: &str, hit: f64, tau_s: f64, fill_s: f64, seed: u64) -> PolicyResult {
    let t = cache_trace();
    let mut j = Jitter(seed | 1);
    let mut sum = 0.0;
    let series: Vec<CachePoint> = (1..=360)
        .map(|i| {
            let t_s = f64::from(i) * 60.0;
            let h = (hit * (1.0 - (-t_s / tau_s).exp()) + 0.05 * (j.next() - 0.5)).clamp(0.0, 1.0);
            sum += h;
            CachePoint {
                t_s,
                hit_ratio: sum / f64::from(i),
                interval_hit_ratio: h,
                occupancy: (t_s / fill_s).min(1.0) * (0.995 - 0.01 * j.next()).min(1.0),
            }
        })
        .collect();
    let warmup_s = series.iter().find(|p| p.interval_hit_ratio >= 0.9 * hit).map(|p| p.t_s);
    let read_hit_ratio = series.iter().map(|p| p.interval_hit_ratio).sum::<f64>() / series.len() as f64;
    let reads = t.reads as f64;
    let read_hits = (reads * read_hit_ratio) as u64;
    let partial_hits = (reads * 0.021) as u64;
    let read_misses = t.reads - read_hits - partial_hits;
    let write_hits = (t.writes as f64 * (hit - 0.08)) as u64;
    let bypasses = (t.writes as f64 * 0.06) as u64;
    let fill = read_misses * (1 << 20) / 6;
    let written_to_ssd = fill + write_hits * 12_288;
    let hdd_only_iops = 8.0 * 225.0;
    let ssd_limit = 95_000.0;
    let by_hdd = hdd_only_iops / (1.0 - read_hit_ratio * 0.73);
    let (max_iops, bottleneck) = if by_hdd < ssd_limit { (by_hdd, "hdd") } else { (ssd_limit, "ssd") };
    PolicyResult {
        name: name.into(),
        requests: RequestCounts {
            read_hits,
            partial_hits,
            read_misses,
            write_hits,
            write_misses: t.writes - write_hits - bypasses,
            bypasses,
            discards: 18_000,
            flushes: 647,
        },
        bytes: ByteCounts {
            read_from_ssd: (t.read_bytes as f64 * (read_hit_ratio + 0.03)) as u64,
            read_from_hdd: (t.read_bytes as f64 * (0.97 - read_hit_ratio)) as u64,
            written_to_ssd,
            written_to_hdd: t.write_bytes / 3,
            fill,
            dirty_evicted: t.write_bytes / 5,
        },
        blocks: BlockCounts { fills: read_misses / 6, evictions: read_misses / 7, dirty_evictions: read_misses / 40 },
        hdd_ops: read_misses + t.writes / 2,
        ssd_ops: read_hits + write_hits + read_misses / 6,
        read_hit_ratio,
        read_byte_hit_ratio: (read_hit_ratio + 0.03).min(1.0),
        capacity_blocks: 262_144,
        occupied_blocks: (262_144.0 * series.last().unwrap().occupancy) as u64,
        dwpd: Some(written_to_ssd as f64 * 4.0 / (960 * GIB) as f64),
        warmup_s,
        series,
        perf: Some(PerfPrediction {
            max_iops,
            bottleneck: bottleneck.into(),
            mean_latency_ns: read_hit_ratio * 140_000.0 + (1.0 - read_hit_ratio) * 8_300_000.0,
            hdd_only_iops,
            hdd_only_latency_ns: 8_300_000.0,
            gain_pct: (max_iops / hdd_only_iops - 1.0) * 100.0,
        }),
        sim_seconds: 3.4,
        sim_requests_per_s: 11_342_118.0 / 3.4,
    }
}

/// An exact LRU miss-ratio curve: 64 MiB .. 2 TiB in quarter-power-of-two steps.
fn mrc() -> MrcResult {
    let unit = 64u64 << 10;
    let (m_min, s0) = (0.12, 24.0 * GIB as f64);
    let points: Vec<MrcPoint> = (0..=60)
        .map(|i| {
            let s = 2f64.powf(26.0 + f64::from(i) / 4.0);
            let cache_bytes = ((s / unit as f64).round() as u64) * unit;
            MrcPoint { cache_bytes, miss_ratio: m_min + (1.0 - m_min) / (1.0 + (cache_bytes as f64 / s0).powf(1.3)) }
        })
        .collect();
    let recommended = points.iter().find(|p| p.miss_ratio - m_min < 0.05).copied();
    MrcResult {
        method: "mattson".into(),
        policy: "lru".into(),
        unit_bytes: unit,
        sampling_rate: None,
        points,
        recommended,
    }
}

fn cache_base(action: &str) -> ResultDoc {
    let mut doc = ResultDoc::new("cache", "2025-03-03T08:00:00Z", host());
    doc.tool.version = "0.1.0".into();
    doc.cache = Some(CacheResult { action: action.into(), ..CacheResult::default() });
    doc
}

/// `cache simulate` of five policies over a six-hour trace, with an LRU miss-ratio curve.
fn cache_doc() -> ResultDoc {
    let mut doc = cache_base("simulate");
    let c = doc.cache.as_mut().unwrap();
    c.trace = Some(cache_trace());
    c.config = Some(cache_setup());
    c.policies = vec![
        policy("qsan", 0.78, 2_400.0, 9_000.0, 3),
        policy("lru", 0.72, 1_100.0, 4_000.0, 5),
        policy("nhit", 0.75, 1_900.0, 7_500.0, 7),
        policy("s3fifo", 0.80, 1_500.0, 5_000.0, 11),
        policy("opt", 0.88, 900.0, 4_000.0, 13),
    ];
    c.mrc = Some(mrc());
    doc.warn("trace-skipped-lines", "12 malformed lines were skipped (--skip-bad)");
    doc
}

/// `cache mrc` with SHARDS sampling.
fn cache_mrc_doc() -> ResultDoc {
    let mut doc = cache_base("mrc");
    let c = doc.cache.as_mut().unwrap();
    c.trace = Some(cache_trace());
    let mut m = mrc();
    m.method = "shards".into();
    m.sampling_rate = Some(0.01);
    c.mrc = Some(m);
    doc
}

/// `cache warmup`: the closed-form estimate only.
fn cache_warmup_doc() -> ResultDoc {
    let mut doc = cache_base("warmup");
    doc.cache.as_mut().unwrap().warmup_estimate = Some(WarmupEstimate {
        capacity_bytes: 256 * GIB,
        threshold: 2,
        hdd_iops: 225.0,
        io_size_bytes: 64 << 10,
        hdds: 8,
        seconds: (256 * GIB) as f64 * 2.0 / (225.0 * 65_536.0 * 8.0),
    });
    doc
}

// ---------------------------------------------------------------------------------------
// checks

/// Every `data-chart` value of the page, in order.
fn chart_kinds(html: &str) -> Vec<String> {
    html.split("data-chart=\"").skip(1).filter_map(|s| s.split('"').next()).map(str::to_string).collect()
}

/// The text of each `<figure …>…</figure>`.
fn figures(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<figure") {
        let tail = &rest[i..];
        let end = tail.find("</figure>").map(|e| e + "</figure>".len()).unwrap_or(tail.len());
        out.push(&tail[..end]);
        rest = &tail[end..];
    }
    out
}

/// The `<svg>…</svg>` fragments of a page.
fn svgs(html: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("<svg") {
        let tail = &rest[i..];
        let end = tail.find("</svg>").map(|e| e + "</svg>".len()).unwrap_or(tail.len());
        out.push(&tail[..end]);
        rest = &tail[end..];
    }
    out
}

/// Well-formedness of an XML fragment, enough for SVG: tags balance and nest, attribute
/// values are quoted, and every `&` starts an entity.
fn check_xml(s: &str) -> Result<(), String> {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('<') {
        check_text(&rest[..i])?;
        let tail = &rest[i..];
        let end = tail.find('>').ok_or("unterminated tag")?;
        let tag = &tail[1..end];
        rest = &tail[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack.pop().ok_or_else(|| format!("unexpected </{name}>"))?;
            if open != name.trim() {
                return Err(format!("<{open}> closed by </{name}>"));
            }
            continue;
        }
        if !tag.matches('"').count().is_multiple_of(2) {
            return Err(format!("unbalanced quotes in <{tag}>"));
        }
        let name = tag.split_whitespace().next().unwrap_or("");
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == ':') {
            return Err(format!("bad tag name in <{tag}>"));
        }
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    check_text(rest)?;
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed tags {stack:?}"))
    }
}

fn check_text(t: &str) -> Result<(), String> {
    for (i, _) in t.match_indices('&') {
        let ent = &t[i + 1..];
        let len = ent.find(';').ok_or_else(|| format!("bare & in {t:?}"))?;
        if len == 0 || len > 8 || !ent[..len].chars().all(|c| c.is_ascii_alphanumeric() || c == '#') {
            return Err(format!("bare & in {t:?}"));
        }
    }
    if t.contains('>') {
        return Err(format!("bare > in text {t:?}"));
    }
    Ok(())
}

const SVG_NS: &str = "http://www.w3.org/2000/svg";

/// The structural promises of every page: CSP, no scripts, no external references, every
/// chart figure holds one well-formed SVG (or a table).
fn check_page(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "no doctype");
    assert!(html.trim_end().ends_with("</html>"), "page not closed");
    assert!(
        html.contains(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
        ),
        "CSP meta missing"
    );
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "a script element");
    assert!(!lower.contains("<img"), "an image element");
    assert!(!lower.contains("<link"), "a link element");
    assert!(!lower.contains("@import"), "a CSS import");
    for (i, _) in lower.match_indices("url(") {
        assert!(lower[i..].starts_with("url(data:") || lower[i..].starts_with("url(#"), "external url( at {i}");
    }
    assert!(!lower.contains(" src="), "a src attribute");
    assert!(!lower.contains("href="), "an href attribute");
    for scheme in ["http://", "https://"] {
        for (i, _) in lower.match_indices(scheme) {
            assert!(
                lower[i..].starts_with(SVG_NS),
                "external reference at {i}: {}",
                &html[i..(i + 60).min(html.len())]
            );
        }
    }
    for (i, _) in lower.match_indices("xmlns=\"") {
        assert!(lower[i + 7..].starts_with(SVG_NS), "unexpected namespace");
    }
    let n_open = html.matches("<svg").count();
    assert_eq!(n_open, html.matches("</svg>").count(), "svg tags unbalanced");
    for fig in figures(html) {
        let kind = chart_kinds(fig).into_iter().next().unwrap_or_default();
        assert!(fig.contains("<figcaption>"), "{kind}: no caption");
        let s = svgs(fig);
        if kind == "mark-card" || kind == "results-table" {
            assert!(fig.contains("<table"), "{kind}: no table");
            assert!(s.is_empty(), "{kind}: unexpected svg");
            continue;
        }
        assert_eq!(s.len(), 1, "{kind}: expected one svg in {fig}");
        let svg = s[0];
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"), "{kind}: svg fragment");
        assert!(svg.contains(&format!("xmlns=\"{SVG_NS}\"")), "{kind}: no namespace");
        if let Err(e) = check_xml(svg) {
            panic!("{kind}: malformed svg: {e}");
        }
        assert!(svg.contains("<text"), "{kind}: no text in the chart");
    }
}

fn assert_kinds(html: &str, expected: &[&str]) {
    let kinds = chart_kinds(html);
    for k in expected {
        assert!(kinds.iter().any(|x| x == k), "missing data-chart={k}; have {kinds:?}");
    }
}

// ---------------------------------------------------------------------------------------
// tests

#[test]
fn mark_report() {
    let html = render_html(&mark_doc());
    check_page(&html);
    assert_kinds(&html, &["mark-card", "latency-cdf"]);
    assert!(html.contains("id=\"chart-mark-card\""));
    assert!(html.contains("SEQ1M<span>Q8T1</span>"));
    assert!(!chart_kinds(&html).contains(&"results-table".to_string()));
    assert!(html.contains("id=\"warnings\"") && html.contains("small-test-area"));
    assert!(html.contains("id=\"environment\"") && html.contains("Samsung SSD 990 PRO 2TB"));
    assert!(html.contains("max of 3 passes"));
}

#[test]
fn mark_report_without_cdf_uses_the_percentiles() {
    let html = render_html(&common::fixtures::mark_doc());
    check_page(&html);
    assert_kinds(&html, &["mark-card", "latency-cdf"]);
    assert!(html.contains("summary percentiles"));
}

#[test]
fn run_report() {
    let html = render_html(&run_doc());
    check_page(&html);
    assert_kinds(&html, &["results-table", "latency-cdf", "timeline"]);
    assert_eq!(chart_kinds(&html).iter().filter(|k| *k == "timeline").count(), 3);
    for id in ["chart-results-table", "chart-latency-cdf", "chart-timeline-1", "chart-timeline-3"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // The CDF has one line per job and direction: 4 legend entries.
    let cdf = figures(&html).into_iter().find(|f| f.contains("data-chart=\"latency-cdf\"")).unwrap();
    assert_eq!(cdf.matches("class=\"item\"").count(), 4);
    assert!(!cdf.contains("summary percentiles"));
}

#[test]
fn cluster_report() {
    let doc = common::fixtures::cluster_doc();
    let html = render_html(&doc);
    check_page(&html);
    assert_kinds(&html, &["results-table", "cluster-hosts", "cluster-timeline"]);
    let section = &html[html.find("<section class=\"card\" id=\"cluster\">").expect("cluster section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("Hosts: 3 ranks on 3 hosts (merged by MPI)"));
    // The per-rank table: one row per rank, each host named, the slowest marked.
    let table = &section[section.find("<table id=\"cluster-table-1\">").expect("per-rank table")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr").count(), 4, "header + 3 ranks");
    for host in ["node01", "node02", "node03"] {
        assert!(table.contains(host), "{host} in the table");
    }
    assert!(
        table.contains("<tr class=\"hl\"><td>2</td><td class=\"name\">node03 <span class=\"tag bad\">slowest</span>")
    );
    assert!(section.contains("stonewall (all ranks running, 30.00 s)") && section.contains("215,377 IOPS"));
    // The per-rank chart: an SVG naming every rank, with the median in the legend.
    let bars = figures(section).into_iter().find(|f| f.contains("data-chart=\"cluster-hosts\"")).unwrap();
    let svg = svgs(bars)[0];
    assert!(svg.starts_with("<svg"));
    for label in ["0 · node01", "1 · node02", "2 · node03"] {
        assert!(svg.contains(label), "{label} in the chart");
    }
    assert!(bars.contains("median of the ranks (74,490 IOPS)"));
    // The merged timeline.
    let tl = figures(section).into_iter().find(|f| f.contains("data-chart=\"cluster-timeline\"")).unwrap();
    assert!(svgs(tl)[0].contains("p99 latency"));
    assert!(html.contains("<dt>ranks</dt><dd>3 (merged by MPI)</dd>"));

    // A failed rank is named with its error; no timeline, no chart without figures.
    let mut doc = common::fixtures::cluster_failed_doc();
    doc.cluster.as_mut().unwrap().jobs[0].timeline.clear();
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("<dt>failed</dt><dd>rank 2 (node03) — eio: read at offset 81920"));
    assert!(!chart_kinds(&html).contains(&"cluster-timeline".to_string()));
    doc.cluster.as_mut().unwrap().jobs[0].hosts.clear();
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("No rank has figures for this job."));
    assert!(!chart_kinds(&html).contains(&"cluster-hosts".to_string()));

    // Without the section the page is the one of a single host.
    let mut single = common::fixtures::cluster_doc();
    single.cluster = None;
    let html = render_html(&single);
    assert!(!html.contains("id=\"cluster\"") && !html.contains("node02"));
}

#[test]
fn many_ranks_render() {
    let mut doc = common::fixtures::cluster_doc();
    let job = &mut doc.cluster.as_mut().unwrap().jobs[0];
    let h = job.hosts[0].clone();
    job.hosts = (0..300)
        .map(|i| stats::HostFigures {
            rank: i,
            host: format!("node{:03}.cluster.example.org", i / 4),
            iops: h.iops * (0.7 + f64::from(i % 13) / 40.0),
            ..h.clone()
        })
        .collect();
    job.slowest_rank = Some(0);
    let html = render_html(&doc);
    check_page(&html);
    assert_kinds(&html, &["cluster-hosts"]);
}

#[test]
fn strings_are_escaped() {
    let html = render_html(&run_doc());
    assert!(html.contains("oltp &#60;b&#62;&#38; mix") || html.contains("oltp &lt;b&gt;&amp; mix"), "job name");
    assert!(!html.contains("<b>&"));
    assert!(!html.contains("<script>alert"));
    // Text inside the SVGs comes from plotters, which escapes it too.
    let mut doc = compare_doc();
    let c = doc.compare.as_mut().unwrap();
    c.subjects[1].label = "<i>&".into();
    for r in &mut c.rows {
        r.samples[1].label = "<i>&".into();
    }
    let html = render_html(&doc);
    check_page(&html);
    assert!(!html.contains("<i>&"));
}

#[test]
fn sla_report() {
    let doc = sla_doc();
    let html = render_html(&doc);
    check_page(&html);
    assert_kinds(&html, &["sla-curve", "results-table", "latency-cdf", "timeline"]);
    let s = doc.sla.as_ref().unwrap();
    assert!(html.contains("id=\"verdict\""));
    assert!(html.contains("sustains"));
    let fig = figures(&html).into_iter().find(|f| f.contains("data-chart=\"sla-curve\"")).unwrap();
    assert!(fig.contains("best · Q"), "best labelled");
    assert!(fig.contains("knee · Q16"), "knee labelled");
    assert!(fig.contains("bound: p99 ≤ 1 ms"), "bound labelled");
    assert!(fig.contains("Q8×2T") || fig.contains("Q32×2T") || fig.contains("Q64×2T") || fig.contains("Q48×2T"));
    // All points are in the table.
    let table = html.split("id=\"sla-points\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr").count(), s.points.len() + 1);
    assert_eq!(table.matches("tag ok\">within").count(), s.points.iter().filter(|p| p.feasible).count());
    assert_eq!(table.matches("tag bad\">over").count(), s.points.iter().filter(|p| !p.feasible).count());
}

#[test]
fn sla_without_best_or_points() {
    let mut doc = sla_doc();
    let s = doc.sla.as_mut().unwrap();
    s.best = None;
    s.knee = None;
    s.qd1_misses = true;
    s.verdict = "even QD 1 misses the bound".into();
    for p in &mut s.points {
        p.feasible = false;
    }
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("verdict miss"));
    doc.sla.as_mut().unwrap().points.clear();
    doc.results.clear();
    let html = render_html(&doc);
    check_page(&html);
    assert!(!chart_kinds(&html).contains(&"sla-curve".to_string()));
    assert!(html.contains("No points were measured."));
    // One point only.
    let mut doc = sla_doc();
    let s = doc.sla.as_mut().unwrap();
    s.points.truncate(1);
    s.best = s.points.first().cloned();
    s.knee = s.points.first().cloned();
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("best = knee · Q1"));
}

#[test]
fn compare_report() {
    let doc = compare_doc();
    let html = render_html(&doc);
    check_page(&html);
    assert_kinds(&html, &["compare-bars"]);
    let rows = doc.compare.as_ref().unwrap().rows.len();
    assert_eq!(chart_kinds(&html).iter().filter(|k| *k == "compare-bars").count(), rows);
    assert!(html.contains("id=\"chart-compare-bars-1\""));
    let table = html.split("id=\"compare-table\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr").count(), 1 + rows * 3);
    assert!(table.contains("baseline"));
    assert!(table.contains("tag ok\">faster") && table.contains("tag bad\">slower"));
    assert!(table.contains("within noise") || table.contains("inconclusive"), "{table}");
    assert!(table.contains("% (95 % CI "), "the change in the one wording: {table}");
    // No job results in a compare document: no empty results table.
    assert!(!chart_kinds(&html).contains(&"results-table".to_string()));
}

#[test]
fn many_compare_rows_and_timelines_are_capped() {
    let mut doc = compare_doc();
    let c = doc.compare.as_mut().unwrap();
    let row = c.rows[0].clone();
    c.rows = (0..70).map(|_| row.clone()).collect();
    let html = render_html(&doc);
    check_page(&html);
    assert_eq!(chart_kinds(&html).iter().filter(|k| *k == "compare-bars").count(), MAX_COMPARE_CHARTS);
    assert!(html.contains("Charts are drawn for the first 60 of 70 rows"));

    let mut doc = run_doc();
    let job = doc.results[1].clone();
    doc.results = (0..20).map(|_| job.clone()).collect();
    let html = render_html(&doc);
    check_page(&html);
    assert_eq!(chart_kinds(&html).iter().filter(|k| *k == "timeline").count(), MAX_TIMELINES);
    assert!(html.contains("first 8 of 20 jobs"));
    assert!(html.contains("the first 12 of 40 lines are shown"));
}

#[test]
fn empty_and_degenerate_documents() {
    let doc = ResultDoc::new("run", "", HostInfo::default());
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("No results."));
    assert!(html.contains("No warnings were raised."));
    assert!(html.contains("not recorded"));
    assert_eq!(chart_kinds(&html), ["results-table"]);

    let doc = ResultDoc::new("mark", "", HostInfo::default());
    let html = render_html(&doc);
    check_page(&html);
    assert_eq!(chart_kinds(&html), ["mark-card"]);

    // Zero, NaN and infinite figures; a one-point series; a CDF of zeros.
    let mut doc = run_doc();
    doc.partial = true;
    doc.error = Some(ErrorInfo::new("interrupted", "Ctrl-C"));
    let r = &mut doc.results[0];
    let d = r.read.as_mut().unwrap();
    d.iops = f64::NAN;
    d.mb_s = f64::INFINITY;
    d.lat_ns = LatSummary::default();
    d.lat_cdf = vec![CdfPoint { fraction: f64::NAN, ns: 0 }, CdfPoint { fraction: 1.0, ns: 0 }];
    r.series.truncate(1);
    r.series[0].read_iops = f64::NAN;
    r.series[0].t_s = f64::NEG_INFINITY;
    let r = &mut doc.results[1];
    r.series.iter_mut().for_each(|p| *p = SeriesPoint::default());
    r.write.as_mut().unwrap().lat_cdf = vec![CdfPoint { fraction: 0.5, ns: u64::MAX }];
    doc.results[2].error = Some(ErrorInfo::new("enospc", "no space left on device"));
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("id=\"partial\""));
    assert!(html.contains("error[enospc]"));
    assert_kinds(&html, &["results-table", "latency-cdf", "timeline"]);

    // A compare with no samples and no rows.
    let mut doc = compare_doc();
    let c = doc.compare.as_mut().unwrap();
    c.rows[0].samples.clear();
    c.rows[1].samples.iter_mut().for_each(|s| {
        s.mean = f64::NAN;
        s.ci_low = f64::NEG_INFINITY;
        s.ci_high = 0.0;
    });
    let html = render_html(&doc);
    check_page(&html);
    doc.compare.as_mut().unwrap().rows.clear();
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("No compared figures."));
}

#[test]
fn cache_simulate_report() {
    let doc = cache_doc();
    let html = render_html(&doc);
    check_page(&html);
    assert_eq!(chart_kinds(&html), ["cache-warmup", "cache-mrc"], "no empty results table, CDF or timeline");
    assert!(html.contains("id=\"chart-cache-warmup\"") && html.contains("id=\"chart-cache-mrc\""));
    assert!(html.contains("diskmeter cache report"));
    assert!(html.contains("/srv/traces/oltp-week1.blktrace") && html.contains("blkparse"));
    assert!(html.contains("1.38 TiB"), "footprint");
    assert!(html.contains("PoR 2 · PoW 1") && html.contains("write-back") && html.contains("960 GiB"));
    assert!(html.contains("none: simulated on a recorded trace"));
    // The policy table: one row per policy, the best hit ratio highlighted.
    let table = html.split("id=\"cache-policies\"").nth(1).unwrap().split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr").count(), 2 + 5);
    assert_eq!(table.matches("class=\"hl\"").count(), 1);
    assert!(table.contains("opt <span class=\"tag best\">best</span>"));
    assert!(table.contains("hdd") && table.contains("tag ok\">+"));
    // Warm-up chart: a legend entry per policy plus the warm-up marker, a label per policy.
    let warm = figures(&html).into_iter().find(|f| f.contains("data-chart=\"cache-warmup\"")).unwrap();
    assert_eq!(warm.matches("class=\"item\"").count(), 6);
    for name in ["qsan", "lru", "nhit", "s3fifo", "opt"] {
        assert!(warm.contains(&format!("{name} warm after ")), "{name} warm-up marker");
    }
    assert!(warm.contains("trace time (h)") && warm.contains("occupancy"));
    // Miss-ratio curve: byte labels on the log axis, the recommended size marked.
    let mrc = figures(&html).into_iter().find(|f| f.contains("data-chart=\"cache-mrc\"")).unwrap();
    assert!(mrc.contains("64 MiB\n</text>") && mrc.contains("1 GiB\n</text>"), "binary size ticks");
    assert!(mrc.contains("Mattson stack distances (exact LRU)") && mrc.contains("unit 64 KiB"));
    let rec = doc.cache.as_ref().unwrap().mrc.as_ref().unwrap().recommended.unwrap();
    assert!(mrc.contains(&format!("recommended {}", diskmeter_report::fmt::bytes(rec.cache_bytes))));
    assert!(mrc.contains("simulated cache 256 GiB"));
    assert!(!html.contains("id=\"warmup-estimate\""));
}

#[test]
fn cache_mrc_and_warmup_reports() {
    let html = render_html(&cache_mrc_doc());
    check_page(&html);
    assert_eq!(chart_kinds(&html), ["cache-mrc"]);
    assert!(html.contains("SHARDS (sampled LRU) at R = 0.01"));
    assert!(!html.contains("id=\"cache-policies\""));

    let html = render_html(&cache_warmup_doc());
    check_page(&html);
    assert!(chart_kinds(&html).is_empty());
    let w = html.split("id=\"warmup-estimate\"").nth(1).unwrap().split("</div>").next().unwrap();
    assert!(w.contains("T = C · P / (I · S · D)"));
    assert!(w.contains("= 256 GiB × 2 / (225 IOPS × 64 KiB × 8 HDDs)"), "{w}");
    // 256 GiB × 2 / (225 × 64 KiB × 8) = 4660.3 s.
    assert!(w.contains("T = 4,660 s = 77.7 min = 1.29 h"), "{w}");
}

#[test]
fn degenerate_cache_documents() {
    // Nothing at all (synth / convert, or an empty section).
    for action in ["synth", "convert", "simulate", ""] {
        let doc = cache_base(action);
        let html = render_html(&doc);
        check_page(&html);
        assert!(chart_kinds(&html).is_empty(), "{action}: {:?}", chart_kinds(&html));
        assert!(html.contains("id=\"cache\""));
        assert!(html.contains("nothing was simulated") || html.contains("no simulation results"));
    }
    // Policies without series or perf; an MRC without usable points.
    let mut doc = cache_doc();
    let c = doc.cache.as_mut().unwrap();
    for p in &mut c.policies {
        p.series.clear();
        p.perf = None;
        p.dwpd = None;
        p.warmup_s = None;
    }
    c.mrc.as_mut().unwrap().points = vec![MrcPoint { cache_bytes: 0, miss_ratio: f64::NAN }];
    let html = render_html(&doc);
    check_page(&html);
    assert!(chart_kinds(&html).is_empty());
    assert!(html.contains("no time series") && html.contains("no points with a cache size above zero"));

    // One point, zero and NaN values, huge sizes, a warm-up time outside the series.
    let mut doc = cache_doc();
    let c = doc.cache.as_mut().unwrap();
    c.policies.truncate(2);
    c.policies[0].series.truncate(1);
    c.policies[0].warmup_s = Some(f64::INFINITY);
    c.policies[0].read_hit_ratio = f64::NAN;
    c.policies[1].series.iter_mut().for_each(|p| {
        p.interval_hit_ratio = f64::NAN;
        p.occupancy = -3.0;
        p.t_s = 0.0;
    });
    c.policies[1].warmup_s = Some(1e300);
    c.policies[1].perf.as_mut().unwrap().gain_pct = f64::NAN;
    let m = c.mrc.as_mut().unwrap();
    m.points = vec![MrcPoint { cache_bytes: u64::MAX, miss_ratio: 0.0 }];
    m.recommended = Some(MrcPoint { cache_bytes: 0, miss_ratio: f64::INFINITY });
    m.method = "simulation".into();
    c.config.as_mut().unwrap().capacity_bytes = u64::MAX;
    c.warmup_estimate =
        Some(WarmupEstimate { seconds: f64::NAN, hdd_iops: f64::INFINITY, ..WarmupEstimate::default() });
    let html = render_html(&doc);
    check_page(&html);
    assert_eq!(chart_kinds(&html), ["cache-warmup", "cache-mrc"]);
    assert!(html.contains("T cannot be computed"));

    // Many policies: lines are capped, the table lists all.
    let mut doc = cache_doc();
    let c = doc.cache.as_mut().unwrap();
    let p = c.policies[0].clone();
    c.policies = (0..14).map(|_| p.clone()).collect();
    c.policies[0].series = (0..5000)
        .map(|i| CachePoint { t_s: f64::from(i), hit_ratio: 0.5, interval_hit_ratio: 0.5, occupancy: 0.5 })
        .collect();
    let html = render_html(&doc);
    check_page(&html);
    assert!(html.contains("the first 10 of 14 policies are shown"));
}

// ---------------------------------------------------------------------------------------
// property test: random small documents never panic and always give a well-formed page

fn any_f64() -> BoxedStrategy<f64> {
    prop_oneof![
        Just(0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-1.0),
        Just(1e300),
        0.0..1e7f64,
        any::<f64>(),
    ]
    .boxed()
}

fn any_u64() -> BoxedStrategy<u64> {
    prop_oneof![Just(0u64), Just(1u64), Just(u64::MAX), 0..10_000_000u64, any::<u64>()].boxed()
}

fn any_text() -> BoxedStrategy<String> {
    "[a-zA-Z0-9 <>&\"'µ×/-]{0,12}".boxed()
}

fn any_lat() -> BoxedStrategy<LatSummary> {
    (any_u64(), any_f64(), any_u64(), any_u64(), any_u64(), any_u64(), any_u64())
        .prop_map(|(min, mean, p50, p90, p99, p99_9, max)| LatSummary {
            min,
            mean,
            stddev: mean,
            p50,
            p90,
            p99,
            p99_9,
            p99_99: p99_9,
            max,
        })
        .boxed()
}

fn any_dir() -> BoxedStrategy<Option<DirStats>> {
    proptest::option::of(
        (any_u64(), any_f64(), any_f64(), any_lat(), proptest::collection::vec((any_f64(), any_u64()), 0..5)).prop_map(
            |(ops, iops, mb_s, lat_ns, cdf)| DirStats {
                bound: None,
                ops,
                bytes: ops,
                seconds: 1.0,
                iops,
                mb_s,
                mib_s: mb_s,
                lat_ns,
                qd_mean: iops,
                lat_cdf: cdf.into_iter().map(|(fraction, ns)| CdfPoint { fraction, ns }).collect(),
            },
        ),
    )
    .boxed()
}

fn any_series() -> BoxedStrategy<Vec<SeriesPoint>> {
    proptest::collection::vec(
        (any_f64(), any_f64(), any_u64(), any_f64(), any_u64()).prop_map(|(t_s, ri, rl, wi, wl)| SeriesPoint {
            t_s,
            read_iops: ri,
            read_lat_p99_ns: rl,
            write_iops: wi,
            write_lat_p99_ns: wl,
            ..SeriesPoint::default()
        }),
        0..5,
    )
    .boxed()
}

fn any_job() -> BoxedStrategy<JobResult> {
    (any_text(), 0u32..300, 0u32..5, any_dir(), any_dir(), any_series(), any::<bool>())
        .prop_map(|(name, qd, threads, read, write, series, err)| {
            let mut r = JobResult::new(JobSpec { name, qd, threads, ..JobSpec::default() });
            r.read = read;
            r.write = write;
            r.series = series;
            if err {
                r.error = Some(ErrorInfo::new("io", "<boom>"));
            }
            r
        })
        .boxed()
}

fn any_point() -> BoxedStrategy<SlaPoint> {
    (0u32..300, 0u32..5, proptest::option::of(any_u64()), any_f64(), any_f64(), any_lat(), any::<bool>(), any_f64())
        .prop_map(|(qd, threads, rate_iops, iops, metric_ns, lat_ns, feasible, cv)| SlaPoint {
            qd,
            threads,
            rate_iops,
            outstanding: qd.saturating_mul(threads),
            iops,
            mb_s: iops,
            lat_ns,
            metric_ns,
            feasible,
            windows: 3,
            cv_iops: cv,
            cv_lat: cv,
            stable: feasible,
            remeasured: !feasible,
            early_reject: false,
            t_s: 1.0,
            streams: Vec::new(),
        })
        .boxed()
}

fn any_sla() -> BoxedStrategy<Option<SlaResult>> {
    proptest::option::of(
        (any_u64(), proptest::collection::vec(any_point(), 0..7), any::<u8>(), any::<u8>(), any_text()).prop_map(
            |(latency_ns, points, b, k, verdict)| {
                let pick = |i: u8| {
                    if points.is_empty() || i.is_multiple_of(4) {
                        None
                    } else {
                        points.get(usize::from(i) % points.len()).cloned()
                    }
                };
                SlaResult {
                    latency_ns,
                    percentile: Percentile::P99_9,
                    mode: "closed-loop".into(),
                    exhaustive: b.is_multiple_of(2),
                    streams: vec!["randread".into()],
                    bs: u64::from(k) << 9,
                    best: pick(b),
                    knee: pick(k),
                    thrashing: Vec::new(),
                    qd1_misses: k.is_multiple_of(2),
                    search_seconds: 1.0,
                    verdict,
                    points,
                }
            },
        ),
    )
    .boxed()
}

fn any_sample() -> BoxedStrategy<SampleStats> {
    (any_text(), any_f64(), any_f64(), any_f64())
        .prop_map(|(label, mean, ci_low, ci_high)| SampleStats {
            label,
            n: 2,
            mean,
            stddev: 0.0,
            ci_low,
            ci_high,
            unit: "passes".into(),
            values: Vec::new(),
        })
        .boxed()
}

fn any_compare() -> BoxedStrategy<Option<CompareResult>> {
    let row = (
        any_text(),
        prop_oneof![Just("mb_s".to_string()), Just("iops".to_string()), Just("lat_mean_ns".to_string()), any_text()],
        proptest::collection::vec(any_sample(), 0..7),
        proptest::collection::vec((any_text(), any_f64(), proptest::option::of(any_f64())), 0..3),
    )
        .prop_map(|(test, metric, samples, vs)| CompareRow {
            test,
            direction: "read".into(),
            metric,
            higher_is_better: true,
            samples,
            versus: vs
                .into_iter()
                .map(|(label, ratio, p_value)| Versus {
                    label,
                    ratio,
                    ratio_ci_low: ratio,
                    ratio_ci_high: ratio,
                    p_value,
                    verdict: Verdict::Slower,
                    basis: stats::verdict::Basis::SinglePass,
                    n_a: 1,
                    n_b: 1,
                })
                .collect(),
        });
    proptest::option::of(
        (proptest::collection::vec(any_text(), 0..4), proptest::collection::vec(row, 0..4), any_f64()).prop_map(
            |(labels, rows, confidence)| CompareResult {
                test: TestKind::MannWhitney,
                confidence,
                baseline: labels.first().cloned().unwrap_or_default(),
                subjects: labels
                    .into_iter()
                    .map(|label| Subject { label, source: "x".into(), device: None, folder: None })
                    .collect(),
                interleaved: false,
                rows,
            },
        ),
    )
    .boxed()
}

fn any_cache() -> BoxedStrategy<Option<CacheResult>> {
    let point = (any_f64(), any_f64(), any_f64()).prop_map(|(t_s, h, occupancy)| CachePoint {
        t_s,
        hit_ratio: h,
        interval_hit_ratio: h,
        occupancy,
    });
    let perf = (any_f64(), any_f64(), any_text()).prop_map(|(max_iops, gain_pct, bottleneck)| PerfPrediction {
        max_iops,
        bottleneck,
        mean_latency_ns: max_iops,
        hdd_only_iops: gain_pct,
        hdd_only_latency_ns: 0.0,
        gain_pct,
    });
    let policy = (
        any_text(),
        any_f64(),
        any_u64(),
        proptest::option::of(any_f64()),
        proptest::option::of(any_f64()),
        proptest::collection::vec(point, 0..5),
        proptest::option::of(perf),
    )
        .prop_map(|(name, ratio, n, dwpd, warmup_s, series, perf)| PolicyResult {
            name,
            requests: RequestCounts { read_hits: n, read_misses: n, ..RequestCounts::default() },
            bytes: ByteCounts { written_to_ssd: n, ..ByteCounts::default() },
            read_hit_ratio: ratio,
            read_byte_hit_ratio: ratio,
            dwpd,
            warmup_s,
            series,
            perf,
            ..PolicyResult::default()
        });
    let mrc = (
        prop_oneof![
            Just("mattson".to_string()),
            Just("shards".to_string()),
            Just("simulation".to_string()),
            any_text()
        ],
        proptest::option::of(any_f64()),
        proptest::collection::vec((any_u64(), any_f64()), 0..6),
        proptest::option::of((any_u64(), any_f64())),
    )
        .prop_map(|(method, sampling_rate, points, rec)| MrcResult {
            method,
            policy: "lru".into(),
            unit_bytes: 4096,
            sampling_rate,
            points: points.into_iter().map(|(cache_bytes, miss_ratio)| MrcPoint { cache_bytes, miss_ratio }).collect(),
            recommended: rec.map(|(cache_bytes, miss_ratio)| MrcPoint { cache_bytes, miss_ratio }),
        });
    let warm = (any_u64(), any_f64(), any_f64(), 0u32..20).prop_map(|(capacity_bytes, hdd_iops, seconds, hdds)| {
        WarmupEstimate { capacity_bytes, threshold: hdds, hdd_iops, io_size_bytes: capacity_bytes, hdds, seconds }
    });
    let trace = (any_text(), any_u64(), any_f64(), proptest::collection::vec(any_text(), 0..9)).prop_map(
        |(path, n, span_s, devices)| TraceSummary {
            path,
            format: "csv".into(),
            requests: n,
            reads: n,
            writes: n,
            other: n,
            read_bytes: n,
            write_bytes: n,
            span_s,
            footprint_bytes: n,
            devices,
            skipped_lines: n,
        },
    );
    let setup = (any_u64(), proptest::option::of(any_u64())).prop_map(|(b, cut)| CacheSetup {
        capacity_bytes: b,
        block_bytes: b,
        seq_cutoff_bytes: cut,
        ..CacheSetup::default()
    });
    proptest::option::of(
        (
            prop_oneof![Just("simulate"), Just("mrc"), Just("warmup"), Just("synth"), Just("")],
            proptest::option::of(trace),
            proptest::option::of(setup),
            proptest::collection::vec(policy, 0..4),
            proptest::option::of(mrc),
            proptest::option::of(warm),
        )
            .prop_map(|(action, trace, config, policies, mrc, warmup_estimate)| CacheResult {
                action: action.into(),
                trace,
                config,
                policies,
                mrc,
                warmup_estimate,
            }),
    )
    .boxed()
}

fn any_doc() -> BoxedStrategy<ResultDoc> {
    (
        prop_oneof![Just("mark"), Just("run"), Just("sla"), Just("compare"), Just("cache"), Just("surface"), Just("")],
        proptest::collection::vec(any_job(), 0..4),
        any_sla(),
        any_compare(),
        proptest::collection::vec((any_text(), any_text()), 0..3),
        any::<bool>(),
        proptest::option::of(any_u64()),
        any_cache(),
    )
        .prop_map(|(command, results, sla, compare, warnings, partial, target, cache)| {
            let mut doc = ResultDoc::new(command, "2025-01-01T00:00:00Z", HostInfo::default());
            doc.results = results;
            doc.sla = sla;
            doc.compare = compare;
            doc.cache = cache;
            for (code, message) in warnings {
                doc.warn(&code, message);
            }
            doc.partial = partial;
            doc.target = target.map(|size| TargetInfo::new("/dev/<x>&", TargetKind::Block, size));
            doc
        })
        .boxed()
}

fn any_host() -> BoxedStrategy<stats::HostFigures> {
    (0..6u32, any_text(), any_f64(), any_f64(), any_f64(), any_u64(), any_u64(), proptest::option::of(any_f64()))
        .prop_map(|(rank, host, iops, mb_s, mean, p99, max, start_offset_s)| stats::HostFigures {
            rank,
            host,
            iops,
            mb_s,
            lat_mean_ns: mean,
            lat_p99_ns: p99,
            lat_max_ns: max,
            qd_mean: mean,
            seconds: mb_s,
            start_unix_ns: p99,
            start_offset_s,
        })
        .boxed()
}

fn any_cluster_job() -> BoxedStrategy<stats::ClusterJob> {
    let point = (any_f64(), any_f64(), any_u64(), 0..6u32).prop_map(|(t_s, iops, p99, ranks)| stats::TimelinePoint {
        t_s,
        unix_s: t_s,
        iops,
        mb_s: iops,
        lat_p99_ns: p99,
        ranks,
    });
    (
        any_text(),
        proptest::collection::vec(any_host(), 0..5),
        proptest::option::of(0..6u32),
        any_f64(),
        proptest::option::of((any_f64(), any_f64(), any_f64())),
        proptest::collection::vec(point, 0..5),
    )
        .prop_map(|(name, hosts, slowest_rank, start_skew_s, stonewall, timeline)| stats::ClusterJob {
            name,
            hosts,
            slowest_rank,
            start_skew_s,
            stonewall: stonewall.map(|(seconds, iops, mb_s)| stats::Stonewall { seconds, iops, mb_s }),
            timeline,
        })
        .boxed()
}

fn any_cluster() -> BoxedStrategy<stats::ClusterResult> {
    let rank = (0..6u32, any_text(), any::<bool>(), proptest::option::of((any_text(), any_text()))).prop_map(
        |(rank, host, partial, error)| stats::RankInfo {
            rank,
            host,
            target: Some("/x/<y>&".into()),
            started_at: String::new(),
            partial,
            error: error.map(|(k, m)| ErrorInfo::new(&k, m)),
        },
    );
    (
        any::<bool>(),
        proptest::collection::vec(rank, 0..5),
        proptest::collection::vec(any_cluster_job(), 0..3),
        proptest::option::of(0..6u32),
    )
        .prop_map(|(mpi, ranks, jobs, failed_rank)| stats::ClusterResult {
            source: if mpi { stats::ClusterSource::Mpi } else { stats::ClusterSource::Merge },
            ranks,
            jobs,
            failed_rank,
        })
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_documents_render(doc in any_doc()) {
        let html = render_html(&doc);
        check_page(&html);
    }

    #[test]
    fn random_cluster_sections_render(mut doc in any_doc(), cluster in any_cluster()) {
        doc.cluster = Some(cluster);
        check_page(&render_html(&doc));
        for f in [Format::Human, Format::Markdown, Format::Csv] {
            prop_assert!(render(&doc, f).ends_with('\n'));
        }
    }
}

// ---------------------------------------------------------------------------------------
// test data for the browser test

/// Rewrites `tests/data/*.json` from the builders above:
/// `cargo test -p diskmeter-report -- --ignored write_browser_test_data`.
#[test]
#[ignore = "regenerates checked-in test data"]
fn write_browser_test_data() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    std::fs::create_dir_all(&dir).unwrap();
    let docs = [
        ("mark", mark_doc()),
        ("run", run_doc()),
        ("sla", sla_doc()),
        ("compare", compare_doc()),
        ("cache", cache_doc()),
    ];
    for (name, doc) in docs {
        let mut text = doc.to_json_pretty().unwrap();
        text.push('\n');
        std::fs::write(dir.join(format!("{name}.json")), text).unwrap();
    }
}

/// The checked-in data files parse and render like the builders' documents.
#[test]
fn browser_test_data_renders() {
    let files = [
        ("mark", include_str!("data/mark.json"), &["mark-card", "latency-cdf"][..]),
        ("run", include_str!("data/run.json"), &["results-table", "latency-cdf", "timeline"][..]),
        ("sla", include_str!("data/sla.json"), &["sla-curve", "results-table", "latency-cdf", "timeline"][..]),
        ("compare", include_str!("data/compare.json"), &["compare-bars"][..]),
        ("cache", include_str!("data/cache.json"), &["cache-warmup", "cache-mrc"][..]),
    ];
    for (name, text, kinds) in files {
        let doc = ResultDoc::from_json(text).unwrap_or_else(|e| panic!("{name}.json: {e}"));
        let html = render_html(&doc);
        check_page(&html);
        assert_kinds(&html, kinds);
    }
}

fn verify_failure(kind: &str, offset: u64, found: Option<u32>, detail: &str) -> stats::verify::VerifyFailure {
    stats::verify::VerifyFailure {
        job: "w<1>".into(),
        offset,
        len: 4096,
        kind: kind.into(),
        found_by: "after".into(),
        expected_generation: 2,
        found_generation: found,
        found_offset: found.map(|_| offset),
        detail: detail.into(),
        first_difference: Some(24),
        hexdump: vec![
            format!("exp {:010x}: 02 00 00 00  |....|", offset + 16),
            format!("got {:010x}: 01 00 00 00  |....|", offset + 16),
        ],
    }
}

fn verify_doc(failures: Vec<stats::verify::VerifyFailure>, total: u64) -> ResultDoc {
    let mut doc = run_doc();
    let mut v = stats::verify::VerifyResult {
        kind: "crc32c".into(),
        interval: 4096,
        run_id: "00c0ffee00c0ffee".into(),
        chunks_written: 51_200,
        checked_inline: 12_004,
        checked_after: 25_600,
        after_seconds: 0.25,
        after_mb_s: 419.4,
        complete: true,
        ..Default::default()
    };
    for f in failures {
        v.add_failure(f);
    }
    v.sort();
    v.failures_total = v.failures_total.max(total);
    doc.verify = Some(v);
    doc
}

#[test]
fn verify_section_lists_every_kept_failure_with_dumps() {
    let doc = verify_doc(
        vec![
            verify_failure(
                "torn",
                65_536,
                Some(2),
                "torn at 65536: sectors 0-3 generation 2, sectors 4-7 generation 1",
            ),
            verify_failure("stale", 4096, Some(1), "stale at 4096: generation 1 found, 2 expected"),
            verify_failure("zeroed", 8192, None, "zeroed at 8192: all zero bytes"),
        ],
        5,
    );
    let html = render_html(&doc);
    check_page(&html);
    let sec = &html[html.find("id=\"verify\"").unwrap()..];
    let sec = &sec[..sec.find("</section>").unwrap()];
    assert!(sec.contains("class=\"verdict miss\""), "a failed check is shown as a miss");
    assert!(sec.contains("FAILED: 5 chunks"), "{sec}");
    // Every kept failure is a row, in offset order, with its diagnosis and a dash for what
    // could not be read.
    let table = &sec[sec.find("id=\"verify-failures\"").unwrap()..];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 3);
    assert!(rows[0].contains(">4096<") && rows[0].contains(">stale<"), "{}", rows[0]);
    assert!(rows[1].contains(">8192<") && rows[1].contains(">zeroed<") && rows[1].contains(">–<"), "{}", rows[1]);
    assert!(rows[2].contains(">65536<") && rows[2].contains(">torn<"));
    // The two failures beyond the kept ones are counted; each kept one has its dump.
    assert!(sec.contains("2 more failing chunks are counted but not listed."));
    assert_eq!(sec.matches("<pre class=\"dump\">").count(), 3);
    assert!(sec.contains("got 0000001010: 01 00 00 00  |....|"));
    // The job name is escaped.
    assert!(!sec.contains("w<1>"));
}

#[test]
fn verify_section_of_a_clean_check_has_no_table() {
    let html = render_html(&verify_doc(Vec::new(), 0));
    check_page(&html);
    let sec = &html[html.find("id=\"verify\"").unwrap()..];
    let sec = &sec[..sec.find("</section>").unwrap()];
    assert!(sec.contains("every checked chunk held what was written"));
    assert!(sec.contains("51 200 chunks of 4 KiB") || sec.contains("chunks of"), "{sec}");
    assert!(!sec.contains("verify-failures") && !sec.contains("class=\"verdict miss\"") && !sec.contains("dump"));
    // No verify section without a verify result.
    assert!(!render_html(&run_doc()).contains("id=\"verify\""));
}
