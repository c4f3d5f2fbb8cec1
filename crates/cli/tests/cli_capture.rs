//! `diskmeter capture`: on loop devices, what it records against what `diskmeter run` issued
//! (root and tracefs; skipped with a note otherwise), and its refusals. Devices are detached
//! by guards, also when a test panics; the loop tests run one at a time.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use trace::{Op, ReadOptions, TraceFormat};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

const TRACING: &str = "/sys/kernel/tracing";

/// Why captures cannot run here (tracefs is mounted first when it is only missing).
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

macro_rules! require_capture {
    () => {
        if let Some(why) = capture_unavailable() {
            skip_note(&format!("{why}; capture test skipped"));
            return;
        }
    };
}

fn instance(pid: u32) -> PathBuf {
    Path::new(TRACING).join(format!("instances/diskmeter-{pid}"))
}

/// Starts `diskmeter capture DEV -o OUT --json` and waits until its events are enabled.
fn start_capture(dir: &Path, dev: &str, out: &str, duration: &str) -> Spawned {
    let mut s = spawn(dir, &["capture", dev, "--duration", duration, "-o", out, "--json"]);
    let enable = instance(s.child.id()).join("events/block/block_rq_issue/enable");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if std::fs::read_to_string(&enable).is_ok_and(|v| v.trim() == "1") {
            return s;
        }
        if let Ok(Some(st)) = s.child.try_wait() {
            let err = s.err.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
            panic!("capture exited ({st}) before it started: {}", String::from_utf8_lossy(&err));
        }
        assert!(Instant::now() < deadline, "capture did not start within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ctrl-C to a capture: it ends with exit 130 and its JSON summary.
fn stop_capture(s: Spawned) -> Value {
    let pid = s.child.id();
    sigint(&s.child);
    let (code, out, err) = wait_exit(s, Duration::from_secs(30));
    assert_eq!(code, Some(130), "capture after Ctrl-C: {err}");
    assert!(err.contains("interrupted (Ctrl-C): the trace covers the"), "{err}");
    assert!(!instance(pid).exists(), "the tracing instance is left behind");
    let doc: Value = serde_json::from_slice(&out).expect("capture --json prints JSON");
    assert_eq!(doc["schema"], "diskmeter.capture.v1");
    assert_eq!(doc["interrupted"], true);
    doc
}

/// A trace's requests: count per (operation, size), in file order with checks on the way.
struct TraceCounts {
    by: BTreeMap<(&'static str, u32), u64>,
    total: u64,
    offsets_max: u64,
    offsets_below: u64,
}

fn read_trace(path: &Path, below: u64) -> TraceCounts {
    let mut r = trace::open(path, &TraceFormat::Binary, &ReadOptions::default()).expect("open the captured trace");
    let mut c = TraceCounts { by: BTreeMap::new(), total: 0, offsets_max: 0, offsets_below: 0 };
    let mut last_t = 0;
    while let Some(req) = r.next() {
        let req = req.expect("a well-formed request");
        assert!(req.t_ns >= last_t, "requests are in issue order");
        last_t = req.t_ns;
        assert!(r.recorded_latency_ns().is_some(), "every request carries its latency");
        let op = match req.op {
            Op::Read => "read",
            Op::Write => "write",
            Op::Discard => "discard",
            Op::Flush => "flush",
        };
        *c.by.entry((op, req.len)).or_insert(0) += 1;
        c.total += 1;
        c.offsets_max = c.offsets_max.max(req.offset + u64::from(req.len));
        c.offsets_below += u64::from(req.offset < below);
    }
    c
}

/// Every I/O the job issued in its measured window: the headline's, plus a startup burst's
/// first interval when the headline leaves it out (or the whole window's, when the headline
/// counts whole bursts).
fn ops(doc: &Value, job: usize, dir: &str) -> u64 {
    let r = &results(doc)[job];
    if let Some(n) = r["whole_bursts"][format!("whole_{dir}_ops")].as_u64() {
        return n;
    }
    let burst: u64 = r["startup_burst"]
        .as_array()
        .map(|b| b.iter().filter(|b| b["direction"] == dir).filter_map(|b| b["first_ops"].as_u64()).sum())
        .unwrap_or(0);
    r[dir]["ops"].as_u64().unwrap_or(0) + burst
}

fn within(captured: u64, issued: u64, rel: f64, what: &str) {
    let diff = captured.abs_diff(issued) as f64;
    assert!(
        diff <= rel * issued as f64,
        "{what}: captured {captured}, the run issued {issued} (more than {rel} apart)"
    );
}

#[test]
fn capture_records_what_runs_issued() {
    require_capture!();
    let _g = serial();
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("disk.img"), 256 << 20);
    let dev = l.dev_str();
    let cap = start_capture(dir.path(), dev, "trace.dmt", "120s");
    // One 4 KiB random 70/30 mix, then two jobs together: 16 KiB reads and 64 KiB writes.
    let run1 = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        dev,
        "--destroy-data",
        dev,
        "--rw",
        "randrw",
        "--mix",
        "70",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--runtime",
        "3s",
        "--ramp",
        "0",
        "--no-ceiling-check",
    ]));
    std::fs::write(
        dir.path().join("mixed.fio"),
        "[global]\nruntime=2s\ntime_based\n\n[reads]\nrw=randread\nbs=16k\niodepth=8\n\n[writes]\nrw=randwrite\nbs=64k\niodepth=4\n",
    )
    .expect("job file");
    let run2 = run_json(dm_in(dir.path()).args([
        "run",
        "mixed.fio",
        "--target",
        dev,
        "--destroy-data",
        dev,
        "--no-ceiling-check",
    ]));
    std::thread::sleep(Duration::from_millis(300));
    let summary = stop_capture(cap);

    assert_eq!(u64_at(&summary, "lost_events"), 0, "events were lost: {summary}");
    assert_eq!(u64_at(&summary, "trace_version"), 2);
    let t = read_trace(&dir.path().join("trace.dmt"), 0);
    assert_eq!(t.total, u64_at(&summary, "requests"));
    assert!(t.offsets_max <= 256 << 20);

    let issued = [
        (("read", 4096), ops(&run1, 0, "read")),
        (("write", 4096), ops(&run1, 0, "write")),
        (("read", 16384), ops(&run2, 0, "read")),
        (("write", 65536), ops(&run2, 1, "write")),
    ];
    let issued_total: u64 = issued.iter().map(|(_, n)| n).sum();
    let got = |k: (&'static str, u32)| t.by.get(&k).copied().unwrap_or(0);
    eprintln!("capture: {} requests captured, the runs issued {issued_total}; by (op, size): {:?}", t.total, t.by);
    eprintln!("capture: summary dropped {} · events {}", summary["dropped"], summary["events"]);
    within(t.total, issued_total, 0.01, "all requests");
    for (k, n) in issued {
        eprintln!("capture: {k:?} issued {n}, captured {}", got(k));
        within(got(k), n, 0.01, &format!("{k:?}"));
    }
    // The mix and the size distribution, as shares.
    let share = |n: u64, of: u64| n as f64 / of as f64;
    let reads_issued = issued[0].1 + issued[2].1;
    let reads_got: u64 = t.by.iter().filter(|((op, _), _)| *op == "read").map(|(_, n)| n).sum();
    let (a, b) = (share(reads_got, t.total), share(reads_issued, issued_total));
    eprintln!("capture: read share captured {a:.4}, issued {b:.4}");
    assert!((a - b).abs() < 0.01, "read share: captured {a}, issued {b}");
    for (k, n) in issued {
        let (a, b) = (share(got(k), t.total), share(n, issued_total));
        assert!((a - b).abs() < 0.01, "share of {k:?}: captured {a}, issued {b}");
    }
}

