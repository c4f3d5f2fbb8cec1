//! `diskmeter health`: options, exit codes, output files, the state file, self-tests,
//! all against a fake smartctl (a script printing the health crate's fixtures), plus
//! this machine's own virtual disks with and without the real smartctl.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../health/tests/data").join(name);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// A fake smartctl in `dir`: `--version` prints `version`; `-t`/`-X` print the
/// self-test answer; `-a` prints the answers in order (the last one repeating).
fn fake_smartctl(dir: &Path, version: &str, answers: &[(&str, i32)]) -> PathBuf {
    fs::write(dir.join("version.out"), version).unwrap();
    for (i, (json, rc)) in answers.iter().enumerate() {
        fs::write(dir.join(format!("a.{}.json", i + 1)), json).unwrap();
        fs::write(dir.join(format!("a.{}.rc", i + 1)), rc.to_string()).unwrap();
    }
    fs::write(dir.join("selftest.json"), r#"{"smartctl":{"version":[7,3],"exit_status":0}}"#).unwrap();
    let script = format!(
        r#"#!/bin/sh
d='{}'
echo "$*" >> "$d/calls"
case " $* " in
  *" --version "*) cat "$d/version.out"; exit 0;;
  *" -t "*|*" -X "*) cat "$d/selftest.json"; exit 0;;
esac
n=$(cat "$d/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$d/count"
while [ ! -f "$d/a.$n.json" ] && [ $n -gt 1 ]; do n=$((n-1)); done
cat "$d/a.$n.json"; exit $(cat "$d/a.$n.rc")
"#,
        dir.display()
    );
    let p = dir.join("smartctl");
    fs::write(&p, script).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

const V73: &str = r#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"exit_status":0}}"#;

/// A block device node on this machine to point the fake smartctl at (with
/// `--device-type`, even a virtual disk is handed to smartctl).
fn some_disk() -> Option<String> {
    let mut names: Vec<String> = fs::read_dir("/sys/block")
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| Path::new("/dev").join(n).exists())
        .collect();
    names.sort_by_key(|n| (n.starts_with("loop") || n.starts_with("zram") || n.starts_with("ram"), n.clone()));
    names.first().map(|n| format!("/dev/{n}"))
}

macro_rules! need_disk {
    () => {
        match some_disk() {
            Some(d) => d,
            None => {
                eprintln!("skipped: no block device node under /dev for the fake smartctl");
                return;
            }
        }
    };
}

fn health(dir: &Path, smartctl: &Path) -> assert_cmd::Command {
    let mut c = dm_in(dir);
    c.arg("health").env("DISKMETER_SMARTCTL", smartctl).env("XDG_STATE_HOME", dir.join("state")).env("HOME", dir);
    c
}

fn path_filters(dev: &str) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(&regex_escape(dev), "[DEV]");
    s
}

fn regex_escape(s: &str) -> String {
    s.chars().flat_map(|c| if c.is_ascii_alphanumeric() { vec![c] } else { vec!['\\', c] }).collect()
}

#[test]
fn help() {
    let o = expect_code(dm().args(["health", "--help"]), 0);
    insta::assert_snapshot!("health_help", stdout_of(&o));
}

#[test]
fn sata_ssd_with_tbw_json() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("sata-ssd.json"), 0)]);
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--tbw", "600TB", "--json"]), 0);
    let v = json_of(&o);
    assert_eq!(v["schema"], "diskmeter.health.v1");
    let d = &v["disks"][0];
    assert_eq!(d["verdict"], "healthy");
    assert_eq!(d["kind"], "SATA SSD");
    assert_eq!(d["smart"]["written"]["bytes"], 64_777_770_148u64 * 512);
    assert_eq!(d["smart"]["wear"]["used_percent"], 19.0);
    let arith = d["endurance"]["arithmetic"].as_str().expect("arithmetic");
    assert!(arith.starts_with("600 TB rated − 33.2 TB written = 566.8 TB left at "), "{arith}");
    assert!(d.get("smartctl").is_none(), "raw smartctl JSON only with --raw");
    assert_eq!(v["smartctl_tool"]["version"], "7.3");
    let calls = fs::read_to_string(t.path().join("calls")).unwrap();
    assert!(calls.contains(&format!("-j -a -d sat {dev}")), "{calls}");
    // The state file was written, atomically (no temporary left), with our schema.
    let st = t.path().join("state/diskmeter/health.json");
    let sv: Value = serde_json::from_str(&fs::read_to_string(&st).unwrap()).unwrap();
    assert_eq!(sv["schema"], "diskmeter.health-state.v1");
    let key = v["disks"][0]["device_key"].as_str().expect("the disk's identity");
    assert!(sv["disks"][key]["samples"].is_array(), "kept under {key}: {sv}");
    assert_eq!(entries(&t.path().join("state/diskmeter")), vec!["health.json"]);
}

