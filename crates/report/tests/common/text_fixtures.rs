//! Hand-made, deterministic `sla` and `compare` documents for the snapshot tests of
//! `sla_text` and `compare_text`.

use std::time::Duration;

use spec::{JobSpec, RwMode};
use stats::compare_docs::build_row;
use stats::{
    CompareResult, HostInfo, JobResult, LatSummary, Percentile, ResultDoc, SlaPoint, SlaResult, SlaStream, Subject,
    TargetInfo, TargetKind, TestKind, Thrash,
};

fn host() -> HostInfo {
    HostInfo {
        kernel: "6.8.0-45-generic".into(),
        cpus: 8,
        memory_bytes: 16 << 30,
        cpu_model: Some("AMD Ryzen 7 5800X".into()),
        hostname: Some("bench".into()),
        ..HostInfo::default()
    }
}

fn doc(command: &str) -> ResultDoc {
    let mut d = ResultDoc::new(command, "2025-01-15T10:30:00Z", host());
    d.tool.version = "0.1.0".into();
    d
}

fn u(x: f64) -> u64 {
    x.round() as u64
}

/// A latency summary from mean, median and p99 (µs); the rest in fixed proportions.
fn lat(mean_us: f64, p50_us: f64, p99_us: f64) -> LatSummary {
    LatSummary {
        min: u(mean_us * 300.0),
        mean: mean_us * 1000.0,
        stddev: (mean_us * 250.0).round(),
        p50: u(p50_us * 1000.0),
        p90: u((p50_us + (p99_us - p50_us) * 0.4) * 1000.0),
        p99: u(p99_us * 1000.0),
        p99_9: u(p99_us * 1800.0),
        p99_99: u(p99_us * 3100.0),
        max: u(p99_us * 6400.0),
    }
}

/// One closed-loop point of a 4 KiB search; the bounded statistic is p99.
#[allow(clippy::too_many_arguments)]
fn point(
    qd: u32,
    threads: u32,
    iops: f64,
    l: LatSummary,
    bound_ns: f64,
    windows: u32,
    cv: (f64, f64),
    t_s: f64,
) -> SlaPoint {
    let metric_ns = l.p99 as f64;
    SlaPoint {
        qd,
        threads,
        rate_iops: None,
        outstanding: qd * threads,
        iops,
        mb_s: iops * 4096.0 / 1e6,
        lat_ns: l,
        metric_ns,
        feasible: metric_ns <= bound_ns,
        windows,
        cv_iops: cv.0,
        cv_lat: cv.1,
        stable: true,
        remeasured: false,
        early_reject: false,
        t_s,
        streams: Vec::new(),
    }
}

fn nvme(path: &str, device: &str, model: &str) -> TargetInfo {
    let mut t = TargetInfo::new(path, TargetKind::Block, 1_000_204_886_016);
    t.device = Some(device.into());
    t.model = Some(model.into());
    t.rotational = Some(false);
    t.scheduler = Some("none".into());
    t.physical_block = 4096;
    t
}

/// `sla /dev/nvme1n1 --latency 1ms --percentile 99`: 8 points on 1 and 2 workers, best at
/// QD 32 × 2, a knee, one thrashing step, flagged points.
pub fn sla_doc() -> ResultDoc {
    let mut d = doc("sla");
    d.target = Some(nvme("/dev/nvme1n1", "nvme1n1", "WD Black SN850X 1TB"));
    let b = 1_000_000.0;
    let mut points = vec![
        point(1, 1, 12_480.0, lat(79.9, 74.3, 134.0), b, 5, (0.012, 0.034), 6.2),
        point(4, 1, 48_100.0, lat(83.0, 78.1, 151.0), b, 5, (0.009, 0.028), 12.4),
        point(16, 1, 172_000.0, lat(93.0, 86.4, 212.0), b, 5, (0.011, 0.031), 18.6),
        point(64, 1, 402_000.0, lat(159.0, 141.0, 610.0), b, 6, (0.018, 0.052), 25.9),
        point(256, 1, 395_000.0, lat(648.0, 590.0, 2_900.0), b, 3, (0.041, 0.118), 29.4),
        point(128, 1, 410_500.0, lat(312.0, 288.0, 1_040.0), b, 5, (0.022, 0.061), 41.7),
        point(32, 2, 418_200.0, lat(153.0, 139.0, 590.0), b, 5, (0.014, 0.045), 48.0),
        point(64, 2, 421_000.0, lat(304.0, 281.0, 1_210.0), b, 8, (0.067, 0.142), 57.3),
    ];
    points[4].early_reject = true;
    points[4].stable = false;
    points[5].remeasured = true;
    points[7].stable = false;
    let best = points[6].clone();
    let knee = points[2].clone();
    d.sla = Some(SlaResult {
        latency_ns: 1_000_000,
        percentile: Percentile::P99,
        mode: "closed-loop".into(),
        exhaustive: false,
        streams: vec!["randread".into()],
        bs: 4096,
        best: Some(best),
        points,
        knee: Some(knee),
        thrashing: vec![Thrash { threads: 1, from_qd: 128, to_qd: 256, from_iops: 410_500.0, to_iops: 395_000.0 }],
        qd1_misses: false,
        search_seconds: 57.3,
        verdict: "/dev/nvme1n1 sustains 418200 IOPS (1713.0 MB/s) at p99 590 µs <= 1.00 ms with 64 I/Os \
                  outstanding (QD 32 x 2 workers); beyond that latency climbs past the bound (knee at 16 \
                  outstanding: 172000 IOPS, p99 212 µs; past it latency grows faster than throughput)."
            .into(),
    });
    let r = JobResult::new(JobSpec {
        name: "best: randread".into(),
        rw: RwMode::RandRead,
        bs: 4096,
        qd: 32,
        threads: 2,
        runtime: Duration::from_secs(5),
        ..JobSpec::default()
    });
    d.results.push(r);
    d
}

