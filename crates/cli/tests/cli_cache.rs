//! `cache` end to end: the warm-up formula, synthetic traces, simulation, miss-ratio
//! curves, conversion, and bad input (one line, exit 2, nothing written).

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../trace/tests/data").join(name)
}

#[test]
fn warmup_formula_reproduces_the_source_examples() {
    let dir = tempdir();
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args([
            "cache",
            "warmup",
            "--capacity",
            "480G",
            "--threshold",
            "2",
            "--hdd-iops",
            "250",
            "--io-size",
            "64k",
            "--hdds",
            "16",
            "--json",
        ]),
        0,
    ));
    let s = doc["cache"]["warmup_estimate"]["seconds"].as_f64().expect("seconds");
    assert!((s - 3932.16).abs() < 0.01, "{s}");
    let o = expect_code(
        dm_in(dir.path()).args([
            "cache",
            "warmup",
            "--capacity",
            "2T",
            "--threshold",
            "2",
            "--hdd-iops",
            "244",
            "--io-size",
            "8k",
            "--hdds",
            "8",
        ]),
        0,
    );
    let text = stdout_of(&o);
    assert!(text.contains("275036 s") && text.contains("76.4 h"), "{text}");
}

#[test]
fn synth_then_simulate_every_policy() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path()).args([
            "cache",
            "synth",
            "--dist",
            "zipf:0.9",
            "--blocks",
            "20000",
            "--requests",
            "50000",
            "--read-pct",
            "80",
            "-o",
            "z.dmt",
        ]),
        0,
    );
    assert!(stdout_of(&o).contains("50000 requests"), "{}", stdout_of(&o));
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args([
            "cache",
            "simulate",
            "--trace",
            "z.dmt",
            "--cache-size",
            "16M",
            "--preset",
            "database",
            "--block",
            "64k",
            "--sub-block",
            "4k",
            "--policy",
            "all",
            "--json",
        ]),
        0,
    ));
    let c = &doc["cache"];
    assert_eq!(c["action"], "simulate");
    assert_eq!(c["trace"]["requests"], 50_000);
    assert_eq!(c["config"]["block_bytes"], 65_536);
    let policies = c["policies"].as_array().expect("policies");
    let names: Vec<&str> = policies.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(names, ["qsan", "lru", "nhit", "s3fifo", "opt"]);
    let opt_hits = policies[4]["requests"]["read_hits"].as_u64().expect("opt hits");
    for p in policies {
        let h = p["read_hit_ratio"].as_f64().expect("hit ratio");
        assert!((0.0..=1.0).contains(&h));
        assert!(p["requests"]["read_hits"].as_u64().expect("hits") <= opt_hits, "OPT is the upper bound: {p}");
        assert!(!p["series"].as_array().expect("series").is_empty());
        assert!(p["perf"]["max_iops"].as_f64().unwrap_or(0.0) > 0.0);
    }
    // A counter table bounded far below the ~1,250 backing blocks forgets counts (CLOCK), so
    // blocks reach the threshold less often: never a better hit ratio, still a working cache.
    let bounded = json_of(&expect_code(
        dm_in(dir.path()).args([
            "cache",
            "simulate",
            "--trace",
            "z.dmt",
            "--cache-size",
            "16M",
            "--block",
            "64k",
            "--sub-block",
            "4k",
            "--counter-limit",
            "100k",
            "--json",
        ]),
        0,
    ));
    let a = policies[0]["read_hit_ratio"].as_f64().expect("qsan");
    let b = bounded["cache"]["policies"][0]["read_hit_ratio"].as_f64().expect("qsan bounded");
    assert!(b <= a + 1e-9 && b > 0.0, "unbounded {a} vs bounded {b}");
    // Human output and CSV export.
    let o = expect_code(
        dm_in(dir.path()).args(["cache", "simulate", "--trace", "z.dmt", "--cache-size", "16M", "-o", "sim.csv"]),
        0,
    );
    assert!(stdout_of(&o).contains("read hit"), "{}", stdout_of(&o));
    let csv = std::fs::read_to_string(dir.path().join("sim.csv")).expect("csv");
    assert!(csv.starts_with("policy,read_hit_ratio"), "{csv}");
    assert_eq!(csv.lines().count(), 2);
}