#[test]
fn failing_disk_exits_1_with_reasons() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("failing-hdd.json"), 216)]);
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state"]), 1);
    let text = stdout_of(&o);
    assert!(text.contains(": FAILING — Hitachi HDS721050DLE630"), "{text}");
    path_filters(&dev).bind(|| insta::assert_snapshot!("failing_human", text));
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--json", "--raw"]), 1);
    let v = json_of(&o);
    assert_eq!(v["disks"][0]["smart"]["exit_status"]["value"], 216);
    assert_eq!(v["disks"][0]["smartctl"]["smartctl"]["exit_status"], 216);
}

#[test]
fn healthy_hdd_and_nvme_human() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("healthy-hdd.json"), 0)]);
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state"]), 0);
    path_filters(&dev).bind(|| insta::assert_snapshot!("healthy_hdd_human", stdout_of(&o)));
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("nvme.json"), 0)]);
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "nvme", "--no-state", "--json"]), 0);
    let v = json_of(&o);
    assert_eq!(v["disks"][0]["smart"]["written"]["bytes"], 64_768_925u64 * 512_000);
    assert_eq!(v["disks"][0]["verdict"], "healthy");
}

#[test]
fn vm_error_fixture_is_unavailable() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("vm-error.json"), 1)]);
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "auto", "--no-state", "--json"]), 0);
    let v = json_of(&o);
    assert_eq!(v["disks"][0]["verdict"], "unavailable");
}

#[test]
fn old_or_missing_smartctl_is_an_error_with_install_hint() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), &fixture("old-smartctl-version.txt"), &[(&fixture("sata-ssd.json"), 0)]);
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--json"]), 1);
    assert!(stderr_of(&o).contains("smartctl 6.6, too old"), "{}", stderr_of(&o));
    assert_eq!(json_of(&o)["disks"][0]["verdict"], "error");
    let o = expect_code(
        health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--smartctl", "/nonexistent/smartctl"]),
        1,
    );
    assert!(stdout_of(&o).contains("apt-get install smartmontools"), "{}", stdout_of(&o));
}

#[test]
fn output_files_and_quiet() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("healthy-hdd.json"), 0)]);
    let j = t.path().join("h.json");
    let x = t.path().join("h.txt");
    let o = expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "-q", "-o"]).arg(&j), 0);
    assert!(o.stdout.is_empty());
    let v: Value = serde_json::from_str(&fs::read_to_string(&j).unwrap()).unwrap();
    assert_eq!(v["disks"][0]["verdict"], "healthy");
    expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "-q", "-o"]).arg(&x), 0);
    assert!(fs::read_to_string(&x).unwrap().contains(": HEALTHY — WDC WD40EFRX-68N32N0"));
}

