//! One job over several files (fio `nrfiles`, `filename=a:b`, `directory=a:b`,
//! `file_service_type`): each test measures where the I/O went from the files' contents. The
//! files start as zeros and every written block holds data, so a sequential write's prefix in
//! each file counts the I/Os that file received.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const BS: usize = 4096;

/// Zero-filled files of `len` bytes (they exist before the run, so diskmeter keeps them).
fn zero_files(paths: &[PathBuf], len: usize) {
    for p in paths {
        std::fs::write(p, vec![0u8; len]).expect("create a zero file");
    }
}

/// Blocks of `path` that hold data: (the written prefix, blocks with data after it).
fn written(path: &Path) -> (usize, usize) {
    let d = std::fs::read(path).expect("read a job file");
    let data: Vec<bool> = d.chunks(BS).map(|b| b.iter().any(|x| *x != 0)).collect();
    let prefix = data.iter().take_while(|x| **x).count();
    (prefix, data[prefix..].iter().filter(|x| **x).count())
}

fn run_job(dir: &Path, text: &str) -> Value {
    std::fs::write(dir.join("j.fio"), text).expect("write the job file");
    run_json(dm_in(dir).env_remove("DISKMETER_FAULTS").args(["run", "j.fio", "--overwrite"]))
}

/// Job `name` writing 1 MiB over `n` files of 1 MiB in `dir` with `file_service_type=service`.
fn run_service(dir: &Path, name: &str, n: usize, service: &str) -> Value {
    let d = dir.display();
    run_job(
        dir,
        &format!("{W}[{name}]\ndirectory={d}\nnrfiles={n}\nfilesize=1m\nio_size=1m\nfile_service_type={service}\n"),
    )
}

fn files(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| dir.join(n)).collect()
}

const W: &str = "[global]\nbs=4k\nioengine=psync\nrw=write\n";

#[test]
fn roundrobin_sends_each_file_its_turn() {
    let dir = tempdir();
    let fs = files(dir.path(), &["w.0.0", "w.0.1", "w.0.2", "w.0.3"]);
    zero_files(&fs, 1 << 20);
    let doc = run_job(
        dir.path(),
        &format!("{W}[w]\ndirectory={}\nnrfiles=4\nfilesize=1m\nio_size=512k\n", dir.path().display()),
    );
    assert_eq!(u64_at(&results(&doc)[0]["write"], "ops"), 128);
    for f in &fs {
        assert_eq!(written(f), (32, 0), "each of 4 files gets 32 of the 128 writes, from its start: {f:?}");
    }
    // The job's files are in its spec; the human card names them.
    let spec_files = &results(&doc)[0]["spec"]["files"];
    assert_eq!(spec_files["paths"].as_array().map(Vec::len), Some(4), "{spec_files}");
    assert_eq!(spec_files["service"]["kind"]["kind"], "roundrobin", "{spec_files}");
}

#[test]
fn sequential_service_finishes_a_file_first() {
    let dir = tempdir();
    let fs = files(dir.path(), &["a", "b", "c"]);
    zero_files(&fs, 1 << 20);
    let names = fs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(":");
    let doc = run_job(
        dir.path(),
        &format!("{W}[w]\nfilename={names}\nsize=3m\nio_size=1536k\nfile_service_type=sequential\n"),
    );
    assert_eq!(u64_at(&results(&doc)[0]["write"], "bytes"), 1536 << 10);
    let got: Vec<_> = fs.iter().map(|f| written(f)).collect();
    assert_eq!(got, [(256, 0), (128, 0), (0, 0)], "the first file whole, then half of the second");
}

#[test]
fn random_service_switches_every_n_ios() {
    let dir = tempdir();
    let fs = files(dir.path(), &["r.0.0", "r.0.1", "r.0.2", "r.0.3"]);
    zero_files(&fs, 1 << 20);
    run_service(dir.path(), "r", 4, "random:8");
    let got: Vec<_> = fs.iter().map(|f| written(f)).collect();
    // Each file is written from its own start; every pick lasts 8 I/Os; all 256 land somewhere.
    assert_eq!(got.iter().map(|g| g.0).sum::<usize>(), 256, "{got:?}");
    for (prefix, after) in &got {
        assert_eq!((*prefix % 8, *after), (0, 0), "whole runs of 8 from the file's start: {got:?}");
        assert!(*prefix > 0, "a uniform pick of 32 runs over 4 files reaches each: {got:?}");
    }
}

