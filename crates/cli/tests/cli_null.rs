//! Runs on the null engine (no device, deterministic op accounting), but for one job file
//! whose `ioengine` overrides it. Nothing here asserts a speed: only the shape and internal
//! consistency of the results.

mod common;

use common::*;
use serde_json::Value;

const BASE: &[&str] = &["run", "--engine", "null", "--runtime", "200ms"];

fn null_run(dir: &std::path::Path, extra: &[&str]) -> Value {
    run_json(dm_in(dir).args(BASE).args(extra))
}

fn only_result(doc: &Value) -> &Value {
    let r = results(doc);
    assert_eq!(r.len(), 1, "expected one result, got {}", r.len());
    &r[0]
}

#[test]
fn randread_document_shape() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "randread", "--qd", "8"]);

    assert_eq!(doc["schema"], "diskmeter.result.v1");
    assert_eq!(doc["tool"]["name"], "diskmeter");
    assert!(doc["tool"]["version"].is_string());
    assert_eq!(doc["command"], "run");
    assert!(doc["host"]["kernel"].is_string());
    assert!(u64_at(&doc["host"], "cpus") >= 1);
    assert!(doc["host"]["memory_bytes"].is_u64());
    assert!(doc["target"].is_object(), "target present: {}", doc["target"]);
    assert!(doc["warnings"].is_array());
    assert_eq!(doc["partial"], false);
    assert!(doc.get("error").is_none_or(Value::is_null), "no error on success: {}", doc["error"]);

    let r = only_result(&doc);
    assert_eq!(r["spec"]["rw"], "randread");
    assert_eq!(r["spec"]["qd"], 8);
    assert_eq!(r["spec"]["engine"], "null");
    let read = &r["read"];
    assert!(u64_at(read, "ops") > 0, "read ops > 0");
    assert_eq!(u64_at(read, "bytes"), u64_at(read, "ops") * 4096, "default bs is 4k");
    check_dir_stats(read, "read");
    let qd_mean = f64_at(read, "qd_mean");
    assert!(qd_mean <= 8.0 + 1e-9, "qd_mean {qd_mean} must not exceed --qd 8");
    assert!(r["write"].is_null(), "a read-only job has no write figures: {}", r["write"]);

    assert!(r["series"].is_array(), "series is an array");

    assert!(f64_at(&r["cpu"], "user_pct") >= 0.0);
    assert!(f64_at(&r["cpu"], "sys_pct") >= 0.0);
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the null engine touches no file");
}

/// The per-second series: non-empty, `t_s` increasing and not past the measured time.
fn check_series(r: &Value) {
    let series = r["series"].as_array().expect("series array");
    assert!(!series.is_empty(), "series must not be empty");
    let ts: Vec<f64> = series.iter().map(|p| f64_at(p, "t_s")).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "t_s must increase: {ts:?}");
    assert!(ts[0] > 0.0);
    let seconds = f64_at(&r["read"], "seconds");
    assert!(ts[ts.len() - 1] <= seconds + 1e-9, "t_s {ts:?} past the measured {seconds} s");
    for p in series {
        for k in ["read_iops", "read_mb_s", "read_lat_mean_ns", "write_iops", "write_mb_s", "write_lat_mean_ns"] {
            assert!(f64_at(p, k) >= 0.0, "{k} in {p}");
        }
        u64_at(p, "read_lat_p99_ns");
        u64_at(p, "write_lat_p99_ns");
    }
}

#[test]
fn series_of_a_longer_run() {
    // Intervals are one second; a run past one second has at least one full point.
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args(["run", "--engine", "null", "--rw", "randread", "--runtime", "1500ms"]));
    let r = only_result(&doc);
    check_series(r);
    assert!(!r["series"].as_array().expect("series").is_empty());
}

#[test]
fn series_of_a_short_run_is_not_empty() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "randread", "--qd", "8"]);
    check_series(only_result(&doc));
}

#[test]
fn randrw_mix_70() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "randrw", "--mix", "70", "--qd", "4"]);
    let r = only_result(&doc);
    assert_eq!(r["spec"]["mix"], 70);
    check_dir_stats(&r["read"], "read");
    check_dir_stats(&r["write"], "write");
    let reads = u64_at(&r["read"], "ops") as f64;
    let writes = u64_at(&r["write"], "ops") as f64;
    let share = reads / (reads + writes);
    assert!((0.65..=0.75).contains(&share), "read share {share} (reads {reads}, writes {writes})");
}

