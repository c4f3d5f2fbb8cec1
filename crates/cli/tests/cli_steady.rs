//! `steady` (SNIA PTS) and `--sustained` (the write cliff) as a user runs them: on files, and
//! on loop devices whose speed changes during the run — a blk-throttle cgroup switched from
//! fast to slow limits after a number of bytes, the stand-in for an SSD's SLC cache. Loop
//! tests need root (skipped with a note otherwise; required in CI) and run one at a time.

#[macro_use]
mod common;

use common::throttle::{written_bytes, SlcCache, Throttle};
use common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

const MIB: u64 = 1 << 20;

/// A loop device over an image in RAM (/dev/shm), so that only its throttle limits it.
/// Fields drop in order: the cgroup, the device, the image.
struct Rig {
    t: Arc<Throttle>,
    l: LoopDev,
    _shm: tempfile::TempDir,
}

impl Rig {
    /// `None`, with a note naming `what` was skipped, where /dev/shm or the cgroup is missing.
    fn new(size: u64, iops: u32, bps: Option<u64>, what: &str) -> Option<Rig> {
        let Ok(shm) = tempfile::Builder::new().prefix("diskmeter-steady-").tempdir_in("/dev/shm") else {
            skip_note(&format!("no /dev/shm; {what} skipped"));
            return None;
        };
        let l = LoopDev::blank(&shm.path().join("dev.img"), size);
        match Throttle::new(&l.dev, iops, bps) {
            Ok(t) => Some(Rig { t: Arc::new(t), l, _shm: shm }),
            Err(why) => {
                skip_note(&format!("{why}; {what} skipped"));
                None
            }
        }
    }

    fn dev(&self) -> &str {
        self.l.dev_str()
    }

    fn name(&self) -> String {
        self.l.dev.file_name().expect("name").to_string_lossy().into_owned()
    }
}

/// The warning codes of a 1 s `run --rw RW` on `pts.img` in `dir`, with `state` as the device
/// state directory.
fn run_codes(dir: &Path, state: &Path, rw: &str) -> Vec<String> {
    let o = output(dm_in(dir).env("DISKMETER_STATE_DIR", state).args([
        "run",
        "--target",
        "pts.img",
        "--rw",
        rw,
        "--runtime",
        "1s",
        "--json",
    ]));
    assert!(o.status.success(), "{}", stderr_of(&o));
    warning_codes(&json_of(&o))
}

fn steady_of(doc: &Value) -> &Value {
    &doc["steady"]
}

#[test]
fn steady_on_a_file_purges_preconditions_and_reports_rounds() {
    let dir = tempdir();
    let state = dir.path().join("state");
    let o = output(
        dm_in(dir.path())
            .env("DISKMETER_STATE_DIR", &state)
            .args(["steady", "pts.img", "--size", "16M", "--matrix", "quick", "--round-time", "1s"])
            .args(["--max-rounds", "5", "--precondition-passes", "1", "--json", "--keep"]),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    let s = steady_of(&doc);
    assert_eq!(doc["command"], "steady");
    assert_eq!(s["purge"]["method"], "punch-hole");
    assert_eq!(s["purge"]["done"], true);
    assert_eq!(s["precondition"]["passes_done"], 1);
    assert_eq!(s["precondition"]["complete"], true);
    assert_eq!(u64_at(&s["precondition"], "bytes"), 16 * MIB);
    let names: Vec<&str> =
        s["points"].as_array().expect("present").iter().map(|p| p["name"].as_str().expect("present")).collect();
    assert_eq!(names, ["64K 65/35", "4K 65/35", "4K 0/100"]);
    let rounds = s["rounds"].as_array().expect("present");
    assert_eq!(rounds.len(), 5, "five rounds of at most five");
    for r in rounds {
        for p in r["points"].as_array().expect("present") {
            assert!(f64_at(p, "iops") > 0.0 && f64_at(p, "lat_p99_ns") >= f64_at(p, "lat_mean_ns") * 0.5, "{p}");
        }
    }
    let tracking: Vec<&str> =
        s["tracking"].as_array().expect("present").iter().map(|t| t["name"].as_str().expect("present")).collect();
    assert_eq!(tracking, ["4K 0/100 IOPS", "64K 65/35 IOPS"]);
    let w = &s["window"];
    assert_eq!((w["first_round"].as_u64(), w["last_round"].as_u64()), (Some(1), Some(5)));
    for c in w["checks"].as_array().expect("present") {
        let ok = c["range_ok"].as_bool().expect("present") && c["slope_ok"].as_bool().expect("present");
        assert_eq!(
            ok,
            f64_at(c, "range") <= f64_at(c, "range_limit") && f64_at(c, "excursion") <= f64_at(c, "excursion_limit")
        );
    }
    assert_eq!(s["steady"], w["steady"]);
    if s["steady"] == false {
        assert!(warning_codes(&doc).contains(&"not-steady".to_string()));
    }
    assert_eq!(s["table"]["mixes"], serde_json::json!(["65/35", "0/100"]));
    // The state remembers the purge and the one complete write since.
    let st: Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("devices.json")).expect("present")).expect("present");
    let rec = st.as_object().expect("present").values().next().expect("present");
    assert_eq!(rec["purge_method"], "punch-hole");
    assert_eq!(rec["full_writes"], 1);
    // One pass is not PTS preconditioning: a run that writes says so.
    let codes = run_codes(dir.path(), &state, "randwrite");
    assert!(codes.contains(&"not-preconditioned".to_string()), "{codes:?}");
    // Reads only: no such warning.
    assert!(!run_codes(dir.path(), &state, "randread").contains(&"not-preconditioned".to_string()));
}

