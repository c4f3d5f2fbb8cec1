//! `doctor` and the benchmarks' cheap checks on real devices (root and loop devices; skipped
//! with a note otherwise, and required under `DISKMETER_REQUIRE_LOOP=1`): a throttled cgroup,
//! a partition at sector 63, the write cache set to write through, a RAM-backed loop device
//! that says it rotates, a concurrent reader, and a throttle's startup burst. The tests run
//! one at a time; every device and setting they change is put back by a guard.

#[macro_use]
mod common;

use common::throttle::Throttle;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A loop device over a new image in RAM (/dev/shm), filled with random data so that reads
/// read something; detached and removed on drop.
struct ShmLoop {
    dev: LoopDev,
    _dir: tempfile::TempDir,
}

impl ShmLoop {
    /// None, with a note naming the `what` test skipped, where /dev/shm cannot be used.
    fn new(size: u64, what: &str) -> Option<ShmLoop> {
        let dir = match tempfile::Builder::new().prefix("diskmeter-doctor-").tempdir_in("/dev/shm") {
            Ok(d) => d,
            Err(e) => {
                skip_note(&format!("no /dev/shm ({e}); {what} test skipped"));
                return None;
            }
        };
        let image = dir.path().join("disk.img");
        let data: Vec<u8> = (0..size).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        std::fs::write(&image, data).expect("write image");
        Some(ShmLoop { dev: LoopDev::blank_existing(&image), _dir: dir })
    }
    fn path(&self) -> &str {
        self.dev.dev_str()
    }
    fn name(&self) -> String {
        self.dev.dev.file_name().expect("name").to_string_lossy().into_owned()
    }
}

trait Existing {
    fn blank_existing(image: &Path) -> LoopDev;
}

impl Existing for LoopDev {
    /// A loop device over an existing image (with partition scanning).
    fn blank_existing(image: &Path) -> LoopDev {
        let out = Std::new("losetup").args(["--find", "--show", "--partscan"]).arg(image).output().expect("losetup");
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        LoopDev { dev: PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()), mount: None }
    }
}

/// A queue setting written for a test and put back on drop.
struct QueueSetting {
    path: PathBuf,
    old: String,
}

impl QueueSetting {
    fn set(dev: &str, attr: &str, value: &str) -> QueueSetting {
        let path = PathBuf::from(format!("/sys/block/{dev}/queue/{attr}"));
        let old = std::fs::read_to_string(&path).expect("read queue setting").trim().to_string();
        std::fs::write(&path, value).unwrap_or_else(|e| panic!("write {value} to {}: {e}", path.display()));
        QueueSetting { path, old }
    }
}

impl Drop for QueueSetting {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, &self.old);
    }
}

/// A cgroup throttling `dev` to `iops`; None, with a note naming the `what` test skipped,
/// where no block-I/O cgroup controller is mounted.
fn throttle(dev: &Path, iops: u32, what: &str) -> Option<Throttle> {
    Throttle::new(dev, iops, None).map_err(|why| skip_note(&format!("{why}; {what} test skipped"))).ok()
}

fn doctor_json(args: &[&str]) -> Value {
    let mut a = vec!["doctor", "--json", "-q"];
    a.extend_from_slice(args);
    let o = output(dm().args(&a));
    assert!(matches!(o.status.code(), Some(0 | 1)), "doctor failed: {}", stderr_of(&o));
    json_of(&o)
}

fn cause_codes(doc: &Value) -> Vec<String> {
    doc["causes"].as_array().expect("causes").iter().map(|c| c["code"].as_str().unwrap_or("").to_string()).collect()
}

fn cause<'a>(doc: &'a Value, code: &str) -> &'a Value {
    doc["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .find(|c| c["code"] == code)
        .unwrap_or_else(|| panic!("no cause {code} in {:?}", cause_codes(doc)))
}

