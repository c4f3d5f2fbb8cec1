use super::*;
use crate::session::DEFAULT_TARGET;
use crate::test_support::{changed, usage_message};
use crate::Error;

fn options() -> Options {
    Options {
        target: None,
        latency: "1ms".into(),
        percentile: "mean".into(),
        rw: "randread".into(),
        bs: "4k".into(),
        mix: None,
        max_qd: "256".into(),
        max_threads: None,
        exhaustive: false,
        open_loop: false,
        size: "1G".into(),
        ramp: "1s".into(),
        min_windows: "3".into(),
        max_windows: "10".into(),
        cv: "5%".into(),
        guard: "10%".into(),
        engine: "io_uring".into(),
        dist: None,
        data: None,
        seed: None,
        flags: TargetFlags::default(),
    }
}

fn with(f: impl FnOnce(&mut Options)) -> Options {
    changed(options(), f)
}

/// The usage error for `o` on a machine of 8 CPUs.
fn usage(o: &Options) -> String {
    usage_message(Config::checked(o, 8).map_err(Error::from))
}

#[test]
fn a_folder_names_its_test_file() {
    let d = tempfile::tempdir().expect("tempdir");
    let c = Config::checked(&Options { target: Some(d.path().to_path_buf()), ..options() }, 8).expect("valid");
    assert_eq!(c.target(), d.path().join(DEFAULT_TARGET));
}

#[test]
fn defaults() {
    let c = Config::checked(&options(), 8).expect("valid");
    assert_eq!(c.target(), Path::new(DEFAULT_TARGET));
    assert_eq!((c.bound_ns(), c.percentile(), c.max_qd(), c.max_threads()), (1_000_000, Percentile::Mean, 256, 8));
    assert_eq!((c.min_windows, c.max_windows, c.cv_target, c.guard), (3, 10, 0.05, 0.1));
    assert_eq!(c.streams().len(), 1);
    assert_eq!((c.streams()[0].name.as_str(), c.first_share), ("randread", 50));
    // No CPU known: one worker.
    assert_eq!(Config::checked(&options(), 0).expect("valid").max_threads(), 1);
    let two = Config::checked(&with(|o| o.rw = "randread + randwrite".into()), 8).expect("valid");
    assert_eq!(two.streams().iter().map(|s| s.rw.name()).collect::<Vec<_>>(), ["randread", "randwrite"]);
}

#[test]
fn the_bound() {
    assert_eq!(
        usage(&with(|o| o.latency = "0ms".into())),
        "invalid value for --latency: 0ms is not a usable bound; give a time above zero, e.g. --latency 10ms"
    );
    assert_eq!(
        usage(&with(|o| o.percentile = "95".into())),
        "invalid value for --percentile: unknown statistic \"95\"; use mean, 50, 90, 99 or 99.9"
    );
    assert!(usage(&with(|o| o.latency = "fast".into())).starts_with("invalid value for --latency: "));
}

#[test]
fn the_streams() {
    assert_eq!(
        usage(&with(|o| o.rw = "read+write+read".into())),
        "invalid value for --rw: \"read+write+read\": give one mode or two joined by + (randread+randwrite)"
    );
    assert_eq!(
        usage(&with(|o| o.rw = "randread+".into())),
        "invalid value for --rw: \"randread+\": give one mode or two joined by + (randread+randwrite)"
    );
    assert_eq!(
        usage(&with(|o| o.rw = "randread+up".into())),
        "invalid value for --rw: unknown mode \"up\"; use one of read, write, randread, randwrite, randrw, readwrite"
    );
    for mix in ["0", "100"] {
        assert_eq!(
            usage(&with(|o| {
                o.rw = "randread+randwrite".into();
                o.mix = Some(mix.into());
            })),
            "invalid value for --mix: with two streams it is the first stream's share of the depth: use 1 to 99"
        );
    }
    assert_eq!(
        usage(&with(|o| o.engine = "mem".into())),
        "invalid value for --engine: the mem engine measures memory, not a device, and is only for `diskmeter run`; \
         use io_uring, psync or null"
    );
}

#[test]
fn the_grid() {
    assert_eq!(usage(&with(|o| o.max_qd = "0".into())), "invalid value for --max-qd: must be at least 1");
    assert_eq!(
        usage(&with(|o| o.max_threads = Some("0".into()))),
        "invalid value for --max-threads: must be at least 1"
    );
    assert_eq!(
        usage(&with(|o| o.max_threads = Some("1025".into()))),
        "invalid value for --max-threads: 1025 is too many; use at most 1024"
    );
    let deep = spec::validate::depth_problem(EngineKind::IoUring, 65536, 8, "--max-qd", "--max-threads")
        .expect("above the limit");
    assert_eq!(usage(&with(|o| o.max_qd = "65536".into())), format!("invalid value for --max-qd: {deep}"));
    assert_eq!(
        usage(&with(|o| o.min_windows = "1".into())),
        "invalid value for --min-windows: must be at least 2 (a spread needs two windows)"
    );
    assert_eq!(
        usage(&with(|o| o.max_windows = "2".into())),
        "invalid value for --max-windows: must be between --min-windows (3) and 3600"
    );
    assert_eq!(
        usage(&with(|o| o.max_windows = "3601".into())),
        "invalid value for --max-windows: must be between --min-windows (3) and 3600"
    );
    assert_eq!(
        usage(&with(|o| o.size = "1k".into())),
        "invalid value for --size: 1k is smaller than one block (--bs 4k)"
    );
    assert_eq!(usage(&with(|o| o.cv = "0%".into())), "invalid value for --cv: 0% must be above 0%");
}

/// Errors travel as the measurement's result: the first failure stops the search, the
/// points before it are kept, and the failure comes back beside them.
#[test]
fn a_failed_measurement_stops_the_search() {
    struct Failing {
        calls: usize,
    }
    impl Prober for Failing {
        type Halt = &'static str;
        fn measure(&mut self, p: GridPoint, _mode: MeasureMode) -> Result<SlaPoint, &'static str> {
            self.calls += 1;
            if self.calls > 2 {
                return Err("disk gone");
            }
            Ok(SlaPoint {
                qd: p.qd,
                threads: p.threads,
                rate_iops: p.rate_iops,
                outstanding: p.qd * p.threads,
                iops: 1000.0 * f64::from(p.qd),
                mb_s: 4.0,
                lat_ns: stats::LatSummary::default(),
                metric_ns: 1000.0,
                feasible: true,
                windows: 3,
                cv_iops: 0.0,
                cv_lat: 0.0,
                stable: true,
                remeasured: false,
                early_reject: false,
                t_s: 0.0,
                streams: Vec::new(),
            })
        }
    }
    let mut p = Failing { calls: 0 };
    let (o, halt) = search::search(&SearchConfig { bound_ns: 1e6, ..SearchConfig::default() }, &mut p);
    assert_eq!(halt, Some("disk gone"));
    assert!(o.stopped);
    assert_eq!((o.points.len(), p.calls), (2, 3));
}

#[test]
fn the_verdict_is_made_by_report() {
    let o = search::SearchOutcome::default();
    let c = SearchConfig::default();
    assert_eq!(verdict(&o, &c, "x"), "no point was measured.");
}