/// A master boot record with one partition of `sectors` sectors from sector `start`.
fn mbr(start: u32, sectors: u32) -> [u8; 512] {
    let mut m = [0u8; 512];
    let e = &mut m[446..462];
    e[4] = 0x83;
    e[8..12].copy_from_slice(&start.to_le_bytes());
    e[12..16].copy_from_slice(&sectors.to_le_bytes());
    m[510] = 0x55;
    m[511] = 0xAA;
    m
}

/// `BLKPG_ADD_PARTITION`: partition `pno` of `disk` at `start` bytes, `len` bytes long.
fn add_partition(disk: &str, pno: i32, start: i64, len: i64) {
    #[repr(C)]
    struct BlkpgPartition {
        start: i64,
        length: i64,
        pno: i32,
        devname: [u8; 64],
        volname: [u8; 64],
    }
    #[repr(C)]
    struct BlkpgIoctlArg {
        op: i32,
        flags: i32,
        datalen: i32,
        data: *mut BlkpgPartition,
    }
    const BLKPG: libc::c_ulong = 0x1269;
    const BLKPG_ADD_PARTITION: i32 = 1;
    let f = std::fs::File::open(disk).expect("open the disk");
    let mut p = BlkpgPartition { start, length: len, pno, devname: [0; 64], volname: [0; 64] };
    let mut arg = BlkpgIoctlArg {
        op: BLKPG_ADD_PARTITION,
        flags: 0,
        datalen: std::mem::size_of::<BlkpgPartition>() as i32,
        data: &mut p,
    };
    use std::os::fd::AsRawFd;
    // SAFETY: BLKPG with a valid argument that outlives the call.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKPG as _, &mut arg) };
    assert_eq!(r, 0, "BLKPG_ADD_PARTITION on {disk}: {}", std::io::Error::last_os_error());
}

