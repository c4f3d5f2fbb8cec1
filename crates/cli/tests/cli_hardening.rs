//! Hardening: exit codes that tell the truth, signals, the test-file lock, bad paths and inputs,
//! traces cut short. (Output files are covered by cli_outputs.rs; resources by cli_errors.rs.)

mod common;

use common::*;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command as Std;
use std::time::Duration;

/// Waits for a spawned diskmeter (see `common::spawn`), as an `Output` for the usual helpers.
fn finish(s: Spawned, limit: Duration) -> std::process::Output {
    use std::os::unix::process::ExitStatusExt;
    let (code, stdout, stderr) = wait_exit(s, limit);
    // A normal exit with `code` (a death by signal would have no code).
    let status = std::process::ExitStatus::from_raw(code.map_or(libc::SIGKILL, |c| c << 8));
    std::process::Output { status, stdout, stderr: stderr.into_bytes() }
}

#[test]
fn a_target_path_that_is_not_utf8_works_and_is_marked() {
    let dir = tempdir();
    let name = std::ffi::OsStr::from_bytes(b"bad\xff.test");
    let o = expect_code(
        dm_in(dir.path()).arg("run").arg("--target").arg(name).args([
            "--size",
            "1M",
            "--runtime",
            "200ms",
            "--buffered",
            "--json",
            "-o",
            "r.json",
        ]),
        0,
    );
    let doc = json_of(&o);
    assert!(doc["error"].is_null(), "{doc}");
    assert_eq!(doc["target"]["path_not_utf8"], true);
    assert_eq!(doc["target"]["path"], "bad\u{fffd}.test");
    assert!(!results(&doc).is_empty());
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).expect("r.json")).expect("valid JSON");
    assert_eq!(saved["target"]["path_not_utf8"], true);
    assert_eq!(entries(dir.path()), ["r.json"], "the test file is removed");
}

/// A usage error in `dir`: exit 2, one line, and no test file or output created.
fn refused_in(dir: &Path, args: &[&std::ffi::OsStr], needle: &str) {
    let before = entries(dir);
    let o = output(dm_in(dir).args(args).timeout(Duration::from_secs(30)));
    assert_usage_error(&o, needle);
    assert_eq!(entries(dir), before, "nothing may be written for {args:?}");
}

fn os(v: &[&str]) -> Vec<std::ffi::OsString> {
    v.iter().map(std::ffi::OsString::from).collect()
}

fn refused(dir: &Path, args: &[&str], needle: &str) {
    let a = os(args);
    let r: Vec<&std::ffi::OsStr> = a.iter().map(|s| s.as_os_str()).collect();
    refused_in(dir, &r, needle);
}

#[test]
fn bad_target_paths_are_usage_errors_before_any_io() {
    let dir = tempdir();
    let d = dir.path();
    std::fs::write(d.join("file"), b"x").expect("write");
    std::os::unix::fs::symlink(d.join("nowhere"), d.join("dangling")).expect("symlink");
    std::os::unix::fs::symlink("loop-b", d.join("loop-a")).expect("symlink");
    std::os::unix::fs::symlink("loop-a", d.join("loop-b")).expect("symlink");
    std::fs::create_dir(d.join("out.d")).expect("mkdir");
    let long = "x".repeat(5000);
    let small = ["--size", "1M", "--runtime", "200ms"];
    for (target, needle) in [
        (long.as_str(), "4095 bytes"),
        ("file/", "ends in '/'"),
        ("dangling", "dangling"),
        ("loop-a", "loop"),
        ("file/inner", "is a file"),
    ] {
        let mut args = vec!["run", "--target", target];
        args.extend(small);
        refused(d, &args, needle);
        refused(d, &["mark", target, "--quick", "--size", "1M", "--time", "100ms"], needle);
    }
    // --html naming a directory is refused before the workload runs (no test file appears).
    refused(d, &["run", "--size", "1M", "--runtime", "2s", "--html", "out.d"], "is a directory");
    refused(d, &["cache", "simulate", "--trace", "out.d", "--cache-size", "1M"], "not a regular file");
    refused(d, &["cache", "mrc", "--trace", "/dev/zero"], "not a regular file");
}

