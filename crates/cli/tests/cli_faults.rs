//! Runtime faults and interruption: the test-only null-engine fault hook
//! (`DISKMETER_NULL_FAULT=KIND@N`), Ctrl-C (SIGINT) and a full file system.

mod common;

use common::*;
use serde_json::Value;
use std::time::{Duration, Instant};

fn faulty_run(fault: &str, extra: &[&str]) -> (Value, String) {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path())
            .env("DISKMETER_NULL_FAULT", fault)
            .args(["run", "--engine", "null", "--qd", "4", "--runtime", "5s", "--json"])
            .args(extra),
        1,
    );
    let doc = json_of(&o);
    let err = stderr_of(&o);
    assert_eq!(entries(dir.path()), Vec::<String>::new());
    (doc, err)
}

fn check_fault_doc(doc: &Value, err: &str, kind: &str) {
    assert_eq!(doc["schema"], "diskmeter.result.v1");
    assert_eq!(doc["partial"], true, "a failed run is partial");
    assert_eq!(doc["error"]["kind"], kind, "error: {}", doc["error"]);
    assert!(doc["error"]["offset"].is_u64(), "error.offset present: {}", doc["error"]);
    assert!(doc["error"]["message"].is_string());
    assert!(!results(doc).is_empty(), "the figures before the fault are kept");
    assert!(warning_codes(doc).iter().any(|c| c == "partial"), "a partial warning: {:?}", warning_codes(doc));
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line on stderr:\n{err}");
}

#[test]
fn null_fault_eio() {
    let (doc, err) = faulty_run("eio@1000", &["--rw", "randread"]);
    check_fault_doc(&doc, &err, "eio");
    let r = &results(&doc)[0];
    let ops = u64_at(&r["read"], "ops");
    assert!(ops <= 1000, "no more than 1000 operations succeed before the fault, got {ops}");
}

#[test]
fn null_fault_enospc() {
    let (doc, err) = faulty_run("enospc@500", &["--rw", "randwrite"]);
    check_fault_doc(&doc, &err, "enospc");
    let r = &results(&doc)[0];
    assert!(u64_at(&r["write"], "ops") <= 500);
}

#[test]
fn null_fault_stops_a_job_file_between_groups() {
    // The fault in the first group stops the run: the stonewalled second group never runs.
    let dir = tempdir();
    std::fs::write(
        dir.path().join("jobs.fio"),
        "[global]\nioengine=null\nruntime=5s\ntime_based\n\n[first]\nrw=randread\n\n[second]\nstonewall\nrw=randwrite\n",
    )
    .expect("write job file");
    let o =
        expect_code(dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "eio@1000").args(["run", "jobs.fio", "--json"]), 1);
    let doc = json_of(&o);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "eio");
    assert_eq!(result_names(&doc), vec!["first"]);
}

#[test]
fn null_fault_in_mark() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path())
            .env("DISKMETER_NULL_FAULT", "eio@1000")
            .args(["mark", "--engine", "null", "--quick", "--time", "5s", "--json"]),
        1,
    );
    let doc = json_of(&o);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "eio");
    assert!(stderr_of(&o).lines().any(|l| l.starts_with("error:")));
}

#[test]
fn null_fault_human_output_still_exits_1() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "eio@1000").args([
            "run",
            "--engine",
            "null",
            "--rw",
            "randread",
            "--runtime",
            "5s",
        ]),
        1,
    );
    assert!(stderr_of(&o).lines().any(|l| l.starts_with("error:")));
}

#[test]
fn null_fault_still_writes_the_output_file() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "eio@1000").args([
            "run",
            "--engine",
            "null",
            "--rw",
            "randread",
            "--runtime",
            "5s",
            "--quiet",
            "-o",
            "out.json",
        ]),
        1,
    );
    assert!(o.stdout.is_empty(), "--quiet");
    let text = std::fs::read_to_string(dir.path().join("out.json")).expect("out.json written despite the fault");
    let doc: Value = serde_json::from_str(&text).expect("out.json is JSON");
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "eio");
}

#[test]
fn null_fault_enodev() {
    let (doc, err) = faulty_run("enodev@200", &["--rw", "randread"]);
    assert_eq!(doc["partial"], true);
    let kind = doc["error"]["kind"].as_str().expect("error.kind");
    assert!(kind != "eio" && kind != "interrupted", "ENODEV gets its own kind, got {kind}");
    assert!(err.lines().any(|l| l.starts_with("error:")));
}

// ------------------------------------------------------------------ Ctrl-C

fn check_interrupted(code: Option<i32>, out: &[u8], err: &str) -> Value {
    let text = String::from_utf8_lossy(out);
    assert_eq!(code, Some(130), "exit code after SIGINT\nstdout:\n{text}\nstderr:\n{err}");
    let doc: Value = serde_json::from_slice(out).unwrap_or_else(|e| panic!("stdout not JSON ({e}):\n{text}"));
    assert_eq!(doc["schema"], "diskmeter.result.v1");
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "interrupted", "error: {}", doc["error"]);
    doc
}