#[test]
fn sequential_write_only() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "write", "--bs", "1M"]);
    let r = only_result(&doc);
    assert!(r["read"].is_null(), "a write-only job has no read figures");
    check_dir_stats(&r["write"], "write");
    assert_eq!(u64_at(&r["write"], "bytes"), u64_at(&r["write"], "ops") << 20);
}

#[test]
fn rate_limited() {
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args([
        "run",
        "--engine",
        "null",
        "--rw",
        "randread",
        "--rate-iops",
        "2000",
        "--runtime",
        "500ms",
    ]));
    let r = only_result(&doc);
    assert_eq!(r["spec"]["rate_iops"], 2000);
    check_dir_stats(&r["read"], "read");
    let iops = f64_at(&r["read"], "iops");
    // The null engine is never the bottleneck, so the rate is what limits it; the window
    // is wide enough not to depend on the machine's timing.
    assert!((1500.0..=2500.0).contains(&iops), "rate-limited iops {iops} not near 2000");
}

#[test]
fn threads_and_queue_depth() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "randread", "--threads", "3", "--qd", "4"]);
    let r = only_result(&doc);
    assert_eq!(r["spec"]["threads"], 3);
    assert_eq!(r["spec"]["qd"], 4);
    check_dir_stats(&r["read"], "read");
    assert!(u64_at(&r["read"], "ops") > 0);
    let qd_mean = f64_at(&r["read"], "qd_mean");
    assert!(qd_mean <= 12.0 + 1e-9, "qd_mean {qd_mean} exceeds threads x qd = 12");
}

#[test]
fn ramp() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "randread", "--ramp", "100ms"]);
    let r = only_result(&doc);
    assert_close(f64_at(&r["spec"], "ramp_s"), 0.1, "ramp_s");
    assert_close(f64_at(&r["spec"], "runtime_s"), 0.2, "runtime_s");
    check_dir_stats(&r["read"], "read");
}

#[test]
fn name_and_block_size_are_reported() {
    let dir = tempdir();
    let doc = null_run(dir.path(), &["--rw", "read", "--bs", "64k", "--name", "seqread"]);
    let r = only_result(&doc);
    assert_eq!(r["name"], "seqread");
    assert_eq!(r["spec"]["bs"], 65536);
    assert_eq!(u64_at(&r["read"], "bytes"), u64_at(&r["read"], "ops") * 65536);
}

fn job_file(dir: &std::path::Path, body: &str) -> Value {
    std::fs::write(dir.join("jobs.fio"), body).expect("write job file");
    let doc = run_json(dm_in(dir).args(["run", "jobs.fio"]));
    assert_eq!(doc["partial"], false);
    doc
}

const GLOBAL: &str = "[global]\nioengine=null\nruntime=200ms\ntime_based\nbs=4k\niodepth=4\n\n";

#[test]
fn job_file_two_concurrent_sections() {
    let dir = tempdir();
    let doc = job_file(dir.path(), &format!("{GLOBAL}[readers]\nrw=randread\n\n[writers]\nrw=randwrite\n"));
    assert_eq!(result_names(&doc), vec!["readers", "writers"]);
    let r = results(&doc);
    check_dir_stats(&r[0]["read"], "readers.read");
    assert!(r[0]["write"].is_null());
    check_dir_stats(&r[1]["write"], "writers.write");
    assert!(r[1]["read"].is_null());
    assert_eq!(entries(dir.path()), vec!["jobs.fio".to_string()]);
}

#[test]
fn job_file_with_stonewall() {
    let dir = tempdir();
    let doc = job_file(dir.path(), &format!("{GLOBAL}[readers]\nrw=randread\n\n[writers]\nstonewall\nrw=randwrite\n"));
    assert_eq!(result_names(&doc), vec!["readers", "writers"]);
    let r = results(&doc);
    assert!(u64_at(&r[0]["read"], "ops") > 0);
    assert!(u64_at(&r[1]["write"], "ops") > 0);
}

#[test]
fn job_file_with_group_reporting() {
    let dir = tempdir();
    let doc = job_file(
        dir.path(),
        &format!("{GLOBAL}group_reporting\n\n[readers]\nrw=randread\n\n[writers]\nrw=randwrite\n"),
    );
    let r = results(&doc);
    assert_eq!(r.len(), 1, "group_reporting merges the group into one result: {:?}", result_names(&doc));
    check_dir_stats(&r[0]["read"], "merged.read");
    check_dir_stats(&r[0]["write"], "merged.write");
}

