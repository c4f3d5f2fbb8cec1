//! `run --verify`: clean runs pass with every checksum; the engine's write faults (a bit flip,
//! a dropped, misdirected, torn or zeroed write) are each diagnosed as such at the right
//! offset; a state file carries acknowledged writes to a later verify-only run, which finds
//! the lost ones; bad input is one line and exit 2.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// A 4 MiB file of zeros the runs may write (`--overwrite`).
fn target(dir: &Path) -> PathBuf {
    let p = dir.join("target.img");
    std::fs::write(&p, vec![0u8; (4 * MIB) as usize]).expect("write the target");
    p
}

/// A job file that writes the first MiB of `t` sequentially twice (generations 1 and 2) with
/// 4 KiB blocks, then reads every chunk back.
fn twice_job(dir: &Path, t: &Path, engine: &str) -> PathBuf {
    let p = dir.join("twice.fio");
    std::fs::write(
        &p,
        format!(
            "[twice]\nfilename={}\nrw=write\nbs=4k\nsize=1M\nloops=2\niodepth=4\nioengine={engine}\nverify=crc32c\n",
            t.display()
        ),
    )
    .expect("write the job file");
    p
}

fn verify_of(doc: &Value) -> &Value {
    let v = &doc["verify"];
    assert!(v.is_object(), "the result has a verify section: {doc}");
    v
}

fn failures(doc: &Value) -> Vec<(String, u64, Value)> {
    verify_of(doc)["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .map(|f| (f["kind"].as_str().expect("kind").to_string(), f["offset"].as_u64().expect("offset"), f.clone()))
        .collect()
}

/// Run the twice-written job with `faults`; a failure is exit 1 with one error line.
fn faulty(faults: &str, engine: &str) -> (Value, String) {
    let dir = tempdir();
    let t = target(dir.path());
    let job = twice_job(dir.path(), &t, engine);
    let o = expect_code(
        dm_in(dir.path()).env("DISKMETER_FAULTS", faults).arg("run").arg(&job).args(["--overwrite", "--json"]),
        1,
    );
    let err = stderr_of(&o);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "one error line:\n{err}");
    assert!(lines[0].contains("verify failed"), "{err}");
    (json_of(&o), err)
}

#[test]
fn clean_runs_pass_with_every_checksum() {
    for kind in ["crc32c", "md5", "sha1", "sha256", "xxhash", "meta", "pattern"] {
        let dir = tempdir();
        let t = target(dir.path());
        let mut c = dm_in(dir.path());
        c.env_remove("DISKMETER_FAULTS").arg("run").arg("--target").arg(&t).args([
            "--overwrite",
            "--rw",
            "randrw",
            "--bs",
            "8k",
            "--qd",
            "8",
            "--threads",
            "2",
            "--size",
            "2M",
            "--runtime",
            "0.5s",
            "--verify",
            kind,
        ]);
        if kind == "pattern" {
            c.args(["--verify-pattern", "0xdeadbeef"]);
        }
        let doc = run_json(&mut c);
        let v = verify_of(&doc);
        assert_eq!(v["kind"], kind);
        assert_eq!(v["failures_total"], 0, "{kind}: {v}");
        assert!(u64_at(v, "chunks_written") > 0, "{kind}: writes were verified: {v}");
        assert!(u64_at(v, "checked_inline") > 0, "{kind}: reads of written chunks were checked: {v}");
        let after = u64_at(v, "checked_after");
        assert!(after > 0 && after <= 256, "{kind}: every written 8 KiB chunk of 2 MiB read back once: {v}");
        assert_eq!(v["complete"], true);
    }
}

#[test]
fn a_flipped_bit_is_corrupt() {
    // The second write of the chunk at 256 KiB has one bit flipped, 100 bytes into its payload.
    let at = 256 * KIB;
    let (doc, _) = faulty(&format!("flip@{}+1,write,after=1", at + 200), "io_uring");
    let f = failures(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].0.as_str(), f[0].1), ("corrupt", at));
    assert_eq!(f[0].2["first_difference"], 200, "the dump starts at the flipped byte: {}", f[0].2);
    assert!(!f[0].2["hexdump"].as_array().expect("dump").is_empty());
}

#[test]
fn a_dropped_write_is_stale() {
    let at = 512 * KIB;
    let (doc, _) = faulty(&format!("drop@{at}+4096,write,after=1"), "psync");
    let f = failures(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].0.as_str(), f[0].1), ("stale", at));
    assert_eq!((f[0].2["expected_generation"].as_u64(), f[0].2["found_generation"].as_u64()), (Some(2), Some(1)));
}

