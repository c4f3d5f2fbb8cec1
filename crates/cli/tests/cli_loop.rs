//! Block-device safety and facts on loop devices (root only; skipped with a note
//! otherwise). Every device is detached by a guard, also when a test panics, and the
//! tests run one at a time.

#[macro_use]
mod common;

use common::throttle::Throttle;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::{Mutex, MutexGuard};

const IMAGE_SIZE: u64 = 64 << 20;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A loop device attached to an image file; detached on drop.
struct Loop {
    dev: PathBuf,
    image: PathBuf,
}

impl Loop {
    fn name(&self) -> String {
        self.dev.file_name().expect("device name").to_string_lossy().into_owned()
    }
    fn dev_str(&self) -> &str {
        self.dev.to_str().expect("utf-8 device path")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Std::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// Create a zeroed 64 MiB image in `dir` and attach it.
fn blank_loop(dir: &Path, name: &str) -> Loop {
    let image = dir.join(name);
    let f = std::fs::File::create(&image).expect("create image");
    f.set_len(IMAGE_SIZE).expect("size image");
    drop(f);
    attach(&image)
}

fn attach(image: &Path) -> Loop {
    let out = Std::new("losetup").args(["--find", "--show"]).arg(image).output().expect("run losetup");
    assert!(out.status.success(), "losetup failed: {}", String::from_utf8_lossy(&out.stderr));
    let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    assert!(dev.starts_with("/dev/"), "unexpected losetup output {dev:?}");
    Loop { dev, image: image.to_path_buf() }
}

fn ext4_loop(dir: &Path) -> Option<Loop> {
    find_tool("mkfs.ext4")?;
    let image = dir.join("ext4.img");
    let f = std::fs::File::create(&image).expect("create image");
    f.set_len(IMAGE_SIZE).expect("size image");
    drop(f);
    let st = Std::new("mkfs.ext4").args(["-q", "-F"]).arg(&image).status().expect("run mkfs.ext4");
    assert!(st.success(), "mkfs.ext4 failed");
    Some(attach(&image))
}

/// Hash of the image as seen through the device (flushes the loop device's cache first).
fn image_hash(l: &Loop) -> u64 {
    let _ = Std::new("sync").status();
    hash_file(&l.image)
}

#[test]
fn ext4_device_is_refused_and_left_unchanged() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let Some(lp) = ext4_loop(dir.path()) else {
        skip_note("mkfs.ext4 is missing; skipped");
        return;
    };
    let before = image_hash(&lp);

    let o = expect_code(
        dm_in(dir.path()).args(["run", "--target", lp.dev_str(), "--rw", "randwrite", "--runtime", "200ms"]),
        2,
    );
    let err = stderr_of(&o);
    assert!(err.contains("ext4"), "stderr must name the ext4 signature: {err}");
    assert!(err.contains("--destroy-data"), "stderr must mention --destroy-data: {err}");
    assert!(o.stdout.is_empty());
    assert_eq!(image_hash(&lp), before, "run: the image must be byte-identical");

    let o =
        expect_code(dm_in(dir.path()).args(["mark", lp.dev_str(), "--quick", "--size", "32M", "--time", "200ms"]), 2);
    let err = stderr_of(&o);
    assert!(err.contains("ext4") && err.contains("--destroy-data"), "{err}");
    assert_eq!(image_hash(&lp), before, "mark: the image must be byte-identical");

    // A bare `mark --quick` (256M area on a 64M device) is refused too.
    let o = expect_code(dm_in(dir.path()).args(["mark", lp.dev_str(), "--quick"]), 2);
    assert!(stderr_of(&o).starts_with("error:"));
    assert_eq!(image_hash(&lp), before, "mark --quick: the image must be byte-identical");

    // --prefill with a --destroy-data naming something else: refused, unchanged.
    let o = expect_code(
        dm_in(dir.path()).args([
            "run",
            "--target",
            lp.dev_str(),
            "--rw",
            "randread",
            "--prefill",
            "--destroy-data",
            "/dev/null",
            "--runtime",
            "200ms",
        ]),
        2,
    );
    assert!(stderr_of(&o).starts_with("error:"));
    assert_eq!(image_hash(&lp), before);
}

#[test]
fn ext4_device_reads_are_allowed() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let Some(lp) = ext4_loop(dir.path()) else {
        skip_note("mkfs.ext4 is missing; skipped");
        return;
    };
    let before = image_hash(&lp);
    let doc = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        lp.dev_str(),
        "--rw",
        "randread",
        "--runtime",
        "200ms",
        "--no-ceiling-check",
    ]));
    assert!(u64_at(&results(&doc)[0]["read"], "ops") > 0);
    assert_eq!(image_hash(&lp), before, "a read test changes nothing");
}