fn check_status(doc: &Value, code: &str) -> String {
    doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["code"] == code)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_throttled_cgroup_is_the_first_cause_and_labels_the_figure_it_caps() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(64 << 20, "cgroup") else { return };
    let Some(t) = throttle(&l.dev.dev, 2000, "cgroup") else { return };
    let o = t.diskmeter(&["doctor", "--json", "-q", l.path()]);
    assert_eq!(o.status.code(), Some(1), "a high cause exits 1: {}", stderr_of(&o));
    let doc = json_of(&o);
    assert_eq!(doc["schema"], "diskmeter.doctor.v1");
    assert_eq!(cause_codes(&doc)[0], "cgroup-limit", "{:?}", cause_codes(&doc));
    let c = cause(&doc, "cgroup-limit");
    assert_eq!(c["severity"], "high");
    assert!(
        c["evidence"][0]["source"].as_str().unwrap_or("").contains("blkio.throttle.read_iops_device")
            || c["evidence"][0]["source"].as_str().unwrap_or("").ends_with("io.max")
    );
    assert_eq!(c["evidence"][0]["value"], "2000");
    assert!(!c["fix"].as_str().unwrap_or("").is_empty());
    assert_eq!(check_status(&doc, "stacking"), "found");
    // Outside the cgroup: no limit.
    let free = doctor_json(&[l.path()]);
    assert!(!cause_codes(&free).contains(&"cgroup-limit".to_string()), "{:?}", cause_codes(&free));

    // A run in the cgroup names the limit and labels the figure that sits on it.
    let o = t.diskmeter(&[
        "run",
        "--target",
        l.path(),
        "--rw",
        "randread",
        "--qd",
        "4",
        "--runtime",
        "4s",
        "--json",
        "--no-ceiling-check",
    ]);
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    // The limit undoes the figures: its warning comes first, and stderr said so before the run.
    assert_eq!(warning_codes(&doc).first().map(String::as_str), Some("cgroup-limit"), "{:?}", warning_codes(&doc));
    assert!(stderr_of(&o).contains("warning[cgroup-limit]"), "{}", stderr_of(&o));
    let w = &doc["warnings"][0];
    assert!(w["message"].as_str().unwrap_or("").contains("2 000 read IOPS"), "{w}");
    let read = &results(&doc)[0]["read"];
    assert!(read["bound"].as_str().unwrap_or("").starts_with("cgroup limit"), "{read}");
}

/// A master boot record with one Linux partition at `start` (sectors) of `sectors` sectors.
fn mbr(start: u32, sectors: u32) -> [u8; 512] {
    let mut b = [0u8; 512];
    let e = 446;
    b[e + 4] = 0x83;
    b[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
    b[e + 12..e + 16].copy_from_slice(&sectors.to_le_bytes());
    b[510] = 0x55;
    b[511] = 0xAA;
    b
}

#[test]
fn a_partition_at_sector_63_is_misaligned() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let image = dir.path().join("parted.img");
    let mut data = vec![0u8; 32 << 20];
    data[..512].copy_from_slice(&mbr(63, 40_000));
    std::fs::write(&image, data).expect("image");
    let l = LoopDev::blank_existing(&image);
    let part = format!("{}p1", l.dev_str());
    for _ in 0..50 {
        if Path::new(&part).exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !Path::new(&part).exists() {
        let _ = Std::new("partx").args(["-a", l.dev_str()]).status();
    }
    assert!(Path::new(&part).exists(), "{part} did not appear");
    let doc = doctor_json(&[&part]);
    assert_eq!(cause_codes(&doc)[0], "misaligned-partition", "{:?}", cause_codes(&doc));
    let c = cause(&doc, "misaligned-partition");
    let ev = c["evidence"].as_array().expect("evidence");
    assert!(ev.iter().any(|e| e["name"] == "start (sectors)" && e["value"] == "63"), "{c}");
    assert!(c["fix"].as_str().unwrap_or("").contains("2048"));
    // The stack shows the partition on its disk.
    let roles: Vec<&str> = doc["stack"].as_array().expect("stack").iter().filter_map(|s| s["role"].as_str()).collect();
    assert!(roles.contains(&"partition") && roles.contains(&"loop"), "{roles:?}");
}

#[test]
fn write_through_is_write_cache_off() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(16 << 20, "write-cache") else { return };
    let before = doctor_json(&[l.path()]);
    assert!(!cause_codes(&before).contains(&"write-cache-off".to_string()));
    assert_eq!(check_status(&before, "write-cache"), "passed");
    let _wc = QueueSetting::set(&l.name(), "write_cache", "write through");
    let doc = doctor_json(&[l.path()]);
    assert_eq!(cause_codes(&doc)[0], "write-cache-off", "{:?}", cause_codes(&doc));
    let c = cause(&doc, "write-cache-off");
    assert_eq!(c["evidence"][0]["value"], "write through");
    assert!(c["evidence"][0]["source"].as_str().unwrap_or("").ends_with("queue/write_cache"));
}