#[test]
fn usage_errors() {
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("healthy-hdd.json"), 0)]);
    let cases: &[(&[&str], &str)] = &[
        (&["/dev/vda", "--tbw", "lots"], "--tbw"),
        (&["/dev/vda", "--tbw", "-5"], "--tbw"),
        (&["/dev/vda", "--tbw", "600", "--dwpd", "1"], "--dwpd"),
        (&["/dev/vda", "--warranty-years", "5"], "--warranty-years"),
        (&["/dev/vda", "--dwpd", "0"], "--dwpd"),
        (&["/dev/vda", "--wait"], "--wait"),
        (&["/dev/vda", "--self-test", "quick"], "--self-test"),
        (&["/dev/vda", "-o", "report.pdf"], "--output"),
        (&["/dev/vda", "-o", "/nonexistent/dir/x.json"], "--output"),
        (&["/dev/vda", "--state", "s.json", "--no-state"], "--no-state"),
        (&["/dev/vda", "--target", "/dev/vda"], "--target"),
        (&["/nonexistent/disk"], "DEVICE"),
        (&["/dev/vda", "--device-type", "a b"], "--device-type"),
        (&["--self-test", "short"], "DEVICE"),
    ];
    for (args, needle) in cases {
        let o = output(health(t.path(), &s).args(*args));
        assert_usage_error(&o, needle);
    }
    let left: Vec<String> =
        entries(t.path()).into_iter().filter(|e| e == "report.pdf" || e == "s.json" || e == "state").collect();
    assert!(left.is_empty(), "usage errors must write nothing: {left:?}");
}

/// The fake smartctl answers --version but hangs on `-a`, with a child of its own; the
/// child's pid goes to `sleep.pid`.
fn hang_on_query(s: &Path, dir: &Path) {
    let script = fs::read_to_string(s)
        .unwrap()
        .replace("n=$(cat", &format!("sleep 1000 & echo $! > '{}/sleep.pid'; wait\nn=$(cat", dir.display()));
    fs::write(s, script).unwrap();
}

/// The process is gone: no /proc entry, or a zombie waiting for init to reap it.
fn gone(pid_file: &Path) -> bool {
    let pid = fs::read_to_string(pid_file).unwrap().trim().to_string();
    for _ in 0..150 {
        let state = fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next().map(String::from)));
        if matches!(state.as_deref(), None | Some("Z") | Some("X")) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[test]
fn hanging_smartctl_times_out() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("healthy-hdd.json"), 0)]);
    hang_on_query(&s, t.path());
    let start = std::time::Instant::now();
    let o = expect_code(
        health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--json", "--smartctl-timeout", "1s"]),
        1,
    );
    let took = start.elapsed();
    assert!(took < std::time::Duration::from_secs(8), "took {took:?}");
    let err = stderr_of(&o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one error line: {err}");
    assert!(lines[0].starts_with("error: ") && lines[0].contains("smartctl did not answer within 1 s"), "{err}");
    assert!(lines[0].contains(&dev), "{err}");
    let v = json_of(&o);
    assert_eq!(v["disks"][0]["verdict"], "error");
    assert!(gone(&t.path().join("sleep.pid")), "smartctl's child still runs");
}

#[test]
fn smartctl_timeout_usage_errors() {
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("healthy-hdd.json"), 0)]);
    for bad in ["0", "0s", "-1", "-5s", "abc", "5 parsecs", ""] {
        let o = output(health(t.path(), &s).args(["/dev/vda", "--smartctl-timeout", bad]));
        assert_usage_error(&o, "--smartctl-timeout");
    }
    assert!(!t.path().join("calls").exists(), "smartctl ran despite a usage error");
}