#[test]
fn blank_device_writes_need_destroy_data_naming_it() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let other = blank_loop(dir.path(), "b.img");
    let before = image_hash(&lp);

    // Without --destroy-data: block writes always need it, even on a blank device.
    let o = expect_code(
        dm_in(dir.path()).args(["run", "--target", lp.dev_str(), "--rw", "randwrite", "--runtime", "200ms"]),
        2,
    );
    let err = stderr_of(&o);
    assert!(err.contains("--destroy-data"), "{err}");
    assert!(o.stdout.is_empty());
    assert_eq!(image_hash(&lp), before);

    // Naming another device: refused.
    let o = expect_code(
        dm_in(dir.path()).args([
            "run",
            "--target",
            lp.dev_str(),
            "--rw",
            "randwrite",
            "--runtime",
            "200ms",
            "--destroy-data",
            other.dev_str(),
        ]),
        2,
    );
    let err = stderr_of(&o);
    assert!(err.contains(other.dev_str()), "the message names the wrong device: {err}");
    assert_eq!(image_hash(&lp), before);
    assert_eq!(image_hash(&other), hash_file(&other.image));

    // Naming this device: allowed.
    let doc = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        lp.dev_str(),
        "--rw",
        "randwrite",
        "--runtime",
        "200ms",
        "--no-ceiling-check",
        "--destroy-data",
        lp.dev_str(),
    ]));
    let r = &results(&doc)[0];
    assert!(u64_at(&r["write"], "ops") > 0, "writes happened");
    check_dir_stats(&r["write"], "write");
    assert_ne!(image_hash(&lp), before, "the device was written");
}

#[test]
fn read_only_run_warns_about_unwritten_data_unless_prefilled() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let before = image_hash(&lp);

    let doc = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        lp.dev_str(),
        "--rw",
        "randread",
        "--runtime",
        "200ms",
        "--no-ceiling-check",
    ]));
    assert!(warning_codes(&doc).iter().any(|c| c == "unwritten-read"), "warnings: {:?}", warning_codes(&doc));
    let msg = &doc["warnings"].as_array().expect("warnings").iter().find(|w| w["code"] == "unwritten-read").expect("w")
        ["message"];
    assert!(msg.as_str().expect("message").starts_with("64 of 64 sampled blocks"), "a blank device: {msg}");
    assert_eq!(image_hash(&lp), before, "a read-only run writes nothing");

    let doc = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        lp.dev_str(),
        "--rw",
        "randread",
        "--runtime",
        "200ms",
        "--no-ceiling-check",
        "--prefill",
        "--destroy-data",
        lp.dev_str(),
    ]));
    assert!(!warning_codes(&doc).iter().any(|c| c == "unwritten-read"), "warnings: {:?}", warning_codes(&doc));
    assert!(u64_at(&results(&doc)[0]["read"], "ops") > 0);
    assert_ne!(image_hash(&lp), before, "--prefill wrote the region");
}

/// Write the first `mib` MiB of the device with random bytes (dd from /dev/urandom).
fn fill_random(l: &Loop, mib: u64) {
    let st = Std::new("dd")
        .args(["if=/dev/urandom", "bs=1M", "oflag=direct", "status=none"])
        .arg(format!("of={}", l.dev_str()))
        .arg(format!("count={mib}"))
        .status()
        .expect("run dd");
    assert!(st.success(), "dd failed");
}