/// `sla /dev/sdb --latency 10ms --percentile 99.9 --rw randwrite` on a slow HDD: even the
/// first point misses the bound.
pub fn sla_qd1_miss_doc() -> ResultDoc {
    let mut d = doc("sla");
    let mut t = TargetInfo::new("/dev/sdb", TargetKind::Block, 4_000_787_030_016);
    t.device = Some("sdb".into());
    t.model = Some("ST4000DM004".into());
    t.rotational = Some(true);
    d.target = Some(t);
    let mut p = point(1, 1, 142.0, lat(7_040.0, 6_100.0, 21_000.0), 10_000_000.0, 3, (0.052, 0.087), 4.1);
    p.metric_ns = p.lat_ns.p99_9 as f64;
    p.feasible = false;
    p.early_reject = true;
    d.sla = Some(SlaResult {
        latency_ns: 10_000_000,
        percentile: Percentile::P99_9,
        mode: "closed-loop".into(),
        exhaustive: false,
        streams: vec!["randwrite".into()],
        bs: 4096,
        best: None,
        points: vec![p],
        knee: None,
        thrashing: Vec::new(),
        qd1_misses: true,
        search_seconds: 4.1,
        verdict: "even QD 1 misses the bound: p99.9 37.8 ms > 10.0 ms at 142 IOPS (0.6 MB/s) with one I/O \
                  outstanding."
            .into(),
    });
    d
}

/// `sla --open-loop` with two streams (randread + randwrite, 8 KiB), bound mean ≤ 2 ms,
/// exhaustive.
pub fn sla_open_loop_doc() -> ResultDoc {
    let mut d = doc("sla");
    d.target = Some(nvme("/dev/nvme0n1", "nvme0n1", "Samsung SSD 980 PRO 1TB"));
    let b = 2_000_000.0;
    let rates =
        [(50_000u64, 210.0, 0.004), (100_000, 480.0, 0.006), (150_000, 1_350.0, 0.015), (200_000, 5_800.0, 0.09)];
    let points: Vec<SlaPoint> = rates
        .iter()
        .enumerate()
        .map(|(i, &(rate, mean_us, cv))| {
            let achieved = (rate as f64).min(171_300.0);
            let mut p = point(64, 2, achieved, lat(mean_us, mean_us * 0.9, mean_us * 3.2), b, 5, (cv, cv * 2.5), 0.0);
            p.rate_iops = Some(rate);
            p.outstanding = 256;
            p.mb_s = achieved * 8192.0 / 1e6;
            p.metric_ns = p.lat_ns.mean;
            p.feasible = p.metric_ns <= b;
            p.t_s = 6.0 * (i as f64 + 1.0);
            p.streams = vec![
                SlaStream {
                    name: "randread".into(),
                    qd: 64,
                    threads: 2,
                    iops: achieved * 0.7,
                    mb_s: achieved * 0.7 * 8192.0 / 1e6,
                    lat_ns: lat(mean_us * 0.8, mean_us * 0.75, mean_us * 2.6),
                },
                SlaStream {
                    name: "randwrite".into(),
                    qd: 64,
                    threads: 2,
                    iops: achieved * 0.3,
                    mb_s: achieved * 0.3 * 8192.0 / 1e6,
                    lat_ns: lat(mean_us * 1.47, mean_us * 1.3, mean_us * 4.6),
                },
            ];
            p
        })
        .collect();
    let best = points[2].clone();
    d.sla = Some(SlaResult {
        latency_ns: 2_000_000,
        percentile: Percentile::Mean,
        mode: "open-loop".into(),
        exhaustive: true,
        streams: vec!["randread".into(), "randwrite".into()],
        bs: 4096,
        best: Some(best),
        knee: Some(points[1].clone()),
        points,
        thrashing: Vec::new(),
        qd1_misses: false,
        search_seconds: 24.0,
        verdict: "/dev/nvme0n1 sustains 150000 IOPS (1228.8 MB/s) at mean 1.35 ms <= 2.00 ms with an offered \
                  rate of 150000 IOPS."
            .into(),
    });
    for rw in [RwMode::RandRead, RwMode::RandWrite] {
        d.results.push(JobResult::new(JobSpec {
            name: format!("best: {}", rw.name()),
            rw,
            bs: 8192,
            qd: 64,
            threads: 2,
            rate_iops: Some(if rw == RwMode::RandRead { 105_000 } else { 45_000 }),
            ..JobSpec::default()
        }));
    }
    d
}

