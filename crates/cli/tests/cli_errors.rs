//! Bad input: exit code 2, exactly one `error:` line naming the culprit, nothing on
//! stdout, and nothing written (the temporary working directory stays empty).

mod common;

use common::*;
use std::path::Path;

/// Short, small settings so that a missed validation costs little.
const SMALL: &[&str] = &["--size", "4M", "--runtime", "200ms"];

/// Run `args` in a fresh empty directory, expect a usage error naming `needle`,
/// and check that nothing was left behind.
fn usage_case(args: &[&str], needle: &str) {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args(args));
    assert_usage_error(&o, needle);
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "nothing may be written for {args:?}");
}

fn run_case(extra: &[&str], needle: &str) {
    let mut args = vec!["run"];
    args.extend_from_slice(extra);
    usage_case(&args, needle);
}

#[test]
fn bs_with_unknown_unit() {
    run_case(&["--bs", "4q", "--size", "4M", "--runtime", "200ms"], "--bs");
}

#[test]
fn bs_not_a_multiple_of_the_logical_block_on_a_new_file() {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args(["run", "--target", "diskmeter.test", "--bs", "1000"]).args(SMALL));
    assert_usage_error(&o, "--bs");
    assert!(!dir.path().join("diskmeter.test").exists(), "the test file must not be left behind");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn bs_not_a_multiple_of_the_logical_block_default_target() {
    run_case(&["--bs", "1000", "--size", "4M", "--runtime", "200ms"], "--bs");
}

#[test]
fn qd_zero() {
    run_case(&["--qd", "0", "--size", "4M", "--runtime", "200ms"], "--qd");
    run_case(&["--submit-batch", "0", "--size", "4M", "--runtime", "200ms"], "--submit-batch");
}

#[test]
fn qd_above_the_io_uring_limit() {
    run_case(&["--qd", "65536", "--size", "4M", "--runtime", "200ms"], "--qd");
    run_case(&["--qd", "65536", "--size", "4M", "--runtime", "200ms"], "io_uring's limit of 32768 per worker");
    run_case(&["--qd", "32769", "--engine", "null", "--runtime", "200ms"], "use --threads to add workers");
    run_case(&["--qd", "128", "--threads", "64", "--engine", "psync", "--size", "4M"], "psync runs one thread");
    usage_case(&["compare", "a", "b", "--rw", "randread", "--qd", "65536"], "--qd");
}

/// A plan that cannot fit in memory is refused before anything starts (it used to grow
/// until the OOM killer ended it). 1 MiB blocks make the need 32 TiB, beyond any machine.
#[test]
fn a_plan_larger_than_memory_is_refused_up_front() {
    let huge = ["--qd", "32768", "--threads", "1024", "--bs", "1M"];
    let needle = "this run needs 32.0 TiB of memory (1024 workers x QD 32768 x 1 MiB buffers = 32.0 TiB) but";
    run_case(&[&["--engine", "null", "--rw", "write"][..], &huge[..]].concat(), needle);
    // A target file is not even created.
    run_case(&[&["--target", "t.test", "--size", "16M"][..], &huge[..]].concat(), "lower --qd, --threads or --bs");
    usage_case(&[&["compare", "a.test", "b.test", "--rw", "randread"][..], &huge[..]].concat(), needle);
    usage_case(
        &["sla", "--latency", "1ms", "--max-qd", "32768", "--max-threads", "1024", "--bs", "1M"],
        "lower --max-qd, --max-threads or --bs",
    );
    // Thousands of small jobs: the message counts workers and names the job count.
    let dir = tempdir();
    let mut body = String::from("[global]\nioengine=null\nnumjobs=1024\nruntime=1s\ntime_based\n");
    for i in 0..1000 {
        body.push_str(&format!("[j{i}]\n"));
    }
    std::fs::write(dir.path().join("many.fio"), body).expect("write job file");
    let o = output(dm_in(dir.path()).args(["run", "many.fio"]));
    assert_usage_error(&o, "(1024000 worker threads:");
    assert_usage_error(&o, "run fewer jobs at once");
    assert_eq!(entries(dir.path()), vec!["many.fio".to_string()]);
}

