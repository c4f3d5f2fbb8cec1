//! `diskmeter profile`: the figures of known traces, the emitted job run back (on a test file,
//! and captured on a loop device where root and tracefs allow), and bad input.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

const TRACING: &str = "/sys/kernel/tracing";

fn synth(dir: &Path, name: &str, args: &[&str]) {
    let mut a = vec!["cache", "synth", "-o", name];
    a.extend_from_slice(args);
    expect_code(dm_in(dir).args(&a), 0);
}

fn profile_json(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["profile"];
    a.extend_from_slice(args);
    run_json(dm_in(dir).args(&a))
}

fn op<'a>(p: &'a Value, name: &str) -> &'a Value {
    p["ops"].as_array().expect("ops").iter().find(|o| o["op"] == name).unwrap_or(&Value::Null)
}

fn hot_shares(p: &Value) -> Vec<(f64, f64)> {
    p["hot_set"]["points"]
        .as_array()
        .expect("hot-set points")
        .iter()
        .map(|h| (f64_at(h, "footprint_pct"), f64_at(h, "share")))
        .collect()
}

#[test]
fn profile_of_a_synthetic_trace() {
    let dir = tempdir();
    synth(
        dir.path(),
        "syn.dmt",
        &["--dist", "hotset:90/10", "--blocks", "4096", "--requests", "100000", "--iops", "40000"],
    );
    let doc = profile_json(dir.path(), &["syn.dmt"]);
    assert_eq!(doc["command"], "profile");
    let p = &doc["profile"];
    assert_eq!(u64_at(p, "requests"), 100_000);
    assert!((f64_at(p, "read_fraction") - 0.70).abs() < 0.01, "{}", p["read_fraction"]);
    assert_eq!(op(p, "read")["sizes"][0]["bytes"], 4096);
    assert_eq!(op(p, "read")["sizes"].as_array().map(Vec::len), Some(1));
    assert!((f64_at(&p["arrivals"], "mean_iops") - 40_000.0).abs() < 400.0);
    // 90 % of the requests on 10 % of the blocks; cold blocks not drawn are not in the
    // footprint, so its hottest 10 % is a little less than the hot area.
    let shares = hot_shares(p);
    let at10 = shares.iter().find(|(x, _)| *x == 10.0).map(|h| h.1).expect("10 %");
    assert!(at10 > 0.8 && at10 < 0.92, "hottest 10 %: {at10}");
    assert!(shares.windows(2).all(|w| w[0].1 <= w[1].1) && shares.last().map(|h| h.1) == Some(1.0), "{shares:?}");
    assert!(p["depth"].is_null(), "a synthetic trace has no completion times");
    // The human text names depth as not available.
    let o = expect_code(dm_in(dir.path()).args(["profile", "syn.dmt"]), 0);
    assert!(stdout_of(&o).contains("depth       not available"), "{}", stdout_of(&o));
    // -o writes the result (JSON here) and nothing else.
    expect_code(dm_in(dir.path()).args(["profile", "syn.dmt", "-q", "-o", "p.json"]), 0);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("p.json")).expect("p.json")).expect("json");
    assert_eq!(saved["profile"]["requests"], 100_000);
}

/// The job's lines `key=value`.
fn job_value<'a>(job: &'a str, key: &str) -> Vec<&'a str> {
    job.lines().filter_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('='))).collect()
}

fn capture_unavailable() -> Option<String> {
    if let Some(why) = loop_unavailable() {
        return Some(why.to_string());
    }
    let events = Path::new(TRACING).join("events/block/block_rq_issue");
    if !events.exists() {
        let _ = std::process::Command::new("mount").args(["-t", "tracefs", "nodev", TRACING]).status();
    }
    (!events.exists()).then(|| format!("tracefs with the block events is not available at {TRACING}"))
}