#[test]
fn inputs_must_be_regular_files() {
    let dir = tempdir();
    let d = dir.path();
    refused(d, &["report", "/dev/zero"], "not a regular file");
    refused(d, &["compare", "--results", "/dev/zero", "/dev/zero"], "not a regular file");
    let fifo = d.join("jobs.fio");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).expect("path");
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    // A FIFO would block the read forever: refused at once.
    refused(d, &["run", "jobs.fio"], "FIFO");
}

#[test]
fn a_running_program_as_a_write_target_is_a_usage_error() {
    let dir = tempdir();
    let prog = dir.path().join("prog");
    std::fs::copy("/bin/sleep", &prog).expect("copy sleep");
    // Another test thread may fork while the copy's write descriptor is still open in this
    // process; the child then holds it for an instant and exec fails with ETXTBSY. Retry.
    let mut child = {
        let mut tries = 0;
        loop {
            match Std::new(&prog).arg("30").spawn() {
                Ok(c) => break c,
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => panic!("run the copy: {e}"),
            }
        }
    };
    let o = output(dm_in(dir.path()).args([
        "run",
        "--target",
        "prog",
        "--rw",
        "randwrite",
        "--overwrite",
        "--size",
        "4k",
        "--runtime",
        "200ms",
        "--buffered",
    ]));
    let _ = child.kill();
    let _ = child.wait();
    assert_usage_error(&o, "ETXTBSY");
}

#[test]
fn an_existing_file_on_a_read_only_mount_is_a_usage_error() {
    if !is_root() {
        skip_note("not root; the read-only mount test is skipped (CI runs it as root)");
        return;
    }
    let dir = tempdir();
    let m = dir.path().join("ro");
    std::fs::create_dir(&m).expect("mkdir");
    let sh = |args: &[&str]| Std::new(args[0]).args(&args[1..]).status().expect("run").success();
    if !sh(&["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", m.to_str().expect("utf-8")]) {
        skip_note("cannot mount a tmpfs; the read-only mount test is skipped");
        return;
    }
    expect_code(dm_in(&m).args(["run", "--size", "1M", "--runtime", "100ms", "--buffered", "--keep", "-q"]), 0);
    assert!(sh(&["mount", "-o", "remount,ro", m.to_str().expect("utf-8")]));
    let o = output(dm_in(&m).args(["run", "--rw", "randwrite", "--size", "1M", "--runtime", "100ms", "--buffered"]));
    let read =
        output(dm_in(&m).args(["run", "--rw", "randread", "--size", "1M", "--runtime", "100ms", "--buffered", "-q"]));
    let _ = Std::new("umount").arg(&m).status();
    assert_usage_error(&o, "read-only");
    assert_eq!(read.status.code(), Some(0), "reading a file on a read-only mount works: {}", stderr_of(&read));
}

/// A CSV trace of `n` requests made by `cache synth`, and its gzip.
fn csv_trace(dir: &Path, n: u64) {
    expect_code(
        dm_in(dir)
            .args(["cache", "synth", "--dist", "uniform", "--blocks", "100000", "--requests", &n.to_string()])
            .args(["-o", "t.csv"]),
        0,
    );
}

const CSV: &str = "csv:time=0:us,op=1,offset=2,size=3,header";

#[test]
fn a_trace_bad_from_the_start_is_exit_2_and_one_cut_short_gives_partial_results() {
    let dir = tempdir();
    let d = dir.path();
    csv_trace(d, 200_000);
    let ok = Std::new("gzip").args(["-k", "-f"]).arg(d.join("t.csv")).status().expect("gzip").success();
    assert!(ok, "gzip");
    let gz = std::fs::read(d.join("t.csv.gz")).expect("read");
    std::fs::remove_file(d.join("t.csv.gz")).expect("rm");
    std::fs::write(d.join("cut.csv.gz"), &gz[..gz.len() / 2]).expect("write");
    std::fs::write(d.join("head.csv.gz"), &gz[..6]).expect("write");
    // Cut partway: partial results, the error, exit 1.
    let o = expect_code(
        dm_in(d).args(["cache", "simulate", "--trace", "cut.csv.gz", "--format", CSV, "--cache-size", "1M", "--json"]),
        1,
    );
    let doc = json_of(&o);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "trace");
    assert!(doc["error"]["message"].as_str().expect("message").contains("cut short after"));
    let n = doc["cache"]["trace"]["requests"].as_u64().expect("requests");
    assert!(n > 1000 && n < 200_000, "{n}");
    assert!(!doc["cache"]["policies"].as_array().expect("policies").is_empty());
    // convert: partial summary, exit 1, nothing written.
    let o = expect_code(
        dm_in(d).args(["cache", "convert", "--trace", "cut.csv.gz", "--format", CSV, "-o", "c.dmt", "--json"]),
        1,
    );
    assert_eq!(json_of(&o)["partial"], true);
    assert!(!d.join("c.dmt").exists());
    // Bad from the start: exit 2.
    refused(
        d,
        &["cache", "simulate", "--trace", "head.csv.gz", "--format", CSV, "--cache-size", "1M"],
        "not a readable trace",
    );
    refused(d, &["cache", "convert", "--trace", "head.csv.gz", "--format", CSV, "-o", "h.dmt"], "not a readable trace");
}

