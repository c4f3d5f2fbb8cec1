//! `diskmeter replay`: timing fidelity, depth, passes, discard and flush reaching the device,
//! address mapping, a throttled device's backlog, and bad input. Loop-device tests run as
//! root (CI sets DISKMETER_REQUIRE_LOOP=1 so that they cannot skip there).

#[macro_use]
mod common;

use common::throttle::Throttle;
use common::*;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Loop-device tests one at a time: the timing test must not share the CPUs with another.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A synthetic binary trace: `requests` 4 KiB requests at `iops`, 70 % reads.
fn synth(dir: &Path, name: &str, requests: u64, iops: u64, blocks: u64) -> PathBuf {
    let p = dir.join(name);
    let o = output(dm_in(dir).args([
        "cache",
        "synth",
        "--dist",
        "uniform",
        "--blocks",
        &blocks.to_string(),
        "--requests",
        &requests.to_string(),
        "--iops",
        &iops.to_string(),
        "-o",
        name,
    ]));
    assert!(o.status.success(), "synth: {}", stderr_of(&o));
    p
}

/// A blkparse trace (action D) of `n` requests 1 ms apart cycling read, write, discard, flush,
/// each read/write/discard 8 sectors at `i × 8` sectors.
fn blkparse_mixed(dir: &Path, n: u64) -> PathBuf {
    let mut s = String::new();
    for i in 0..n {
        let t = (i + 1) as f64 / 1000.0;
        let (rwbs, sector, len) = match i % 4 {
            0 => ("R", i * 8, 8),
            1 => ("W", i * 8, 8),
            2 => ("D", i * 8, 8),
            _ => ("FN", 0, 0),
        };
        let _ = writeln!(s, "7,0 0 {} {t:.9} 100 D {rwbs} {sector} + {len} [x]", i + 1);
    }
    let p = dir.join("mixed.blk");
    std::fs::write(&p, s).expect("write trace");
    p
}

fn replay_pass(doc: &Value, i: usize) -> &Value {
    &doc["replay"]["passes"][i]
}

fn op<'a>(pass: &'a Value, name: &str) -> Option<&'a Value> {
    pass["ops"].as_array()?.iter().find(|o| o["op"] == name)
}

/// /proc/diskstats fields of `dev` (after the name): reads, …, discards at 11, flushes at 15.
fn diskstats(dev: &Path) -> Vec<u64> {
    let name = dev.file_name().and_then(|n| n.to_str()).expect("device name");
    let text = std::fs::read_to_string("/proc/diskstats").expect("read /proc/diskstats");
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&name))
        .map(|f| f[3..].iter().map(|x| x.parse().unwrap_or(0)).collect())
        .unwrap_or_default()
}

/// A RAM-backed loop device (the device is never the limit of a timing test).
fn ram_loop(name: &str, size: u64) -> Option<LoopDev> {
    let img = Path::new("/dev/shm").join(format!("{name}-{}.img", std::process::id()));
    let l = LoopDev::blank(&img, size);
    // The image can go at once: the loop device holds it open.
    let _ = std::fs::remove_file(&img);
    Some(l)
}

#[test]
fn original_timing_issues_within_a_millisecond_at_5000_requests_a_second() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    let t = synth(dir.path(), "t.dmt", 20_000, 5_000, 16_384);
    let l = ram_loop("replay-timing", 256 << 20).expect("loop");
    let doc =
        run_json(dm_in(dir.path()).args(["replay", "--destroy-data", l.dev_str(), "--target", l.dev_str()]).arg(&t));
    let p = replay_pass(&doc, 0);
    let lag = &p["fidelity"]["lag_ns"];
    eprintln!(
        "5000 req/s: lag p50 {} ns, p99 {} ns, max {} ns, on time {} %, {} s",
        lag["p50"], lag["p99"], lag["max"], p["fidelity"]["on_time_pct"], p["seconds"]
    );
    assert_eq!(u64_at(p, "requests"), 20_000);
    assert!(u64_at(lag, "p99") <= 1_000_000, "p99 issue lag above 1 ms: {lag}");
    // The trace lasts 4 s; the replay may not be much shorter or longer.
    let secs = f64_at(p, "seconds");
    assert!((3.9..4.5).contains(&secs), "{secs} s for a 4 s trace");
    assert!(!warning_codes(&doc).contains(&"replay-lagging".to_string()));
}

