//! `diskmeter surface`: scans of files and loop devices, faults injected through the
//! engine's test-only hook (DISKMETER_FAULTS), the data-safety guard, the bad-block list
//! against real e2fsprogs, Ctrl-C. Loop-device tests need root and losetup and skip with a
//! note otherwise; they run one at a time and detach their devices also when they panic.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

const MIB: u64 = 1 << 20;
const IMAGE: u64 = 32 * MIB;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// `diskmeter surface …` with no fault plan unless a test sets one.
fn surface() -> assert_cmd::Command {
    let mut c = dm();
    c.env_remove("DISKMETER_FAULTS").arg("surface");
    c
}

/// A test image of `size` random bytes in RAM (/dev/shm when present), removed on drop.
struct Image {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

fn image(size: u64) -> Image {
    let base = if Path::new("/dev/shm").is_dir() { Path::new("/dev/shm") } else { Path::new("/tmp") };
    let dir = tempfile::tempdir_in(base).expect("temp dir");
    let path = dir.path().join("surface.img");
    let mut f = std::fs::File::create(&path).expect("create image");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = vec![0u8; MIB as usize];
    for _ in 0..size / MIB {
        for c in buf.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all(&buf).expect("write image");
    }
    Image { _dir: dir, path }
}

struct Loop {
    dev: PathBuf,
    _image: Image,
}

impl Loop {
    fn dev(&self) -> &str {
        self.dev.to_str().expect("utf-8 device path")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Std::new("umount").arg(&self.dev).stderr(std::process::Stdio::null()).status();
        let _ = Std::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

fn attach(img: Image) -> Loop {
    let out = Std::new("losetup").args(["--find", "--show"]).arg(&img.path).output().expect("run losetup");
    assert!(out.status.success(), "losetup failed: {}", String::from_utf8_lossy(&out.stderr));
    let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(dev.starts_with("/dev/"), "unexpected losetup output {dev:?}");
    Loop { dev, _image: img }
}

fn loop_dev(size: u64) -> Loop {
    attach(image(size))
}

fn surf(doc: &Value) -> &Value {
    &doc["surface"]
}

fn bad_offsets(doc: &Value) -> Vec<u64> {
    surf(doc)["bad_sectors"].as_array().expect("bad_sectors").iter().map(|b| u64_at(b, "offset")).collect()
}

fn device_hash(dev: &str) -> u64 {
    hash_file(Path::new(dev))
}

// ---------------------------------------------------------------------------------------
// no root needed

#[test]
fn surface_help() {
    let o = expect_code(dm().args(["surface", "--help"]), 0);
    insta::assert_snapshot!("surface_help", stdout_of(&o));
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let img = image(4 * MIB);
    let dir = tempdir();
    let out = dir.path().join("r.json");
    let bb = dir.path().join("bb.txt");
    let t = img.path.to_str().expect("utf-8");
    let o_s = out.to_str().expect("utf-8");
    let bb_s = bb.to_str().expect("utf-8");
    let cases: &[(&[&str], &str)] = &[
        (&[t, "--block", "1000"], "--block"),
        (&[t, "--fs-block", "3000"], "--fs-block"),
        (&[t, "--mode", "wipe"], "--mode"),
        (&["--block", "1M"], "TARGET"),
        (&["/nonexistent/disk.img"], "does not exist"),
        (&[t, "--pattern", "0x1ff"], "--pattern"),
        (&[t, "--patterns", "0xaa,zz"], "--patterns"),
        (&[t, "--slow-factor", "0.5"], "--slow-factor"),
        (&[t, "--offset", "100"], "--offset"),
        (&[t, "--size", "8M"], "--size"),
        (&[t, "--mode", "destructive", "--sample", "10"], "--sample"),
        (&[t, "--access-only", "--mode", "nondestructive"], "--access-only"),
        (&[t, "--qd", "4", "--mode", "nondestructive", "--overwrite"], "--qd"),
        (&[t, "--qd", "0"], "--qd"),
    ];
    let before = hash_file(&img.path);
    for (args, needle) in cases {
        let o = output(surface().args(*args).args(["-o", o_s, "--badblocks-out", bb_s]));
        assert_usage_error(&o, needle);
        assert!(!out.exists() && !bb.exists(), "{args:?}: nothing may be written");
    }
    assert_eq!(hash_file(&img.path), before);
}

#[test]
fn file_read_scan() {
    let img = image(8 * MIB);
    let dir = tempdir();
    let bb = dir.path().join("bb.txt");
    let doc = json_of(&expect_code(
        surface()
            .arg(&img.path)
            .args(["--block", "256k", "--zones", "10", "--access", "30", "--json"])
            .arg("--badblocks-out")
            .arg(&bb),
        0,
    ));
    assert_eq!(doc["schema"], "diskmeter.result.v1");
    assert_eq!(doc["command"], "surface");
    assert_eq!(doc["partial"], false);
    assert_eq!(doc["target"]["kind"], "file");
    let s = surf(&doc);
    assert_eq!(s["mode"], "read");
    assert_eq!(u64_at(s, "scanned_bytes"), 8 * MIB);
    assert_eq!(u64_at(s, "blocks"), 32);
    let zones = s["zones"].as_array().expect("zones");
    assert_eq!(zones.len(), 10);
    assert_eq!(zones.iter().map(|z| u64_at(z, "size")).sum::<u64>(), 8 * MIB);
    assert_eq!(zones.iter().map(|z| u64_at(z, "bytes")).sum::<u64>(), 8 * MIB);
    assert_eq!(u64_at(&s["access"], "count"), 30);
    assert!(s["verdict"].as_str().expect("verdict").starts_with("no bad sectors"));
    assert_eq!(std::fs::read_to_string(&bb).expect("list written"), "");
}

#[test]
fn file_nondestructive_needs_overwrite_and_restores() {
    let img = image(4 * MIB);
    let before = hash_file(&img.path);
    let o = output(surface().arg(&img.path).args(["--mode", "nondestructive"]));
    assert_usage_error(&o, "--overwrite");
    let doc = json_of(&expect_code(
        surface().arg(&img.path).args(["--mode", "nondestructive", "--overwrite", "--pattern", "random", "--json"]),
        0,
    ));
    assert_eq!(surf(&doc)["mode"], "nondestructive");
    assert_eq!(hash_file(&img.path), before, "the file must be unchanged");
}

#[test]
fn a_vanished_device_stops_with_partial_results() {
    let img = image(8 * MIB);
    let o = expect_code(
        surface()
            .env("DISKMETER_FAULTS", format!("enodev@{}+1", 5 * MIB))
            .arg(&img.path)
            .args(["--block", "1M", "--access", "10", "--json"]),
        1,
    );
    let doc = json_of(&o);
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "vanished");
    assert_eq!(u64_at(surf(&doc), "scanned_bytes"), 5 * MIB);
    assert!(surf(&doc).get("access").is_none());
    assert!(stderr_of(&o).contains("error: the device went away"), "{}", stderr_of(&o));
}

#[test]
fn human_and_exports_render() {
    let img = image(4 * MIB);
    let dir = tempdir();
    let md = dir.path().join("r.md");
    let csv = dir.path().join("r.csv");
    let html = dir.path().join("r.html");
    let o = expect_code(
        surface().arg(&img.path).args(["--block", "512k", "--access", "5"]).arg("-o").arg(&md).arg("--html").arg(&html),
        0,
    );
    let text = stdout_of(&o);
    assert!(text.contains("verdict     no bad sectors"), "{text}");
    assert!(text.contains("transfer rate by position"), "{text}");
    assert!(std::fs::read_to_string(&md).expect("md").contains("| zone start |"));
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("data-chart=\"surface-rate\""), "the HTML has the rate chart");
    expect_code(surface().arg(&img.path).args(["--block", "512k", "--access", "0", "-q"]).arg("-o").arg(&csv), 0);
    assert!(std::fs::read_to_string(&csv).expect("csv").starts_with("zone,offset,"));
}

// ---------------------------------------------------------------------------------------
// loop devices (root)

#[test]
fn loop_read_scan_sample_and_access() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let doc = json_of(&expect_code(surface().args([lp.dev(), "--json", "--access", "50"]), 0));
    assert_eq!(doc["target"]["kind"], "block");
    let s = surf(&doc);
    assert_eq!(u64_at(s, "scanned_bytes"), IMAGE);
    assert_eq!(u64_at(s, "size"), IMAGE);
    assert_eq!(s["zones"].as_array().expect("zones").len(), 32);
    assert_eq!(u64_at(&s["access"], "count"), 50);
    assert_eq!(s["direct"], true);
    let doc = json_of(&expect_code(surface().args([lp.dev(), "--json", "--sample", "7", "--access", "0"]), 0));
    assert_eq!(u64_at(surf(&doc), "blocks"), 7);
    assert!(surf(&doc).get("access").is_none());
    let doc = json_of(&expect_code(surface().args([lp.dev(), "--json", "--qd", "4", "--access", "0"]), 0));
    assert_eq!(u64_at(surf(&doc), "scanned_bytes"), IMAGE);
    assert_eq!(u64_at(surf(&doc), "qd"), 4);
    let doc = json_of(&expect_code(surface().args([lp.dev(), "--json", "--access-only", "--access", "20"]), 0));
    assert_eq!(u64_at(surf(&doc), "blocks"), 0);
    assert_eq!(u64_at(&surf(&doc)["access"], "count"), 20);
}