/// Messages of the `unwritten-read` warnings of a read-only run on `l`.
fn unwritten_messages(dir: &Path, l: &Loop) -> Vec<String> {
    let doc = run_json(dm_in(dir).args([
        "run",
        "--target",
        l.dev_str(),
        "--rw",
        "randread",
        "--runtime",
        "200ms",
        "--no-ceiling-check",
    ]));
    assert!(u64_at(&results(&doc)[0]["read"], "ops") > 0);
    doc["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter(|w| w["code"] == "unwritten-read")
        .map(|w| w["message"].as_str().expect("message").to_string())
        .collect()
}

/// `unwritten-read` on a block device needs evidence: sampled blocks of the read region that
/// read back as zeros, counted in the message. A device filled with real data beforehand
/// gets no warning.
#[test]
fn unwritten_read_counts_zero_samples_and_spares_filled_devices() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();

    let blank = blank_loop(dir.path(), "blank.img");
    let m = unwritten_messages(dir.path(), &blank);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("64 of 64 sampled blocks"), "{}", m[0]);
    assert!(m[0].contains(&format!("--prefill --destroy-data {}", blank.dev_str())), "{}", m[0]);
    drop(blank);

    let full = blank_loop(dir.path(), "full.img");
    fill_random(&full, IMAGE_SIZE >> 20);
    assert_eq!(unwritten_messages(dir.path(), &full), Vec::<String>::new(), "a filled device is not flagged");
    drop(full);

    // Half filled: the samples are spread evenly, so the zero half gives half of them.
    let half = blank_loop(dir.path(), "half.img");
    fill_random(&half, IMAGE_SIZE >> 21);
    let m = unwritten_messages(dir.path(), &half);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("32 of 64 sampled blocks"), "{}", m[0]);
}

#[test]
fn block_target_facts() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let doc = run_json(dm_in(dir.path()).args([
        "run",
        "--target",
        lp.dev_str(),
        "--rw",
        "randread",
        "--runtime",
        "200ms",
        "--no-ceiling-check",
    ]));
    let t: &Value = &doc["target"];
    assert_eq!(t["kind"], "block");
    assert_eq!(t["size_bytes"], IMAGE_SIZE);
    assert_eq!(t["logical_block"], 512);
    assert_eq!(t["device"], lp.name().as_str());
    assert_eq!(t["path"], lp.dev_str());
    assert_eq!(t["created_by_diskmeter"], false);
    // The whole disk's own size (sysfs `size`); a loop device has no serial, WWN or firmware,
    // and those are left out rather than made up.
    assert_eq!(t["device_size_bytes"], IMAGE_SIZE);
    for absent in ["serial", "wwn", "firmware", "link"] {
        assert!(t.get(absent).is_none(), "{absent}: {t}");
    }
}

#[test]
fn mark_on_a_blank_device_with_destroy_data() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let doc = run_json(dm_in(dir.path()).args([
        "mark",
        lp.dev_str(),
        "--quick",
        "--size",
        "32M",
        "--time",
        "200ms",
        "--no-ceiling-check",
        "--destroy-data",
        lp.dev_str(),
    ]));
    assert_eq!(doc["command"], "mark");
    assert_eq!(result_names(&doc), vec!["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]);
    for r in results(&doc) {
        check_dir_stats(&r["read"], "read");
        check_dir_stats(&r["write"], "write");
    }
    assert!(!warning_codes(&doc).iter().any(|c| c == "unwritten-read"), "mark prefills: {:?}", warning_codes(&doc));
    assert_eq!(doc["target"]["kind"], "block");
}

#[test]
fn mark_quick_on_a_small_device_uses_the_whole_device() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let doc = run_json(dm_in(dir.path()).args([
        "mark",
        lp.dev_str(),
        "--quick",
        "--time",
        "200ms",
        "--no-ceiling-check",
        "--destroy-data",
        lp.dev_str(),
    ]));
    assert_eq!(results(&doc).len(), 4);
}

#[test]
fn mark_on_a_blank_device_without_destroy_data_is_refused() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let before = image_hash(&lp);
    let o =
        expect_code(dm_in(dir.path()).args(["mark", lp.dev_str(), "--quick", "--size", "32M", "--time", "200ms"]), 2);
    assert!(stderr_of(&o).contains("--destroy-data"));
    assert_eq!(image_hash(&lp), before);
}