#[test]
fn a_misdirected_write_is_found_where_it_landed_and_missed_where_it_belonged() {
    // The second write of 768 KiB lands on 128 KiB, which was already written in that pass.
    let (a, b) = (768 * KIB, 128 * KIB);
    let (doc, _) = faulty(&format!("misdirect@{a}+4096:{b},write,after=1"), "io_uring");
    let f = failures(&doc);
    assert_eq!(f.len(), 2, "{f:?}");
    assert_eq!((f[0].0.as_str(), f[0].1), ("misdirected", b));
    assert_eq!(f[0].2["found_offset"], a, "the chunk names where it belonged: {}", f[0].2);
    assert_eq!((f[1].0.as_str(), f[1].1), ("stale", a));
}

#[test]
fn a_partial_write_is_torn() {
    let at = 64 * KIB;
    let (doc, _) = faulty(&format!("torn@{at}+4096:2048,write,after=1"), "psync");
    let f = failures(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].0.as_str(), f[0].1), ("torn", at));
    let detail = f[0].2["detail"].as_str().expect("detail");
    assert!(detail.contains("0-3") && detail.contains("4-7"), "sectors 0-3 new, 4-7 old: {detail}");
}

#[test]
fn a_zeroed_block_is_zeroed() {
    let at = 1020 * KIB;
    let (doc, _) = faulty(&format!("zero@{at}+4096,write,after=1"), "io_uring");
    let f = failures(&doc);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].0.as_str(), f[0].1), ("zeroed", at));
}

#[test]
fn verify_fatal_stops_at_the_first_failure() {
    let dir = tempdir();
    let t = target(dir.path());
    let job = twice_job(dir.path(), &t, "psync");
    let o = expect_code(
        dm_in(dir.path())
            .env(
                "DISKMETER_FAULTS",
                format!("zero@{}+4096,write,after=1;zero@{}+4096,write,after=1", 8 * KIB, 900 * KIB),
            )
            .arg("run")
            .arg(&job)
            .args(["--overwrite", "--verify-fatal", "--json"]),
        1,
    );
    let doc = json_of(&o);
    let v = verify_of(&doc);
    assert_eq!(v["failures_total"], 1, "{v}");
    assert_eq!(v["complete"], false);
}

#[test]
fn the_human_output_diagnoses_with_a_hex_dump() {
    let dir = tempdir();
    let t = target(dir.path());
    let job = twice_job(dir.path(), &t, "psync");
    let o = expect_code(
        dm_in(dir.path())
            .env("DISKMETER_FAULTS", format!("drop@{}+4096,write,after=1", 4 * KIB))
            .arg("run")
            .arg(&job)
            .arg("--overwrite"),
        1,
    );
    let out = stdout_of(&o);
    assert!(out.contains("verify (crc32c"), "{out}");
    assert!(out.contains("FAILED: 1 chunk (1 stale)"), "{out}");
    assert!(out.contains("twice: stale at 4096: generation 1 found, 2 expected"), "{out}");
    assert!(out.contains("exp ") && out.contains("got "), "a hex dump, expected against found:\n{out}");
}

#[test]
fn a_state_file_finds_acknowledged_writes_that_were_lost() {
    let dir = tempdir();
    let t = target(dir.path());
    let state = dir.path().join("run.state");
    let lost = [40 * KIB, 600 * KIB];
    // The device acknowledges two writes of the second pass and keeps neither; the run itself
    // does not read back (as if the power went before it could).
    let faults = lost.iter().map(|a| format!("drop@{a}+4096,write,after=1")).collect::<Vec<_>>().join(";");
    let job = twice_job(dir.path(), &t, "io_uring");
    let first = run_json(
        dm_in(dir.path())
            .env("DISKMETER_FAULTS", faults)
            .arg("run")
            .arg(&job)
            .args(["--overwrite", "--no-verify-pass", "--verify-state"])
            .arg(&state),
    );
    assert_eq!(verify_of(&first)["checked_after"], 0);
    assert!(state.exists(), "the state file is saved");
    // After the "reboot": check what the device acknowledged.
    let o = expect_code(
        dm_in(dir.path())
            .env_remove("DISKMETER_FAULTS")
            .arg("run")
            .arg("--target")
            .arg(&t)
            .args(["--rw", "read", "--bs", "4k", "--size", "1M", "--verify-only", "--verify-state"])
            .arg(&state)
            .arg("--json"),
        1,
    );
    let doc = json_of(&o);
    let v = verify_of(&doc);
    assert_eq!(v["state_loaded"], true);
    assert_eq!(v["checked_after"], 256, "every acknowledged chunk of the MiB: {v}");
    let f = failures(&doc);
    let got: Vec<(&str, u64)> = f.iter().map(|(k, o, _)| (k.as_str(), *o)).collect();
    assert_eq!(got, vec![("stale", lost[0]), ("stale", lost[1])], "{v}");
    assert!(results(&doc).is_empty(), "a verify-only run measures nothing");
}