/// The deepest accepted queue really sets up a ring (before: EINVAL from io_uring_setup, exit 1).
#[test]
fn qd_at_the_io_uring_limit_sets_up_a_ring() {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args([
        "run",
        "--qd",
        "32768",
        "--size",
        "16M",
        "--runtime",
        "300ms",
        "--no-ceiling-check",
        "--quiet",
    ]));
    let err = stderr_of(&o);
    match o.status.code() {
        Some(0) => {}
        // A small machine may be refused up front by the memory check: a usage error, not a fault.
        Some(2) => assert!(err.contains("is available") && err.lines().count() == 1, "{err}"),
        other => panic!("expected the ring to be set up, got exit {other:?}: {err}"),
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn threads_zero() {
    run_case(&["--threads", "0", "--size", "4M", "--runtime", "200ms"], "--threads");
}

#[test]
fn size_negative() {
    // `--size=-1` so the value cannot be mistaken for a flag by the parser.
    run_case(&["--size=-1", "--runtime", "200ms"], "--size");
}

#[test]
fn negative_values_as_separate_words_get_diskmeter_s_own_message() {
    // `--size -1` must not be taken for an unknown flag `-1` (clap's advice "use -- -1" would
    // be wrong): the value reaches diskmeter's check, which says what is wrong, in one line.
    for (opt, val) in [("--size", "-1"), ("--offset", "-4k"), ("--runtime", "-3s"), ("--qd", "-5"), ("--mix", "-10")] {
        let dir = tempdir();
        let size: &[&str] = if opt == "--size" { &[] } else { &["--size", "4M"] };
        let o = output(dm_in(dir.path()).args(["run", opt, val]).args(size));
        assert_usage_error(&o, opt);
        let err = stderr_of(&o);
        assert!(err.contains("negative") && err.lines().count() == 1, "{opt} {val}: {err}");
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }
}

#[test]
fn size_overflowing() {
    run_case(&["--size", "99999999T", "--runtime", "200ms"], "--size");
}

#[test]
fn rw_unknown_mode() {
    run_case(&["--rw", "sideways", "--size", "4M", "--runtime", "200ms"], "--rw");
}

#[test]
fn runtime_unknown_unit() {
    run_case(&["--runtime", "5parsecs", "--size", "4M"], "--runtime");
}

#[test]
fn mix_above_100() {
    run_case(&["--rw", "randrw", "--mix", "150", "--size", "4M", "--runtime", "200ms"], "--mix");
}

#[test]
fn dist_negative_zipf() {
    run_case(&["--rw", "randread", "--dist", "zipf:-1", "--size", "4M", "--runtime", "200ms"], "--dist");
}

#[test]
fn data_compress_above_100() {
    run_case(&["--rw", "randwrite", "--data", "compress:200", "--size", "4M", "--runtime", "200ms"], "--data");
}

#[test]
fn engine_unknown() {
    run_case(&["--engine", "libfoo", "--size", "4M", "--runtime", "200ms"], "--engine");
}

#[test]
fn target_in_missing_directory() {
    run_case(&["--target", "/nonexistent/dir/file", "--size", "4M", "--runtime", "200ms"], "/nonexistent/dir/file");
    assert!(!Path::new("/nonexistent").exists());
}

#[test]
fn target_is_a_directory() {
    let dir = tempdir();
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    // --target names a folder: its test file, made and removed (tests/cli_folders.rs has more).
    let doc = run_json(dm_in(dir.path()).args(["run", "--target", "sub"]).args(SMALL));
    assert_eq!(
        (doc["target"]["path"].as_str(), doc["target"]["folder"].as_str()),
        (Some("sub/diskmeter.test"), Some("sub"))
    );
    assert_eq!(entries(&dir.path().join("sub")), Vec::<String>::new(), "the test file is removed");
    // A job file's filename= names files, as in fio: a directory there is refused.
    std::fs::write(dir.path().join("j.fio"), "[j]\nfilename=sub\nrw=randread\nsize=1m\nruntime=200ms\n").expect("job");
    let o = output(dm_in(dir.path()).args(["run", "j.fio"]));
    assert_usage_error(&o, "is a directory");
    assert_eq!(entries(dir.path()), vec!["j.fio".to_string(), "sub".to_string()]);
    assert_eq!(entries(&dir.path().join("sub")), Vec::<String>::new(), "nothing may be created inside it");
}

#[test]
fn malformed_job_file_names_file_and_line() {
    let dir = tempdir();
    let job = "[global]\nioengine=null\nruntime=200ms\n\n[reader]\nrw=randread\niodepth=lots\n";
    std::fs::write(dir.path().join("file.fio"), job).expect("write job file");
    let o = output(dm_in(dir.path()).args(["run", "file.fio"]));
    assert_usage_error(&o, "file.fio:7:");
    assert_eq!(entries(dir.path()), vec!["file.fio".to_string()]);
}

#[test]
fn job_file_with_unknown_option_names_file_and_line() {
    let dir = tempdir();
    let job = "[reader]\nrw=randread\nioengine=null\nruntime=200ms\nfrobnicate=1\n";
    std::fs::write(dir.path().join("file.fio"), job).expect("write job file");
    let o = output(dm_in(dir.path()).args(["run", "file.fio"]));
    assert_usage_error(&o, "file.fio:5:");
    assert_eq!(entries(dir.path()), vec!["file.fio".to_string()]);
}

#[test]
fn missing_job_file() {
    run_case(&["missing.fio"], "missing.fio");
}

#[test]
fn mark_unknown_profile() {
    usage_case(&["mark", "--profile", "fast", "--quick", "--size", "4M", "--time", "100ms"], "--profile");
}

#[test]
fn mark_zero_passes() {
    usage_case(&["mark", "--passes", "0", "--quick", "--size", "4M", "--time", "100ms"], "--passes");
}

#[test]
fn mark_zero_time() {
    usage_case(&["mark", "--time", "0s", "--quick", "--size", "4M"], "--time");
}

#[test]
fn foreign_file_is_not_written_without_overwrite() {
    let dir = tempdir();
    let path = dir.path().join("precious.dat");
    // 1 MiB of non-trivial content.
    let content: Vec<u8> = (0..(1u32 << 20)).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(&path, &content).expect("write file");
    let before = hash_file(&path);
    for rw in ["randwrite", "write", "randrw"] {
        let o = output(dm_in(dir.path()).args([
            "run",
            "--target",
            "precious.dat",
            "--rw",
            rw,
            "--size",
            "1M",
            "--runtime",
            "200ms",
        ]));
        assert_usage_error(&o, "--overwrite");
        assert_eq!(hash_file(&path), before, "{rw}: the file must stay byte-identical");
        assert_eq!(std::fs::read(&path).expect("read back"), content);
        assert_eq!(entries(dir.path()), vec!["precious.dat".to_string()]);
    }
}

#[test]
fn foreign_file_may_be_read_and_stays_unchanged() {
    // The counterpart of the refusal: reading a foreign file is allowed and changes nothing.
    let dir = tempdir();
    let path = dir.path().join("precious.dat");
    let content: Vec<u8> = (0..(1u32 << 20)).map(|i| (i.wrapping_mul(40_503) >> 5) as u8).collect();
    std::fs::write(&path, &content).expect("write file");
    let before = hash_file(&path);
    let o = expect_code(
        dm_in(dir.path()).args([
            "run",
            "--target",
            "precious.dat",
            "--rw",
            "randread",
            "--runtime",
            "200ms",
            "--no-ceiling-check",
            "--json",
        ]),
        0,
    );
    let doc = json_of(&o);
    assert_eq!(doc["target"]["created_by_diskmeter"], false);
    assert!(u64_at(&results(&doc)[0]["read"], "ops") > 0);
    assert_eq!(hash_file(&path), before, "a read test must not change the file");
    assert_eq!(entries(dir.path()), vec!["precious.dat".to_string()], "the foreign file is not removed");
}

#[test]
fn foreign_file_is_written_with_overwrite_and_kept() {
    let dir = tempdir();
    let path = dir.path().join("scratch.dat");
    std::fs::write(&path, vec![0x5au8; 1 << 20]).expect("write file");
    let before = hash_file(&path);
    expect_code(
        dm_in(dir.path()).args([
            "run",
            "--target",
            "scratch.dat",
            "--rw",
            "randwrite",
            "--runtime",
            "200ms",
            "--no-ceiling-check",
            "--overwrite",
            "--quiet",
        ]),
        0,
    );
    assert_ne!(hash_file(&path), before, "--overwrite lets the test write");
    assert_eq!(entries(dir.path()), vec!["scratch.dat".to_string()], "a file diskmeter did not create stays");
}

#[test]
fn kept_test_file_is_ours_on_the_next_run() {
    let dir = tempdir();
    let args = ["run", "--size", "4M", "--runtime", "200ms", "--rw", "randwrite", "--no-ceiling-check", "--quiet"];
    expect_code(dm_in(dir.path()).args(args).arg("--keep"), 0);
    assert_eq!(entries(dir.path()), vec!["diskmeter.test".to_string()], "--keep keeps the test file");
    // The file carries diskmeter's mark, so writing it again needs no --overwrite
    // (unless the file system has no user xattrs, in which case it is refused as foreign).
    let o = output(dm_in(dir.path()).args(args));
    match o.status.code() {
        Some(0) => {}
        Some(2) if stderr_of(&o).contains("--overwrite") => {
            eprintln!("note: no user xattrs here; kept file is foreign")
        }
        other => panic!("unexpected exit {other:?}: {}", stderr_of(&o)),
    }
}

#[test]
fn a_new_file_allocates_only_the_measured_region() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempdir();
    let args = ["run", "--offset", "100G", "--size", "16M", "--runtime", "200ms", "--rw", "randwrite"];
    expect_code(dm_in(dir.path()).args(args).args(["--no-ceiling-check", "--quiet", "--keep"]), 0);
    let m = std::fs::metadata(dir.path().join("diskmeter.test")).expect("the kept test file");
    assert_eq!(m.len(), (100 << 30) + (16 << 20), "the file reaches the region's end");
    let allocated = m.blocks() * 512;
    assert!(
        (16 << 20..=20 << 20).contains(&allocated),
        "only the 16 MiB region is allocated (and filled), the 100 GiB before it stays a hole: {allocated} bytes"
    );
}

