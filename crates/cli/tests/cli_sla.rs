//! `sla`, `compare` and `report` end to end on the null engine (no device): document
//! shape, verdicts, exports and bad input. Nothing here asserts a speed.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// A short search: 4 depths, one worker, two one-second windows per point.
const FAST_SLA: &[&str] =
    &["sla", "--engine", "null", "--max-threads", "1", "--ramp", "0s", "--min-windows", "2", "--max-windows", "2"];

fn sla_json(dir: &Path, extra: &[&str]) -> Value {
    json_of(&expect_code(dm_in(dir).args(FAST_SLA).args(extra).arg("--json"), 0))
}

#[test]
fn sla_finds_a_feasible_point_and_reports_the_curve() {
    let dir = tempdir();
    let doc = sla_json(dir.path(), &["--latency", "1s", "--percentile", "99", "--max-qd", "4"]);
    assert_eq!(doc["command"], "sla");
    let s = &doc["sla"];
    assert_eq!(s["latency_ns"], 1_000_000_000u64);
    assert_eq!(s["percentile"], "99");
    assert_eq!(s["mode"], "closed-loop");
    assert_eq!(s["qd1_misses"], false);
    let points = s["points"].as_array().expect("points");
    assert!(!points.is_empty());
    for p in points {
        assert!(p["qd"].as_u64().unwrap_or(0) >= 1);
        assert_eq!(p["threads"], 1);
        assert!(p["iops"].as_f64().unwrap_or(0.0) > 0.0, "{p}");
        assert!(p["lat_ns"]["p99"].as_u64().is_some());
        assert_eq!(p["feasible"], true, "a 1 s bound is met by the null engine: {p}");
        assert!(p["windows"].as_u64().unwrap_or(0) >= 2);
    }
    let best = &s["best"];
    assert!(best.is_object(), "best point: {best}");
    let best_iops = best["iops"].as_f64().unwrap_or(0.0);
    let max = points.iter().filter_map(|p| p["iops"].as_f64()).fold(0.0, f64::max);
    assert!(best_iops >= 0.99 * max, "best {best_iops} vs max {max}");
    assert!(s["search_seconds"].as_f64().unwrap_or(0.0) > 0.0);
    let verdict = s["verdict"].as_str().unwrap_or("");
    assert!(verdict.contains("sustains") && verdict.contains("p99"), "{verdict}");
    // The best point's full figures come along (series for the timeline, CDF for the chart).
    let r = results(&doc);
    assert!(!r.is_empty());
    assert!(r[0]["name"].as_str().unwrap_or("").starts_with("best:"));
    assert!(r[0]["read"]["lat_cdf"].as_array().is_some_and(|v| !v.is_empty()));
}

#[test]
fn a_bound_no_depth_can_meet_is_an_answer_not_an_error() {
    let dir = tempdir();
    let doc = sla_json(dir.path(), &["--latency", "1ns", "--percentile", "mean"]);
    let s = &doc["sla"];
    assert_eq!(s["qd1_misses"], true);
    assert!(s["best"].is_null());
    let points = s["points"].as_array().expect("points");
    assert_eq!(points.len(), 1, "only QD 1 is measured");
    assert_eq!(points[0]["qd"], 1);
    assert_eq!(points[0]["feasible"], false);
    assert!(s["verdict"].as_str().unwrap_or("").starts_with("even QD 1 misses the bound"));
}

#[test]
fn sla_human_output_and_exports() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path()).args(FAST_SLA).args(["--latency", "1ns", "-o", "sla.csv", "--html", "sla.html"]),
        0,
    );
    let text = stdout_of(&o);
    assert!(text.contains("even QD 1 misses the bound"), "{text}");
    let csv = std::fs::read_to_string(dir.path().join("sla.csv")).expect("csv written");
    assert!(csv.starts_with("qd,threads,outstanding,rate_iops,iops,mb_s,"), "{csv}");
    assert_eq!(csv.lines().count(), 2, "header + one point: {csv}");
    let html = std::fs::read_to_string(dir.path().join("sla.html")).expect("html written");
    assert!(html.contains("data-chart=\"sla-curve\""));
}

#[test]
fn sla_two_independent_streams() {
    let dir = tempdir();
    let doc = sla_json(dir.path(), &["--latency", "1s", "--rw", "randread+randwrite", "--mix", "50", "--max-qd", "2"]);
    let s = &doc["sla"];
    assert_eq!(s["streams"], serde_json::json!(["randread", "randwrite"]));
    let p = &s["points"][0];
    let streams = p["streams"].as_array().expect("per-stream figures");
    assert_eq!(streams.len(), 2);
    assert_eq!(p["outstanding"], 2, "QD 1: one read and one write in flight");
    assert!(streams.iter().all(|x| x["iops"].as_f64().unwrap_or(0.0) > 0.0));
}