#[test]
fn a_ram_backed_device_that_says_it_rotates_is_faster_than_its_medium() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(64 << 20, "rotational") else { return };
    let run = |qd: &str| {
        run_json(dm().args([
            "run",
            "--target",
            l.path(),
            "--rw",
            "randread",
            "--qd",
            qd,
            "--runtime",
            "1s",
            "--no-ceiling-check",
        ]))
    };
    {
        let _rot = QueueSetting::set(&l.name(), "rotational", "1");
        let doc = run("1");
        assert!(warning_codes(&doc).contains(&"faster-than-medium".to_string()), "{:?}", warning_codes(&doc));
        // QD1 is the latency floor; a deep queue's latency says nothing about the medium.
        assert!(!warning_codes(&run("16")).contains(&"faster-than-medium".to_string()));
    }
    let _flash = QueueSetting::set(&l.name(), "rotational", "0");
    assert!(!warning_codes(&run("1")).contains(&"faster-than-medium".to_string()));
}

#[test]
fn a_concurrent_reader_is_competing_io() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(256 << 20, "competing I/O") else { return };
    let mut dd = Std::new("sh")
        .arg("-c")
        .arg(r#"while :; do dd if="$0" of=/dev/null bs=512 iflag=direct status=none; done"#)
        .arg(l.path())
        .spawn()
        .expect("spawn dd");
    let doc = doctor_json(&["--load", "2s", l.path()]);
    let _ = Std::new("pkill").args(["-P", &dd.id().to_string()]).status();
    let _ = dd.kill();
    let _ = dd.wait();
    let c = cause(&doc, "competing-io");
    assert!(matches!(c["severity"].as_str(), Some("high" | "medium")), "{c}");
    let load = &doc["load"];
    assert!(load["devices"][0]["read_iops"].as_f64().unwrap_or(0.0) > 100.0, "{load}");
    assert!(
        load["processes"].as_array().is_some_and(|p| p.iter().any(|p| p["command"] == "dd")),
        "the reader is named: {load}"
    );
    assert_eq!(check_status(&doc, "competing-io"), "found");
}

/// The back-to-back case: a job in a throttled cgroup started right after another one often
/// gets more than the limit in its first second (+6 to +9 % here, +1.5 to +2.3 % over 4 s: the
/// throttle catching up in sub-bursts a few ms apart). The engine counts the throttle's whole
/// 100 ms bursts from the first start that two regular periods follow, so the headline is the
/// limit's within 1 % in each of three back-to-back runs, the counted span starts after the
/// window opened, and `startup-burst` does not also cut the same window (one rule per window;
/// its own cases are unit tests in doctor::bench).
#[test]
fn a_throttles_first_second_is_left_out_of_the_headline() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(256 << 20, "startup-burst") else { return };
    const LIMIT: f64 = 10_000.0;
    let Some(t) = throttle(&l.dev.dev, LIMIT as u32, "startup-burst") else { return };
    let job = |runtime: &str| -> Value {
        let o = t.diskmeter(&[
            "run",
            "--target",
            l.path(),
            "--rw",
            "randread",
            "--qd",
            "8",
            "--runtime",
            runtime,
            "--no-ceiling-check",
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr_of(&o));
        json_of(&o)
    };
    for _ in 0..3 {
        job("2s");
        let doc = job("4s");
        let r = &results(&doc)[0];
        let iops = f64_at(&r["read"], "iops");
        let first = r["series"][0]["read_iops"].as_f64().unwrap_or_default();
        eprintln!("first second {first:.0} IOPS, headline {iops:.1} IOPS, whole bursts {}", r["whole_bursts"]);
        assert!((iops / LIMIT - 1.0).abs() < 0.01, "headline {iops} IOPS, the limit is {LIMIT}: {doc}");
        let w = &r["whole_bursts"];
        if w.is_null() {
            // A loaded host (CI's other suites beside it) can blur the slices so that no whole
            // bursts are found: the first second must then be left out by the startup-burst rule.
            skip_note("no whole bursts found in this run: the startup-burst rule must have cut it");
            assert!(warning_codes(&doc).contains(&"startup-burst".to_string()), "the first second is left out: {doc}");
            continue;
        }
        assert!((f64_at(w, "period_ms") - 100.0).abs() < 15.0, "the throttle's 100 ms slices: {w}");
        let (a, b) = (f64_at(w, "start_s"), f64_at(w, "end_s"));
        assert!(a > 0.0 && b <= 4.05 && b - a >= 2.0, "the counted span lies in the 4 s window: {w}");
        assert!((f64_at(&r["read"], "seconds") - (b - a)).abs() < 1e-6, "the headline's seconds are the span's: {w}");
        assert!(!warning_codes(&doc).contains(&"startup-burst".to_string()), "one rule per window: {doc}");
        assert!(r.get("startup_burst").is_none(), "{doc}");
    }
}