#[test]
fn zipf_service_makes_one_file_hot() {
    let dir = tempdir();
    let names: Vec<String> = (0..8).map(|i| format!("z.0.{i}")).collect();
    let fs = files(dir.path(), &names.iter().map(String::as_str).collect::<Vec<_>>());
    zero_files(&fs, 1 << 20);
    run_service(dir.path(), "z", 8, "zipf:1.5");
    let got: Vec<usize> = fs.iter().map(|f| written(f).0).collect();
    assert_eq!(got.iter().sum::<usize>(), 256, "{got:?}");
    let hottest = got.iter().max().copied().unwrap_or(0);
    assert!(hottest > 256 / 3, "zipf:1.5 over 8 files: the hottest gets far more than 1/8: {got:?}");
}

#[test]
fn each_clone_has_its_own_files_in_its_directory() {
    // fio's generated names JOB.CLONE.FILE; the directories are given out to the clones in turn;
    // each clone moves its own files' bytes.
    let dir = tempdir();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).expect("mkdir");
    std::fs::create_dir(&b).expect("mkdir");
    let fs = vec![a.join("c.0.0"), a.join("c.0.1"), b.join("c.1.0"), b.join("c.1.1")];
    zero_files(&fs, 256 << 10);
    let doc = run_job(
        dir.path(),
        &format!("{W}[c]\ndirectory={}:{}\nnrfiles=2\nfilesize=256k\nnumjobs=2\n", a.display(), b.display()),
    );
    assert_eq!(u64_at(&results(&doc)[0]["write"], "bytes"), 4 * (256 << 10), "2 clones × 2 files × 256 KiB");
    for f in &fs {
        assert_eq!(written(f), (64, 0), "every file written once, whole: {f:?}");
    }
}

#[test]
fn io_uring_reads_over_registered_files_with_direct_io() {
    // New files: diskmeter creates and lays them out, reads them, and removes them afterwards.
    let dir = tempdir();
    let doc = run_job(
        dir.path(),
        &format!(
            "[r]\ndirectory={}\nnrfiles=3\nsize=3m\nbs=4k\nrw=randread\nioengine=io_uring\ndirect=1\niodepth=8\n\
             time_based\nruntime=300ms\nfsync=0\n",
            dir.path().display()
        ),
    );
    let r = &results(&doc)[0];
    // Reads ran and were whole 4 KiB blocks; how many depends on the disk under the temporary
    // directory (a shared VM disk under CI's other tests can take 200 ms per read).
    let ops = u64_at(&r["read"], "ops");
    assert!(ops > 0, "{}", r["read"]);
    assert_eq!(u64_at(&r["read"], "bytes"), ops * 4096, "{}", r["read"]);
    assert!(doc["error"].is_null(), "{}", doc["error"]);
    for i in 0..3 {
        assert!(!dir.path().join(format!("r.0.{i}")).exists(), "diskmeter's own files are removed");
    }
    let out = dm_in(dir.path()).args(["run", "j.fio"]).output().expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("area 1 MiB × 3 files, roundrobin"), "{text}");
}

#[test]
fn fsync_follows_the_writes_over_several_files_as_fios() {
    // fsync=1 over two files: an fsync (of the file just written) after every write but the
    // last, as fio issues it before the next write; all succeed.
    let dir = tempdir();
    let fs = files(dir.path(), &["s.0.0", "s.0.1"]);
    zero_files(&fs, 64 << 10);
    let job = format!("{W}[s]\ndirectory={}\nnrfiles=2\nfilesize=64k\nfsync=1\n", dir.path().display());
    let doc = run_job(dir.path(), &job);
    let r = &results(&doc)[0];
    assert_eq!((u64_at(&r["write"], "ops"), u64_at(r, "fsyncs")), (32, 31), "{r}");
    for f in &fs {
        assert_eq!(written(f), (16, 0));
    }
    if let Some(fio) = find_tool("fio") {
        let v = fio_json(&fio, dir.path(), "j.fio");
        let j = &v["jobs"][0];
        assert_eq!((u64_at(&j["write"], "total_ios"), u64_at(&j["sync"], "total_ios")), (32, 31), "fio's counts");
    } else {
        skip_note("fio is not installed: the fsync count was not compared with fio's");
    }
}