#[test]
fn sla_bad_input_is_one_line_and_exit_2() {
    let dir = tempdir();
    let cases: &[(&[&str], &str)] = &[
        (&["--latency", "0"], "--latency"),
        (&["--latency", "0ms"], "--latency"),
        (&["--latency", "-5ms"], "--latency"),
        (&["--latency", "fast"], "--latency"),
        (&["--latency", "1ms", "--max-qd", "0"], "--max-qd"),
        (&["--latency", "1ms", "--max-qd", "65536"], "io_uring's limit of 32768"),
        (&["--latency", "1ms", "--engine", "psync", "--max-qd", "4096", "--max-threads", "2"], "psync runs one thread"),
        (&["--latency", "1ms", "--max-threads", "0"], "--max-threads"),
        (&["--latency", "1ms", "--percentile", "95"], "--percentile"),
        (&["--latency", "1ms", "--rw", "randread+"], "--rw"),
        (&["--latency", "1ms", "--rw", "a+b+c"], "--rw"),
        (&["--latency", "1ms", "--rw", "randread+randwrite", "--mix", "100"], "--mix"),
        (&["--latency", "1ms", "--min-windows", "1"], "--min-windows"),
        (&["--latency", "1ms", "--max-windows", "1"], "--max-windows"),
        (&["--latency", "1ms", "--cv", "0"], "--cv"),
        (&["--latency", "1ms", "-o", "x.pdf"], "--output"),
    ];
    for (args, needle) in cases {
        let o = expect_code(dm_in(dir.path()).arg("sla").args(*args), 2);
        let err = stderr_of(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: one line expected, got:\n{err}");
        assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
    }
    assert!(entries(dir.path()).is_empty(), "bad input writes nothing: {:?}", entries(dir.path()));
    // --latency is required.
    expect_code(dm_in(dir.path()).arg("sla"), 2);
}

fn run_doc(dir: &Path, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let path = dir.join(name);
    let runtime = if extra.contains(&"--runtime") { &[][..] } else { &["--runtime", "3s"][..] };
    expect_code(
        dm_in(dir).args(["run", "--engine", "null", "--rw", "randread"]).args(runtime).arg("-o").arg(&path).args(extra),
        0,
    );
    path
}

#[test]
fn compare_saved_results() {
    let dir = tempdir();
    let a = run_doc(dir.path(), "before.json", &["--qd", "4"]);
    let b = run_doc(dir.path(), "after.json", &["--qd", "4"]);
    let doc = json_of(&expect_code(dm_in(dir.path()).args(["compare", "--json", "--results"]).arg(&a).arg(&b), 0));
    assert_eq!(doc["command"], "compare");
    let c = &doc["compare"];
    assert_eq!(c["baseline"], "before");
    assert_eq!(c["subjects"][1]["label"], "after");
    assert_eq!(c["test"], "welch");
    let rows = c["rows"].as_array().expect("rows");
    let metrics: Vec<&str> = rows.iter().filter_map(|r| r["metric"].as_str()).collect();
    assert_eq!(metrics, ["mb_s", "iops", "lat_mean_ns"]);
    for r in rows {
        let s = r["samples"].as_array().expect("samples");
        assert_eq!(s.len(), 2);
        assert_eq!(s[0]["unit"], "seconds", "one run: per-second samples");
        assert!(s[0]["n"].as_u64().unwrap_or(0) >= 2);
        assert!(s[0]["ci_low"].as_f64() <= s[0]["mean"].as_f64());
        let v = &r["versus"][0];
        assert!(v["ratio"].as_f64().unwrap_or(0.0) > 0.0);
        let verdict = v["verdict"].as_str().unwrap_or("");
        // One run a side: its seconds are one pass, so no interval and no p-value.
        assert!(["faster", "slower", "inconclusive"].contains(&verdict), "{verdict}");
        assert_eq!(v["basis"], "single-pass", "{v}");
        assert!(v["p_value"].is_null(), "{v}");
    }
    // Correlated per-second samples are flagged.
    assert!(doc["warnings"].as_array().expect("warnings").iter().any(|w| w["code"] == "compare-caveat"));
    // Markdown export.
    expect_code(
        dm_in(dir.path()).args(["compare", "-q", "-o", "cmp.md", "--labels", "old,new", "--results"]).arg(&a).arg(&b),
        0,
    );
    let md = std::fs::read_to_string(dir.path().join("cmp.md")).expect("markdown written");
    assert!(md.contains("old") && md.contains("new") && md.contains('|'), "{md}");
}

#[test]
fn compare_refuses_different_workloads_and_foreign_files() {
    let dir = tempdir();
    let a = run_doc(dir.path(), "a.json", &["--qd", "1", "--runtime", "1s"]);
    let b = run_doc(dir.path(), "b.json", &["--qd", "8", "--runtime", "1s"]);
    let o = expect_code(dm_in(dir.path()).args(["compare", "--results"]).arg(&a).arg(&b), 2);
    let err = stderr_of(&o);
    assert!(err.starts_with("error: cannot compare") && err.contains("qd"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"schema": "fio.result.v9", "results": []}"#).expect("write");
    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["compare", "--results"]).arg(&a).arg(&other), 2));
    assert!(err.contains("schema") && err.contains("other.json"), "{err}");

    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["compare", "--results"]).arg(&a), 2));
    assert!(err.contains("at least two"), "{err}");
    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["compare", "only-one-target"]), 2));
    assert!(err.contains("two or more targets"), "{err}");
    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["compare", "--results", "missing.json", "a.json"]), 2));
    assert!(err.contains("missing.json"), "{err}");
    for n in ["0", "1", "1001"] {
        let err = stderr_of(&expect_code(dm_in(dir.path()).args(["compare", "--passes", n, "x", "y"]), 2));
        assert!(err.contains("--passes") && err.contains("use 2 to 1000"), "{n}: {err}");
        assert_eq!(err.lines().count(), 1, "{n}: one line: {err}");
    }
    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["compare", "--test", "chi2", "x", "y"]), 2));
    assert!(err.contains("--test"), "{err}");
    assert!(!dir.path().join("x").exists() && !dir.path().join("y").exists());
}