/// `sla` obeys the same guard: a read-only search needs no flag (and warns about unwritten
/// data); a write search needs --destroy-data naming the device (a flag naming another
/// device does not do), and a device with a file system is refused without it. Nothing
/// changes until the flag is given.
#[test]
fn sla_on_block_devices_obeys_the_guard() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let before = image_hash(&lp);
    let fast = [
        "--latency",
        "10ms",
        "--max-qd",
        "2",
        "--max-threads",
        "1",
        "--ramp",
        "0s",
        "--min-windows",
        "2",
        "--max-windows",
        "2",
        "--size",
        "16M",
    ];
    let doc = json_of(&expect_code(dm_in(dir.path()).args(["sla", lp.dev_str(), "--json"]).args(fast), 0));
    assert_eq!(doc["target"]["kind"], "block");
    assert!(doc["sla"]["best"].is_object(), "{}", doc["sla"]);
    assert!(doc["warnings"].as_array().expect("warnings").iter().any(|w| w["code"] == "unwritten-read"));
    assert_eq!(image_hash(&lp), before, "a read-only search writes nothing");

    let o = expect_code(dm_in(dir.path()).args(["sla", lp.dev_str(), "--rw", "randwrite"]).args(fast), 2);
    assert!(stderr_of(&o).contains("--destroy-data"), "{}", stderr_of(&o));
    let o = expect_code(
        dm_in(dir.path())
            .args(["sla", lp.dev_str(), "--rw", "randwrite", "--destroy-data", "/dev/loop-nope"])
            .args(fast),
        2,
    );
    assert!(stderr_of(&o).contains("--destroy-data"), "{}", stderr_of(&o));
    assert_eq!(image_hash(&lp), before, "refused searches write nothing");

    if let Some(fs) = ext4_loop(dir.path()) {
        // A file system on the device: a write search is refused without the flag.
        let fs_before = image_hash(&fs);
        let o = expect_code(
            dm_in(dir.path()).args(["sla", fs.dev_str(), "--rw", "randwrite", "--overwrite"]).args(fast),
            2,
        );
        assert!(stderr_of(&o).contains("ext4"), "{}", stderr_of(&o));
        assert_eq!(image_hash(&fs), fs_before);
    }

    let doc = json_of(&expect_code(
        dm_in(dir.path())
            .args(["sla", lp.dev_str(), "--rw", "randwrite", "--json", "--destroy-data", lp.dev_str()])
            .args(fast),
        0,
    ));
    assert!(!doc["sla"]["points"].as_array().expect("points").is_empty());
}

/// `compare` writes every target it measures: a block device among them needs
/// --destroy-data naming it, and is left unchanged when refused.
#[test]
fn compare_with_a_block_device_obeys_the_guard() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let lp = blank_loop(dir.path(), "a.img");
    let before = image_hash(&lp);
    let args = ["compare", "--rw", "randwrite", "--passes", "2", "--time", "200ms", "--no-warmup", "--size", "8M"];
    let o = expect_code(dm_in(dir.path()).args(args).arg("b.test").arg(lp.dev_str()), 2);
    assert!(stderr_of(&o).contains("--destroy-data"), "{}", stderr_of(&o));
    assert_eq!(image_hash(&lp), before, "a refused compare writes nothing");
    assert!(!dir.path().join("b.test").exists(), "no test file left behind");
    let doc = json_of(&expect_code(
        dm_in(dir.path()).args(args).arg("b.test").arg(lp.dev_str()).args(["--json", "--destroy-data", lp.dev_str()]),
        0,
    ));
    assert_eq!(doc["compare"]["subjects"][1]["source"], lp.dev_str());
}

// ---------------------------------------------------------------------------------------
// Accuracy against a device of known speed: the kernel's block-I/O throttle limits a loop
// device to a fixed IOPS, far below what it can do, so the device is the bottleneck and the
// true figures are known: IOPS = the limit, and at a constant depth, by Little's law, the
// mean latency = depth / IOPS. (bench/accuracy.py --throttle does the same against fio.)

#[test]
fn reports_the_rate_of_a_throttled_device_and_little_s_law_holds() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let l = blank_loop(dir.path(), "throttled.img");
    const LIMIT: f64 = 2000.0;
    const QD: f64 = 8.0;
    let t = match Throttle::new(&l.dev, LIMIT as u32, None) {
        Ok(t) => t,
        Err(why) => {
            skip_note(&format!("{why}; throttled-device test skipped"));
            return;
        }
    };
    for (rw, dir_key) in [("randread", "read"), ("randwrite", "write")] {
        let mut args = vec![
            "run",
            "--target",
            l.dev_str(),
            "--rw",
            rw,
            "--bs",
            "4k",
            "--qd",
            "8",
            "--ramp",
            "1s",
            "--runtime",
            "2s",
            "--json",
            "--no-ceiling-check",
        ];
        if rw == "randwrite" {
            args.extend(["--destroy-data", l.dev_str()]);
        }
        let o = t.diskmeter(&args);
        assert!(o.status.success(), "{rw} failed: {}", stderr_of(&o));
        let doc = json_of(&o);
        let d = &results(&doc)[0][dir_key];
        let iops = f64_at(d, "iops");
        let lat_s = f64_at(&d["lat_ns"], "mean") / 1e9;
        // The throttle releases bios per jiffy against a budget that runs from the slice start:
        // over 2 s it holds the rate to well under 1 %; 3 % leaves room for a slow machine.
        assert!((iops / LIMIT - 1.0).abs() < 0.03, "{rw}: {iops} IOPS, the device was limited to {LIMIT}");
        let little = iops * lat_s / QD;
        assert!((little - 1.0).abs() < 0.03, "{rw}: IOPS x mean latency = {:.2}, the depth was {QD}", little * QD);
        let qd_mean = f64_at(d, "qd_mean");
        assert!((qd_mean / QD - 1.0).abs() < 0.03, "{rw}: mean outstanding depth {qd_mean}, --qd was {QD}");
    }
}