#[test]
fn steady_with_full_preconditioning_leaves_no_warning_behind() {
    let dir = tempdir();
    let state = dir.path().join("state");
    let o = output(
        dm_in(dir.path())
            .env("DISKMETER_STATE_DIR", &state)
            .args(["steady", "pts.img", "--size", "8M", "--matrix", "quick", "--round-time", "1s", "--latency"])
            .args(["--max-rounds", "5", "--profile", "client", "--json", "--keep", "--html", "steady.html"]),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    let s = steady_of(&doc);
    assert_eq!(
        (s["qd"].as_u64(), s["threads"].as_u64(), s["active_range_pct"].as_u64()),
        (Some(16), Some(2), Some(75))
    );
    assert_eq!(u64_at(s, "active_bytes"), 6 * MIB);
    let tracking: Vec<&str> =
        s["tracking"].as_array().expect("present").iter().map(|t| t["name"].as_str().expect("present")).collect();
    assert_eq!(tracking, ["4K 0/100 IOPS", "64K 65/35 IOPS", "4K 0/100 p99", "64K 65/35 p99"]);
    let html = std::fs::read_to_string(dir.path().join("steady.html")).expect("present");
    assert!(html.contains("<svg"), "the HTML report draws the steady-state chart");
    assert!(!run_codes(dir.path(), &state, "randwrite").contains(&"not-preconditioned".to_string()));
}

#[test]
fn run_sustained_on_a_file_charts_the_write() {
    let dir = tempdir();
    let o =
        output(dm_in(dir.path()).args(["run", "--sustained", "--size", "64M", "--bs", "256k", "--qd", "8", "--json"]));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    let s = &doc["sustained"];
    assert_eq!(u64_at(s, "bytes_written"), 64 * MIB);
    assert_eq!((u64_at(s, "bs"), u64_at(s, "qd")), (256 << 10, 8));
    let series = s["series"].as_array().expect("present");
    assert!(!series.is_empty());
    assert_eq!(u64_at(series.last().expect("present"), "bytes"), 64 * MIB);
    assert_eq!(result_names(&doc), ["sustained write 256K Q8"]);
    assert!(s["verdict"].as_str().expect("present").contains("no write cliff"), "{}", s["verdict"]);
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the test file is removed");
}

#[test]
fn bad_steady_and_sustained_input_is_one_line_and_exit_2() {
    let dir = tempdir();
    for (args, needle) in [
        (vec!["steady", "x.img", "--matrix", "full"], "--matrix"),
        (vec!["steady", "x.img", "--profile", "laptop"], "--profile"),
        (vec!["steady", "x.img", "--round-time", "0s"], "--round-time"),
        (vec!["steady", "x.img", "--max-rounds", "30"], "--max-rounds"),
        (vec!["run", "--sustained", "--rw", "randread"], "--rw"),
        (vec!["run", "--sustained", "--runtime", "5s"], "--runtime"),
        (vec!["run", "--recovery", "30s"], "--sustained"),
        (vec!["mark", "--recovery", "30s"], "--sustained"),
        (vec!["mark", "--sustained", "--recovery", "0s"], "--recovery"),
    ] {
        let o = expect_code(dm_in(dir.path()).args(&args), 2);
        assert_usage_error(&o, needle);
        assert_eq!(entries(dir.path()), Vec::<String>::new(), "{args:?} left a file behind");
    }
}

/// `--sustained` on a device with an SLC-like cache: 400 MiB fast (200 MB/s), then 50 MB/s;
/// after one idle second the cache is empty again. The cliff must be found within 5 % of the
/// byte offset where the throttle changed (the device's own write counter), the re-test after
/// 2 s idle must find the cache back, and a later `mark` on a smaller area must say its test
/// area fits in the cache.
#[test]
fn sustained_finds_the_cliff_of_a_throttled_device() {
    require_loop!();
    let _s = serial();
    let Some(rig) = Rig::new(800 * MIB, 1_000_000, Some(200_000_000), "sustained cliff test") else { return };
    let state = tempdir();
    let (t, dev, name) = (&rig.t, rig.dev(), rig.name());
    let cache = 400 * MIB;
    let armed = written_bytes(&name);
    let slc = SlcCache::start(
        Arc::clone(t),
        &name,
        (1_000_000, Some(200_000_000)),
        (1_000_000, Some(50_000_000)),
        armed,
        cache,
        Some(Duration::from_secs(1)),
    );
    let started = Instant::now();
    let o = t
        .command(&["mark", dev, "--destroy-data", dev, "--sustained", "--size", "640M", "--recovery", "2s"])
        .args(["--quick", "--no-ceiling-check", "--json"])
        .env("DISKMETER_STATE_DIR", state.path())
        .output()
        .expect("run");
    let switches = slc.finish();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    let s = &doc["sustained"];
    let cliff = &s["cliff"];
    assert!(cliff.is_object(), "no cliff found: {}", s["verdict"]);
    // The first switch to slow is the cliff; its offset in this run's writes.
    let (fast, at) = switches.first().copied().expect("the throttle switched");
    assert!(!fast);
    let truth = (at - armed) as f64;
    let found = f64_at(cliff, "offset_bytes");
    eprintln!(
        "cliff: found at {:.1} MiB, throttle switched at {:.1} MiB ({:+.2} %); {:.0} -> {:.0} MB/s; {:.1} s in all",
        found / MIB as f64,
        truth / MIB as f64,
        (found / truth - 1.0) * 100.0,
        f64_at(cliff, "mb_s_before"),
        f64_at(cliff, "mb_s_after"),
        started.elapsed().as_secs_f64()
    );
    assert!((found / truth - 1.0).abs() <= 0.05, "cliff at {found} bytes, the throttle changed at {truth}");
    assert!(f64_at(cliff, "mb_s_after") < 0.5 * f64_at(cliff, "mb_s_before"));
    let rec = &s["recovery"].as_array().expect("recovery")[0];
    eprintln!("recovery after 2 s idle: {} % of the cache back, {:.0} MB/s", rec["recovered_pct"], f64_at(rec, "mb_s"));
    assert!(f64_at(rec, "recovered_pct") >= 90.0, "{rec}");
    assert_eq!(s["recovered_after_s"], 2.0);
    // The card ran after the sustained write.
    assert_eq!(result_names(&doc), vec!["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]);
    // A later mark on 256 MiB of this device: its area fits in the cache found above.
    let o = t
        .command(&["mark", dev, "--destroy-data", dev, "--size", "256M", "--quick", "--no-ceiling-check", "--json"])
        .env("DISKMETER_STATE_DIR", state.path())
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", stderr_of(&o));
    let later = json_of(&o);
    assert!(warning_codes(&later).contains(&"inside-write-cache".to_string()), "{:?}", warning_codes(&later));
}

/// `steady` on a device that is fast for the preconditioning and two to three rounds, then
/// slow: steady state is reached only after the change, and the rounds before it are outside
/// the window.
#[test]
fn steady_reaches_steady_state_only_after_the_change() {
    require_loop!();
    let _s = serial();
    let Some(rig) = Rig::new(64 * MIB, 4000, None, "steady throttle test") else { return };
    let state = tempdir();
    let (t, dev, name) = (&rig.t, rig.dev(), rig.name());
    // Preconditioning writes 128 MiB; a round then writes about 170 MB (64K 65/35 the most).
    let armed = written_bytes(&name);
    let slc = SlcCache::start(Arc::clone(t), &name, (4000, None), (1000, None), armed, 128 * MIB + 400_000_000, None);
    let started = Instant::now();
    let o = t
        .command(&["steady", dev, "--destroy-data", dev, "--matrix", "quick", "--round-time", "1s"])
        .args(["--max-rounds", "14", "--json", "--no-ceiling-check"])
        .env("DISKMETER_STATE_DIR", state.path())
        .output()
        .expect("run");
    let took = started.elapsed();
    let switches = slc.finish();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(switches.len(), 1, "the throttle changed once: {switches:?}");
    let doc = json_of(&o);
    let s = steady_of(&doc);
    let iops: Vec<f64> =
        s["tracking"][0]["values"].as_array().expect("present").iter().map(|v| v.as_f64().expect("present")).collect();
    eprintln!("4K 0/100 IOPS per round: {iops:.0?}");
    eprintln!("verdict: {} ({:.1} s)", s["verdict"], took.as_secs_f64());
    for c in s["window"]["checks"].as_array().expect("present") {
        eprintln!(
            "  {}: mean {:.0}, range {:.0} (limit {:.0}), excursion {:.0} (limit {:.0})",
            c["name"].as_str().expect("present"),
            f64_at(c, "mean"),
            f64_at(c, "range"),
            f64_at(c, "range_limit"),
            f64_at(c, "excursion"),
            f64_at(c, "excursion_limit")
        );
    }
    assert_eq!(s["purge"]["method"], "discard", "{}", s["purge"]["message"]);
    assert_eq!(s["steady"], true, "{}", s["verdict"]);
    let w = &s["window"];
    let (first, last) =
        (w["first_round"].as_u64().expect("present") as usize, w["last_round"].as_u64().expect("present") as usize);
    assert_eq!(last, iops.len(), "the run stops at the first steady window");
    let fast_rounds: Vec<usize> = (0..iops.len()).filter(|&i| iops[i] > 3000.0).collect();
    assert!(!fast_rounds.is_empty(), "some rounds ran before the change: {iops:?}");
    let last_fast = *fast_rounds.last().expect("present") + 1;
    assert!(first > last_fast, "window {first}-{last} includes round {last_fast}, before the change");
    for (i, v) in iops.iter().enumerate().take(last).skip(first - 1) {
        assert!((v / 1000.0 - 1.0).abs() < 0.1, "round {}: {v} IOPS, the slow limit is 1000", i + 1);
    }
}

/// Ctrl-C while preconditioning: the results so far, marked partial, exit 130.
#[test]
fn ctrl_c_during_preconditioning_keeps_the_results_so_far() {
    require_loop!();
    let _s = serial();
    let Some(rig) = Rig::new(256 * MIB, 1_000_000, Some(20_000_000), "steady interrupt test") else { return };
    let state = tempdir();
    let (t, dev) = (&rig.t, rig.dev());
    let child = t
        .command(&["steady", dev, "--destroy-data", dev, "--matrix", "quick", "--json"])
        .env("DISKMETER_STATE_DIR", state.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: the child's pid; a signal only.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    let doc = json_of(&o);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "interrupted");
    let p = &doc["steady"]["precondition"];
    assert_eq!(p["complete"], false);
    assert!(u64_at(p, "bytes") > 0 && !p["series"].as_array().expect("present").is_empty(), "{p}");
    assert_eq!(doc["steady"]["rounds"].as_array().expect("present").len(), 0);
    // The device was purged and not fully written since: a write test now says so.
    let o = output(dm().env("DISKMETER_STATE_DIR", state.path()).args([
        "run",
        "--target",
        dev,
        "--destroy-data",
        dev,
        "--rw",
        "randwrite",
        "--runtime",
        "1s",
        "--json",
    ]));
    assert!(warning_codes(&json_of(&o)).contains(&"not-preconditioned".to_string()));
}

/// `steady`, `run --sustained` and `mark --sustained` write: refused on a device without
/// --destroy-data naming it, and on a mounted one even with it; the data stays.
#[test]
fn steady_and_sustained_obey_the_guard() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let image = dir.path().join("g.img");
    let l = LoopDev::blank(&image, 32 * MIB);
    let dev = l.dev_str();
    std::fs::write(dir.path().join("marker"), b"x").expect("present");
    // Something to keep: random bytes at the start.
    let data: Vec<u8> = (0..MIB as usize).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&l.dev, &data).expect("write device");
    let before = hash_file(&image);
    for args in [
        vec!["steady", dev, "--matrix", "quick"],
        vec!["steady", dev, "--matrix", "quick", "--destroy-data", "/dev/loop-other"],
        vec!["run", "--target", dev, "--sustained"],
        vec!["mark", dev, "--sustained", "--quick"],
    ] {
        let o = expect_code(dm().args(&args), 2);
        assert!(stderr_of(&o).contains("--destroy-data"), "{args:?}: {}", stderr_of(&o));
    }
    assert_eq!(hash_file(&image), before, "the device was written");
    // Mounted: refused even with --destroy-data.
    let mut m = LoopDev::blank(&dir.path().join("fs.img"), 32 * MIB);
    if m.ext4(&dir.path().join("mnt"), "rw").is_none() {
        skip_note("mkfs.ext4 missing; the mounted-device half of the guard test skipped");
        return;
    }
    let mdev = m.dev_str().to_string();
    for args in [
        vec!["steady", mdev.as_str(), "--destroy-data", mdev.as_str(), "--matrix", "quick"],
        vec!["run", "--target", mdev.as_str(), "--destroy-data", mdev.as_str(), "--sustained"],
    ] {
        let o = expect_code(dm().args(&args), 2);
        assert!(stderr_of(&o).contains("mounted"), "{args:?}: {}", stderr_of(&o));
    }
}

/// A blank device filled by `mark` for the first time: its write figures may be
/// fresh-out-of-box figures, and the result says so.
#[test]
fn a_blank_device_filled_by_mark_is_not_preconditioned() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let state = dir.path().join("state");
    let l = LoopDev::blank(&dir.path().join("b.img"), 64 * MIB);
    let dev = l.dev_str();
    let o = output(dm().env("DISKMETER_STATE_DIR", &state).args([
        "mark",
        dev,
        "--destroy-data",
        dev,
        "--quick",
        "--no-ceiling-check",
        "--json",
    ]));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(warning_codes(&json_of(&o)).contains(&"not-preconditioned".to_string()));
    // Written now: the next mark does not find it blank.
    let o = output(dm().env("DISKMETER_STATE_DIR", &state).args([
        "mark",
        dev,
        "--destroy-data",
        dev,
        "--quick",
        "--no-ceiling-check",
        "--json",
    ]));
    assert!(!warning_codes(&json_of(&o)).contains(&"not-preconditioned".to_string()));
}

// --- one identity for a device ------------------------------------------------------------

/// The cause codes of `doctor TARGET --json` run by `cmd`.
fn doctor_codes(cmd: &mut assert_cmd::Command, target: &str) -> Vec<String> {
    let o = output(cmd.args(["doctor", target, "--json"]));
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr_of(&o));
    json_of(&o)["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| c["code"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The state file's records (`devices.json` in `state`).
fn state_records(state: &Path) -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(state.join("devices.json")).unwrap_or_else(|_| "{}".into());
    serde_json::from_str::<Value>(&text).expect("devices.json is JSON").as_object().cloned().unwrap_or_default()
}

/// A user's scenario: `--sustained` finds the write cliff of a loop device; the device is
/// detached and a new loop device over another file gets its number. The new device is another
/// device to everything that remembers one: `doctor` shows no write cliff, `mark`'s history line
/// says there is no earlier run of it; the old device's records stay as they were.
#[test]
fn a_new_loop_device_with_an_old_number_is_not_the_old_device() {
    require_loop!();
    let _s = serial();
    let Some(rig) = Rig::new(224 * MIB, 1_000_000, Some(100_000_000), "device identity test") else { return };
    let home = tempdir();
    let (state, db) = (home.path().join("state"), home.path().join("history.db"));
    let (t, dev, name) = (&rig.t, rig.dev().to_string(), rig.name());
    // 128 MiB at 100 MB/s, then 20 MB/s: a cliff a `--sustained` run finds.
    let armed = written_bytes(&name);
    let slc = SlcCache::start(
        Arc::clone(t),
        &name,
        (1_000_000, Some(100_000_000)),
        (1_000_000, Some(20_000_000)),
        armed,
        128 * MIB,
        None,
    );
    let o = t
        .command(&["run", "--target", &dev, "--destroy-data", &dev, "--sustained", "--size", "224M", "--bs", "256k"])
        .args(["--qd", "8", "--no-ceiling-check", "--json", "--no-history"])
        .env("DISKMETER_STATE_DIR", &state)
        .output()
        .expect("run");
    slc.finish();
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    assert!(doc["sustained"]["cliff"].is_object(), "no cliff found: {}", doc["sustained"]["verdict"]);
    let old_key = doc["target"]["device_key"].as_str().expect("the device's identity").to_string();
    assert!(old_key.starts_with("loop:"), "a loop device is known by its backing file: {old_key}");
    let before = state_records(&state);
    let rec = before.get(&format!("device {old_key}")).expect("the cliff is kept under the device's identity");
    assert!(rec["cliff_bytes"].as_u64().is_some(), "{rec}");
    // The old device: doctor sees its cliff; a mark on it is kept in the history.
    assert!(doctor_codes(dm().env("DISKMETER_STATE_DIR", &state), &dev).contains(&"write-cliff".to_string()));
    let mark = ["mark", &dev, "--destroy-data", &dev, "--quick", "--profile", "real", "--size", "16M"];
    let o = output(
        dm().args(mark).args(["--no-ceiling-check", "--json", "--history"]).arg(&db).env("DISKMETER_STATE_DIR", &state),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(json_of(&o)["history"]["id"], 1);

    // Detached; a new loop device over another file takes the same number.
    drop(rig);
    let shm = tempfile::Builder::new().prefix("diskmeter-identity-").tempdir_in("/dev/shm").expect("/dev/shm");
    let new = LoopDev::blank_at(Path::new(&dev), &shm.path().join("other.img"), 64 * MIB);
    assert_eq!(new.dev_str(), dev);

    let codes = doctor_codes(dm().env("DISKMETER_STATE_DIR", &state), &dev);
    assert!(!codes.contains(&"write-cliff".to_string()), "the old device's cliff on a new device: {codes:?}");
    let o =
        output(dm().args(mark).args(["--no-ceiling-check", "--history"]).arg(&db).env("DISKMETER_STATE_DIR", &state));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let text = stdout_of(&o);
    assert!(
        text.contains("kept as run 2; no earlier run of this device with the same workload"),
        "the new device compared with the old: {text}"
    );
    // The old device's records are intact.
    assert_eq!(state_records(&state).get(&format!("device {old_key}")), before.get(&format!("device {old_key}")));
    let rows = json_of(&output(dm().args(["history", "list", "--json", "--history"]).arg(&db)));
    let keys: Vec<&str> = rows.as_array().expect("rows").iter().filter_map(|r| r["device_key"].as_str()).collect();
    assert_eq!(keys.len(), 2);
    assert_eq!(keys[1], old_key, "the old run keeps its device");
    assert_ne!(keys[0], old_key, "the new run has its own");
}

/// The tests never read or write the user's own state: a user home that holds a write cliff
/// and a history run of this very device is seen by diskmeter run with that home, and by
/// neither `doctor` nor `mark` run as every test runs them (`common::dm`, a home of its own).
#[test]
fn the_tests_live_in_a_home_of_their_own() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("home-test.img"), 32 * MIB);
    let dev = l.dev_str().to_string();
    let user = tempdir();
    // diskmeter as the user runs it: HOME only, no test settings.
    let as_user = || {
        let mut c = assert_cmd::Command::cargo_bin("diskmeter").expect("binary");
        for k in ["XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "DISKMETER_STATE_DIR"] {
            c.env_remove(k);
        }
        c.env_remove("DISKMETER_HISTORY").env("HOME", user.path()).env("NO_COLOR", "1");
        c
    };
    let key = run_json(dm().args(["run", "--target", &dev, "--rw", "randread", "--runtime", "200ms"]))["target"]
        ["device_key"]
        .as_str()
        .expect("identity")
        .to_string();
    // The user's own records of this device: a write cliff, and a mark in the history.
    let state = user.path().join(".local/state/diskmeter");
    std::fs::create_dir_all(&state).expect("test file");
    let cliff =
        serde_json::json!({ format!("device {key}"): {"path": dev, "cliff_bytes": 300_000_000u64, "cliff_at": 1.0} });
    std::fs::write(state.join("devices.json"), cliff.to_string()).expect("test file");
    let mark =
        ["mark", &dev, "--destroy-data", &dev, "--quick", "--profile", "real", "--size", "16M", "--no-ceiling-check"];
    let o = output(as_user().args(mark));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let db = user.path().join(".local/share/diskmeter/history.db");
    assert!(db.is_file(), "the user's history keeps the mark");
    // Seen with the user's home ...
    assert!(doctor_codes(&mut as_user(), &dev).contains(&"write-cliff".to_string()), "the planted cliff is real");
    let o = output(as_user().args(mark));
    assert!(stdout_of(&o).contains("kept as run 2; vs run 1"), "{}", stdout_of(&o));
    let db_bytes = std::fs::read(&db).expect("test file");
    let state_bytes = std::fs::read(state.join("devices.json")).expect("test file");
    // ... and by no test.
    assert!(!doctor_codes(&mut dm(), &dev).contains(&"write-cliff".to_string()), "a test read the user's state");
    let o = output(dm().env_remove("DISKMETER_HISTORY").args(mark));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let text = stdout_of(&o);
    assert!(!text.contains("vs run"), "a test compared with the user's history: {text}");
    assert!(text.contains("no earlier run of this device"), "{text}");
    assert_eq!(std::fs::read(&db).expect("test file"), db_bytes, "the user's history is untouched");
    assert_eq!(
        std::fs::read(state.join("devices.json")).expect("test file"),
        state_bytes,
        "the user's state is untouched"
    );
}