#[test]
fn capture_of_a_partition_keeps_its_requests_with_offsets_from_its_start() {
    require_capture!();
    let _g = serial();
    let dir = tempdir();
    let image = dir.path().join("parted.img");
    std::fs::write(&image, vec![0u8; 64 << 20]).expect("image");
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&image).expect("open image");
        f.write_all_at(&mbr(2048, 65536), 0).expect("write the partition table");
    }
    let out =
        std::process::Command::new("losetup").args(["-P", "--find", "--show"]).arg(&image).output().expect("losetup");
    assert!(out.status.success(), "losetup -P: {}", String::from_utf8_lossy(&out.stderr));
    let l = LoopDev { dev: String::from_utf8_lossy(&out.stdout).trim().into(), mount: None };
    let disk = l.dev_str().to_string();
    let part = format!("{disk}p1");
    // The kernel reads the table where it has the MBR parser; else the partition is added
    // by hand (BLKPG), as addpart does.
    std::thread::sleep(Duration::from_millis(300));
    if !Path::new(&part).exists() {
        add_partition(&disk, 1, 1 << 20, 32 << 20);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !Path::new(&part).exists() {
        assert!(Instant::now() < deadline, "{part} did not appear");
        std::thread::sleep(Duration::from_millis(50));
    }

    let cap = start_capture(dir.path(), &part, "part.dmt", "120s");
    // Reads of the disk before the partition: not the partition's, not captured.
    let before = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        &disk,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--size",
        "1M",
        "--qd",
        "4",
        "--runtime",
        "1s",
        "--no-ceiling-check",
    ]));
    let inside = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        &part,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--runtime",
        "1s",
        "--no-ceiling-check",
    ]));
    std::thread::sleep(Duration::from_millis(300));
    let summary = stop_capture(cap);
    assert_eq!(summary["partition"]["start_bytes"], 1 << 20);
    assert_eq!(summary["partition"]["size_bytes"], 32 << 20);
    assert_eq!(summary["partition"]["disk"], disk.trim_start_matches("/dev/"));
    let t = read_trace(&dir.path().join("part.dmt"), 1 << 20);
    let issued = ops(&inside, 0, "read");
    eprintln!(
        "capture of a partition: {} requests captured, {issued} issued inside it, {} before it (not captured); \
         {} below 1 MiB of the partition",
        t.total,
        ops(&before, 0, "read"),
        t.offsets_below
    );
    within(t.total, issued, 0.01, "requests on the partition");
    assert!(t.offsets_max <= 32 << 20, "an offset beyond the partition: {}", t.offsets_max);
    // Offsets are from the partition's start: its first MiB is read too.
    assert!(t.offsets_below > 0, "no offset in the partition's first MiB: offsets are not rebased");
}

#[test]
fn an_idle_capture_ends_on_time_and_leaves_nothing_behind() {
    require_capture!();
    let _g = serial();
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("idle.img"), 16 << 20);
    let start = Instant::now();
    let o = expect_code(
        dm_in(dir.path()).args(["capture", l.dev_str(), "--duration", "1s", "-o", "idle.dmt", "--json"]),
        0,
    );
    assert!(start.elapsed() < Duration::from_secs(20));
    let doc = json_of(&o);
    assert_eq!((u64_at(&doc, "requests"), doc["interrupted"].as_bool()), (0, Some(false)));
    assert!(f64_at(&doc, "duration_s") >= 1.0);
    assert!(stderr_of(&o).contains("warning: no requests were captured"), "{}", stderr_of(&o));
    let instances = std::fs::read_dir(Path::new(TRACING).join("instances")).expect("instances");
    let ours = format!("diskmeter-{}", std::process::id());
    for e in instances.flatten() {
        assert_ne!(e.file_name().to_string_lossy(), ours);
    }
    // The trace is valid and empty; the human summary says what was kept.
    assert_eq!(read_trace(&dir.path().join("idle.dmt"), 0).total, 0);
    let o = expect_code(dm_in(dir.path()).args(["capture", l.dev_str(), "--duration", "200ms", "-o", "idle.dmt"]), 0);
    let text = stdout_of(&o);
    assert!(text.contains("recorded  ") && text.contains("0 lost"), "{text}");
}