#[test]
fn ctrl_c_kills_a_hanging_smartctl() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("healthy-hdd.json"), 0)]);
    hang_on_query(&s, t.path());
    let bin = assert_cmd::cargo::cargo_bin("diskmeter");
    let child = std::process::Command::new(bin)
        .envs(home_env())
        .args(["health", &dev, "-d", "sat", "--no-state"])
        .env("DISKMETER_SMARTCTL", &s)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid_file = t.path().join("sleep.pid");
    for _ in 0..200 {
        if fs::read_to_string(&pid_file).map(|p| !p.trim().is_empty()).unwrap_or(false) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let start = std::time::Instant::now();
    // SAFETY: kill with a valid pid and signal has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "took {:?}", start.elapsed());
    assert_eq!(o.status.code(), Some(130), "stderr: {}", stderr_of(&o));
    let err = stderr_of(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: interrupted"), "{err}");
    assert!(o.stdout.is_empty(), "{}", stdout_of(&o));
    assert!(gone(&pid_file), "smartctl's child still runs");
}

fn selftest_state(value: u64, text: &str) -> String {
    let mut v: Value = serde_json::from_str(&fixture("sata-ssd.json")).unwrap();
    v["ata_smart_data"]["self_test"]["status"] = if value >> 4 == 0xf {
        serde_json::json!({"value": value, "string": text, "remaining_percent": (value & 0xf) * 10})
    } else {
        serde_json::json!({"value": value, "string": text, "passed": true})
    };
    v.to_string()
}

#[test]
fn self_test_start_failure_is_a_runtime_error_with_json() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&fixture("sata-ssd.json"), 0)]);
    fs::write(
        t.path().join("selftest.json"),
        r#"{"smartctl":{"version":[7,3],"exit_status":4,"messages":[{"string":"Can't start self-test without aborting current test (90% remaining)","severity":"error"}]}}"#,
    )
    .unwrap();
    // The fake exits 0 for -t, so the status comes from the JSON copy only when the
    // process status is missing; make the script exit 4 like smartctl.
    let script = fs::read_to_string(&s)
        .unwrap()
        .replace(r#"cat "$d/selftest.json"; exit 0"#, r#"cat "$d/selftest.json"; exit 4"#);
    fs::write(&s, script).unwrap();
    let o =
        expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--self-test", "short", "--json"]), 1);
    let v = json_of(&o);
    assert_eq!(v["error"]["kind"], "runtime");
    assert!(stderr_of(&o).contains("aborting current test"), "{}", stderr_of(&o));
}

#[test]
fn self_test_wait_until_done() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(
        t.path(),
        V73,
        &[
            (&selftest_state(0, "completed without error"), 0),
            (&selftest_state(0xf9, "in progress, 90% remaining"), 0),
            (&selftest_state(0xf5, "in progress, 50% remaining"), 0),
            (&selftest_state(0, "completed without error"), 0),
        ],
    );
    let o = expect_code(
        health(t.path(), &s).args([
            &dev,
            "-d",
            "sat",
            "--no-state",
            "--self-test",
            "short",
            "--wait",
            "--poll",
            "10ms",
        ]),
        0,
    );
    let text = stdout_of(&o);
    assert!(text.contains("self-test: short self-test started on"), "{text}");
    assert!(text.contains("self-test result: Short offline — Completed without error"), "{text}");
    let calls = fs::read_to_string(t.path().join("calls")).unwrap();
    assert!(calls.contains(&format!("-j -t short -d sat {dev}")), "{calls}");
    assert_eq!(calls.lines().filter(|l| l.contains(" -a ")).count(), 5, "{calls}");
}

#[test]
fn self_test_abort_and_virtual_refusal() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&selftest_state(0xf9, "in progress, 90% remaining"), 0)]);
    let o =
        expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--self-test", "abort", "--json"]), 0);
    assert!(json_of(&o)["self_test"]["message"].as_str().unwrap().contains("aborted"));
    assert!(fs::read_to_string(t.path().join("calls")).unwrap().contains(&format!("-j -X -d sat {dev}")));
    if Path::new("/sys/block/vda").exists() {
        let o = output(health(t.path(), &s).args(["/dev/vda", "--self-test", "short"]));
        assert_usage_error(&o, "virtual device");
    }
}

#[test]
fn ctrl_c_stops_waiting_not_the_test() {
    let dev = need_disk!();
    let t = tempdir();
    let s = fake_smartctl(t.path(), V73, &[(&selftest_state(0xf9, "in progress, 90% remaining"), 0)]);
    let bin = assert_cmd::cargo::cargo_bin("diskmeter");
    let child = std::process::Command::new(bin)
        .envs(home_env())
        .args(["health", &dev, "-d", "sat", "--no-state", "--self-test", "long", "--wait", "--poll", "50ms"])
        .env("DISKMETER_SMARTCTL", &s)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    // Wait until the test was started and polling runs, then interrupt.
    let calls = t.path().join("calls");
    for _ in 0..200 {
        if fs::read_to_string(&calls).map(|c| c.lines().count() >= 4).unwrap_or(false) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: kill with a valid pid and signal has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "stderr: {}", stderr_of(&o));
    assert!(stderr_of(&o).contains("keeps running"), "{}", stderr_of(&o));
    assert!(stdout_of(&o).contains("stopped waiting"), "{}", stdout_of(&o));
}

