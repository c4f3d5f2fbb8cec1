//! The result model: JSON round trips and shape, the figures' definitions, pass aggregation.

use std::time::Duration;

use diskmeter_stats::*;
use spec::{JobSpec, RwMode};

fn hist(values: &[(u64, u64)]) -> LatHist {
    let mut h = LatHist::new();
    for &(v, n) in values {
        h.record_n(v, n);
    }
    h
}

fn dir(mb_s: f64, lat_mean: f64) -> DirStats {
    let seconds = 5.0;
    let bytes = (mb_s * 1e6 * seconds) as u64;
    DirStats {
        bound: None,
        ops: bytes / 4096,
        bytes,
        seconds,
        iops: bytes as f64 / 4096.0 / seconds,
        mb_s,
        mib_s: bytes as f64 / 1_048_576.0 / seconds,
        lat_ns: LatSummary {
            min: 10_000,
            mean: lat_mean,
            stddev: 1000.0,
            p50: 50_000,
            p90: 90_000,
            p99: 99_000,
            p99_9: 199_000,
            p99_99: 299_000,
            max: 1_000_000,
        },
        qd_mean: 31.5,
        lat_cdf: Vec::new(),
    }
}

fn host() -> HostInfo {
    HostInfo {
        kernel: "6.8.0-test".into(),
        cpus: 8,
        memory_bytes: 16 << 30,
        cpu_model: Some("Test CPU @ 3.0GHz".into()),
        hostname: None,
        ..HostInfo::default()
    }
}

fn full_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("mark", "2025-01-15T10:30:00Z", host());
    let mut t = TargetInfo::new("/tmp/diskmeter.test", TargetKind::File, 1 << 30);
    t.device = Some("nvme0n1".into());
    t.rotational = Some(false);
    t.filesystem = Some("ext4".into());
    t.physical_block = 4096;
    t.created_by_diskmeter = true;
    doc.target = Some(t);
    let spec = JobSpec {
        name: "RND4K Q32T1".into(),
        rw: RwMode::RandRead,
        qd: 32,
        size: Some(1 << 30),
        runtime: Duration::from_secs(5),
        ..JobSpec::default()
    };
    let mut r = JobResult::new(spec);
    let h = hist(&[(87_300, 1000), (1_240_000, 7)]);
    r.read = Some(DirStats::new(1007, 1007 * 4096, 1.25, &h, 31.7));
    r.series.push(SeriesPoint::from_interval(1.0, 1.0, (&h, 1007 * 4096), (&LatHist::new(), 0)));
    r.cpu = CpuUsage { user_pct: 3.5, sys_pct: 12.25, max_worker_pct: 15.75, poll_us: 0 };
    r.set_passes(
        vec![
            PassResult {
                pass: 1,
                read: Some(dir(100.0, 90_000.0)),
                write: None,
                histograms: None,
                whole_bursts: Vec::new(),
            },
            PassResult {
                pass: 2,
                read: Some(dir(120.0, 95_000.0)),
                write: None,
                histograms: None,
                whole_bursts: Vec::new(),
            },
        ],
        Aggregate::Max,
    );
    r.error = Some(ErrorInfo {
        kind: "eio".into(),
        message: "read failed".into(),
        offset: Some(4096),
        job: Some("RND4K Q32T1".into()),
    });
    doc.results.push(r);
    doc.warn(codes::SMALL_TEST_AREA, "test area 1 GiB is smaller than RAM (16 GiB)");
    doc.warn(codes::SMALL_TEST_AREA, "test area 1 GiB is smaller than RAM (16 GiB)");
    doc.partial = true;
    doc.error = Some(ErrorInfo::new("interrupted", "stopped by Ctrl-C"));
    doc
}

#[test]
fn round_trip_full_doc() {
    let doc = full_doc();
    assert_eq!(doc.warnings.len(), 1, "warn() deduplicates");
    let text = doc.to_json_pretty().expect("serialize");
    let back = ResultDoc::from_json(&text).expect("parse back");
    assert_eq!(back, doc);
}