#[test]
fn mrc_exact_and_sampled() {
    let dir = tempdir();
    expect_code(
        dm_in(dir.path()).args([
            "cache",
            "synth",
            "--dist",
            "hotset:90/10",
            "--blocks",
            "10000",
            "--requests",
            "40000",
            "-o",
            "h.dmt",
        ]),
        0,
    );
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args(["cache", "mrc", "--trace", "h.dmt", "--unit", "4k", "--json"]),
        0,
    ));
    let m = &doc["cache"]["mrc"];
    assert_eq!(m["method"], "mattson");
    let pts = m["points"].as_array().expect("points");
    assert!(pts.len() > 2);
    let first = pts[0]["miss_ratio"].as_f64().expect("mr");
    let last = pts[pts.len() - 1]["miss_ratio"].as_f64().expect("mr");
    assert!(first >= last, "a miss-ratio curve does not rise: {first} → {last}");
    assert!(m["recommended"]["cache_bytes"].as_u64().unwrap_or(0) > 0, "{m}");
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args([
            "cache",
            "mrc",
            "--trace",
            "h.dmt",
            "--shards",
            "10%",
            "--sizes",
            "1M,4M,16M",
            "--json",
        ]),
        0,
    ));
    let m = &doc["cache"]["mrc"];
    assert_eq!(m["method"], "shards");
    assert_eq!(m["points"].as_array().map(Vec::len), Some(3));
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args([
            "cache",
            "mrc",
            "--trace",
            "h.dmt",
            "--policy",
            "qsan",
            "--sizes",
            "8M,16M,32M",
            "--json",
        ]),
        0,
    ));
    assert_eq!(doc["cache"]["mrc"]["method"], "simulation");
}

#[test]
fn convert_a_text_trace_and_replay_it() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path())
            .args(["cache", "convert", "--trace"])
            .arg(sample("msr.csv.gz"))
            .args(["--format", "msr", "-o", "msr.dmt"]),
        0,
    );
    assert!(stdout_of(&o).contains("wrote msr.dmt"), "{}", stdout_of(&o));
    let bin = json_of(&expect_code(
        dm_in(dir.path()).args(["cache", "simulate", "--trace", "msr.dmt", "--cache-size", "64M", "--json"]),
        0,
    ));
    let txt = json_of(&expect_code(
        dm_in(dir.path()).args(["cache", "simulate", "--trace"]).arg(sample("msr.csv")).args([
            "--cache-size",
            "64M",
            "--json",
        ]),
        0,
    ));
    assert_eq!(bin["cache"]["policies"][0]["requests"], txt["cache"]["policies"][0]["requests"]);
    assert_eq!(bin["cache"]["trace"]["requests"], txt["cache"]["trace"]["requests"]);
}