#[test]
fn loop_eio_is_narrowed_to_the_sector() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let dir = tempdir();
    let bb = dir.path().join("bb.txt");
    let at = 10 * MIB + 7 * 512;
    let o = expect_code(
        surface()
            .env("DISKMETER_FAULTS", format!("eio@{at}+512,read"))
            .args([lp.dev(), "--json", "--access", "0", "--fs-block", "1024"])
            .arg("--badblocks-out")
            .arg(&bb),
        1,
    );
    let doc = json_of(&o);
    assert_eq!(bad_offsets(&doc), vec![at]);
    assert_eq!(surf(&doc)["bad_sectors"][0]["error"], "EIO");
    assert_eq!(doc["partial"], false);
    assert!(warning_codes(&doc).contains(&"fault-injection".to_string()));
    assert_eq!(std::fs::read_to_string(&bb).expect("list"), format!("{}\n", at / 1024));
    assert!(stderr_of(&o).contains("1 bad sector found"), "{}", stderr_of(&o));
}

#[test]
fn loop_slow_blocks_confirmed_and_transient() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let slow_at = 20 * MIB;
    let run = |rule: String| {
        json_of(&expect_code(
            surface().env("DISKMETER_FAULTS", rule).args([
                lp.dev(),
                "--json",
                "--access",
                "0",
                "--slow-floor",
                "150ms",
            ]),
            0,
        ))
    };
    let doc = run(format!("slow@{slow_at}+1:400ms,read"));
    let slow = surf(&doc)["slow_blocks"].as_array().expect("slow_blocks").clone();
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert_eq!(u64_at(&slow[0], "offset"), slow_at);
    assert_eq!(slow[0]["status"], "confirmed");
    let doc = run(format!("slow@{slow_at}+1:400ms,read,first=1"));
    let slow = surf(&doc)["slow_blocks"].as_array().expect("slow_blocks").clone();
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert_eq!(slow[0]["status"], "transient");
}