#[test]
fn afap_keeps_at_most_qd_outstanding_and_two_passes_are_reported() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    let t = synth(dir.path(), "t.dmt", 20_000, 1_000, 16_384);
    let l = ram_loop("replay-afap", 128 << 20).expect("loop");
    let doc = run_json(
        dm_in(dir.path())
            .args(["replay", "--timing", "afap", "--qd", "4", "--passes", "2"])
            .args(["--destroy-data", l.dev_str(), "--target", l.dev_str()])
            .arg(&t),
    );
    let passes = doc["replay"]["passes"].as_array().expect("passes");
    assert_eq!(passes.len(), 2, "both passes reported");
    assert_eq!(results(&doc).len(), 2, "one job per pass");
    for p in passes {
        assert_eq!(u64_at(p, "requests"), 20_000);
        let out = u64_at(&p["fidelity"], "max_outstanding");
        assert!((1..=4).contains(&out), "max outstanding {out} with --qd 4");
        assert!(p["fidelity"]["lag_ns"].is_null(), "afap has no intended times");
        // 20 000 requests in far less than the trace's 20 s.
        assert!(f64_at(p, "seconds") < 10.0);
    }
}

#[test]
fn discards_and_flushes_reach_the_device() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    let t = blkparse_mixed(dir.path(), 400);
    let l = ram_loop("replay-discard", 64 << 20).expect("loop");
    let before = diskstats(&l.dev);
    let doc = run_json(
        dm_in(dir.path())
            .args(["replay", "--format", "blkparse:D", "--destroy-data", l.dev_str(), "--target", l.dev_str()])
            .arg(&t),
    );
    let after = diskstats(&l.dev);
    let p = replay_pass(&doc, 0);
    for kind in ["read", "write", "discard", "flush"] {
        assert_eq!(op(p, kind).map(|o| u64_at(o, "ops")), Some(100), "{kind}s replayed");
    }
    let discards = after[11] - before[11];
    let flushes = after[15] - before[15];
    eprintln!("device saw {discards} discards and {flushes} flushes for 100 of each");
    assert!(discards >= 100, "the device saw {discards} discards");
    assert!(flushes >= 100, "the device saw {flushes} flushes");
}

#[test]
fn discards_on_a_file_punch_holes() {
    let dir = tempdir();
    let t = blkparse_mixed(dir.path(), 40);
    let target = dir.path().join("target.bin");
    let doc = run_json(
        dm_in(dir.path()).args(["replay", "--format", "blkparse:D", "--size", "1M", "--target"]).arg(&target).arg(&t),
    );
    let p = replay_pass(&doc, 0);
    assert_eq!(op(p, "discard").map(|o| u64_at(o, "ops")), Some(10));
    assert_eq!(op(p, "flush").map(|o| u64_at(o, "ops")), Some(10));
    assert!(!target.exists(), "the test file diskmeter created is removed");
}

#[test]
fn modulo_mapping_keeps_every_request_inside_a_small_device() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    // 262 144 blocks of 4 KiB: a 1 GiB span onto a 16 MiB device.
    let t = synth(dir.path(), "wide.dmt", 5_000, 5_000, 262_144);
    let l = ram_loop("replay-modulo", 16 << 20).expect("loop");
    let before = diskstats(&l.dev);
    let doc = run_json(
        dm_in(dir.path())
            .args(["replay", "--timing", "afap", "--destroy-data", l.dev_str(), "--target", l.dev_str()])
            .arg(&t),
    );
    let after = diskstats(&l.dev);
    assert_eq!(doc["replay"]["map"], "modulo", "the default when the span exceeds the target");
    assert_eq!(doc["partial"], false, "no request failed (none past the end)");
    let p = replay_pass(&doc, 0);
    assert_eq!(u64_at(p, "requests"), 5_000);
    let tg = &doc["replay"]["targets"][0];
    assert!(u64_at(tg, "used_bytes") <= 16 << 20);
    // The device served every read and write (the guard's own reads come on top).
    let io = (after[0] - before[0]) + (after[4] - before[4]);
    assert!(io >= 5_000, "device saw {io} requests");
    // An explicit --map offset refuses what does not fit, before any I/O.
    let o = output(
        dm_in(dir.path())
            .args(["replay", "--map", "offset", "--destroy-data", l.dev_str(), "--target", l.dev_str()])
            .arg(&t),
    );
    assert_usage_error(&o, "--map modulo");
}