#[test]
fn job_file_numjobs_and_cli_defaults() {
    // Command-line workload options act as defaults for the job file's jobs.
    let dir = tempdir();
    std::fs::write(dir.path().join("jobs.fio"), "[one]\nrw=randread\nnumjobs=2\nruntime=200ms\ntime_based\n")
        .expect("write job file");
    let doc = run_json(dm_in(dir.path()).args(["run", "jobs.fio", "--engine", "null", "--bs", "8k"]));
    let r = only_result(&doc);
    assert_eq!(r["name"], "one");
    assert_eq!(r["spec"]["threads"], 2);
    assert_eq!(r["spec"]["bs"], 8192);
    assert_eq!(r["spec"]["engine"], "null");
}

/// `ioengine=libaio` in a job file wins over `--engine null` and runs as io_uring (on a small
/// test file, the one test here that does real I/O): the result says so.
#[test]
fn job_file_libaio_runs_as_io_uring_and_says_so() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("jobs.fio"),
        "[global]\nioengine=libaio\nsize=4M\nruntime=200ms\ntime_based\n\n[j]\nrw=randwrite\n",
    )
    .expect("write job file");
    let args = ["run", "jobs.fio", "--engine", "null", "--no-ceiling-check"];
    let doc = run_json(dm_in(dir.path()).args(args));
    assert_eq!(only_result(&doc)["spec"]["engine"], "io_uring");
    let notes: Vec<&Value> =
        doc["warnings"].as_array().expect("warnings").iter().filter(|w| w["code"] == "engine-substituted").collect();
    assert_eq!(notes.len(), 1, "{}", doc["warnings"]);
    assert_eq!(
        notes[0]["message"],
        "jobs.fio:2: ioengine=libaio runs as io_uring in job [j] (diskmeter has no libaio engine)"
    );
    let text = stdout_of(&expect_code(dm_in(dir.path()).args(args), 0));
    assert!(text.contains("warning[engine-substituted]: jobs.fio:2: ioengine=libaio runs as io_uring"), "{text}");
    assert_eq!(entries(dir.path()), vec!["jobs.fio".to_string()]);
}

#[test]
fn output_files() {
    let dir = tempdir();
    let o = expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--quiet", "-o", "out.csv"]), 0);
    assert!(o.stdout.is_empty());
    let csv = std::fs::read_to_string(dir.path().join("out.csv")).expect("out.csv written");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("csv header").split(',').collect();
    let iops_col = header.iter().position(|h| *h == "iops").expect("csv header has iops");
    let rows: Vec<Vec<&str>> = lines.filter(|l| !l.is_empty()).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1, "one read row: {csv}");
    assert_eq!(rows[0].len(), header.len());
    let iops: f64 = rows[0][iops_col].parse().expect("iops is a number");
    assert!(iops > 0.0);

    expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--quiet", "-o", "out.md"]), 0);
    let md = std::fs::read_to_string(dir.path().join("out.md")).expect("out.md written");
    assert!(md.contains("IOPS") || md.contains("iops"), "{md}");
    assert!(md.lines().any(|l| l.starts_with('|')), "markdown has a table: {md}");

    let o = expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--json", "-o", "out.json"]), 0);
    let stdout_doc = json_of(&o);
    let text = std::fs::read_to_string(dir.path().join("out.json")).expect("out.json written");
    let file_doc: Value = serde_json::from_str(&text).expect("out.json is JSON");
    assert_eq!(file_doc["schema"], "diskmeter.result.v1");
    assert_eq!(file_doc, stdout_doc, "-o out.json holds the same document as stdout");

    expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--quiet", "-o", "out.txt"]), 0);
    let txt = std::fs::read_to_string(dir.path().join("out.txt")).expect("out.txt written");
    assert!(txt.contains("IOPS"));

    assert_eq!(entries(dir.path()), vec!["out.csv", "out.json", "out.md", "out.txt"]);
}

#[test]
fn quiet_prints_nothing() {
    let dir = tempdir();
    let o = expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--quiet"]), 0);
    assert!(o.stdout.is_empty(), "--quiet: stdout must be empty, got {}", stdout_of(&o));
}

#[test]
fn quiet_with_json_still_prints_json() {
    let dir = tempdir();
    let o = expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--quiet", "--json"]), 0);
    assert_eq!(json_of(&o)["schema"], "diskmeter.result.v1");
}

