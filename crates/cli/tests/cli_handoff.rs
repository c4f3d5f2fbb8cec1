//! io_uring's hand-off of requests to its kernel workers ("async punt"), seen and said: zram
//! cannot take a request without blocking, so every request runs in an `iou-wrk` thread; a
//! RAM-backed loop device takes them in the submitting thread. Root only; each test makes and
//! removes its own devices.

#[macro_use]
mod common;
use common::zram::Zram;
use common::*;

macro_rules! require_zram {
    () => {
        if let Some(why) = Zram::unavailable() {
            skip_note(&format!("{why}; zram test skipped"));
            return;
        }
    };
}

fn handoff_run(dev: &str, extra: &[&str]) -> serde_json::Value {
    let dir = tempdir();
    let mut cmd = dm_in(dir.path());
    cmd.args(["run", "--target", dev, "--rw", "randread", "--bs", "4k", "--qd", "8", "--runtime", "1s"]);
    cmd.args(extra);
    run_json(&mut cmd)
}

#[test]
fn zram_reads_run_in_the_kernels_workers_and_the_result_says_so() {
    require_zram!();
    let z = Zram::filled(64);
    for extra in [&[][..], &["--no-pin"][..]] {
        let doc = handoff_run(z.dev_str(), extra);
        let codes = warning_codes(&doc);
        assert!(codes.iter().any(|c| c == "async-punt"), "{extra:?}: {codes:?}");
        let msg = doc["warnings"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| w["code"] == "async-punt"))
            .and_then(|w| w["message"].as_str())
            .expect("the async-punt warning's message")
            .to_string();
        assert!(msg.contains(&format!("on zram{}", z.id)) || msg.contains(z.dev_str()), "{msg}");
        let h = &results(&doc)[0]["handoff"];
        let share = h["share"].as_f64().unwrap_or_else(|| panic!("no share: {h}"));
        assert!(share > 0.9, "{extra:?}: share {share}: {h}");
        assert!(u64_at(h, "kernel_workers") >= 1, "{h}");
        assert!(f64_at(h, "kernel_cpu_pct") > 1.0, "{h}");
        assert_eq!(h["forced"], true, "{h}");
    }
    // The human report shows the warning too.
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args([
        "run",
        "--target",
        z.dev_str(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--qd",
        "4",
        "--runtime",
        "500ms",
    ]));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(stdout_of(&o).contains("async-punt"), "{}", stdout_of(&o));
}

#[test]
fn a_ram_loop_device_takes_requests_in_the_submitting_thread() {
    require_loop!();
    let shm = tempfile::tempdir_in("/dev/shm").expect("a directory in /dev/shm");
    let l = LoopDev::blank(&shm.path().join("img"), 64 << 20);
    let st = std::process::Command::new("dd")
        .args(["if=/dev/urandom", "bs=1M", "count=64", "oflag=direct", "status=none"])
        .arg(format!("of={}", l.dev_str()))
        .status()
        .expect("dd");
    assert!(st.success());
    let doc = handoff_run(l.dev_str(), &[]);
    assert!(!warning_codes(&doc).iter().any(|c| c == "async-punt"), "{:?}", warning_codes(&doc));
    let h = &results(&doc)[0]["handoff"];
    assert!(h.is_null() || h["share"].as_f64().is_some_and(|s| s < 0.05), "{h}");
}