#[test]
fn a_throttled_device_shows_its_backlog_as_queueing_and_lag() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    // 3 000 requests/s against a device limited to 1 000 IOPS, with 4 slots.
    let t = synth(dir.path(), "t.dmt", 3_000, 3_000, 16_384);
    let l = ram_loop("replay-throttle", 128 << 20).expect("loop");
    let th = match Throttle::new(&l.dev, 1_000, None) {
        Ok(t) => t,
        Err(why) => {
            skip_note(&format!("{why}; throttled replay test skipped"));
            return;
        }
    };
    let o = th.diskmeter(&[
        "replay",
        "--json",
        "--qd",
        "4",
        "--destroy-data",
        l.dev_str(),
        "--target",
        l.dev_str(),
        t.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("json");
    let p = replay_pass(&doc, 0);
    let f = &p["fidelity"];
    eprintln!("throttled: {} s, fidelity {f}", p["seconds"]);
    assert!(u64_at(f, "slot_waits") > 1_000, "most requests waited for a slot: {f}");
    assert!(u64_at(&f["lag_ns"], "p99") > 100_000_000, "the backlog shows as lag: {f}");
    assert!(f64_at(p, "seconds") > 1.5, "1 000 IOPS cannot serve 3 000 requests in the trace's 1 s");
    let codes = warning_codes(&doc);
    assert!(codes.contains(&"replay-queueing".to_string()), "{codes:?}");
    assert!(!codes.contains(&"replay-lagging".to_string()), "the device, not the tool, was late: {codes:?}");
}

#[test]
fn the_null_engine_replays_without_a_device() {
    let dir = tempdir();
    let t = synth(dir.path(), "t.dmt", 50_000, 1_000, 16_384);
    let doc = run_json(dm_in(dir.path()).args(["replay", "--engine", "null", "--timing", "afap"]).arg(&t));
    let p = replay_pass(&doc, 0);
    assert_eq!(u64_at(p, "requests"), 50_000);
    let reads = op(p, "read").map(|o| u64_at(o, "ops")).unwrap_or(0);
    let writes = op(p, "write").map(|o| u64_at(o, "ops")).unwrap_or(0);
    assert_eq!(reads + writes, 50_000);
    // The human output names the fidelity.
    let o = output(dm_in(dir.path()).args(["replay", "--engine", "null", "--timing", "afap"]).arg(&t));
    assert!(stdout_of(&o).contains("fidelity:"), "{}", stdout_of(&o));
}

#[test]
fn a_pass_is_labelled_from_its_trace_in_every_output() {
    let dir = tempdir();
    let d = dir.path();
    // 10 000 reads of 4 KiB: no spec's default mix (randrw 70 %) may label them.
    let mut csv = String::from("time_us,op,offset,size\n");
    for i in 0..10_000u64 {
        let _ = writeln!(csv, "{},R,{},4096", i * 10, (i * 7919 % 4096) * 4096);
    }
    std::fs::write(d.join("reads.csv"), csv).expect("trace");
    let format = "csv:time=0:us,op=1,offset=2:bytes,size=3:bytes,header";
    let base = ["replay", "reads.csv", "--format", format, "--engine", "null", "--timing", "afap"];
    let doc = run_json(dm_in(d).args(base).args(["--html", "r.html"]));
    let r = &results(&doc)[0];
    assert_eq!(r["workload"], "trace: 100 % reads, 4 KiB", "{r}");
    assert_eq!((r["spec"]["rw"].as_str(), r["write"].is_null()), (Some("randread"), true), "{}", r["spec"]);
    std::fs::write(d.join("r.json"), doc.to_string()).expect("result");
    for ext in ["md", "csv", "txt"] {
        expect_code(dm_in(d).args(["report", "r.json", "-o", &format!("r.{ext}")]), 0);
    }
    for f in ["r.html", "r.md", "r.csv", "r.txt"] {
        let text = std::fs::read_to_string(d.join(f)).expect(f);
        assert!(!text.contains("randrw") && !text.contains("70% read"), "{f} labels the trace as a mix: {text}");
        if f != "r.txt" {
            assert!(text.contains("trace: 100 % reads, 4 KiB"), "{f} lacks the trace's label: {text}");
        }
    }
    // The job table and the "over time" chart's caption of the page both say it.
    let html = std::fs::read_to_string(d.join("r.html")).expect("html");
    assert!(html.matches("trace: 100 % reads, 4 KiB").count() >= 2, "{html}");
}

#[test]
fn bad_traces_and_targets_are_usage_errors_and_write_nothing() {
    let dir = tempdir();
    let d = dir.path();
    let good = synth(d, "good.dmt", 100, 1_000, 64);
    std::fs::write(d.join("empty.blk"), "").expect("write");
    std::fs::write(d.join("garbage.txt"), "this is not a trace\n\u{1}\u{2}\n").expect("write");
    let bytes = std::fs::read(&good).expect("read");
    std::fs::write(d.join("cut.dmt"), &bytes[..bytes.len() - 7]).expect("write");
    let before = entries(d);
    let refuse = |args: &[&str], needle: &str| {
        let o = output(dm_in(d).args(["replay"]).args(args));
        assert_usage_error(&o, needle);
        assert_eq!(entries(d), before, "nothing written for {args:?}");
    };
    refuse(&["empty.blk", "--format", "blkparse", "--target", "t.bin"], "no requests");
    refuse(&["garbage.txt", "--format", "blkparse", "--target", "t.bin"], "not a readable trace");
    refuse(&["garbage.txt", "--target", "t.bin"], "format");
    refuse(&["cut.dmt", "--target", "t.bin"], "not a readable trace");
    refuse(&["good.dmt", "--device", "sdz", "--target", "t.bin"], "no requests for the device sdz");
    refuse(&["missing.dmt", "--target", "t.bin"], "does not exist");
    refuse(&["good.dmt"], "replay needs a target");
    refuse(&["good.dmt", "--target", "t.bin", "--timing", "depth"], "--timing depth needs");
    refuse(&["good.dmt", "--target", "t.bin", "--timing", "warp"], "--timing");
    refuse(&["good.dmt", "--target", "t.bin", "--speed", "-1"], "--speed");
    // A target smaller than one request.
    std::fs::write(d.join("tiny.bin"), [0u8; 1024]).expect("write");
    let before = entries(d);
    let o = output(dm_in(d).args(["replay", "good.dmt", "--target", "tiny.bin", "--overwrite"]));
    assert_usage_error(&o, "less than one request");
    assert_eq!(entries(d), before);
    assert_eq!(std::fs::read(d.join("tiny.bin")).expect("read"), vec![0u8; 1024], "the small file is untouched");
    // A file diskmeter did not create is not written without --overwrite.
    std::fs::write(d.join("theirs.bin"), vec![7u8; 1 << 20]).expect("write");
    let o = output(dm_in(d).args(["replay", "good.dmt", "--target", "theirs.bin"]));
    assert_usage_error(&o, "--overwrite");
    assert_eq!(std::fs::read(d.join("theirs.bin")).expect("read"), vec![7u8; 1 << 20]);
}

/// An MSR trace: `n` 4 KiB requests 100 µs apart, each recorded with a 250 µs response time,
/// so that the trace had at most 3 requests outstanding (each one and the two before it).
fn msr_trace(dir: &Path, n: u64) -> PathBuf {
    let mut s = String::new();
    let t0: u64 = 128_166_372_000_000_000;
    for i in 0..n {
        let kind = if i % 3 == 0 { "Write" } else { "Read" };
        let _ = writeln!(s, "{},hm,0,{kind},{},4096,2500", t0 + i * 1000, (i * 7919 % 4096) * 4096);
    }
    let p = dir.join("trace.csv");
    std::fs::write(&p, s).expect("write trace");
    p
}

#[test]
fn depth_timing_keeps_the_traces_own_depth_and_recorded_latency_is_shown_beside() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    let t = msr_trace(dir.path(), 3_000);
    let l = ram_loop("replay-depth", 64 << 20).expect("loop");
    let doc = run_json(
        dm_in(dir.path())
            .args([
                "replay",
                "--format",
                "msr",
                "--timing",
                "depth",
                "--destroy-data",
                l.dev_str(),
                "--target",
                l.dev_str(),
            ])
            .arg(&t),
    );
    assert_eq!(doc["replay"]["trace"]["recorded_latency"], true);
    let p = replay_pass(&doc, 0);
    assert_eq!(u64_at(p, "requests"), 3_000);
    let out = u64_at(&p["fidelity"], "max_outstanding");
    assert!((1..=3).contains(&out), "the trace never had more than 3 outstanding, the replay had {out}");
    let read = op(p, "read").expect("reads");
    assert_eq!(u64_at(&read["recorded_ns"], "p99") / 1000, 250, "the trace's own 250 µs: {read}");
    // The human output sets the two side by side.
    let o = output(
        dm_in(dir.path())
            .args([
                "replay",
                "--format",
                "msr",
                "--timing",
                "afap",
                "--destroy-data",
                l.dev_str(),
                "--target",
                l.dev_str(),
            ])
            .arg(&t),
    );
    let text = stdout_of(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("where the trace recorded p99 250 µs"), "{text}");
}