/// `mark` reports a device of known speed right in every cell of the card: a loop device over
/// /dev/shm under three throttle settings (10 000 IOPS; 2 000 IOPS; 300 MB/s with 10 000 IOPS),
/// warm-up on as by default, three 3 s passes instead of 5 s and no pauses; then, under 300 MB/s +
/// 10 000 IOPS, the card's eight cells again as `run` jobs of 3 s, one right after the other.
/// About six minutes (bench/throttle_mark.py runs the true defaults beside fio,
/// bench/known_speed.py five rounds of `mark` and `run` back to back).
///
/// blk-throttle completes a deep queue's I/Os in bursts, one per 100 ms slice, and the engine
/// counts whole bursts (`whole_bursts`), so no window edge moves a slice in or out (before that
/// rule, CI saw a 4 s pass at +1.35 %). Throttle-bound cells must be within 1 % of the limit: the
/// median of the passes (every pass is printed; a QD 1 cell on a machine too busy to finish a
/// slice's I/Os within the slice has no bursts to count whole), and each `run` cell (one retry,
/// printed, for the same reason). Known cells: RND4K (4 KiB × 10 000 IOPS is far below 300 MB/s,
/// so IOPS-bound in every setting) and SEQ1M under 300 MB/s (bytes-bound: 286.1 IOPS). SEQ1M under
/// an IOPS limit alone is not throttle-bound at a known figure — at 10 000 IOPS of 1 MiB the loop
/// device itself (a few GB/s) is slower — so there it must only not exceed the limit by 1 %.
/// A 1 MiB I/O that reaches the loop device as two requests (max_segments 128 × 4 KiB pages) is
/// charged twice against a bytes limit (Linux 6.18, fio alike): SEQ1M under 300 MB/s may read
/// 150 MB/s, which is accepted as the rate the throttle allows.
#[test]
fn mark_reports_the_rate_of_a_throttled_device_in_every_cell() {
    require_loop!();
    let _s = serial();
    // The image lives in RAM: the throttle, not the backing store, must be the bottleneck.
    let shm = match tempfile::Builder::new().prefix("diskmeter-throttle-").tempdir_in("/dev/shm") {
        Ok(d) => d,
        Err(e) => {
            skip_note(&format!("no /dev/shm ({e}); throttled mark test skipped"));
            return;
        }
    };
    let image = shm.path().join("mark.img");
    std::fs::File::create(&image).and_then(|f| f.set_len(512 << 20)).expect("create image");
    let l = attach(&image);
    let dev = l.dev_str();
    const SETTINGS: [(&str, u32, Option<u64>); 3] = [
        ("10 000 IOPS", 10_000, None),
        ("2 000 IOPS", 2_000, None),
        ("300 MB/s + 10 000 IOPS", 10_000, Some(300_000_000)),
    ];
    const CELLS: [(&str, &str, &str, &str); 4] = [
        ("SEQ1M Q8T1", "", "1M", "8"),
        ("SEQ1M Q1T1", "", "1M", "1"),
        ("RND4K Q32T1", "rand", "4k", "32"),
        ("RND4K Q1T1", "rand", "4k", "1"),
    ];
    let mut failures = Vec::new();
    for (setting, iops, bps) in SETTINGS {
        let t = match Throttle::new(&l.dev, iops, bps) {
            Ok(t) => t,
            Err(why) => {
                skip_note(&format!("{why}; throttled mark test skipped"));
                return;
            }
        };
        // (the figure's name, IOPS) → within 1 % of its known rate, or (SEQ1M under an IOPS
        // limit) not above the limit; the line is printed either way.
        let check = |what: String, name: &str, got: f64| -> Result<(), String> {
            let bs: f64 = if name.starts_with("SEQ1M") { 1048576.0 } else { 4096.0 };
            let bps_iops = bps.map_or(f64::INFINITY, |b| b as f64 / bs);
            let bound = bps_iops.min(iops as f64);
            let known = bs == 4096.0 || bps_iops < iops as f64;
            let line = format!(
                "{setting}: {what}: {got:.1} IOPS, limit {bound:.1} IOPS ({:+.2} %)",
                (got / bound - 1.0) * 100.0
            );
            eprintln!("{line}");
            let within = |x: f64| (got / x - 1.0).abs() <= 0.01;
            let ok = if !known {
                got > 0.0 && got <= bound * 1.01
            } else if bs == 4096.0 {
                within(bound)
            } else {
                within(bound) || within(bound / 2.0)
            };
            if ok {
                Ok(())
            } else {
                Err(line)
            }
        };
        let args = [
            "mark",
            dev,
            "--destroy-data",
            dev,
            "--json",
            "--no-ceiling-check",
            "--size",
            "256M",
            "--time",
            "3s",
            "--passes",
            "3",
            "--interval",
            "0",
        ];
        let o = t.diskmeter(&args);
        assert!(o.status.success(), "{setting}: mark failed: {}", stderr_of(&o));
        let doc = json_of(&o);
        assert_eq!(result_names(&doc), vec!["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]);
        for r in results(&doc) {
            let name = r["name"].as_str().unwrap_or_default();
            for d in ["read", "write"] {
                let mut passes: Vec<f64> =
                    r["passes"].as_array().expect("passes").iter().map(|p| f64_at(&p[d], "iops")).collect();
                assert_eq!(passes.len(), 3, "{setting}: {name}: three passes");
                for (i, got) in passes.iter().enumerate() {
                    let _ = check(format!("mark {name} {d} pass {}", i + 1), name, *got);
                }
                passes.sort_by(f64::total_cmp);
                if let Err(line) = check(format!("mark {name} {d} median of passes"), name, passes[1]) {
                    failures.push(line);
                }
            }
        }
        if bps.is_some() {
            // The card's cells again, as `run` jobs back to back: each opens its window on a
            // throttle the job before has just used.
            for (name, rand, bs, qd) in CELLS {
                for d in ["read", "write"] {
                    let rw = format!("{rand}{d}");
                    let mut verdict = Ok(());
                    for attempt in ["", " (again)"] {
                        let o = t.diskmeter(&[
                            "run",
                            "--target",
                            dev,
                            "--destroy-data",
                            dev,
                            "--size",
                            "256M",
                            "--rw",
                            &rw,
                            "--bs",
                            bs,
                            "--qd",
                            qd,
                            "--runtime",
                            "3s",
                            "--json",
                            "--no-ceiling-check",
                        ]);
                        assert!(o.status.success(), "{setting}: run {name} {d} failed: {}", stderr_of(&o));
                        let doc = json_of(&o);
                        let got = f64_at(&results(&doc)[0][d], "iops");
                        verdict = check(format!("run {name} {d}{attempt}"), name, got);
                        if verdict.is_ok() {
                            break;
                        }
                    }
                    if let Err(line) = verdict {
                        failures.push(line);
                    }
                }
            }
        }
        drop(t);
    }
    assert!(failures.is_empty(), "not within 1 % of the throttle:\n{}", failures.join("\n"));
}

#[test]
fn a_second_run_on_a_held_device_is_refused_under_no_wait() {
    require_loop!();
    let _s = serial();
    let dir = tempdir();
    let l = blank_loop(dir.path(), "lock.img");
    let first = std::process::Command::new(assert_cmd::cargo::cargo_bin("diskmeter"))
        .envs(home_env())
        .args(["run", "--target", l.dev_str(), "--rw", "randread", "--size", "8M", "--runtime", "3s", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let o = output(
        dm().args(["run", "--target", l.dev_str(), "--rw", "randread", "--size", "8M", "--runtime", "200ms"])
            .arg("--no-wait"),
    );
    let mut first = first;
    let status = first.wait().expect("wait");
    assert_usage_error(&o, "in use by");
    assert!(status.success(), "the first run is undisturbed");
}
