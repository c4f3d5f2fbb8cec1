#![allow(clippy::unwrap_used)]

//! Completion polling (`--poll-us`): an io_uring worker polls its ring before it sleeps
//! when the run's workers leave a CPU free and (by default) it keeps at most 8 I/Os in
//! flight. These tests check what a user can see of it: the result says whether the
//! workers polled, every I/O still completes, an open-loop rate still holds, the busiest
//! worker's CPU leaves the polling out (so the tool-bottleneck check does not cry wolf) and a
//! bad value is one line with exit 2.

#[macro_use]
mod common;

use common::throttle::Throttle;
use common::*;
use serde_json::Value;
use std::sync::Mutex;

/// The tests that run polling workers take turns: on a 2-CPU machine two of them at once
/// leave no CPU for the kernel's completion work, and the throttled device of the CPU test
/// then banks credit while starved and pays it out inside the measured window (210 IOPS
/// measured against its 200 when it overlapped another polling test).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn file_run(dir: &std::path::Path, extra: &[&str]) -> Value {
    let target = dir.join("poll.test");
    let t = target.to_str().unwrap();
    run_json(dm_in(dir).args(["run", "--target", t, "--size", "8M", "--bs", "4k", "--no-ceiling-check"]).args(extra))
}

#[test]
fn workers_poll_by_default_where_a_cpu_is_free_and_every_io_completes() {
    let _serial = serial();
    let dir = tempdir();
    // fio's semantics: the job reads its 8 MiB file once, 2048 I/Os of 4 KiB.
    let job = "[j]\nfilename=poll.test\nsize=8m\nrw=read\nbs=4k\niodepth=4\nioengine=io_uring\ndirect=1\n";
    std::fs::write(dir.path().join("poll.fio"), job).unwrap();
    let run = |extra: &[&str]| run_json(dm_in(dir.path()).args(["run", "poll.fio", "--no-ceiling-check"]).args(extra));
    let polled = run(&[]);
    let slept = run(&["--poll-us", "0"]);
    for (doc, what) in [(&polled, "polling"), (&slept, "sleeping")] {
        let r = &results(doc)[0];
        assert_eq!(u64_at(&r["read"], "ops"), 2048, "{what}: every I/O of the file completes once");
        check_dir_stats(&r["read"], what);
    }
    let poll_us = |doc: &Value| results(doc)[0]["cpu"]["poll_us"].as_u64();
    if cpus() >= 2 {
        assert_eq!(poll_us(&polled), Some(100), "one worker on {} CPUs polls up to 100 µs", cpus());
    } else {
        skip_note("one CPU: no CPU is left free, so the worker must not poll");
        assert_eq!(poll_us(&polled), None);
    }
    assert_eq!(poll_us(&slept), None, "--poll-us 0 sleeps at once, and the result leaves the field out");
    assert_eq!(entries(dir.path()), ["poll.fio"], "the test file is removed");
}

#[test]
fn workers_that_fill_every_cpu_do_not_poll() {
    let _serial = serial();
    let dir = tempdir();
    let threads = cpus().to_string();
    let doc = file_run(dir.path(), &["--rw", "randread", "--qd", "2", "--threads", &threads, "--runtime", "300ms"]);
    assert_eq!(results(&doc)[0]["cpu"]["poll_us"].as_u64(), None, "{threads} workers on {threads} CPUs");
}