#[test]
fn this_machines_virtio_disk_is_unavailable() {
    let vda = Path::new("/sys/block/vda");
    let virtio = fs::canonicalize(vda).map(|p| p.to_string_lossy().contains("/virtio")).unwrap_or(false);
    if !virtio {
        eprintln!("skipped: no virtio disk vda on this machine");
        return;
    }
    let t = tempdir();
    // Without smartctl at all…
    let o = expect_code(
        dm_in(t.path()).args(["health", "/dev/vda", "--no-state"]).env("DISKMETER_SMARTCTL", "/nonexistent/smartctl"),
        0,
    );
    assert!(stdout_of(&o).starts_with("/dev/vda: SMART unavailable: virtual device"), "{}", stdout_of(&o));
    // …and with every disk, with the real smartctl if installed.
    let mut c = dm_in(t.path());
    c.args(["health", "--no-state", "--json"]).env_remove("DISKMETER_SMARTCTL");
    let v = json_of(&expect_code(&mut c, 0));
    let vda = v["disks"].as_array().unwrap().iter().find(|d| d["name"] == "vda").expect("vda listed");
    assert_eq!(vda["verdict"], "unavailable");
    if let Some(real) = find_tool("smartctl") {
        let o = expect_code(
            dm_in(t.path()).args(["health", "/dev/vda", "--no-state", "-d", "auto"]).env("DISKMETER_SMARTCTL", real),
            0,
        );
        assert!(stdout_of(&o).contains("SMART unavailable: virtual device"), "{}", stdout_of(&o));
    } else {
        eprintln!("note: smartctl not installed; checked the virtio disk without it only");
    }
}

#[test]
fn loop_device_is_unavailable() {
    if !is_root() || find_tool("losetup").is_none() {
        skip_note("needs root and losetup for a loop device; skipped");
        return;
    }
    let t = tempdir();
    let img = t.path().join("img");
    fs::write(&img, vec![0u8; 1 << 20]).unwrap();
    let out = std::process::Command::new("losetup").args(["-f", "--show"]).arg(&img).output().expect("losetup");
    if !out.status.success() {
        skip_note(&format!("losetup failed: {}; skipped", String::from_utf8_lossy(&out.stderr)));
        return;
    }
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _guard = Detach(dev.clone());
    let o = expect_code(dm_in(t.path()).args(["health", &dev, "--no-state"]), 0);
    assert!(stdout_of(&o).contains("SMART unavailable: virtual device (loop device)"), "{}", stdout_of(&o));
}

#[test]
fn a_report_with_smart_joins_the_history() {
    let dev = need_disk!();
    let t = tempdir();
    let db = t.path().join("h.db");
    let s = fake_smartctl(t.path(), V73, &[(&fixture("sata-ssd.json"), 0)]);
    expect_code(health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--history"]).arg(&db), 0);
    let o = expect_code(dm().args(["history", "list", "--json", "--history"]).arg(&db), 0);
    let rows = json_of(&o);
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["command"], "health");
    assert_eq!(rows[0]["device_key"], "serial:Samsung SSD 860 EVO 500GB/S3YZNB0KB00864E", "{}", rows[0]);
    let o = expect_code(dm().args(["history", "show", "1", "--json", "--history"]).arg(&db), 0);
    assert_eq!(json_of(&o)["disks"][0]["smart"]["temperature_c"], 36);
    // --no-history keeps nothing; a database that cannot be written is a warning, not a failure.
    let db2 = t.path().join("h2.db");
    expect_code(
        health(t.path(), &s).args([&dev, "-d", "sat", "--no-state", "--no-history"]).env("DISKMETER_HISTORY", &db2),
        0,
    );
    assert!(!db2.exists());
    fs::write(t.path().join("plain"), "x").unwrap();
    let o = expect_code(
        health(t.path(), &s)
            .args([&dev, "-d", "sat", "--no-state", "--json", "--history"])
            .arg(t.path().join("plain/h.db")),
        0,
    );
    let w = json_of(&o)["warnings"].to_string();
    assert!(w.contains("history: ") && w.contains("not kept in the history"), "{w}");
}
