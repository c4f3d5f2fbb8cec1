//! Never destroy data through an output path: every command that writes a file is aimed at an
//! existing user file, a device node, a FIFO, a directory and a full file system, and the
//! destination must be exactly as it was afterwards (same bytes, or the same node), with exit 2
//! (refused before any work) or 1 (the file system failed), and nothing left beside it.

mod common;

use common::*;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::Duration;

/// One command that writes a file: its arguments with `{out}` for the output path, and the
/// extension that output needs.
struct Writer {
    name: &'static str,
    args: &'static [&'static str],
    ext: &'static str,
}

const WRITERS: &[Writer] = &[
    Writer {
        name: "run -o",
        args: &["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "{out}"],
        ext: "json",
    },
    Writer {
        name: "run --html",
        args: &["run", "--engine", "null", "--runtime", "200ms", "-q", "--html", "{out}"],
        ext: "html",
    },
    Writer {
        name: "sla -o",
        args: &[
            "sla",
            "--engine",
            "null",
            "--max-threads",
            "1",
            "--max-qd",
            "2",
            "--ramp",
            "0s",
            "--min-windows",
            "2",
            "--max-windows",
            "2",
            "--latency",
            "1ms",
            "-q",
            "-o",
            "{out}",
        ],
        ext: "md",
    },
    Writer {
        name: "compare -o",
        args: &["compare", "--results", "r.json", "r2.json", "-q", "-o", "{out}"],
        ext: "csv",
    },
    Writer { name: "report -o", args: &["report", "r.json", "-o", "{out}"], ext: "html" },
    Writer {
        name: "cache simulate -o",
        args: &["cache", "simulate", "--trace", "t.dmt", "--cache-size", "1M", "-q", "-o", "{out}"],
        ext: "json",
    },
    Writer { name: "cache mrc -o", args: &["cache", "mrc", "--trace", "t.dmt", "-q", "-o", "{out}"], ext: "txt" },
    Writer {
        name: "cache warmup -o",
        args: &[
            "cache",
            "warmup",
            "--capacity",
            "1G",
            "--threshold",
            "2",
            "--hdd-iops",
            "200",
            "--io-size",
            "64k",
            "--hdds",
            "4",
            "-q",
            "-o",
            "{out}",
        ],
        ext: "json",
    },
    Writer {
        name: "cache synth -o",
        args: &["cache", "synth", "--dist", "uniform", "--blocks", "1000", "--requests", "20000", "-o", "{out}"],
        ext: "dmt",
    },
    Writer {
        name: "cache convert -o",
        args: &[
            "cache",
            "convert",
            "--trace",
            "t.csv",
            "--format",
            "csv:time=0:us,op=1,offset=2,size=3,header",
            "-o",
            "{out}",
        ],
        ext: "dmt",
    },
    Writer { name: "surface -o", args: &["surface", "scan.img", "--zones", "4", "-q", "-o", "{out}"], ext: "json" },
    Writer {
        name: "surface --badblocks-out",
        args: &["surface", "scan.img", "--zones", "4", "-q", "--badblocks-out", "{out}"],
        ext: "txt",
    },
    Writer {
        name: "top --record",
        args: &["top", "--count", "1", "--interval", "100ms", "--plain", "-q", "--record", "{out}"],
        ext: "jsonl",
    },
    Writer {
        name: "top -o",
        args: &["top", "--count", "1", "--interval", "100ms", "--plain", "-q", "-o", "{out}"],
        ext: "txt",
    },
    Writer { name: "health -o", args: &["health", "scan.img", "--no-state", "-q", "-o", "{out}"], ext: "json" },
];

/// The inputs the writers read: a result, a binary trace, a CSV trace and a small image.
fn fixtures(dir: &Path) {
    expect_code(dm_in(dir).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "r.json"]), 0);
    expect_code(dm_in(dir).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "r2.json"]), 0);
    for t in ["t.dmt", "t.csv"] {
        expect_code(
            dm_in(dir).args(["cache", "synth", "--dist", "uniform", "--blocks", "1000", "--requests", "5000", "-o", t]),
            0,
        );
    }
    std::fs::write(dir.join("scan.img"), vec![7u8; 4 << 20]).expect("write scan.img");
}

fn run_writer(dir: &Path, w: &Writer, out: &Path) -> std::process::Output {
    let args: Vec<String> =
        w.args.iter().map(|a| if *a == "{out}" { out.display().to_string() } else { a.to_string() }).collect();
    // A FIFO opened for writing would block: the timeout turns such a bug into a failure.
    output(dm_in(dir).args(&args).env("DISKMETER_SMARTCTL", "/nonexistent").timeout(Duration::from_secs(60)))
}

/// What a destination looked like, to compare before and after.
#[derive(Debug, PartialEq)]
enum Snapshot {
    File(Vec<u8>, u32),
    Node(u32, u64),
    Fifo(u64),
    Dir(Vec<String>),
}

fn snapshot(p: &Path) -> Snapshot {
    let m = std::fs::symlink_metadata(p).expect("destination still exists");
    let ft = m.file_type();
    if ft.is_file() {
        Snapshot::File(std::fs::read(p).expect("read"), m.mode())
    } else if ft.is_char_device() || ft.is_block_device() {
        Snapshot::Node(m.mode(), m.rdev())
    } else if ft.is_fifo() {
        Snapshot::Fifo(m.ino())
    } else {
        Snapshot::Dir(entries(p))
    }
}