#[test]
fn capture_needs_root() {
    require_loop!();
    let _g = serial();
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("root.img"), 16 << 20);
    // A directory everyone may write in, so only the privilege is missing.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).expect("dir");
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o1777)).expect("chmod");
    let bin = env!("CARGO_BIN_EXE_diskmeter");
    let o = std::process::Command::new(bin)
        .envs(home_env())
        .args(["capture", l.dev_str(), "--duration", "1s", "-o", "t.dmt"])
        .current_dir(&open)
        .uid(65534)
        .gid(65534)
        .output();
    let Ok(o) = o else {
        skip_note("cannot run diskmeter as nobody here; non-root test skipped");
        return;
    };
    if o.status.code() == Some(126) || stderr_of(&o).contains("Permission denied") {
        skip_note("nobody cannot execute the test binary here; non-root test skipped");
        return;
    }
    assert_usage_error(&o, "capture needs root");
    assert!(entries(&open).is_empty(), "something was written: {:?}", entries(&open));
}

#[test]
fn bad_devices_and_options_are_refused_and_nothing_is_written() {
    let dir = tempdir();
    std::fs::write(dir.path().join("plain"), "not a device").expect("file");
    let cases: [(&[&str], &str); 8] = [
        (&["capture", "missing-dev", "--duration", "1s", "-o", "t.dmt"], "missing-dev does not exist"),
        (&["capture", "plain", "--duration", "1s", "-o", "t.dmt"], "plain is not a block device"),
        (&["capture", "/dev/null", "--duration", "1s", "-o", "t.dmt"], "/dev/null is not a block device"),
        (&["capture", "/dev/null", "--duration", "0s", "-o", "t.dmt"], "invalid value for --duration"),
        (&["capture", "/dev/null", "--duration", "8d", "-o", "t.dmt"], "at most 7d"),
        (&["capture", "/dev/null", "--duration", "1s", "--buffer", "1k", "-o", "t.dmt"], "invalid value for --buffer"),
        (&["capture", "/dev/null", "--duration", "1s", "-o", "-"], "a trace is written to a file"),
        (&["capture", "/dev/null", "--duration", "soon", "-o", "t.dmt"], "--duration"),
    ];
    for (args, needle) in cases {
        let o = output(dm_in(dir.path()).args(args));
        assert_usage_error(&o, needle);
    }
    assert_eq!(entries(dir.path()), ["plain"]);
    // An existing file that is not diskmeter's is kept (checked before the device).
    std::fs::write(dir.path().join("mine.dmt"), "my notes").expect("file");
    let o = output(dm_in(dir.path()).args(["capture", "/dev/null", "--duration", "1s", "-o", "mine.dmt"]));
    assert_usage_error(&o, "already exists");
    assert_eq!(std::fs::read_to_string(dir.path().join("mine.dmt")).expect("kept"), "my notes");
}

#[test]
fn a_captured_trace_feeds_replay_cache_simulate_and_profile() {
    require_capture!();
    let _g = serial();
    let dir = tempdir();
    let d = dir.path();
    let src = LoopDev::blank(&d.join("src.img"), 128 << 20);
    let dst = LoopDev::blank(&d.join("dst.img"), 128 << 20);
    let cap = start_capture(d, src.dev_str(), "trace.dmt", "120s");
    let run = run_json(dm_in(d).args([
        "run",
        "--target",
        src.dev_str(),
        "--destroy-data",
        src.dev_str(),
        "--rw",
        "randrw",
        "--bs",
        "4k",
        "--qd",
        "8",
        "--runtime",
        "2s",
        "--ramp",
        "0",
        "--no-ceiling-check",
    ]));
    std::thread::sleep(Duration::from_millis(300));
    let summary = stop_capture(cap);
    let captured = u64_at(&summary, "requests");
    assert!(captured >= ops(&run, 0, "read") + ops(&run, 0, "write"));

    // replay at the capture's own depth onto another device.
    let doc = run_json(dm_in(d).args([
        "replay",
        "trace.dmt",
        "--timing",
        "depth",
        "--target",
        dst.dev_str(),
        "--destroy-data",
        dst.dev_str(),
    ]));
    assert_eq!(doc["replay"]["trace"]["recorded_latency"], true);
    let p = &doc["replay"]["passes"][0];
    assert_eq!(u64_at(p, "requests"), captured);
    let out = u64_at(&p["fidelity"], "max_outstanding");
    eprintln!("replay of the capture: {captured} requests, at most {out} outstanding (the run had QD 8)");
    assert!((1..=9).contains(&out), "the capture's own depth is at most the run's 8 (+ the probe's read): {out}");
    assert!(p["ops"][0]["recorded_ns"].is_object(), "the recorded latency is shown beside: {p}");

    // cache simulate and profile read it too.
    let sim = run_json(dm_in(d).args(["cache", "simulate", "--trace", "trace.dmt", "--cache-size", "16M"]));
    assert_eq!(u64_at(&sim["cache"]["trace"], "requests"), captured);
    let prof = run_json(dm_in(d).args(["profile", "trace.dmt"]));
    assert!(prof["profile"].is_object(), "{prof}");
}