#[test]
fn from_json_rejects_other_schema() {
    let mut v = serde_json::to_value(full_doc()).expect("to value");
    v["schema"] = "diskmeter.result.v2".into();
    let err = ResultDoc::from_json(&v.to_string()).expect_err("must reject");
    let msg = err.to_string();
    assert!(msg.contains("diskmeter.result.v2"), "{msg}");
    assert!(msg.contains(SCHEMA), "{msg}");
    assert!(matches!(ResultDoc::from_json("{\"results\": []}"), Err(StatsError::NoSchema)));
    assert!(matches!(ResultDoc::from_json("not json"), Err(StatsError::Json(_))));
}

#[test]
fn optional_keys_present_as_null() {
    let mut doc = ResultDoc::new("run", "2025-01-15T10:30:00Z", HostInfo::default());
    doc.target = Some(TargetInfo::new("/dev/null", TargetKind::Null, 0));
    doc.results.push(JobResult::new(JobSpec::default()));
    let v = serde_json::to_value(&doc).expect("to value");
    assert!(v.get("error").is_none(), "doc error skipped when None");
    assert!(v["target"]["model"].is_null());
    assert!(v["target"]["device_cache_bytes"].is_null());
    assert_eq!(v["target"]["kind"], "null");
    let r = &v["results"][0];
    assert!(r["read"].is_null() && r.get("read").is_some());
    assert!(r["write"].is_null() && r.get("write").is_some());
    assert!(r.get("passes").is_none());
    assert!(r.get("aggregate").is_none());
    assert!(r.get("spread").is_none());
}

#[test]
fn snapshot_small_doc() {
    let mut doc = ResultDoc::new("run", "2025-01-15T10:30:00Z", host());
    doc.tool.version = "0.0.0-test".into();
    let mut t = TargetInfo::new("/dev/nvme0n1", TargetKind::Block, 1_000_204_886_016);
    t.device = Some("nvme0n1".into());
    t.model = Some("Example NVMe 1TB".into());
    t.rotational = Some(false);
    t.scheduler = Some("none".into());
    t.physical_block = 4096;
    doc.target = Some(t);
    let spec = JobSpec { name: "job".into(), qd: 4, ..JobSpec::default() };
    let mut r = JobResult::new(spec);
    r.read = Some(DirStats::new(4000, 4000 * 4096, 2.0, &hist(&[(100_000, 4000)]), 3.9));
    r.series.push(SeriesPoint::from_interval(1.0, 1.0, (&hist(&[(100_000, 2000)]), 2000 * 4096), (&LatHist::new(), 0)));
    r.cpu = CpuUsage { user_pct: 1.5, sys_pct: 4.5, max_worker_pct: 6.0, poll_us: 0 };
    doc.results.push(r);
    doc.warn(codes::DEVICE_CACHE_UNKNOWN, "device cache size unknown");
    insta::assert_json_snapshot!(doc);
}

#[test]
fn dirstats_definitions() {
    let h = hist(&[(1_000, 10)]);
    let d = DirStats::new(1000, 1_048_576_000, 2.0, &h, 1.0);
    assert_eq!(d.iops, 500.0);
    assert_eq!(d.mb_s, 524.288);
    assert_eq!(d.mib_s, 500.0);
    let z = DirStats::new(10, 4096, 0.0, &h, f64::NAN);
    assert_eq!((z.iops, z.mb_s, z.mib_s, z.qd_mean), (0.0, 0.0, 0.0, 0.0));
    let e = DirStats::new(0, 0, 1.0, &LatHist::new(), 0.0);
    assert_eq!(e.lat_ns, LatSummary::default());
}