#[test]
fn compare_live_interleaves_passes() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path()).args([
            "compare",
            "--engine",
            "null",
            "--rw",
            "randread",
            "--qd",
            "2",
            "--passes",
            "3",
            "--time",
            "300ms",
            "--no-warmup",
            "--json",
            "one",
            "two",
        ]),
        0,
    );
    let doc = json_of(&o);
    let c = &doc["compare"];
    assert_eq!(c["interleaved"], true);
    assert_eq!(c["subjects"][0]["label"], "A");
    assert_eq!(c["subjects"][1]["source"], "two");
    let rows = c["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 3, "mb_s, iops, mean latency of the read direction");
    for r in rows {
        for s in r["samples"].as_array().expect("samples") {
            assert_eq!(s["n"], 3);
            assert_eq!(s["unit"], "passes");
        }
    }
    // Per target, one result per test with its passes.
    let res = results(&doc);
    assert_eq!(res.len(), 2);
    assert!(res.iter().all(|r| r["passes"].as_array().map_or(0, Vec::len) == 3));
}

#[test]
fn report_renders_any_result_file() {
    let dir = tempdir();
    let doc = run_doc(dir.path(), "run.json", &["--qd", "2", "--runtime", "2s"]);
    let o = expect_code(dm_in(dir.path()).arg("report").arg(&doc), 0);
    assert!(stderr_of(&o).contains("run.html"));
    let html = std::fs::read_to_string(dir.path().join("run.html")).expect("default output next to the input");
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"), "{}", &html[..50]);
    assert!(html.contains("<svg") && html.contains("data-chart=\"latency-cdf\""));
    for (name, needle) in [("r.md", "|"), ("r.csv", ","), ("r.txt", "diskmeter")] {
        expect_code(dm_in(dir.path()).arg("report").arg(&doc).args(["-o", name]), 0);
        let t = std::fs::read_to_string(dir.path().join(name)).expect("written");
        assert!(t.contains(needle), "{name}: {t}");
    }
    // Bad input: missing file, another schema, unknown extension, overwriting the input.
    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["report", "nope.json"]), 2));
    assert!(err.contains("nope.json"), "{err}");
    std::fs::write(dir.path().join("fio.json"), r#"{"fio version": "fio-3.35"}"#).expect("write");
    let err = stderr_of(&expect_code(dm_in(dir.path()).args(["report", "fio.json"]), 2));
    assert!(err.contains("schema"), "{err}");
    assert!(!dir.path().join("fio.html").exists(), "nothing written on bad input");
    let err = stderr_of(&expect_code(dm_in(dir.path()).arg("report").arg(&doc).args(["-o", "r.pdf"]), 2));
    assert!(err.contains("--output"), "{err}");
    let err = stderr_of(&expect_code(dm_in(dir.path()).arg("report").arg(&doc).arg("-o").arg(&doc), 2));
    assert!(err.contains("overwrite"), "{err}");
}