#[test]
fn emitted_job_reproduces_mix_size_and_hot_set() {
    let dir = tempdir();
    let d = dir.path();
    synth(d, "syn.dmt", &["--dist", "hotset:90/10", "--blocks", "4096", "--requests", "160000", "--iops", "40000"]);
    let o = expect_code(dm_in(d).args(["profile", "syn.dmt", "--emit-job", "job.fio", "--json"]), 0);
    let trace = json_of(&o)["profile"].clone();
    assert!(stderr_of(&o).contains("iodepth=32 is a default"), "{}", stderr_of(&o));
    let job = std::fs::read_to_string(d.join("job.fio")).expect("job file");
    let trace_read = f64_at(&trace, "read_fraction");
    let mix: u8 = (trace_read * 100.0).round() as u8;
    assert_eq!(job_value(&job, "rwmixread"), [mix.to_string().as_str()], "{job}");
    assert_eq!(job_value(&job, "bs"), ["4096"], "{job}");
    assert_eq!(job_value(&job, "rw"), ["randrw"]);
    // fio paces each direction at its own rate: the mixed job's 40000 split by the mix.
    let reads = (40000.0 * f64::from(mix) / 100.0).round() as u64;
    assert_eq!(job_value(&job, "rate_iops"), [format!("{reads},{}", 40000 - reads).as_str()], "{job}");
    assert_eq!(job_value(&job, "runtime"), ["4s"]);
    assert!(job_value(&job, "random_distribution")[0].starts_with("zoned:"), "{job}");
    assert!(job.contains("; note: the trace records no completion times"), "{job}");

    // Run on a test file: the run's own counts.
    let run = run_json(dm_in(d).args(["run", "job.fio", "--target", "t.bin", "--no-ceiling-check"]));
    let r = &results(&run)[0];
    assert_eq!(u64_at(&r["spec"], "bs"), 4096);
    assert_eq!(u64_at(&r["spec"], "mix"), u64::from(mix));
    let (reads, writes) = (u64_at(&r["read"], "ops"), u64_at(&r["write"], "ops"));
    let run_read = reads as f64 / (reads + writes) as f64;
    eprintln!(
        "profile round trip (file): trace reads {trace_read:.4}, job rwmixread={mix}, run reads {run_read:.4} of {}",
        reads + writes
    );
    assert!((run_read - trace_read).abs() < 0.01, "run read share {run_read}, trace {trace_read}");

    // Captured on a loop device: the run's mix, sizes and hot set as the device saw them.
    if let Some(why) = capture_unavailable() {
        skip_note(&format!("{why}; the captured half of the round trip is skipped"));
        return;
    }
    let l = LoopDev::blank(&d.join("rt.img"), 64 << 20);
    let dev = l.dev_str();
    let run = captured_run(d, dev, "job.fio", "rt.dmt");
    let got = profile_json(d, &["rt.dmt"])["profile"].clone();
    let r = &results(&run)[0];
    let issued = u64_at(&r["read"], "ops") + u64_at(&r["write"], "ops");
    let cap_read = f64_at(&got, "read_fraction");
    let size_share = |o: &Value| {
        let n = u64_at(o, "requests") as f64;
        o["sizes"]
            .as_array()
            .expect("sizes")
            .iter()
            .find(|s| s["bytes"] == 4096)
            .map_or(0.0, |s| f64_at(s, "count") / n)
    };
    let (r4k, w4k) = (size_share(op(&got, "read")), size_share(op(&got, "write")));
    eprintln!(
        "profile round trip (captured): {} requests captured, {issued} issued; reads {cap_read:.4} (trace {trace_read:.4}); \
         4 KiB: {:.4} of reads, {:.4} of writes",
        u64_at(&got, "requests"),
        r4k,
        w4k
    );
    assert!((cap_read - trace_read).abs() < 0.01, "captured read share {cap_read}, trace {trace_read}");
    // Every request of the job is 4 KiB; the few others are the run's own probe and sample reads.
    assert_eq!(op(&got, "read")["sizes"][0]["bytes"], 4096);
    assert_eq!(op(&got, "write")["sizes"][0]["bytes"], 4096);
    assert!(r4k > 0.995 && w4k == 1.0, "4 KiB shares: reads {r4k}, writes {w4k}");
    for ((x, want), (_, have)) in hot_shares(&trace).into_iter().zip(hot_shares(&got)) {
        eprintln!(
            "profile round trip: hottest {x:>3} % of the footprint: trace {:.1} %, run {:.1} %",
            want * 100.0,
            have * 100.0
        );
        assert!((want - have).abs() <= 0.05, "hottest {x} %: trace {want}, run {have}");
    }
    let depth = &got["depth"];
    assert!(u64_at(depth, "max") >= 1 && !got["latency_ns"].is_null(), "a capture has depth and latency: {got}");

    // The round trip from a captured trace: profile the capture, emit its job, run that job
    // captured again: the same mix and block size, the hot set within 5 points.
    let o = expect_code(dm_in(d).args(["profile", "rt.dmt", "--emit-job", "job2.fio", "--json"]), 0);
    let job2 = std::fs::read_to_string(d.join("job2.fio")).expect("job file");
    let mix2: u8 = (cap_read * 100.0).round() as u8;
    assert_eq!(job_value(&job2, "rwmixread"), [mix2.to_string().as_str()], "{job2}");
    assert_eq!(job_value(&job2, "bs"), ["4096"], "{job2}");
    let from_capture = json_of(&o)["profile"].clone();
    let run2 = captured_run(d, dev, "job2.fio", "rt2.dmt");
    let again = profile_json(d, &["rt2.dmt"])["profile"].clone();
    let r = &results(&run2)[0];
    assert_eq!(u64_at(&r["spec"], "bs"), 4096);
    assert_eq!(u64_at(&r["spec"], "mix"), u64::from(mix2));
    let again_read = f64_at(&again, "read_fraction");
    eprintln!(
        "profile of a capture: reads {cap_read:.4}, job rwmixread={mix2}, its run captured: reads {again_read:.4}"
    );
    assert!((again_read - cap_read).abs() < 0.01, "read share: capture {cap_read}, its job's run {again_read}");
    for ((x, want), (_, have)) in hot_shares(&from_capture).into_iter().zip(hot_shares(&again)) {
        eprintln!(
            "profile of a capture: hottest {x:>3} % of the footprint: capture {:.1} %, its job's run {:.1} %",
            want * 100.0,
            have * 100.0
        );
        assert!((want - have).abs() <= 0.05, "hottest {x} %: capture {want}, run {have}");
    }
}