#[test]
fn cache_bad_input_is_one_line_and_exit_2() {
    let dir = tempdir();
    expect_code(
        dm_in(dir.path()).args([
            "cache",
            "synth",
            "--dist",
            "uniform",
            "--blocks",
            "100",
            "--requests",
            "100",
            "-o",
            "u.dmt",
        ]),
        0,
    );
    let cases: &[(&[&str], &str)] = &[
        (&["simulate", "--trace", "missing.dmt", "--cache-size", "1G"], "missing.dmt"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "0"], "--cache-size"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--policy", "arc"], "--policy"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--preset", "games"], "--preset"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--block", "1M", "--sub-block", "3k"], "sub-block"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--mode", "fast"], "--mode"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--from", "10s", "--until", "5s"], "--until"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--format", "pcap"], "--format"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--hdds", "0"], "--hdds"),
        (&["simulate", "--trace", "u.dmt", "--cache-size", "1G", "--counter-limit", "0"], "--counter-limit"),
        (&["mrc", "--trace", "u.dmt", "--shards", "0"], "--shards"),
        (&["mrc", "--trace", "u.dmt", "--policy", "qsan"], "--sizes"),
        (
            &["warmup", "--capacity", "1T", "--threshold", "0", "--hdd-iops", "200", "--io-size", "8k", "--hdds", "4"],
            "--threshold",
        ),
        (
            &["warmup", "--capacity", "1T", "--threshold", "2", "--hdd-iops", "0", "--io-size", "8k", "--hdds", "4"],
            "--hdd-iops",
        ),
        (&["synth", "--dist", "zipf:x", "--blocks", "10", "--requests", "10", "-o", "x.dmt"], "--dist"),
        (&["synth", "--dist", "uniform", "--blocks", "0", "--requests", "10", "-o", "x.dmt"], "blocks"),
        (&["synth", "--dist", "uniform", "--blocks", "10", "--requests", "10", "-o", "nodir/x.dmt"], "--output"),
    ];
    for (args, needle) in cases {
        let o = expect_code(dm_in(dir.path()).arg("cache").args(*args), 2);
        let err = stderr_of(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: one line expected:\n{err}");
        assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
    }
    // A malformed line names its line number: partway through the trace it ends the reading
    // (partial results of the requests before it, exit 1); as the first line it is bad input
    // (exit 2). --skip-bad counts it instead.
    std::fs::write(dir.path().join("bad.csv"), "128166372003061629,hm,0,Read,7014609920,24576,41286\nnot,a,line\n")
        .expect("write");
    let o = expect_code(
        dm_in(dir.path()).args(["cache", "simulate", "--trace", "bad.csv", "--format", "msr", "--cache-size", "1G"]),
        1,
    );
    let err = stderr_of(&o);
    assert!(err.contains("line 2") && err.contains("cut short after 1 requests"), "{err}");
    assert!(stdout_of(&o).contains("1 requests"), "partial results are shown: {}", stdout_of(&o));
    std::fs::write(dir.path().join("bad.csv"), "128166372003061629,hm,0,Read,7x,24576,41286\nnot,a,line\n")
        .expect("write");
    let err = stderr_of(&expect_code(
        dm_in(dir.path()).args(["cache", "simulate", "--trace", "bad.csv", "--format", "msr", "--cache-size", "1G"]),
        2,
    ));
    assert!(err.contains("line 1"), "{err}");
    std::fs::write(dir.path().join("bad.csv"), "128166372003061629,hm,0,Read,7014609920,24576,41286\nnot,a,line\n")
        .expect("write");
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args([
            "cache",
            "simulate",
            "--trace",
            "bad.csv",
            "--format",
            "msr",
            "--cache-size",
            "1G",
            "--skip-bad",
            "--json",
        ]),
        0,
    ));
    assert_eq!(doc["cache"]["trace"]["skipped_lines"], 1);
    assert_eq!(entries(dir.path()), ["bad.csv", "u.dmt"], "bad input writes nothing");
}

/// Each synth parameter's check names its own option (`--block-size 0` used to name
/// `--blocks`).
#[test]
fn synth_errors_name_the_option_at_fault() {
    let dir = tempdir();
    let base = ["cache", "synth", "--dist", "uniform", "--blocks", "100", "--requests", "10", "-o", "x.dmt"];
    let cases: &[(&[&str], &str, &str)] = &[
        (&["--block-size", "0"], "--block-size", "block size must be ≥ 1 byte"),
        (&["--iops", "0"], "--iops", "above 0"),
    ];
    for (extra, option, what) in cases {
        let o = expect_code(dm_in(dir.path()).args(base).args(*extra), 2);
        let err = stderr_of(&o);
        assert_eq!(err.lines().count(), 1, "{extra:?}: one line expected:\n{err}");
        assert!(err.starts_with(&format!("error: invalid value for {option}:")), "{extra:?}: {err}");
        assert!(err.contains(what) && !err.contains("--blocks"), "{extra:?}: {err}");
        assert!(o.stdout.is_empty(), "{extra:?}: stdout: {}", stdout_of(&o));
        assert!(entries(dir.path()).is_empty(), "{extra:?}: wrote {:?}", entries(dir.path()));
    }
}