#[test]
fn loop_nondestructive_keeps_the_content_and_finds_faults() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let before = device_hash(lp.dev());
    let doc = json_of(&expect_code(
        surface().args([lp.dev(), "--mode", "nondestructive", "--destroy-data", lp.dev(), "--json", "--access", "0"]),
        0,
    ));
    assert_eq!(u64_at(surf(&doc), "scanned_bytes"), IMAGE);
    assert_eq!(device_hash(lp.dev()), before);
    // A write error (the pattern write and its sector retry fail) and a corrupted write.
    let (w, v) = (4 * MIB + 4096, 9 * MIB + 1024);
    let doc = json_of(&expect_code(
        surface().env("DISKMETER_FAULTS", format!("eio@{w}+512,write,first=2;corrupt@{v}+8,write,first=1")).args([
            lp.dev(),
            "--mode",
            "nondestructive",
            "--destroy-data",
            lp.dev(),
            "--json",
            "--access",
            "0",
        ]),
        1,
    ));
    assert_eq!(bad_offsets(&doc), vec![w, v]);
    let phases: Vec<&str> = surf(&doc)["bad_sectors"]
        .as_array()
        .expect("bad")
        .iter()
        .map(|b| b["phase"].as_str().expect("phase"))
        .collect();
    assert_eq!(phases, vec!["write", "verify"]);
    assert_eq!(device_hash(lp.dev()), before, "the device content must be byte-identical");
}

