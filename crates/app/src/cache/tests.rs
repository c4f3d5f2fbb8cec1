//! The `cache` configurations' error paths, message for message.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::test_support::usage_message;
use std::path::PathBuf;

/// A change to valid options and the start of the message it gives.
type Case<O> = (fn(&mut O), &'static str);

fn trace_opts() -> TraceOptions {
    TraceOptions { trace: PathBuf::from("t.csv"), ..TraceOptions::default() }
}

fn simulate() -> SimulateOptions {
    SimulateOptions {
        input: trace_opts(),
        preset: "database".into(),
        cache_size: "1G".into(),
        block: None,
        sub_block: None,
        por: None,
        pow: None,
        mode: "wt".into(),
        seq_cutoff: None,
        policy: "qsan".into(),
        unit: "4k".into(),
        counter_limit: None,
        interval: None,
        ssd_size: None,
        hdd_iops: "150".into(),
        hdd_latency: "8ms".into(),
        hdds: 1,
        raid_penalty: 1.0,
        ssd_iops: "50000".into(),
        ssd_latency: "100us".into(),
        ssds: 1,
    }
}

fn mrc() -> MrcOptions {
    MrcOptions {
        input: trace_opts(),
        unit: "4k".into(),
        sizes: None,
        shards: None,
        reads_only: false,
        policy: "lru".into(),
        preset: "database".into(),
    }
}

fn warmup() -> WarmupOptions {
    WarmupOptions { capacity: "480G".into(), threshold: 2, hdd_iops: "250".into(), io_size: "64k".into(), hdds: 16 }
}

fn synth(output: PathBuf) -> SynthOptions {
    SynthOptions {
        dist: "uniform".into(),
        blocks: "1000".into(),
        requests: "100".into(),
        block_size: "4k".into(),
        read_pct: "70".into(),
        iops: "1000".into(),
        contiguous: false,
        seed: 1,
        output,
        force: false,
    }
}

fn usage(o: Options) -> String {
    usage_message(Config::new(&o))
}

#[test]
fn valid_options_give_a_config() {
    assert!(matches!(Config::new(&Options::Simulate(Box::new(simulate()))), Ok(Config::Simulate { .. })));
    assert!(matches!(Config::new(&Options::Mrc(mrc())), Ok(Config::Mrc { .. })));
    let Config::Warmup(w) = Config::new(&Options::Warmup(warmup())).unwrap() else { panic!("warmup") };
    assert_eq!(
        w,
        Warmup { capacity_bytes: 480 << 30, threshold: 2, hdd_iops: 250.0, io_size_bytes: 64 << 10, hdds: 16 }
    );
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(Config::new(&Options::Synth(synth(dir.path().join("z.dmt")))), Ok(Config::Synth { .. })));
}

#[test]
fn simulate_errors_name_their_option() {
    let cases: Vec<Case<SimulateOptions>> = vec![
        (|o| o.cache_size = "x".into(), "invalid value for --cache-size:"),
        (|o| o.preset = "nope".into(), "invalid value for --preset:"),
        (|o| o.mode = "zz".into(), "invalid value for --mode:"),
        (|o| o.sub_block = Some("3k".into()), "invalid value for --sub-block:"),
        (|o| o.policy = "fifo".into(), "invalid value for --policy:"),
        (|o| o.unit = "0".into(), "invalid value for --unit: must be at least 1 byte"),
        (|o| o.interval = Some("0s".into()), "invalid value for --interval: must be longer than 0"),
        (|o| o.hdds = 0, "invalid value for --hdds: must be at least 1"),
        (|o| o.ssds = 0, "invalid value for --ssds: must be at least 1"),
        (|o| o.raid_penalty = 0.5, "invalid value for --raid-penalty: must be 1 or more (RAID10 2, RAID5 4, RAID6 6)"),
        (|o| o.hdd_iops = "abc".into(), "invalid value for --hdd-iops: \"abc\" is not a number"),
        (|o| o.ssd_iops = "-5".into(), "invalid value for --ssd-iops: -5 must be a number above 0"),
        (|o| o.hdd_latency = "x".into(), "invalid value for --hdd-latency:"),
        (|o| o.ssd_size = Some("x".into()), "invalid value for --ssd-size:"),
        (
            |o| o.counter_limit = Some("0".into()),
            "invalid value for --counter-limit: must be between 1 and 4294967296 blocks",
        ),
        (|o| o.input.until = Some("1s".into()), "invalid value for --until: must be later than --from"),
        (|o| o.input.format = Some("nope".into()), "invalid value for --format:"),
    ];
    for (change, want) in cases {
        let mut o = simulate();
        o.input.from = Some("2s".into());
        change(&mut o);
        let m = usage(Options::Simulate(Box::new(o)));
        assert!(m.starts_with(want), "{m:?} should start with {want:?}");
    }
}