#[test]
fn a_restored_snapshot_is_a_power_loss_and_every_write_since_is_stale() {
    let dir = tempdir();
    let t = target(dir.path());
    let state = dir.path().join("s");
    let run = |extra: &[&str]| {
        run_json(
            dm_in(dir.path())
                .env_remove("DISKMETER_FAULTS")
                .arg("run")
                .arg("--target")
                .arg(&t)
                .args(["--overwrite", "--rw", "write", "--bs", "64k", "--size", "512k", "--runtime", "0.3s"])
                .args(extra),
        )
    };
    run(&["--verify"]);
    let snapshot = std::fs::read(&t).expect("snapshot");
    let second = run(&["--verify", "--verify-state", state.to_str().expect("utf-8")]);
    assert_eq!(verify_of(&second)["failures_total"], 0);
    std::fs::write(&t, snapshot).expect("restore the snapshot: the second run's writes are lost");
    let o = expect_code(
        dm_in(dir.path())
            .env_remove("DISKMETER_FAULTS")
            .arg("run")
            .arg("--target")
            .arg(&t)
            .args(["--rw", "read", "--bs", "64k", "--size", "512k", "--verify-only", "--verify-state"])
            .arg(&state)
            .arg("--json"),
        1,
    );
    let doc = json_of(&o);
    let v = verify_of(&doc);
    assert_eq!(v["failures_total"], 8, "all eight 64 KiB chunks: {v}");
    assert_eq!(v["by_kind"]["stale"], 8, "{v}");
    let detail = v["failures"][0]["detail"].as_str().expect("detail");
    assert!(detail.contains("another run"), "{detail}");
}

#[test]
fn verify_only_without_a_state_checks_every_chunk_is_its_own() {
    let dir = tempdir();
    let t = target(dir.path());
    run_json(dm_in(dir.path()).env_remove("DISKMETER_FAULTS").arg("run").arg("--target").arg(&t).args([
        "--overwrite",
        "--rw",
        "write",
        "--bs",
        "4k",
        "--size",
        "256k",
        "--runtime",
        "0.3s",
        "--verify",
    ]));
    let ok = run_json(dm_in(dir.path()).arg("run").arg("--target").arg(&t).args([
        "--rw",
        "read",
        "--bs",
        "4k",
        "--size",
        "256k",
        "--verify-only",
    ]));
    assert_eq!(verify_of(&ok)["checked_after"], 64);
    assert_eq!(verify_of(&ok)["failures_total"], 0);
    // Beyond the written range every chunk is zeros.
    let o = expect_code(
        dm_in(dir.path()).arg("run").arg("--target").arg(&t).args([
            "--rw",
            "read",
            "--bs",
            "4k",
            "--size",
            "512k",
            "--verify-only",
            "--json",
        ]),
        1,
    );
    let doc = json_of(&o);
    assert_eq!(verify_of(&doc)["by_kind"]["zeroed"], 64, "{}", verify_of(&doc));
}

#[test]
fn fio_verify_options_run() {
    let dir = tempdir();
    let t = target(dir.path());
    let job = dir.path().join("v.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=1M\n\n[w]\nrw=randwrite\nbs=16k\nverify=md5\nverify_interval=4k\n\
             do_verify=1\nverify_fatal=0\nruntime=0.5\ntime_based\n\n[p]\nstonewall\nrw=write\nbs=4k\n\
             verify_pattern=0xfeedface\n",
            t.display()
        ),
    )
    .expect("job");
    let doc = run_json(dm_in(dir.path()).env_remove("DISKMETER_FAULTS").arg("run").arg(&job).arg("--overwrite"));
    let v = verify_of(&doc);
    assert_eq!(v["failures_total"], 0, "{v}");
    assert_eq!(v["interval"], 4096);
    assert!(u64_at(v, "checked_after") > 256, "both jobs' chunks read back: {v}");
}

#[test]
fn bad_verify_input_is_one_line_and_writes_nothing() {
    let dir = tempdir();
    let t = target(dir.path());
    let before = hash_file(&t);
    let garbage = dir.path().join("garbage.state");
    std::fs::write(&garbage, b"not a state file").expect("garbage");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--engine".into(), "null".into(), "--verify".into()], "--verify"),
        (vec!["--verify-interval".into(), "100".into(), "--verify".into()], "--verify-interval"),
        (vec!["--verify".into(), "pattern".into()], "--verify-pattern"),
        (vec!["--verify".into(), "crc64".into()], "--verify"),
        (vec!["--verify-fatal".into()], "add --verify"),
        (vec!["--verify-pattern".into(), "0xzz".into(), "--verify".into()], "--verify-pattern"),
        (vec!["--verify-only".into(), "--verify-state".into(), garbage.display().to_string()], "--verify-state"),
    ];
    for (args, needle) in cases {
        let o = output(
            dm_in(dir.path())
                .env_remove("DISKMETER_FAULTS")
                .arg("run")
                .arg("--target")
                .arg(&t)
                .args(["--overwrite", "--size", "1M"])
                .args(&args),
        );
        assert_usage_error(&o, needle);
    }
    let o = output(dm_in(dir.path()).arg("run").args(["--target", "missing.img", "--verify-only"]));
    assert_usage_error(&o, "does not exist");
    assert_eq!(hash_file(&t), before, "nothing was written");
    assert_eq!(entries(dir.path()), vec!["garbage.state", "target.img"]);
}