#[test]
fn convert_reports_reads_and_writes() {
    let dir = tempdir();
    csv_trace(dir.path(), 1000);
    let o = expect_code(
        dm_in(dir.path()).args(["cache", "convert", "--trace", "t.csv", "--format", CSV, "-o", "t.dmt"]),
        0,
    );
    let line = stdout_of(&o);
    assert!(line.contains("1000 requests") && !line.contains(" 0 reads") && !line.contains(" 0 writes"), "{line}");
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args(["cache", "convert", "--trace", "t.csv", "--format", CSV, "-o", "t.dmt", "--json"]),
        0,
    ));
    let t = &doc["cache"]["trace"];
    assert_eq!(t["reads"].as_u64().expect("reads") + t["writes"].as_u64().expect("writes"), 1000);
}

#[test]
fn ctrl_c_during_cache_simulate_gives_partial_results_and_130() {
    let dir = tempdir();
    let d = dir.path();
    expect_code(
        dm_in(d).args([
            "cache",
            "synth",
            "--dist",
            "zipf:0.9",
            "--blocks",
            "1000000",
            "--requests",
            "3000000",
            "-o",
            "big.dmt",
        ]),
        0,
    );
    let child =
        spawn(d, &["cache", "simulate", "--trace", "big.dmt", "--cache-size", "256M", "--policy", "all", "--json"]);
    std::thread::sleep(Duration::from_millis(700));
    send_signal(&child.child, libc::SIGINT);
    let o = finish(child, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    let doc = json_of(&o);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "interrupted");
    assert!(doc["error"]["message"].as_str().expect("message").contains("Ctrl-C"));
    assert!(doc["cache"]["trace"]["requests"].as_u64().expect("requests") > 0);
}

#[test]
fn ctrl_c_during_cache_convert_leaves_nothing() {
    let dir = tempdir();
    let d = dir.path();
    csv_trace(d, 3_000_000);
    let before = entries(d);
    let child = spawn(d, &["cache", "convert", "--trace", "t.csv", "--format", CSV, "-o", "out.dmt"]);
    std::thread::sleep(Duration::from_millis(400));
    send_signal(&child.child, libc::SIGINT);
    let o = finish(child, Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    assert_eq!(entries(d), before, "no output and no temporary file may remain");
}

#[test]
fn every_terminating_signal_stops_a_run_cleanly_and_is_named() {
    for (sig, word) in [
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGTERM, "terminated"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGUSR1, "SIGUSR1"),
    ] {
        let dir = tempdir();
        let child = spawn(dir.path(), &["run", "--size", "16M", "--runtime", "20s", "--buffered", "--json"]);
        std::thread::sleep(Duration::from_millis(1500));
        send_signal(&child.child, sig);
        let o = finish(child, Duration::from_secs(30));
        assert_eq!(o.status.code(), Some(130), "{word}: {}", stderr_of(&o));
        let doc = json_of(&o);
        let msg = doc["error"]["message"].as_str().expect("message").to_string();
        assert!(msg.contains(word), "{word}: {msg}");
        if sig != libc::SIGINT {
            assert!(!msg.contains("Ctrl-C"), "{msg}");
        }
        assert_eq!(entries(dir.path()), Vec::<String>::new(), "{word}: the test file must be removed");
    }
}

