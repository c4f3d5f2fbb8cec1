//! The mem engine (memcpy over a memory region: the machine's memory bandwidth for a run's
//! shape) and the `exceeds-memory-bandwidth` check it backs. Speeds are asserted only as
//! loose floors.

mod common;

use common::*;

#[test]
fn mem_engine_measures_memory_bandwidth() {
    let dir = tempdir();
    let doc =
        run_json(dm_in(dir.path()).args(["run", "--engine", "mem", "--bs", "1M", "--qd", "4", "--runtime", "1s"]));
    let r = &results(&doc)[0];
    assert_eq!(r["spec"]["engine"], "mem");
    assert_eq!(r["spec"]["qd"], 4);
    let read = &r["read"];
    check_dir_stats(read, "read");
    assert_eq!(u64_at(read, "bytes"), u64_at(read, "ops") << 20, "1 MiB copies");
    let mb_s = f64_at(read, "mb_s");
    assert!(mb_s > 100.0, "memory copies at {mb_s} MB/s");
    let qd = f64_at(read, "qd_mean");
    assert!(qd > 0.0 && qd <= 4.0 + 1e-9, "qd_mean {qd}");
    assert!(r["write"].is_null());
    // The target is like null's: no device, the region's size.
    assert_eq!(doc["target"]["kind"], "null");
    assert_eq!(doc["target"]["path"], "mem");
    assert_eq!(u64_at(&doc["target"], "size_bytes"), 1 << 30, "the default region");
    // No file, and none of the device checks.
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the mem engine creates no file");
    assert_eq!(warning_codes(&doc), Vec::<String>::new());
}

#[test]
fn mem_engine_writes_and_mixes() {
    let dir = tempdir();
    let base = ["run", "--engine", "mem", "--size", "64M", "--runtime", "300ms"];
    let doc = run_json(dm_in(dir.path()).args(base).args(["--rw", "write", "--bs", "64k", "--threads", "2"]));
    let r = &results(&doc)[0];
    check_dir_stats(&r["write"], "write");
    assert!(r["read"].is_null());
    assert_eq!(u64_at(&doc["target"], "size_bytes"), 64 << 20);
    let doc = run_json(dm_in(dir.path()).args(base).args(["--rw", "randrw", "--qd", "32", "--buffered"]));
    let r = &results(&doc)[0];
    check_dir_stats(&r["read"], "read");
    check_dir_stats(&r["write"], "write");
    assert!(!warning_codes(&doc).iter().any(|c| c == "buffered-io"), "{:?}", warning_codes(&doc));
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn mem_region_beyond_memory_is_a_usage_error() {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args(["run", "--engine", "mem", "--size", "64T", "--runtime", "1s"]));
    assert_usage_error(&o, "lower --size (the mem engine's region)");
    assert!(stderr_of(&o).contains("mem-engine region"), "{}", stderr_of(&o));
}

#[test]
fn mem_engine_is_only_for_run() {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args(["mark", "--engine", "mem", "--quick"]));
    assert_usage_error(&o, "only for `diskmeter run`");
    let o = output(dm_in(dir.path()).args(["sla", "--engine", "mem", "--latency", "1ms"]));
    assert_usage_error(&o, "only for `diskmeter run`");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

/// A storage job is followed by a short mem job of the same shape; the test hook scales the
/// memory figure down so the check must fire, and `--no-ceiling-check` skips it.
#[test]
fn storage_figures_above_memory_bandwidth_are_flagged_unless_checks_are_off() {
    let dir = tempdir();
    let args = ["run", "--engine", "psync", "--rw", "read", "--bs", "64k", "--size", "4M", "--runtime", "200ms"];
    let doc = run_json(dm_in(dir.path()).env("DISKMETER_TEST_MEM_CEILING_SCALE", "1e-9").args(args));
    let w: Vec<&serde_json::Value> = doc["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter(|w| w["code"] == "exceeds-memory-bandwidth")
        .collect();
    assert_eq!(w.len(), 1, "{}", doc["warnings"]);
    let m = w[0]["message"].as_str().expect("message");
    assert!(m.starts_with("job: ") && m.contains(" MB/s read is above this machine's memory bandwidth"), "{m}");
    assert!(m.ends_with("the figure cannot come from the device; a cache or a bug answered"), "{m}");

    let doc = run_json(
        dm_in(dir.path()).env("DISKMETER_TEST_MEM_CEILING_SCALE", "1e-9").args(args).arg("--no-ceiling-check"),
    );
    assert!(u64_at(&results(&doc)[0]["read"], "ops") > 0);
    assert!(!warning_codes(&doc).iter().any(|c| c == "exceeds-memory-bandwidth"), "{:?}", warning_codes(&doc));
}