#[test]
fn created_test_file_is_removed_after_a_normal_run() {
    let dir = tempdir();
    expect_code(
        dm_in(dir.path()).args([
            "run",
            "--size",
            "4M",
            "--runtime",
            "200ms",
            "--rw",
            "randrw",
            "--no-ceiling-check",
            "--quiet",
        ]),
        0,
    );
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "diskmeter.test is removed at exit");
}

#[test]
fn mark_on_foreign_file_is_refused_without_overwrite() {
    let dir = tempdir();
    let path = dir.path().join("precious.dat");
    let content: Vec<u8> = (0..(4u32 << 20)).map(|i| (i >> 7) as u8 ^ (i as u8)).collect();
    std::fs::write(&path, &content).expect("write file");
    let before = hash_file(&path);
    let o = output(dm_in(dir.path()).args(["mark", "precious.dat", "--quick", "--size", "4M", "--time", "100ms"]));
    assert_usage_error(&o, "--overwrite");
    assert_eq!(hash_file(&path), before, "the file must stay byte-identical");
    assert_eq!(entries(dir.path()), vec!["precious.dat".to_string()]);
}

#[test]
fn output_with_unknown_extension() {
    run_case(&["--engine", "null", "--runtime", "200ms", "-o", "out.xyz"], "--output");
}