#[test]
fn a_second_run_on_the_same_test_file_waits_or_refuses() {
    let dir = tempdir();
    let d = dir.path();
    let first = spawn(d, &["run", "--size", "16M", "--runtime", "3s", "--buffered", "-q"]);
    std::thread::sleep(Duration::from_millis(1200));
    let o = output(dm_in(d).args(["run", "--size", "16M", "--runtime", "200ms", "--buffered", "--no-wait"]));
    assert_usage_error(&o, "in use by");
    let o = expect_code(dm_in(d).args(["run", "--size", "16M", "--runtime", "200ms", "--buffered", "-q", "--json"]), 0);
    let first = finish(first, Duration::from_secs(30));
    assert_eq!(first.status.code(), Some(0), "{}", stderr_of(&first));
    assert!(stderr_of(&o).contains("waiting"), "the second run says it waits: {}", stderr_of(&o));
    assert!(json_of(&o)["error"].is_null());
    assert_eq!(entries(d), Vec::<String>::new());
}

#[test]
fn root_is_not_told_to_run_as_root() {
    let dev = Path::new("/dev/vda");
    let denied =
        matches!(std::fs::File::open(dev).map_err(|e| e.raw_os_error()), Err(Some(libc::EACCES | libc::EPERM)));
    if !is_root() || !denied {
        eprintln!("note: needs root and a device that even root cannot open (/dev/vda on the project's VMs); skipped");
        return;
    }
    let o =
        output(dm().args(["run", "--target", "/dev/vda", "--rw", "randread", "--size", "4M", "--runtime", "200ms"]));
    assert_usage_error(&o, "even root");
    assert!(!stderr_of(&o).contains("run as root"), "{}", stderr_of(&o));
}

/// The target's access time, in seconds.
fn atime(p: &Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).expect("stat the target").atime()
}

/// Sets the target's access time two days back, so that any read (even under `relatime`)
/// would move it.
fn age_atime(p: &Path) -> i64 {
    let old = std::time::SystemTime::now() - Duration::from_secs(2 * 86_400);
    let f = std::fs::File::options().write(true).open(p).expect("open the target");
    f.set_times(std::fs::FileTimes::new().set_accessed(old)).expect("set the access time");
    atime(p)
}

#[test]
fn reads_leave_the_targets_access_time_alone() {
    let dir = tempdir();
    let target = dir.path().join("t.bin");
    std::fs::write(&target, vec![7u8; 4 << 20]).expect("write the target");
    // Does this file system record access times at all? (A noatime mount would make the
    // check below vacuous.)
    let before = age_atime(&target);
    let _ = std::fs::read(&target).expect("read the target");
    if atime(&target) == before {
        skip_note("the temporary directory's file system does not record access times; atime test skipped");
        return;
    }
    for extra in [&[][..], &["--buffered"][..]] {
        let before = age_atime(&target);
        expect_code(
            dm_in(dir.path())
                .args(["run", "--target", "t.bin", "--rw", "randread", "--bs", "4k", "--runtime", "200ms"])
                .args(extra),
            0,
        );
        assert_eq!(atime(&target), before, "a read run {extra:?} changed the target's access time");
    }
}

#[test]
fn a_target_owned_by_someone_else_is_read_without_noatime() {
    // O_NOATIME is the owner's (or CAP_FOWNER's) privilege: another user's open gets EPERM
    // and diskmeter must open the file without it rather than fail.
    if !is_root() {
        skip_note("not root (needs to run as another user); non-owner test skipped");
        return;
    }
    let Some(setpriv) = find_tool("setpriv") else {
        skip_note("setpriv is missing; non-owner test skipped");
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("open the directory up");
    let target = dir.path().join("t.bin");
    std::fs::write(&target, vec![7u8; 4 << 20]).expect("write the target");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).expect("make the target readable");
    let bin = assert_cmd::cargo::cargo_bin("diskmeter");
    let o = Std::new(setpriv)
        .envs(home_env())
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"])
        .arg(bin)
        .args(["run", "--target"])
        .arg(&target)
        .args(["--rw", "randread", "--bs", "4k", "--runtime", "200ms", "--json", "--no-ceiling-check"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("HOME", dir.path())
        .output()
        .expect("run diskmeter as nobody");
    assert_eq!(o.status.code(), Some(0), "as nobody: {}", stderr_of(&o));
    let doc = json_of(&o);
    assert!(u64_at(&results(&doc)[0]["read"], "ops") > 0, "no reads as nobody: {doc}");
}