#[test]
fn series_point_from_interval() {
    let r = hist(&[(50_000, 500)]);
    let w = hist(&[(200_000, 100)]);
    let p = SeriesPoint::from_interval(2.0, 0.5, (&r, 500 * 4096), (&w, 100 * 65536));
    assert_eq!(p.t_s, 2.0);
    assert_eq!(p.read_iops, 1000.0);
    assert_eq!(p.read_mb_s, 500.0 * 4096.0 / 1e6 / 0.5);
    assert_eq!(p.write_iops, 200.0);
    assert_eq!(p.write_mb_s, 100.0 * 65536.0 / 1e6 / 0.5);
    assert!((p.read_lat_mean_ns - 50_000.0).abs() < 50.0);
    assert!((p.write_lat_p99_ns as f64 - 200_000.0).abs() < 200.0);
    let empty = SeriesPoint::from_interval(1.0, 1.0, (&LatHist::new(), 0), (&LatHist::new(), 0));
    assert_eq!(empty.read_iops, 0.0);
    assert_eq!(empty.read_lat_p99_ns, 0);
}

#[test]
fn aggregate_max_takes_best_mb_s_and_min_latency() {
    let passes = vec![
        PassResult {
            pass: 1,
            read: Some(dir(100.0, 80_000.0)),
            write: Some(dir(50.0, 300_000.0)),
            histograms: None,
            whole_bursts: Vec::new(),
        },
        PassResult {
            pass: 2,
            read: Some(dir(120.0, 90_000.0)),
            write: Some(dir(40.0, 200_000.0)),
            histograms: None,
            whole_bursts: Vec::new(),
        },
        PassResult {
            pass: 3,
            read: Some(dir(110.0, 70_000.0)),
            write: Some(dir(45.0, 250_000.0)),
            histograms: None,
            whole_bursts: Vec::new(),
        },
    ];
    let (r, w, spread) = aggregate_passes(&passes, Aggregate::Max);
    let r = r.expect("read");
    let w = w.expect("write");
    assert_eq!(r.mb_s, 120.0);
    assert_eq!(r.iops, dir(120.0, 0.0).iops);
    assert_eq!(r.lat_ns.mean, 70_000.0);
    assert_eq!(w.mb_s, 50.0);
    assert_eq!(w.lat_ns.mean, 200_000.0);
    let rs = spread.read.expect("read spread");
    assert!((rs.mb_s_mean - 110.0).abs() < 1e-9);
    assert!((rs.mb_s_stddev - 10.0).abs() < 1e-9);
    assert!((rs.lat_mean_ns_mean - 80_000.0).abs() < 1e-6);
    assert!((rs.lat_mean_ns_stddev - 10_000.0).abs() < 1e-6);
}

#[test]
fn aggregate_mean_averages() {
    let passes = vec![
        PassResult {
            pass: 1,
            read: Some(dir(100.0, 80_000.0)),
            write: None,
            histograms: None,
            whole_bursts: Vec::new(),
        },
        PassResult {
            pass: 2,
            read: Some(dir(200.0, 100_000.0)),
            write: None,
            histograms: None,
            whole_bursts: Vec::new(),
        },
    ];
    let (r, w, spread) = aggregate_passes(&passes, Aggregate::Mean);
    let r = r.expect("read");
    assert!(w.is_none());
    assert!(spread.write.is_none());
    assert_eq!(r.mb_s, 150.0);
    assert_eq!(r.lat_ns.mean, 90_000.0);
    assert_eq!(r.bytes, 750_000_000);
    assert_eq!(r.seconds, 5.0);
    assert_eq!(r.qd_mean, 31.5);
    assert_eq!(r.lat_ns.p99, 99_000);
}

#[test]
fn aggregate_single_and_empty() {
    let one = vec![PassResult {
        pass: 1,
        read: Some(dir(100.0, 80_000.0)),
        write: None,
        histograms: None,
        whole_bursts: Vec::new(),
    }];
    let (r, _, spread) = aggregate_passes(&one, Aggregate::Single);
    assert_eq!(r, Some(dir(100.0, 80_000.0)));
    let rs = spread.read.expect("spread");
    assert_eq!(rs.mb_s_stddev, 0.0, "one pass has no spread");
    assert_eq!(rs.mb_s_mean, 100.0);
    let (r, w, spread) = aggregate_passes(&[], Aggregate::Max);
    assert!(r.is_none() && w.is_none());
    assert_eq!(spread, Spread::default());
}