/// zram has no backing file and no serial: a new device that takes an old one's number is told
/// apart by its creation time (and its size).
#[test]
fn a_new_zram_device_with_an_old_number_is_another_device() {
    if let Some(why) = common::zram::Zram::unavailable() {
        skip_note(&format!("{why}; the zram identity test skipped"));
        return;
    }
    let _s = serial();
    let key_of = |dev: &str| {
        run_json(dm().args(["run", "--target", dev, "--rw", "randread", "--runtime", "200ms", "--no-ceiling-check"]))
            ["target"]["device_key"]
            .as_str()
            .expect("identity")
            .to_string()
    };
    let z = common::zram::Zram::filled(16);
    let (id, first) = (z.id, key_of(z.dev_str()));
    assert!(first.starts_with("zram:") && first.contains(&format!("/zram{id}/{}/", 16 * MIB)), "{first}");
    assert_eq!(key_of(z.dev_str()), first, "the same device keeps its identity");
    drop(z);
    // The node's change time is in seconds: the next device is made in another second.
    std::thread::sleep(Duration::from_millis(1100));
    let z = common::zram::Zram::filled(16);
    if z.id != id {
        skip_note(&format!("zram{id} was not reused (got zram{}); the number-reuse check skipped", z.id));
        return;
    }
    let second = key_of(z.dev_str());
    assert_ne!(second, first, "a new zram{id} of the same size is another device");
}