fn assert_untouched(dir: &Path, w: &Writer, dest: &Path, before: &Snapshot, listing: &[String], code: i32) {
    let o = run_writer(dir, w, dest);
    assert_eq!(
        o.status.code(),
        Some(code),
        "{} at {}: expected exit {code}\nstderr:\n{}",
        w.name,
        dest.display(),
        stderr_of(&o)
    );
    let err = stderr_of(&o);
    assert!(err.lines().any(|l| l.starts_with("error: ")), "{}: no error line:\n{err}", w.name);
    assert_eq!(&snapshot(dest), before, "{} changed {}", w.name, dest.display());
    assert_eq!(entries(dir), listing, "{} left something in the directory", w.name);
}

#[test]
fn outputs_never_replace_user_files_nodes_fifos_or_directories() {
    let dir = tempdir();
    let d = dir.path();
    fixtures(d);
    let root = is_root();
    if !root {
        skip_note("not root; the device-node case of this test is skipped (CI runs it as root)");
    }
    for w in WRITERS {
        let user = d.join(format!("user.{}", w.ext));
        std::fs::write(&user, b"my precious data\n").expect("write user file");
        let fifo = d.join(format!("fifo.{}", w.ext));
        rustix_mkfifo(&fifo);
        let sub = d.join(format!("dir.{}", w.ext));
        std::fs::create_dir(&sub).expect("mkdir");
        std::fs::write(sub.join("inside"), b"keep").expect("write");
        let node = d.join(format!("node.{}", w.ext));
        if root {
            mknod_null(&node);
        }
        let listing = entries(d);
        let mut cases = vec![user.clone(), fifo.clone(), sub.clone()];
        if root {
            cases.push(node.clone());
        }
        for dest in &cases {
            let before = snapshot(dest);
            assert_untouched(d, w, dest, &before, &listing, 2);
        }
        for p in [&user, &fifo, &node] {
            let _ = std::fs::remove_file(p);
        }
        std::fs::remove_dir_all(&sub).expect("rm dir");
    }
}

#[test]
fn a_full_file_system_gets_nothing_and_existing_outputs_survive() {
    if !is_root() {
        skip_note("not root; the full-file-system test is skipped (CI runs it as root)");
        return;
    }
    let dir = tempdir();
    let d = dir.path();
    fixtures(d);
    let Some(fs) = Tmpfs::mount(&d.join("full"), "64k") else {
        skip_note("cannot mount a tmpfs here; the full-file-system test is skipped");
        return;
    };
    let listing = entries(d);
    for w in WRITERS {
        fs.fill();
        // A new file: refused by ENOSPC, nothing left (no 0-byte file, no temporary).
        let fresh = fs.0.join(format!("new.{}", w.ext));
        let o = run_writer(d, w, &fresh);
        if w.name == "surface --badblocks-out" && o.status.code() == Some(0) {
            // An empty bad-block list needs no space: it is written, and is empty.
            assert_eq!(std::fs::read(&fresh).expect("read").len(), 0);
            std::fs::remove_file(&fresh).expect("rm");
        } else {
            assert_eq!(o.status.code(), Some(1), "{}: {}", w.name, stderr_of(&o));
        }
        assert_eq!(entries(&fs.0), ["filler"], "{} left something on the full file system", w.name);
        assert_eq!(entries(d), listing);
        // An existing file of the user's, with --force where the command has it: unchanged.
        let mine = fs.0.join(format!("mine.{}", w.ext));
        std::fs::remove_file(fs.0.join("filler")).expect("make room");
        std::fs::write(&mine, b"old contents\n").expect("write");
        let _ = std::fs::write(fs.0.join("filler"), vec![0u8; 1 << 20]);
        let before = snapshot(&mine);
        let o = run_writer(d, w, &mine);
        assert!(matches!(o.status.code(), Some(1 | 2)), "{}: {:?} {}", w.name, o.status, stderr_of(&o));
        assert_eq!(snapshot(&mine), before, "{} changed an existing file on a full file system", w.name);
        std::fs::remove_file(&mine).expect("rm");
        assert_eq!(entries(&fs.0), ["filler"], "{}", w.name);
    }
}

#[test]
fn a_diskmeter_output_is_replaced_and_force_replaces_a_foreign_file() {
    let dir = tempdir();
    let d = dir.path();
    expect_code(dm_in(d).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "a.json"]), 0);
    let first = std::fs::read(d.join("a.json")).expect("read");
    expect_code(dm_in(d).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "a.json"]), 0);
    assert_ne!(std::fs::read(d.join("a.json")).expect("read"), first, "a diskmeter result is replaced");
    std::fs::write(d.join("b.csv"), b"a,b\n1,2\n").expect("write");
    let o = expect_code(dm_in(d).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "b.csv"]), 2);
    assert!(stderr_of(&o).contains("--force"), "{}", stderr_of(&o));
    expect_code(dm_in(d).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "b.csv", "--force"]), 0);
    assert!(std::fs::read_to_string(d.join("b.csv")).expect("read").starts_with("name,direction"));
    // A symlink to a result: the result is replaced, the link stays.
    std::os::unix::fs::symlink("a.json", d.join("link.json")).expect("symlink");
    expect_code(dm_in(d).args(["run", "--engine", "null", "--runtime", "200ms", "-q", "-o", "link.json"]), 0);
    assert!(std::fs::symlink_metadata(d.join("link.json")).expect("meta").file_type().is_symlink());
    assert_eq!(entries(d), ["a.json", "b.csv", "link.json"]);
    // `-` is stdout.
    let o = expect_code(dm_in(d).args(["run", "--engine", "null", "--runtime", "200ms", "-o", "-"]), 0);
    let doc = json_of(&o);
    assert_eq!(doc["command"], "run");
}

fn rustix_mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", p.display());
}

/// A scratch null device (char 1:3) in the test directory.
fn mknod_null(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path; makedev has no preconditions.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    assert_eq!(r, 0, "mknod {}: {}", p.display(), std::io::Error::last_os_error());
}