#[test]
fn a_missing_directory_is_refused_and_no_file_is_left() {
    // The second clone's directory is missing: one line, exit 2, and the files already created
    // for the first clone are gone again.
    let dir = tempdir();
    let a = dir.path().join("a");
    std::fs::create_dir(&a).expect("mkdir");
    let nope = dir.path().join("nope");
    std::fs::write(
        dir.path().join("j.fio"),
        format!("{W}[c]\ndirectory={}:{}\nnrfiles=2\nfilesize=64k\nnumjobs=2\n", a.display(), nope.display()),
    )
    .expect("job");
    let out = dm_in(dir.path()).args(["run", "j.fio"]).output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("c.1.0 does not exist and neither does its directory"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("error")).count(), 1, "{err}");
    assert!(entries(&a).is_empty(), "no file left behind: {:?}", entries(&a));
}

#[test]
fn numjobs_clones_each_move_the_jobs_bytes_as_fios_do() {
    // fio's clones are whole jobs: two clones of a 512 KiB sequential write each write it all,
    // from its start (1 MiB in all), where the command line's threads would share it.
    let dir = tempdir();
    let f = dir.path().join("data");
    zero_files(std::slice::from_ref(&f), 1 << 20);
    let doc = run_job(dir.path(), &format!("{W}[w]\nfilename={}\nsize=512k\nnumjobs=2\n", f.display()));
    let r = &results(&doc)[0];
    assert_eq!(u64_at(&r["write"], "bytes"), 1 << 20, "{}", r["write"]);
    assert_eq!(written(&f), (128, 0), "both clones stay in the 512 KiB region");
    if let Some(fio) = find_tool("fio") {
        // fio's own count, side by side.
        std::fs::write(dir.path().join("f.fio"), format!("{W}[w]\nfilename={}\nsize=512k\nnumjobs=2\n", f.display()))
            .expect("job");
        let v = fio_json(&fio, dir.path(), "f.fio");
        let theirs: u64 = v["jobs"].as_array().expect("jobs").iter().map(|j| u64_at(&j["write"], "io_bytes")).sum();
        assert_eq!(theirs, 1 << 20, "fio moves the same bytes");
    } else {
        skip_note("fio is not installed: the side-by-side count with fio was not run");
    }
}

#[test]
fn block_devices_among_a_jobs_files_pass_the_guard_each() {
    // A job over two loop devices writes to neither without --destroy-data, and naming one of
    // them does not let the job write to the other: refused before any I/O, both left zero.
    require_loop!();
    let dir = tempdir();
    let a = LoopDev::blank(&dir.path().join("a.img"), 4 << 20);
    let b = LoopDev::blank(&dir.path().join("b.img"), 4 << 20);
    std::fs::write(
        dir.path().join("j.fio"),
        format!("{W}[w]\nfilename={}:{}\nsize=2m\ndirect=1\n", a.dev_str(), b.dev_str()),
    )
    .expect("job");
    let o = output(dm_in(dir.path()).args(["run", "j.fio"]));
    assert_usage_error(&o, "--destroy-data");
    for named in [a.dev_str(), b.dev_str()] {
        let o = output(dm_in(dir.path()).args(["run", "j.fio", "--destroy-data", named]));
        assert_usage_error(&o, "--destroy-data");
    }
    for img in ["a.img", "b.img"] {
        let data = std::fs::read(dir.path().join(img)).expect("image");
        assert!(data.iter().all(|x| *x == 0), "{img} was written");
    }
}