#[test]
fn several_devices_go_to_their_own_targets() {
    let dir = tempdir();
    let d = dir.path();
    // Two devices: 7,0 gets 30 reads, 7,16 gets 10 writes.
    let mut s = String::new();
    for i in 0..40u64 {
        let (dev, rwbs) = if i % 4 == 3 { ("7,16", "W") } else { ("7,0", "R") };
        let _ = writeln!(s, "{dev} 0 {} {:.9} 100 D {rwbs} {} + 8 [x]", i + 1, i as f64 / 1000.0, i * 8);
    }
    std::fs::write(d.join("two.blk"), s).expect("write");
    let doc = run_json(dm_in(d).args([
        "replay",
        "two.blk",
        "--format",
        "blkparse:D",
        "--timing",
        "afap",
        "--size",
        "1M",
        "--devices-to-targets",
        "7,0=a.bin",
        "--devices-to-targets",
        "7,16=b.bin",
    ]));
    let p = replay_pass(&doc, 0);
    assert_eq!(p["target_requests"], serde_json::json!([30, 10]));
    assert_eq!(op(p, "read").map(|o| u64_at(o, "ops")), Some(30));
    assert_eq!(op(p, "write").map(|o| u64_at(o, "ops")), Some(10));
    let targets = doc["replay"]["targets"].as_array().expect("targets");
    assert_eq!(targets[0]["devices"], serde_json::json!(["7,0"]));
    assert_eq!(targets[1]["devices"], serde_json::json!(["7,16"]));
    assert!(!d.join("a.bin").exists() && !d.join("b.bin").exists(), "created test files are removed");
    // --device picks one of them for one target.
    let doc = run_json(dm_in(d).args([
        "replay",
        "two.blk",
        "--format",
        "blkparse:D",
        "--timing",
        "afap",
        "--size",
        "1M",
        "--device",
        "7,16",
        "--target",
        "c.bin",
    ]));
    assert_eq!(u64_at(replay_pass(&doc, 0), "requests"), 10);
}

#[test]
fn ctrl_c_during_a_long_replay_stops_at_once_with_partial_results() {
    let dir = tempdir();
    let d = dir.path();
    // Three requests a minute apart: the replay sleeps between them.
    let s = "7,0 0 1 0.000000000 1 D R 0 + 8 [x]\n7,0 0 2 60.000000000 1 D R 8 + 8 [x]\n\
             7,0 0 3 120.000000000 1 D R 16 + 8 [x]\n";
    std::fs::write(d.join("slow.blk"), s).expect("write");
    let child =
        spawn(d, &["replay", "slow.blk", "--format", "blkparse:D", "--size", "1M", "--target", "t.bin", "--json"]);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    sigint(&child.child);
    let started = std::time::Instant::now();
    let (code, out, err) = wait_exit(child, std::time::Duration::from_secs(10));
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "stopped within a second or so");
    assert_eq!(code, Some(130), "{err}");
    let doc: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(doc["partial"], true);
    assert_eq!(u64_at(replay_pass(&doc, 0), "requests"), 1, "the first request was replayed");
    assert!(!d.join("t.bin").exists(), "the created test file is removed");
}