/// Runs `job` on `dev` while `capture` records it into `out`; the run's result.
fn captured_run(d: &Path, dev: &str, job: &str, out: &str) -> Value {
    let mut cap = spawn(d, &["capture", dev, "--duration", "120s", "-o", out, "--json", "-q"]);
    let enable =
        Path::new(TRACING).join(format!("instances/diskmeter-{}/events/block/block_rq_issue/enable", cap.child.id()));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&enable).is_ok_and(|v| v.trim() == "1") {
        assert!(cap.child.try_wait().expect("wait").is_none(), "capture exited early");
        assert!(Instant::now() < deadline, "capture did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let run = run_json(dm_in(d).args(["run", job, "--target", dev, "--destroy-data", dev, "--no-ceiling-check"]));
    std::thread::sleep(Duration::from_millis(300));
    sigint(&cap.child);
    let (code, _, err) = wait_exit(cap, Duration::from_secs(30));
    assert_eq!(code, Some(130), "{err}");
    run
}

#[test]
fn emitted_job_runs_direct_in_fio_at_the_traces_rates() {
    let dir = tempdir();
    let d = dir.path();
    // 3 s of trace at 1000 requests/s: two reads, then a write, of 4 KiB.
    let mut csv = String::from("time_us,op,offset,size\n");
    for i in 0..3000u64 {
        let op = if i % 3 == 2 { 'W' } else { 'R' };
        csv.push_str(&format!("{},{op},{},4096\n", i * 1000, (i * 7919 % 2048) * 4096));
    }
    std::fs::write(d.join("t.csv"), csv).expect("trace");
    let format = "csv:time=0:us,op=1,offset=2:bytes,size=3:bytes,header";
    expect_code(dm_in(d).args(["profile", "t.csv", "--format", format, "--emit-job", "rep.fio", "-q"]), 0);
    let job = std::fs::read_to_string(d.join("rep.fio")).expect("job");
    assert_eq!(job_value(&job, "direct"), ["1"], "{job}");
    assert_eq!(job_value(&job, "ioengine"), ["io_uring"], "{job}");
    assert!(job.contains("ioengine=libaio"), "names libaio for older fio: {job}");
    assert_eq!(job_value(&job, "filename"), ["diskmeter.test"], "{job}");
    // Reads and writes paced apart, in the job's whole-percent mix (67 %).
    assert_eq!(job_value(&job, "rate_iops"), ["670,330"], "{job}");

    let Some(fio) = find_tool("fio") else {
        return skip_note("fio is not installed: the emitted job is not run in fio");
    };
    let v = fio_json(&fio, d, "rep.fio");
    let global = &v["global options"];
    assert_eq!(global["direct"], "1", "fio ran the job buffered: {global}");
    assert_eq!(global["ioengine"], "io_uring", "{global}");
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{j}");
    let (r, w) = (f64_at(&j["read"], "iops"), f64_at(&j["write"], "iops"));
    let (tr, tw) = (2000.0 / 3.0, 1000.0 / 3.0);
    eprintln!("emitted job in fio: read {r:.1} IOPS (trace {tr:.1}), write {w:.1} IOPS (trace {tw:.1}), direct=1");
    // fio paces to the rate; a loaded machine can fall a little short of it (-5 % seen at a load
    // of 9 on 2 CPUs), never beyond it.
    assert!((r / tr - 1.0).abs() < 0.10 && (w / tw - 1.0).abs() < 0.10, "fio ran {r} / {w} IOPS");
}

#[test]
fn several_block_sizes_give_one_job_per_size() {
    let dir = tempdir();
    let d = dir.path();
    // 1 s of trace: 600 reads of 4 KiB, 100 of 64 KiB, 300 writes of 8 KiB, interleaved.
    let mut csv = String::from("time_us,op,offset,size\n");
    for i in 0..1000u64 {
        let (op, size) = match i % 10 {
            0 => ('R', 65536),
            1..=3 => ('W', 8192),
            _ => ('R', 4096),
        };
        csv.push_str(&format!("{},{op},{},{size}\n", i * 1000, (i * 7919 % 4096) * 65536));
    }
    std::fs::write(d.join("mixed.csv"), csv).expect("trace");
    let format = "csv:time=0:us,op=1,offset=2:bytes,size=3:bytes,header";
    let o =
        expect_code(dm_in(d).args(["profile", "mixed.csv", "--format", format, "--emit-job", "mixed.fio", "-q"]), 0);
    assert!(stderr_of(&o).contains("one per operation and size"), "{}", stderr_of(&o));
    let job = std::fs::read_to_string(d.join("mixed.fio")).expect("job");
    assert_eq!(job_value(&job, "bs"), ["4096", "65536", "8192"], "{job}");
    assert_eq!(job_value(&job, "rw"), ["randread", "randread", "randwrite"], "{job}");
    assert_eq!(job_value(&job, "rate_iops"), ["600", "100", "300"], "{job}");
    // It runs (null engine: no device, the rates alone) in the trace's proportions.
    let run =
        run_json(dm_in(d).args(["run", "mixed.fio", "--target", "t.bin", "--engine", "null", "--no-ceiling-check"]));
    let n: Vec<u64> = results(&run)
        .iter()
        .map(|r| r["read"]["ops"].as_u64().unwrap_or(0) + r["write"]["ops"].as_u64().unwrap_or(0))
        .collect();
    let total: u64 = n.iter().sum();
    for (got, want) in n.iter().zip([0.6, 0.1, 0.3]) {
        assert!((*got as f64 / total as f64 - want).abs() < 0.02, "{n:?}");
    }
}

#[test]
fn bad_traces_are_refused_and_nothing_is_written() {
    let dir = tempdir();
    let d = dir.path();
    synth(d, "good.dmt", &["--dist", "uniform", "--blocks", "100", "--requests", "1000"]);
    let good = std::fs::read(d.join("good.dmt")).expect("trace");
    std::fs::write(d.join("cut.dmt"), &good[..good.len() - 10]).expect("cut");
    std::fs::write(d.join("empty.dmt"), b"").expect("empty");
    std::fs::write(d.join("garbage.bin"), [0x5au8; 300]).expect("garbage");
    std::fs::write(d.join("header.dmt"), &good[..32]).expect("header only");
    let cases: [(&[&str], &str); 8] = [
        (&["profile", "empty.dmt", "--format", "binary"], "not a readable trace"),
        (&["profile", "empty.dmt"], "empty.dmt"),
        (&["profile", "garbage.bin"], "cannot tell the format"),
        (&["profile", "cut.dmt"], "truncated"),
        (&["profile", "header.dmt"], "header.dmt"),
        (&["profile", "missing.dmt"], "missing.dmt"),
        (&["profile", "good.dmt", "-o", "r.csv"], "profile writes its result as .json or .txt"),
        (&["profile", "good.dmt", "--emit-job", "-"], "name a file for the job"),
    ];
    for (args, needle) in cases {
        let mut a = args.to_vec();
        if !a.contains(&"--emit-job") {
            a.extend(["--emit-job", "job.fio"]);
        }
        if !a.contains(&"-o") {
            a.extend(["-o", "out.json"]);
        }
        let o = output(dm_in(d).args(&a));
        assert_usage_error(&o, needle);
        assert!(!d.join("job.fio").exists() && !d.join("out.json").exists(), "{args:?} wrote something");
    }
    // A job file that is not diskmeter's is not replaced.
    std::fs::write(d.join("mine.fio"), "[mine]\n").expect("job");
    let o = output(dm_in(d).args(["profile", "good.dmt", "--emit-job", "mine.fio"]));
    assert_usage_error(&o, "already exists");
    assert_eq!(std::fs::read_to_string(d.join("mine.fio")).expect("kept"), "[mine]\n");
}