#[test]
fn human_output() {
    let dir = tempdir();
    let o = expect_code(dm_in(dir.path()).args(BASE).args(["--rw", "randread", "--name", "myjob"]), 0);
    let out = stdout_of(&o);
    assert!(out.contains("IOPS"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("myjob: randread")), "job line missing:\n{out}");
    assert!(out.lines().any(|l| l.trim_start().starts_with("read ")), "read row missing:\n{out}");
    assert!(serde_json::from_str::<Value>(&out).is_err(), "human output is not JSON");
}

// ------------------------------------------------------------------ mark

const MARK: &[&str] = &["mark", "--engine", "null", "--quick", "--time", "100ms"];

#[test]
fn mark_default_card() {
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args(MARK));
    assert_eq!(doc["schema"], "diskmeter.result.v1");
    assert_eq!(doc["command"], "mark");
    assert_eq!(doc["partial"], false);
    assert_eq!(result_names(&doc), vec!["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]);
    for r in results(&doc) {
        let name = r["name"].as_str().expect("name");
        check_dir_stats(&r["read"], &format!("{name} read"));
        check_dir_stats(&r["write"], &format!("{name} write"));
        assert!(r["aggregate"].is_string(), "{name}: aggregate present");
    }
    let r = results(&doc);
    assert_eq!(r[0]["spec"]["bs"], 1 << 20);
    assert_eq!(r[0]["spec"]["qd"], 8);
    assert_eq!(r[2]["spec"]["bs"], 4096);
    assert_eq!(r[2]["spec"]["qd"], 32);
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the null engine creates no test file");
}

#[test]
fn mark_nvme_profile() {
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args(MARK).args(["--profile", "nvme"]));
    let names = result_names(&doc);
    assert_eq!(names, vec!["SEQ1M Q8T1", "SEQ128K Q32T1", "RND4K Q32T16", "RND4K Q1T1"]);
    let r16 = &results(&doc)[2];
    assert_eq!(r16["spec"]["threads"], 16);
}

#[test]
fn mark_mix() {
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args(MARK).args(["--mix"]));
    let names = result_names(&doc);
    let mixed: Vec<&String> = names.iter().filter(|n| n.contains("R70/W30")).collect();
    assert_eq!(mixed.len(), 4, "one mixed result per test: {names:?}");
    assert_eq!(names.len(), 8, "{names:?}");
    for r in results(&doc) {
        let name = r["name"].as_str().expect("name");
        check_dir_stats(&r["read"], &format!("{name} read"));
        check_dir_stats(&r["write"], &format!("{name} write"));
        if name.contains("R70/W30") {
            let reads = u64_at(&r["read"], "ops") as f64;
            let writes = u64_at(&r["write"], "ops") as f64;
            let share = reads / (reads + writes);
            assert!((0.6..=0.8).contains(&share), "{name}: read share {share}");
        }
    }
}

#[test]
fn mark_passes() {
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args([
        "mark",
        "--engine",
        "null",
        "--size",
        "64M",
        "--passes",
        "2",
        "--time",
        "100ms",
        "--interval",
        "0s",
        "--no-warmup",
        "--profile",
        "real",
    ]));
    assert_eq!(result_names(&doc), vec!["SEQ1M Q1T1", "RND4K Q1T1"]);
    for r in results(&doc) {
        assert_eq!(r["aggregate"], "max");
        let passes = r["passes"].as_array().expect("passes array");
        assert_eq!(passes.len(), 2);
        for (i, p) in passes.iter().enumerate() {
            assert_eq!(u64_at(p, "pass"), i as u64 + 1);
            check_dir_stats(&p["read"], "pass read");
            check_dir_stats(&p["write"], "pass write");
        }
        // "max": the headline MB/s is the best pass's.
        for dir in ["read", "write"] {
            let best = passes.iter().map(|p| f64_at(&p[dir], "mb_s")).fold(f64::MIN, f64::max);
            assert_close(f64_at(&r[dir], "mb_s"), best, "headline mb_s is the best pass");
        }
    }
}

#[test]
fn mark_passes_default_profile() {
    let dir = tempdir();
    let doc = run_json(dm_in(dir.path()).args([
        "mark",
        "--engine",
        "null",
        "--passes",
        "2",
        "--time",
        "100ms",
        "--interval",
        "0s",
        "--no-warmup",
    ]));
    assert_eq!(results(&doc).len(), 4);
    for r in results(&doc) {
        assert_eq!(r["aggregate"], "max");
        assert_eq!(r["passes"].as_array().expect("passes").len(), 2);
    }
}