#[test]
fn ctrl_c_null_engine() {
    let dir = tempdir();
    let s = spawn(dir.path(), &["run", "--engine", "null", "--rw", "randread", "--runtime", "60s", "--json"]);
    // Let it get going (the handler is installed at start); no timing is asserted.
    std::thread::sleep(Duration::from_secs(1));
    assert!(matches!(s.child.id(), id if id > 0));
    sigint(&s.child);
    let (code, out, err) = wait_exit(s, Duration::from_secs(10));
    let doc = check_interrupted(code, &out, &err);
    let r = results(&doc);
    assert_eq!(r.len(), 1, "the interrupted job's figures are printed");
    assert!(u64_at(&r[0]["read"], "ops") > 0);
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn ctrl_c_removes_the_created_test_file() {
    let dir = tempdir();
    let file = dir.path().join("diskmeter.test");
    let s = spawn(
        dir.path(),
        &["run", "--rw", "randread", "--size", "64M", "--runtime", "60s", "--json", "--no-ceiling-check"],
    );
    // Wait until the test file exists (or the process has already given up).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut s = s;
    while !file.exists() && Instant::now() < deadline {
        if let Some(st) = s.child.try_wait().expect("try_wait") {
            let err = s.err.take().map(|h| h.join().expect("stderr reader")).unwrap_or_default();
            let err = String::from_utf8_lossy(&err);
            if err.contains("direct I/O") {
                eprintln!("note: this file system has no O_DIRECT; skipped: {err}");
                return;
            }
            panic!("diskmeter exited early ({st}): {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(file.exists(), "diskmeter.test was never created");
    std::thread::sleep(Duration::from_secs(1));
    sigint(&s.child);
    let (code, out, err) = wait_exit(s, Duration::from_secs(10));
    check_interrupted(code, &out, &err);
    assert!(!file.exists(), "the created test file must be removed after Ctrl-C");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn ctrl_c_human_output() {
    let dir = tempdir();
    let s =
        spawn(dir.path(), &["run", "--engine", "null", "--rw", "randread", "--runtime", "60s", "--name", "longjob"]);
    std::thread::sleep(Duration::from_secs(1));
    sigint(&s.child);
    let (code, out, err) = wait_exit(s, Duration::from_secs(10));
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, Some(130), "stdout:\n{text}\nstderr:\n{err}");
    assert!(text.contains("PARTIAL"), "the human output says the results are partial:\n{text}");
    assert!(text.lines().any(|l| l.starts_with("longjob:")), "the job's figures are printed:\n{text}");
}

#[test]
fn double_ctrl_c_still_removes_the_created_test_file() {
    let dir = tempdir();
    let file = dir.path().join("diskmeter.test");
    let mut s = spawn(dir.path(), &["run", "--rw", "randread", "--size", "256M", "--runtime", "60s", "--quiet"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !file.exists() && Instant::now() < deadline {
        if let Some(st) = s.child.try_wait().expect("try_wait") {
            panic!("diskmeter exited early ({st})");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(file.exists(), "diskmeter.test was never created");
    std::thread::sleep(Duration::from_millis(50));
    // The impatient user: two Ctrl-C in a row.
    // Ctrl-C again and again until it exits (signals sent back to back may merge, so
    // keep a small gap; the repeats make sure one lands while the first is handled).
    let stop_at = Instant::now() + Duration::from_secs(10);
    while s.child.try_wait().expect("try_wait").is_none() && Instant::now() < stop_at {
        sigint(&s.child);
        std::thread::sleep(Duration::from_millis(2));
    }
    let (code, _out, err) = wait_exit(s, Duration::from_secs(10));
    assert_eq!(code, Some(130), "stderr:\n{err}");
    assert!(!file.exists(), "the created test file must be removed even after a second Ctrl-C");
}

#[test]
fn ctrl_c_during_mark() {
    let dir = tempdir();
    let s = spawn(dir.path(), &["mark", "--engine", "null", "--time", "60s", "--no-warmup", "--passes", "1", "--json"]);
    std::thread::sleep(Duration::from_secs(1));
    sigint(&s.child);
    let (code, out, err) = wait_exit(s, Duration::from_secs(10));
    check_interrupted(code, &out, &err);
}

// ------------------------------------------------------------------ ENOSPC on tmpfs

#[test]
fn enospc_on_a_small_tmpfs() {
    if !is_root() {
        skip_note("not root; the tmpfs ENOSPC test is skipped");
        return;
    }
    let work = tempdir();
    let mnt = work.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir mnt");
    let Some(guard) = Tmpfs::mount(&mnt, "32m") else {
        skip_note("cannot mount a tmpfs here; skipped");
        return;
    };
    let target = mnt.join("f");
    let o = expect_code(
        dm_in(work.path())
            .args(["run", "--buffered", "--rw", "randread", "--size", "64M", "--runtime", "200ms"])
            .arg("--target")
            .arg(&target),
        1,
    );
    let err = stderr_of(&o);
    assert!(err.lines().any(|l| l.starts_with("error:")), "{err}");
    assert!(
        err.contains("space") || err.contains("ENOSPC") || err.to_lowercase().contains("no space"),
        "stderr must name the problem (no space): {err}"
    );
    assert!(o.stdout.is_empty() || serde_json::from_slice::<Value>(&o.stdout).is_err());
    assert_eq!(entries(&mnt), Vec::<String>::new(), "no file may be left on the full file system");
    drop(guard);
}

#[test]
fn enospc_on_a_small_tmpfs_json() {
    if !is_root() {
        skip_note("not root; the tmpfs ENOSPC test is skipped");
        return;
    }
    let work = tempdir();
    let mnt = work.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir mnt");
    let Some(_guard) = Tmpfs::mount(&mnt, "32m") else {
        skip_note("cannot mount a tmpfs here; skipped");
        return;
    };
    let target = mnt.join("f");
    let o = expect_code(
        dm_in(work.path())
            .args(["run", "--buffered", "--rw", "randread", "--size", "64M", "--runtime", "200ms", "--json"])
            .arg("--target")
            .arg(&target),
        1,
    );
    assert!(stderr_of(&o).lines().any(|l| l.starts_with("error:")));
    assert_eq!(entries(&mnt), Vec::<String>::new(), "no file may be left on the full file system");
}