#[test]
fn loop_guard_refuses() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let other = loop_dev(IMAGE);
    let before = device_hash(lp.dev());
    for mode in ["nondestructive", "destructive"] {
        let o = output(surface().args([lp.dev(), "--mode", mode]));
        assert_usage_error(&o, "--destroy-data");
        let o = output(surface().args([lp.dev(), "--mode", mode, "--destroy-data", other.dev()]));
        assert_usage_error(&o, "not the target device");
    }
    assert_eq!(device_hash(lp.dev()), before);
    if find_tool("mkfs.ext4").is_none() {
        skip_note("mkfs.ext4 is missing; signature and mount checks skipped");
        return;
    }
    let st = Std::new("mkfs.ext4").args(["-q", "-F", lp.dev()]).status().expect("mkfs.ext4");
    assert!(st.success());
    let before = device_hash(lp.dev());
    // A file-system signature without the flag.
    let o = output(surface().args([lp.dev(), "--mode", "nondestructive"]));
    assert_usage_error(&o, "refusing to write");
    assert_eq!(device_hash(lp.dev()), before);
    // Mounted: refused even with the flag (mounting itself writes the superblock, so no
    // hash comparison here).
    let mnt = tempdir();
    let st = Std::new("mount").arg(lp.dev()).arg(mnt.path()).status().expect("mount");
    if st.success() {
        let o = output(surface().args([lp.dev(), "--mode", "nondestructive", "--destroy-data", lp.dev()]));
        let _ = Std::new("umount").arg(mnt.path()).status();
        assert_usage_error(&o, "mounted");
    } else {
        skip_note("mount failed; mounted check skipped");
    }
}

#[test]
fn loop_destructive_writes_the_patterns() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(8 * MIB);
    let doc = json_of(&expect_code(
        surface().args([lp.dev(), "--mode", "destructive", "--destroy-data", lp.dev(), "--json", "--access", "0"]),
        0,
    ));
    let passes = surf(&doc)["passes"].as_array().expect("passes");
    let names: Vec<&str> = passes.iter().map(|p| p["pattern"].as_str().expect("pattern")).collect();
    assert_eq!(names, vec!["0xaa", "0x55", "0xff", "0x00"]);
    for p in passes {
        assert_eq!(u64_at(p, "write_bytes"), 8 * MIB);
        assert_eq!(u64_at(p, "read_bytes"), 8 * MIB);
    }
    let data = std::fs::read(lp.dev()).expect("read device");
    assert!(data.iter().all(|&b| b == 0), "the device ends as 0x00");
}

#[test]
fn loop_badblocks_list_works_with_e2fsck() {
    require_loop!();
    let (Some(_), Some(_), Some(_)) = (find_tool("mkfs.ext4"), find_tool("e2fsck"), find_tool("dumpe2fs")) else {
        skip_note("e2fsprogs (mkfs.ext4, e2fsck, dumpe2fs) missing; skipped");
        return;
    };
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let st = Std::new("mkfs.ext4").args(["-q", "-F", "-b", "4096", lp.dev()]).status().expect("mkfs.ext4");
    assert!(st.success());
    let dir = tempdir();
    let bb = dir.path().join("bb.txt");
    // Two bad sectors in one 4k block and one elsewhere, in the data area.
    let faults = format!("eio@{}+512;eio@{}+512;eio@{}+512", 5000 * 4096, 5000 * 4096 + 1024, 7001 * 4096 + 3584);
    expect_code(
        surface()
            .env("DISKMETER_FAULTS", faults)
            .args([lp.dev(), "-q", "--access", "0", "--fs-block", "4096"])
            .arg("--badblocks-out")
            .arg(&bb),
        1,
    );
    assert_eq!(std::fs::read_to_string(&bb).expect("list"), "5000\n7001\n");
    let o = Std::new("e2fsck").args(["-fy", "-l"]).arg(&bb).arg(lp.dev()).output().expect("e2fsck");
    assert!(
        matches!(o.status.code(), Some(0) | Some(1)),
        "e2fsck -l failed: {:?}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let o = Std::new("dumpe2fs").args(["-b", lp.dev()]).output().expect("dumpe2fs");
    let listed: Vec<String> = String::from_utf8_lossy(&o.stdout).split_whitespace().map(String::from).collect();
    assert_eq!(listed, vec!["5000", "7001"]);
}

#[test]
fn loop_ctrl_c_keeps_partial_results_and_restores() {
    require_loop!();
    let _g = serial();
    let lp = loop_dev(IMAGE);
    let before = device_hash(lp.dev());
    let bin = assert_cmd::cargo::cargo_bin("diskmeter");
    let child = Std::new(bin)
        .envs(home_env())
        .env("DISKMETER_FAULTS", format!("slow@0+{IMAGE}:100ms,read"))
        .args(["surface", lp.dev(), "--mode", "nondestructive", "--destroy-data", lp.dev(), "--json"])
        .args(["--slow-floor", "10s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn diskmeter");
    // About 10 s of scan (3 slow reads per block); Ctrl-C after 1.5 s.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("valid JSON after Ctrl-C");
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["error"]["kind"], "interrupted");
    let scanned = u64_at(surf(&doc), "scanned_bytes");
    assert!(scanned > 0 && scanned < IMAGE, "scanned {scanned}");
    assert_eq!(device_hash(lp.dev()), before, "the block in hand was restored");
}