#[test]
fn a_custom_preset_says_so() {
    let mut o = simulate();
    o.por = Some(1);
    let Config::Simulate { sim, .. } = Config::new(&Options::Simulate(Box::new(o))).unwrap() else {
        panic!("simulate")
    };
    assert_eq!(sim.preset, "database (custom)");
}

#[test]
fn mrc_errors() {
    let cases: Vec<Case<MrcOptions>> = vec![
        (|o| o.unit = "0".into(), "invalid value for --unit: must be at least 1 byte"),
        (|o| o.sizes = Some("1G,0".into()), "invalid value for --sizes: sizes must be above 0"),
        (|o| o.shards = Some("0%".into()), "invalid value for --shards: the sampling rate must be above 0%"),
        (|o| o.policy = "arc".into(), "invalid value for --policy: unknown policy \"arc\"; use lru or qsan"),
        (
            |o| {
                o.policy = "qsan".into();
                o.preset = "nope".into();
            },
            "invalid value for --preset:",
        ),
    ];
    for (change, want) in cases {
        let mut o = mrc();
        change(&mut o);
        let m = usage(Options::Mrc(o));
        assert!(m.starts_with(want), "{m:?} should start with {want:?}");
    }
}

#[test]
fn warmup_errors() {
    let cases: Vec<Case<WarmupOptions>> = vec![
        (|o| o.capacity = "0".into(), "invalid value for --capacity: must be above 0"),
        (|o| o.threshold = 0, "invalid value for --threshold: must be at least 1 (a threshold of 0 never fills)"),
        (|o| o.io_size = "0".into(), "invalid value for --io-size: must be above 0"),
        (|o| o.hdds = 0, "invalid value for --hdds: must be at least 1"),
        (|o| o.hdd_iops = "0".into(), "invalid value for --hdd-iops: 0 must be a number above 0"),
    ];
    for (change, want) in cases {
        let mut o = warmup();
        change(&mut o);
        assert_eq!(usage(Options::Warmup(o)), want);
    }
}

#[test]
fn synth_and_convert_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("z.dmt");
    let mut o = synth(out.clone());
    o.block_size = "4G".into();
    assert_eq!(usage(Options::Synth(o)), "invalid value for --block-size: must be below 4 GiB");
    let mut o = synth(out.clone());
    o.dist = "gauss".into();
    assert!(usage(Options::Synth(o)).starts_with("invalid value for --dist:"));
    let mut o = synth(out);
    o.read_pct = "101".into();
    assert!(usage(Options::Synth(o)).starts_with("invalid value for --read-pct:"));
    let dash = "invalid value for --output: a trace is written to a file (its header is completed at the end); \
                name a file";
    assert_eq!(usage(Options::Synth(synth(PathBuf::from("-")))), dash);
    let convert = ConvertOptions { input: trace_opts(), output: PathBuf::from("-"), force: false };
    assert_eq!(usage(Options::Convert(convert)), dash);
}

#[test]
fn warmup_runs_without_input() {
    let cfg = Config::new(&Options::Warmup(warmup())).unwrap();
    let doc = run(&cfg, &AtomicBool::new(false)).unwrap();
    assert_eq!(doc.command, "cache");
    assert!(doc.error.is_none() && !doc.partial);
    let s = doc.cache.unwrap().warmup_estimate.unwrap().seconds;
    assert!((s - 3932.16).abs() < 0.01, "{s}");
}