#[test]
fn verify_backlog_reads_back_as_it_writes() {
    // A write-only job whose every 16 writes are read back at once: a dropped write is found by
    // those reads, before any read-back at the end.
    let dir = tempdir();
    let t = target(dir.path());
    let at = 300 * KIB;
    let o = expect_code(
        dm_in(dir.path())
            .env("DISKMETER_FAULTS", format!("drop@{at}+4096,write,after=1"))
            .arg("run")
            .arg("--target")
            .arg(&t)
            .args(["--overwrite", "--rw", "write", "--bs", "4k", "--qd", "4", "--size", "1M", "--runtime", "0.5s"])
            .args(["--verify", "--verify-backlog", "16", "--no-verify-pass", "--json"]),
        1,
    );
    let doc = json_of(&o);
    let v = verify_of(&doc);
    assert!(u64_at(v, "checked_inline") >= 256, "at least every chunk once: {v}");
    assert_eq!(v["checked_after"], 0);
    let f = failures(&doc);
    assert!(!f.is_empty() && f.iter().all(|(k, o, x)| k == "stale" && *o == at && x["found_by"] == "read"), "{f:?}");
}

#[test]
fn a_loop_device_is_verified_only_through_the_guard_and_its_state_round_trips() {
    require_loop!();
    let dir = tempdir();
    let dev = LoopDev::blank(&dir.path().join("img"), 16 * MIB);
    let d = dev.dev_str();
    let state = dir.path().join("loop.state");
    let base = ["--rw", "randwrite", "--bs", "4k", "--qd", "8", "--size", "8M", "--runtime", "0.5s", "--verify"];
    // Without --destroy-data the device is refused before anything is written.
    let o = output(dm_in(dir.path()).env_remove("DISKMETER_FAULTS").args(["run", "--target", d]).args(base));
    assert_usage_error(&o, "--destroy-data");
    let doc = run_json(
        dm_in(dir.path())
            .env_remove("DISKMETER_FAULTS")
            .args(["run", "--target", d, "--destroy-data", d])
            .args(base)
            .arg("--verify-state")
            .arg(&state),
    );
    let v = verify_of(&doc);
    assert_eq!(v["failures_total"], 0, "{v}");
    let written = u64_at(v, "checked_after");
    assert!(written > 1000, "{v}");
    // The device as the state file left it: every acknowledged chunk is there.
    let doc = run_json(
        dm_in(dir.path())
            .args([
                "run",
                "--target",
                d,
                "--rw",
                "read",
                "--bs",
                "4k",
                "--size",
                "8M",
                "--verify-only",
                "--verify-state",
            ])
            .arg(&state),
    );
    let v = verify_of(&doc);
    assert_eq!((v["failures_total"].as_u64(), v["checked_after"].as_u64()), (Some(0), Some(written)), "{v}");
}

#[test]
fn mixed_block_sizes_are_verified_chunk_by_chunk() {
    // bssplit writes 4 KiB and 16 KiB blocks at 4 KiB-aligned offsets: every 4 KiB chunk has
    // its own header and generation, so overlapping blocks of different sizes check exactly.
    let dir = tempdir();
    let t = target(dir.path());
    let job = dir.path().join("split.fio");
    std::fs::write(
        &job,
        format!(
            "[split]\nfilename={}\nrw=randrw\nbssplit=4k/50:16k/50\nsize=1M\niodepth=8\nruntime=0.5\ntime_based\n\
             verify=xxhash\n",
            t.display()
        ),
    )
    .expect("job");
    let doc = run_json(dm_in(dir.path()).env_remove("DISKMETER_FAULTS").arg("run").arg(&job).arg("--overwrite"));
    let v = verify_of(&doc);
    assert_eq!((v["failures_total"].as_u64(), v["interval"].as_u64()), (Some(0), Some(4096)), "{v}");
    assert!(u64_at(v, "checked_inline") > 0 && u64_at(v, "checked_after") > 0, "{v}");
    let sizes: Vec<u64> =
        results(&doc)[0]["block_sizes"].as_array().expect("block sizes").iter().map(|b| u64_at(b, "bs")).collect();
    assert_eq!(sizes, vec![4096, 16384]);
}