/// Run the diskmeter binary with `args` in `dir` and return its exit code and peak resident
/// memory (ru_maxrss of exactly this child, from wait4), in KiB.
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std cannot see
fn peak_rss_kib(dir: &std::path::Path, args: &[&str]) -> (i32, i64) {
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("diskmeter"))
        .args(args)
        .current_dir(dir)
        .env_remove("DISKMETER_NULL_FAULT")
        .envs(home_env())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn diskmeter");
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; valid out-pointers. The Child is not waited on again.
    let r = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut ru) };
    assert_eq!(r, child.id() as libc::pid_t, "wait4: {}", std::io::Error::last_os_error());
    let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { -1 };
    (code, ru.ru_maxrss)
}

/// A job file of many sections used to cost about 2 MiB per job (every latency histogram
/// fully written: 1.3 GB for 2000 sections); histograms now keep only the pages they use.
/// The bound is generous (memory, not time, is asserted): 300 jobs needed ~650 MB before.
#[test]
fn many_job_sections_stay_small_in_memory() {
    let dir = tempdir();
    let mut body = String::from("[global]\nioengine=null\nrw=randread\nbs=4k\nsize=1m\nruntime=1500ms\ntime_based\n");
    for i in 0..300 {
        body.push_str(&format!("[job{i}]\n"));
    }
    std::fs::write(dir.path().join("many.fio"), body).expect("write job file");
    let (code, kib) = peak_rss_kib(dir.path(), &["run", "many.fio", "--json", "--quiet"]);
    assert_eq!(code, 0);
    assert!(kib < 160 * 1024, "peak RSS {} MiB for 300 null jobs (about 0.6 MiB allowed per job)", kib / 1024);
}

/// fio's dialect as users write it: an `include` of a shared [global] (relative to the including
/// file), `${VAR}` from the environment, `$ncpus`, a zoned distribution whose last zone takes
/// the rest, and `random_generator` (accepted, with a note that diskmeter's generator runs).
#[test]
fn job_file_with_include_variables_and_fio_forms() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("inc")).expect("mkdir");
    std::fs::write(dir.path().join("inc/common.fio"), "[global]\nioengine=null\nruntime=200ms\ntime_based\n")
        .expect("write include");
    std::fs::write(
        dir.path().join("jobs.fio"),
        "include inc/common.fio\n[zoned]\nrw=randread\nbs=${DM_TEST_BS}\nnumjobs=$ncpus\n\
         random_distribution=zoned:50/5:30/15:20/\nrandom_generator=tausworthe64\n",
    )
    .expect("write job file");
    let doc = run_json(dm_in(dir.path()).env("DM_TEST_BS", "8k").args(["run", "jobs.fio"]));
    let r = &results(&doc)[0];
    assert_eq!(r["spec"]["bs"], 8192);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    assert_eq!(r["spec"]["threads"].as_u64(), Some(cpus));
    let zones = r["spec"]["dist"]["zones"].as_array().cloned().unwrap_or_default();
    let areas: Vec<f64> = zones.iter().map(|z| f64_at(z, "area_pct")).collect();
    assert_eq!(areas, vec![5.0, 15.0, 80.0], "{}", r["spec"]["dist"]);
    assert!(warning_codes(&doc).contains(&"generator-substituted".to_string()), "{:?}", warning_codes(&doc));
}

/// fio's `io_size` (bytes to move, more or less than the region, wrapping around) and `loops`
/// (the job's bytes that many times), on a job that is not time-based.
#[test]
fn io_size_and_loops_set_the_bytes_moved() {
    let dir = tempdir();
    std::fs::write(
        dir.path().join("jobs.fio"),
        "[global]\nioengine=null\nbs=64k\nsize=8m\n\
         [more]\nrw=read\nio_size=32m\n\
         [less]\nrw=randread\nio_size=2m\nstonewall\n\
         [looped]\nrw=write\nloops=3\nstonewall\n",
    )
    .expect("write job file");
    let doc = run_json(dm_in(dir.path()).args(["run", "jobs.fio"]));
    let bytes = |i: usize, d: &str| u64_at(&results(&doc)[i][d], "bytes");
    assert_eq!(bytes(0, "read"), 32 << 20, "io_size above the region wraps around");
    assert_eq!(bytes(1, "read"), 2 << 20, "io_size below the region stops early");
    assert_eq!(bytes(2, "write"), 24 << 20, "loops=3 moves the region three times");
}