#[test]
fn deep_queues_sleep_by_default_and_poll_when_asked() {
    let _serial = serial();
    let dir = tempdir();
    let poll_us = |extra: &[&str]| {
        let doc = file_run(dir.path(), &[&["--rw", "randread", "--runtime", "300ms"], extra].concat());
        results(&doc)[0]["cpu"]["poll_us"].as_u64()
    };
    // Past QD8 a polling worker holds the CPU the kernel's completion work needs.
    assert_eq!(poll_us(&["--qd", "32"]), None, "QD32 sleeps by default");
    assert_eq!(poll_us(&["--qd", "9"]), None, "QD9 sleeps by default");
    if cpus() >= 2 {
        assert_eq!(poll_us(&["--qd", "8"]), Some(100), "QD8 polls by default");
        assert_eq!(poll_us(&["--qd", "32", "--poll-us", "50"]), Some(50), "an explicit budget holds at QD32");
    } else {
        skip_note("one CPU: no CPU is left free, so no worker polls at any depth");
        assert_eq!(poll_us(&["--qd", "32", "--poll-us", "50"]), None);
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the test file is removed");
}

#[test]
fn an_open_loop_rate_holds_while_polling() {
    let _serial = serial();
    let dir = tempdir();
    // 2000 intended I/Os per second: each wait ends at the next intended issue, never later.
    let doc = file_run(
        dir.path(),
        &["--rw", "randread", "--qd", "1", "--rate-iops", "2000", "--runtime", "2s", "--poll-us", "1000"],
    );
    let r = &results(&doc)[0];
    let iops = f64_at(&r["read"], "iops");
    assert!((iops / 2000.0 - 1.0).abs() < 0.02, "{iops} IOPS at --rate-iops 2000");
    assert!(!warning_codes(&doc).iter().any(|c| c == "rate-not-met"), "{:?}", warning_codes(&doc));
}

#[test]
fn a_poll_budget_out_of_range_is_one_line_and_exit_2() {
    let dir = tempdir();
    let o = expect_code(dm_in(dir.path()).args(["run", "--engine", "null", "--poll-us", "2000000"]), 2);
    let err = stderr_of(&o);
    assert!(err.contains("--poll-us") && err.contains("0..=1000000"), "{err}");
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "nothing written");
}

/// A device of known speed, 200 IOPS: each 4 KiB read waits 5 ms. A worker polling up to a
/// second per wait keeps its CPU busy the whole run, but none of it is work: the busiest
/// worker's figure must leave it out, and no tool-bottleneck warning may follow.
#[test]
fn polling_time_is_not_counted_as_a_busy_worker() {
    let _serial = serial();
    require_loop!();
    if cpus() < 2 {
        skip_note("one CPU: workers never poll; polling-CPU test skipped");
        return;
    }
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("slow.img"), 64 << 20);
    let t = match Throttle::new(&l.dev, 200, None) {
        Ok(t) => t,
        Err(why) => {
            skip_note(&format!("{why}; polling-CPU test skipped"));
            return;
        }
    };
    let o = t.diskmeter(&[
        "run",
        "--target",
        l.dev_str(),
        "--rw",
        "randread",
        "--qd",
        "1",
        "--ramp",
        "1s",
        "--runtime",
        "2s",
        "--poll-us",
        "1000000",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    let r = &results(&doc)[0];
    let cpu = &r["cpu"];
    let process = f64_at(cpu, "user_pct") + f64_at(cpu, "sys_pct");
    let busiest = f64_at(cpu, "max_worker_pct");
    assert_eq!(cpu["poll_us"].as_u64(), Some(1_000_000));
    // The run held the throttle's rate (the throttle's own precision is cli_loop's test; here a
    // busy CI machine running other tests beside this one has cost up to 4 %).
    assert!((f64_at(&r["read"], "iops") / 200.0 - 1.0).abs() < 0.06, "{}", r["read"]["iops"]);
    assert!(process > 70.0, "the polling worker kept a CPU busy: process {process:.1} %");
    assert!(busiest < 25.0, "busiest worker without its polling: {busiest:.1} % (process {process:.1} %)");
    assert!(!warning_codes(&doc).iter().any(|c| c == "tool-bottleneck"), "{:?}", warning_codes(&doc));
}

/// A loop device's I/O is done by its own kernel worker, which needs a CPU: a worker that
/// would leave only that CPU free sleeps (polling beside it cost a RAM-backed loop device a
/// fifth of its 1 MiB Q8 reads on 2 CPUs). An explicit budget is the user's to try.
#[test]
fn a_loop_devices_worker_counts_as_a_busy_cpu() {
    let _serial = serial();
    require_loop!();
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("worker.img"), 32 << 20);
    let poll_us = |extra: &[&str]| {
        let base = ["run", "--target", l.dev_str(), "--rw", "randread", "--qd", "1", "--runtime", "300ms"];
        let doc = run_json(dm_in(dir.path()).args(base).args(["--no-ceiling-check"]).args(extra));
        results(&doc)[0]["cpu"]["poll_us"].as_u64()
    };
    match cpus() {
        1 => skip_note("one CPU: no worker polls anywhere"),
        2 => assert_eq!(poll_us(&[]), None, "one worker and the loop device's worker fill 2 CPUs"),
        n => assert_eq!(poll_us(&[]), Some(100), "one worker and the loop device's worker leave {} of {n} CPUs", n - 2),
    }
    if cpus() >= 2 {
        assert_eq!(poll_us(&["--poll-us", "100"]), Some(100), "an explicit budget polls beside the loop worker");
    }
}
