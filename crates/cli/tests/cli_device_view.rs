//! Device truth on loop devices (root only; skipped with a note on stderr otherwise): every
//! run's `device_view` from /proc/diskstats, one device request per I/O up to the device's
//! limit, and the warnings split-io, device-saw-less, device-saw-more and foreign-io.

mod common;

use common::*;
use serde_json::Value;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

macro_rules! need_loop {
    () => {
        if let Some(why) = loop_unavailable() {
            skip_note(&format!("{why}; device-view test skipped (CI runs it as root)"));
            return;
        }
    };
}

fn run_json(args: &[&str]) -> Value {
    json_of(&expect_code(dm().args(args).args(["--json", "--no-ceiling-check"]), 0))
}

fn view(doc: &Value) -> &Value {
    &doc["results"][0]["device_view"]
}

fn has_warning(doc: &Value, code: &str) -> bool {
    warning_codes(doc).iter().any(|c| c == code)
}

#[test]
fn every_block_size_up_to_the_limit_is_one_device_request_per_io() {
    need_loop!();
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("img"), 256 << 20);
    let dev = l.dev_str();
    for rw in ["read", "write"] {
        for bs in ["4k", "128k", "1M"] {
            for qd in ["1", "8"] {
                let doc = run_json(&[
                    "run",
                    "--target",
                    dev,
                    "--rw",
                    rw,
                    "--bs",
                    bs,
                    "--qd",
                    qd,
                    "--size",
                    "128M",
                    "--runtime",
                    "500ms",
                    "--destroy-data",
                    dev,
                ]);
                let v = view(&doc);
                let per = v[if rw == "read" { "reads_per_io" } else { "writes_per_io" }].as_f64().expect("per I/O");
                assert!((0.99..=1.01).contains(&per), "{rw} {bs} QD{qd}: {per} device requests per I/O\n{v}");
                assert!(!has_warning(&doc, "split-io"), "{rw} {bs} QD{qd}");
            }
        }
    }
}

#[test]
fn a_block_size_above_the_limit_is_split_and_said_before_the_run() {
    need_loop!();
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("img"), 256 << 20);
    let dev = l.dev_str();
    let name = l.dev.file_name().expect("name").to_string_lossy().into_owned();
    let kb: u64 = std::fs::read_to_string(format!("/sys/block/{name}/queue/max_sectors_kb"))
        .expect("max_sectors_kb")
        .trim()
        .parse()
        .expect("number");
    let bs = format!("{}k", (kb * 2).next_power_of_two());
    let o = expect_code(
        dm().args(["run", "--target", dev, "--rw", "read", "--bs", &bs, "--qd", "2", "--size", "128M"]).args([
            "--runtime",
            "500ms",
            "--json",
            "--no-ceiling-check",
        ]),
        0,
    );
    let doc = json_of(&o);
    assert!(stderr_of(&o).contains("split-io") && stderr_of(&o).contains("max_sectors_kb"), "{}", stderr_of(&o));
    assert!(has_warning(&doc, "split-io"));
    let per = view(&doc)["reads_per_io"].as_f64().expect("reads_per_io");
    assert!(per >= 1.9, "a {bs} read over a {kb} KiB limit: {per} requests per I/O");
}

#[test]
fn a_buffered_run_of_a_file_is_answered_by_the_page_cache() {
    need_loop!();
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let mut l = LoopDev::blank(&dir.path().join("img"), 256 << 20);
    if l.ext4(&dir.path().join("mnt"), "defaults").is_none() {
        skip_note("mkfs.ext4 missing; skipped");
        return;
    }
    let target = dir.path().join("mnt/t.test");
    let t = target.to_str().expect("utf-8");
    let doc = run_json(&["run", "--target", t, "--rw", "randread", "--size", "32M", "--runtime", "1s", "--buffered"]);
    assert_eq!(view(&doc)["device"], l.dev.file_name().expect("name").to_string_lossy().as_ref());
    assert!(has_warning(&doc, "device-saw-less"), "{:?}\n{}", warning_codes(&doc), view(&doc));
}

#[test]
fn a_journalled_file_system_writes_more_than_diskmeter() {
    need_loop!();
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let mut l = LoopDev::blank(&dir.path().join("img"), 256 << 20);
    if l.ext4(&dir.path().join("mnt"), "data=journal").is_none() {
        skip_note("mkfs.ext4 missing; skipped");
        return;
    }
    let target = dir.path().join("mnt/t.test");
    let t = target.to_str().expect("utf-8");
    // data=journal has no O_DIRECT: buffered writes, each followed by fsync, go through the
    // journal before the run's window ends.
    let doc = run_json(&[
        "run",
        "--target",
        t,
        "--rw",
        "randwrite",
        "--size",
        "16M",
        "--runtime",
        "1s",
        "--buffered",
        "--fsync",
        "1",
    ]);
    assert!(has_warning(&doc, "device-saw-more"), "{:?}\n{}", warning_codes(&doc), view(&doc));
}

#[test]
fn another_process_on_the_device_is_foreign_io() {
    need_loop!();
    let _s = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempdir();
    let l = LoopDev::blank(&dir.path().join("img"), 256 << 20);
    let dev = l.dev_str();
    // dd writes the upper half of the device while diskmeter reads the lower half.
    let mut dd = std::process::Command::new("dd")
        .args([&format!("of={dev}"), "if=/dev/zero", "bs=1M", "seek=128", "count=120", "oflag=direct"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("dd");
    let doc = run_json(&["run", "--target", dev, "--rw", "randread", "--qd", "4", "--size", "64M", "--runtime", "1s"]);
    let _ = dd.wait();
    assert!(has_warning(&doc, "foreign-io"), "{:?}\n{}", warning_codes(&doc), view(&doc));
}

#[test]
fn a_file_on_tmpfs_says_no_device_can_be_read() {
    let Ok(d) = tempfile::tempdir_in("/dev/shm") else {
        skip_note("no /dev/shm; skipped");
        return;
    };
    let t = d.path().join("t.test");
    let o = expect_code(
        dm().args(["run", "--target", t.to_str().expect("utf-8"), "--size", "4M", "--runtime", "200ms", "--buffered"]),
        0,
    );
    assert!(stdout_of(&o).contains("device saw: — (tmpfs has no block device under it)"), "{}", stdout_of(&o));
}