fn subject(label: &str, source: &str, device: Option<&str>) -> Subject {
    Subject { label: label.into(), source: source.into(), device: device.map(str::to_string), folder: None }
}

/// The three rows (MB/s, IOPS, mean latency) of one test and direction from per-subject MB/s
/// samples; IOPS from the block size, mean latency by Little's law at `outstanding`.
fn rows_from_mb_s(
    test: &str,
    direction: &str,
    bs: f64,
    outstanding: f64,
    subjects: &[(&str, &[f64], &'static str)],
    kind: TestKind,
) -> Vec<stats::CompareRow> {
    let derive = |f: &dyn Fn(f64) -> f64| -> Vec<(String, Vec<f64>, &'static str)> {
        subjects.iter().map(|(l, v, unit)| (l.to_string(), v.iter().map(|&x| f(x)).collect(), *unit)).collect()
    };
    let iops = |mb: f64| (mb * 1e6 / bs).round();
    vec![
        build_row(test, direction, "mb_s", true, &derive(&|x| x), kind, 0.95),
        build_row(test, direction, "iops", true, &derive(&iops), kind, 0.95),
        build_row(
            test,
            direction,
            "lat_mean_ns",
            false,
            &derive(&|x| (outstanding / iops(x) * 1e9).round()),
            kind,
            0.95,
        ),
    ]
}

/// `compare --results before.json after.json other.json`: B faster on random reads,
/// C slower on sequential reads, C's random figures from the seconds of one run.
pub fn compare_doc() -> ResultDoc {
    let mut d = doc("compare");
    d.target = Some(nvme("/dev/nvme0n1", "nvme0n1", "Samsung SSD 980 PRO 1TB"));
    let kind = TestKind::Welch;
    let mut rows = rows_from_mb_s(
        "SEQ1M Q8T1",
        "read",
        1_048_576.0,
        8.0,
        &[
            ("A", &[7012.3, 6998.1, 7005.6, 7020.4, 7001.9], "passes"),
            ("B", &[7010.8, 7003.2, 7015.7, 6999.4, 7008.1], "passes"),
            ("C", &[6120.5, 6133.9, 6101.2, 6128.7, 6117.0], "passes"),
        ],
        kind,
    );
    rows.extend(rows_from_mb_s(
        "RND4K Q32T1",
        "read",
        4096.0,
        32.0,
        &[
            ("A", &[812.9, 798.4, 805.1, 809.7, 801.3], "passes"),
            ("B", &[905.2, 911.8, 899.6, 908.4, 903.1], "passes"),
            ("C", &[790.1, 812.4, 799.8, 821.3, 805.5, 793.2, 816.9, 808.0, 797.7, 811.6], "seconds"),
        ],
        kind,
    ));
    rows.extend(rows_from_mb_s(
        "RND4K Q32T1",
        "write",
        4096.0,
        32.0,
        &[
            ("A", &[402.3, 398.7, 405.1, 400.9, 399.5], "passes"),
            ("B", &[395.8, 401.2, 389.9, 397.4, 392.6], "passes"),
            ("C", &[310.2, 402.1, 298.7, 415.6, 305.3, 399.9, 288.4, 410.2, 301.7, 395.5], "seconds"),
        ],
        kind,
    ));
    d.compare = Some(CompareResult {
        test: kind,
        confidence: 0.95,
        baseline: "A".into(),
        subjects: vec![
            subject("A", "results/before.json", Some("nvme0n1 · Samsung SSD 980 PRO 1TB")),
            subject("B", "results/after.json", Some("nvme0n1 · Samsung SSD 980 PRO 1TB")),
            subject("C", "results/other-host.json", None),
        ],
        interleaved: false,
        rows,
    });
    d
}

/// `compare /dev/nvme0n1 /dev/nvme1n1 --test mann-whitney --passes 3`: interleaved passes;
/// 3 vs 3 cannot reach p < 0.05 with Mann-Whitney; B has no write figures.
pub fn compare_live_doc() -> ResultDoc {
    let mut d = doc("compare");
    let kind = TestKind::MannWhitney;
    let mut rows = rows_from_mb_s(
        "randread 4k",
        "read",
        4096.0,
        1.0,
        &[("A", &[78.4, 77.9, 78.8], "passes"), ("B", &[91.2, 90.7, 92.0], "passes")],
        kind,
    );
    rows.extend(rows_from_mb_s(
        "randrw 4k",
        "write",
        4096.0,
        1.0,
        &[("A", &[0.0, 0.0, 0.0], "passes"), ("B", &[], "passes")],
        kind,
    ));
    d.compare = Some(CompareResult {
        test: kind,
        confidence: 0.95,
        baseline: "A".into(),
        subjects: vec![
            subject("A", "/dev/nvme0n1", Some("Samsung SSD 980 PRO 1TB")),
            subject("B", "/dev/nvme1n1", Some("WD Black SN850X 1TB")),
        ],
        interleaved: true,
        rows,
    });
    d
}