#[test]
fn output_in_missing_directory() {
    run_case(&["--engine", "null", "--runtime", "200ms", "-o", "nodir/out.json"], "--output");
}

#[test]
fn mark_output_with_unknown_extension() {
    usage_case(&["mark", "--engine", "null", "--quick", "--time", "100ms", "-o", "card.xyz"], "--output");
}

#[test]
fn unknown_flag_is_a_clap_error() {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).args(["run", "--frobnicate", "--engine", "null"]));
    assert_eq!(o.status.code(), Some(2), "stderr:\n{}", stderr_of(&o));
    assert!(o.stdout.is_empty());
    let err = stderr_of(&o);
    assert!(err.starts_with("error:"), "{err}");
    assert!(err.contains("--frobnicate"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1, "{err}");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn unknown_subcommand_is_a_clap_error() {
    let dir = tempdir();
    let o = output(dm_in(dir.path()).arg("frobnicate"));
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(stderr_of(&o).starts_with("error:"));
}

#[test]
fn prefill_without_destroy_data() {
    run_case(&["--prefill", "--rw", "randread", "--size", "4M", "--runtime", "200ms"], "--destroy-data");
}

#[test]
fn errors_are_not_json_even_with_json_flag() {
    // With --json a usage error still prints nothing on stdout (no half document).
    run_case(&["--qd", "0", "--json", "--engine", "null", "--runtime", "200ms"], "--qd");
}