#[test]
fn warning_codes_are_stable() {
    assert_eq!(codes::BUFFERED_IO, "buffered-io");
    assert_eq!(codes::ZERO_DATA, "compressible-data");
    assert_eq!(SCHEMA, "diskmeter.result.v1");
}

#[test]
fn mean_aggregate_averages_cdfs_by_fraction() {
    let mut a = LatHist::new();
    let mut b = LatHist::new();
    for v in 1..=1000u64 {
        a.record(v * 1000);
        b.record(v * 3000);
    }
    let da = DirStats::new(1000, 4_096_000, 1.0, &a, 1.0);
    let db = DirStats::new(1000, 4_096_000, 1.0, &b, 1.0);
    let passes = vec![
        PassResult { pass: 1, read: Some(da.clone()), write: None, histograms: None, whole_bursts: Vec::new() },
        PassResult { pass: 2, read: Some(db.clone()), write: None, histograms: None, whole_bursts: Vec::new() },
    ];
    let (r, _, _) = aggregate_passes(&passes, Aggregate::Mean);
    let r = r.expect("read");
    assert_eq!(r.lat_cdf.len(), da.lat_cdf.len());
    for ((m, x), y) in r.lat_cdf.iter().zip(&da.lat_cdf).zip(&db.lat_cdf) {
        assert_eq!(m.fraction, x.fraction);
        assert_eq!(m.ns, (x.ns + y.ns) / 2);
    }
    // A pass without a CDF (an older document): no CDF rather than a wrong one.
    let passes = vec![
        PassResult { pass: 1, read: Some(da), write: None, histograms: None, whole_bursts: Vec::new() },
        PassResult {
            pass: 2,
            read: Some(DirStats { lat_cdf: Vec::new(), ..db }),
            write: None,
            histograms: None,
            whole_bursts: Vec::new(),
        },
    ];
    let (r, _, _) = aggregate_passes(&passes, Aggregate::Mean);
    assert!(r.expect("read").lat_cdf.is_empty());
}

// Margins: a band figure is held only when the last comparable run gave its warning.
#[test]
fn a_band_figure_is_held_only_when_the_last_comparable_run_gave_the_warning() {
    let mut doc = ResultDoc::new("run", "2026-11-29T00:00:00Z", HostInfo::default());
    assert_eq!(doc.judge(&margin::WORKER_CPU, 91.0, "j: a worker ran at 91% CPU"), margin::Zone::Band);
    assert_eq!(doc.judge(&margin::HANDOFF, 0.01, "never"), margin::Zone::Clear);
    assert!(doc.warnings.is_empty());
    assert_eq!(doc.borderline.len(), 1);
    // No earlier run, or one without it: stays out.
    let mut alone = doc.clone();
    alone.hold(None);
    alone.hold(Some((7, &["ram-backed".to_string()])));
    assert!(alone.warnings.is_empty() && alone.borderline[0].held_by.is_none());
    // The earlier run gave it: held, with why.
    doc.hold(Some((7, &["tool-bottleneck".to_string()])));
    assert_eq!(doc.warnings.len(), 1);
    let w = &doc.warnings[0];
    assert_eq!(w.code, "tool-bottleneck");
    assert!(w.message.starts_with("j: a worker ran at 91% CPU [held: 91 is inside"), "{}", w.message);
    assert!(w.message.ends_with("band (85 to 95), and the last comparable run, #7, gave it]"), "{}", w.message);
    assert_eq!(doc.borderline[0].held_by, Some(7));
    // Holding twice gives it once.
    doc.hold(Some((7, &["tool-bottleneck".to_string()])));
    assert_eq!(doc.warnings.len(), 1);
}