#[test]
fn doctor_on_a_folder_as_a_new_user_runs_it() {
    // No root needed: the current directory, text output, then JSON with a probe.
    let _s = serial();
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args(["doctor", "-q"]));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr_of(&o));
    let text = stdout_of(&o);
    assert!(text.contains("Causes") || text.contains("No check found a cause"), "{text}");
    assert!(text.contains("Checks"), "{text}");
    let o = output(dm_in(dir.path()).args(["doctor", "--json", "-q", "--probe"]));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr_of(&o));
    let doc = json_of(&o);
    // Found on a device that says it rotates and answers from a cache (this machine's virtio disk).
    assert!(matches!(check_status(&doc, "probe").as_str(), "passed" | "found"), "{}", doc["checks"]);
    assert!(f64_at(&doc["probe"], "qd1_iops") > 0.0 && f64_at(&doc["probe"], "seq_mb_s") > 0.0, "{}", doc["probe"]);
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the probe's test file is removed");
    // A probe that cannot run costs its check, not the diagnosis.
    let o = output(dm_in(dir.path()).args(["doctor", "--json", "-q", "--probe", "/dev/null"]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr_of(&o));
    let nul = json_of(&o);
    assert_eq!(check_status(&nul, "probe"), "not-run");
    assert!(stderr_of(&o).contains("--probe could not run"), "{}", stderr_of(&o));
    // -o writes the page or the JSON; `report` renders a saved diagnosis as the page.
    let out = tempdir();
    let json_path = out.path().join("d.json");
    let html_path = out.path().join("d.html");
    let o = output(dm_in(dir.path()).args(["doctor", "-q", "-o"]).arg(&json_path));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr_of(&o));
    expect_code(dm().arg("report").arg(&json_path), 0);
    let page = std::fs::read_to_string(&html_path).expect("report wrote the page");
    assert!(page.contains("id=\"doctor\"") && page.contains("pcie-link"), "{page}");
    let o = expect_code(dm().arg("report").arg(&json_path).args(["-o", "-"]), 0);
    assert!(stdout_of(&o).contains("Checks"), "{}", stdout_of(&o));
    for c in doc["checks"].as_array().expect("checks") {
        let status = c["status"].as_str().unwrap_or("");
        assert!(matches!(status, "passed" | "found" | "not-run"), "{c}");
        if status == "not-run" {
            assert!(!c["reason"].as_str().unwrap_or("").is_empty(), "a check not run says why: {c}");
        }
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempdir();
    for (args, needle) in [
        (vec!["doctor", "/no/such/path"], "does not exist"),
        (vec!["doctor", "--load", "0s"], "--load"),
        (vec!["doctor", "--load", "soon"], "--load"),
        (vec!["doctor", "-o", "out.pdf"], "--output"),
    ] {
        let o = output(dm_in(dir.path()).args(&args));
        assert_usage_error(&o, needle);
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

/// `--probe` on a device reads only: the device holds the same bytes after it.
#[test]
fn the_probe_of_a_device_writes_nothing() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(64 << 20, "probe") else { return };
    let before = hash_file(&l.dev.dev);
    let doc = doctor_json(&["--probe", l.path()]);
    assert!(f64_at(&doc["probe"], "qd1_iops") > 0.0, "{}", doc["probe"]);
    assert_eq!(doc["probe"]["target"], l.path());
    assert_eq!(hash_file(&l.dev.dev), before, "the probe changed the device");
}

/// The honesty matrix on a device: every measuring command, run in a throttled cgroup on a
/// RAM-backed loop device whose request-size limit is 4 KiB, says `cgroup-limit` (first),
/// `ram-backed` and `split-io` — the checks the matrix (`app::checks::MATRIX`, rendered in
/// docs/METHOD.md) gives every command. `replay` among them: the same device, the same rules.
#[test]
fn every_measuring_command_names_the_cgroup_limit_ram_and_split_requests() {
    require_loop!();
    let _s = serial();
    let Some(l) = ShmLoop::new(64 << 20, "honesty matrix") else { return };
    let Some(t) = throttle(&l.dev.dev, 4000, "honesty matrix") else { return };
    let _limit = QueueSetting::set(&l.name(), "max_sectors_kb", "4");
    let dir = tempdir();
    let trace = dir.path().join("t.bin");
    let o = output(
        dm_in(dir.path())
            .args([
                "cache",
                "synth",
                "--dist",
                "uniform",
                "--blocks",
                "2000",
                "--requests",
                "1500",
                "--iops",
                "1500",
                "--block-size",
                "8k",
                "-o",
            ])
            .arg(&trace),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let dev = l.path();
    let other = dir.path().join("b.test");
    let other = other.to_str().expect("utf-8");
    let trace = trace.to_str().expect("utf-8");
    let sla_fast = ["--latency", "10ms", "--max-qd", "2", "--max-threads", "1", "--ramp", "0s"];
    let sla_fast = [&sla_fast[..], &["--min-windows", "2", "--max-windows", "2", "--size", "16M"]].concat();
    let runs: Vec<(&str, Vec<&str>)> = vec![
        (
            "run",
            vec!["run", "--target", dev, "--rw", "randread", "--bs", "8k", "--runtime", "1s", "--no-ceiling-check"],
        ),
        ("mark", vec!["mark", dev, "--quick", "--size", "16M", "--time", "200ms", "--no-warmup", "--no-ceiling-check"]),
        (
            "compare",
            vec![
                "compare",
                "--rw",
                "randread",
                "--bs",
                "8k",
                "--passes",
                "2",
                "--time",
                "200ms",
                "--no-warmup",
                "--size",
                "8M",
            ],
        ),
        ("sla", [&["sla", dev, "--bs", "8k"][..], &sla_fast].concat()),
        (
            "steady",
            vec![
                "steady",
                dev,
                "--size",
                "16M",
                "--matrix",
                "quick",
                "--round-time",
                "1s",
                "--max-rounds",
                "5",
                "--precondition-passes",
                "1",
            ],
        ),
        ("run --sustained", vec!["run", "--sustained", "--target", dev, "--size", "16M"]),
        ("replay", vec!["replay", "--qd", "4", "--target", dev, trace]),
    ];
    for (what, mut args) in runs {
        if what == "compare" {
            args.extend([other, dev]);
        }
        args.extend(["--json", "--destroy-data", dev]);
        let o = t.diskmeter(&args);
        assert!(o.status.success(), "{what}: {}", stderr_of(&o));
        let doc = json_of(&o);
        let codes = warning_codes(&doc);
        eprintln!("{what}: {codes:?}");
        assert_eq!(codes.first().map(String::as_str), Some("cgroup-limit"), "{what}: {codes:?}");
        for code in ["ram-backed", "split-io"] {
            assert!(codes.iter().any(|c| c == code), "{what}: no {code} in {codes:?}");
        }
        assert!(stderr_of(&o).contains("warning[cgroup-limit]"), "{what}: said before the run: {}", stderr_of(&o));
    }
}
