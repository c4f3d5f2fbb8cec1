//! A folder as the target (a mount point, as CrystalDiskMark users pick a drive): the test file
//! `FOLDER/diskmeter.test` is created, filled, locked and removed like `./diskmeter.test`, and
//! the result names both. On a tmpfs folder, an ext4 folder on a loop device (root), a
//! read-only folder, and two runs on one folder.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A folder on tmpfs that any user can make: under /dev/shm.
fn shm_dir() -> Option<tempfile::TempDir> {
    tempfile::Builder::new().prefix("diskmeter-folder-").tempdir_in("/dev/shm").ok()
}

fn target(doc: &Value) -> &Value {
    &doc["target"]
}

fn named(dir: &Path) -> String {
    dir.display().to_string()
}

#[test]
fn mark_run_and_compare_on_tmpfs_folders() {
    let Some(a) = shm_dir() else {
        return skip_note("no /dev/shm to make a tmpfs folder in; folder test skipped");
    };
    let b = shm_dir().expect("a second /dev/shm folder");
    let work = tempdir();
    let file = a.path().join("diskmeter.test");

    // mark: the card on the folder's test file.
    let o = expect_code(
        dm_in(work.path())
            .args(["mark", "--quick", "--profile", "real", "--size", "8M", "--time", "300ms", "--json"])
            .arg(a.path()),
        0,
    );
    let doc = json_of(&o);
    assert_eq!(target(&doc)["path"], file.display().to_string(), "{}", target(&doc));
    assert_eq!(target(&doc)["folder"], named(a.path()));
    assert_eq!(target(&doc)["created_by_diskmeter"], true);
    assert_eq!(target(&doc)["filesystem"], "tmpfs");
    assert_eq!(entries(a.path()), Vec::<String>::new(), "the test file is removed");
    assert_eq!(entries(work.path()), Vec::<String>::new(), "nothing in the working directory");

    // The human card says both.
    let o = expect_code(
        dm_in(work.path()).args(["run", "--size", "8M", "--runtime", "300ms", "--target"]).arg(a.path()),
        0,
    );
    let text = stdout_of(&o);
    assert!(
        text.contains(&format!(
            "{}  (file in the folder {}, 8 MiB, created by diskmeter)",
            file.display(),
            named(a.path())
        )),
        "{text}"
    );
    assert_eq!(entries(a.path()), Vec::<String>::new());

    // compare: one test file per folder, and the plan said up front.
    let o = expect_code(
        dm_in(work.path())
            .args(["compare", "--quick", "--rw", "randread", "--time", "200ms", "--size", "8M", "--json"])
            .arg(a.path())
            .arg(b.path()),
        0,
    );
    let doc = json_of(&o);
    let subjects = doc["compare"]["subjects"].as_array().expect("subjects");
    for (s, dir) in subjects.iter().zip([a.path(), b.path()]) {
        assert_eq!(s["source"], dir.join("diskmeter.test").display().to_string(), "{s}");
        assert_eq!(s["folder"], named(dir), "{s}");
    }
    let err = stderr_of(&o);
    assert!(
        err.contains("about 2 s: 2 targets × 1 test × 4 passes (a warm-up and 3 measured) × 200 ms"),
        "the planned duration comes before the first pass: {err}"
    );
    assert_eq!(entries(a.path()), Vec::<String>::new());
    assert_eq!(entries(b.path()), Vec::<String>::new());

    // One folder named twice would wait for its own lock: refused.
    let o =
        output(dm_in(work.path()).args(["compare", "--quick"]).arg(a.path()).arg(format!("{}/", a.path().display())));
    assert_usage_error(&o, "the same test file");
}

#[test]
fn a_folder_on_an_ext4_loop_device_is_measured_on_that_device() {
    require_loop!();
    let dir = tempdir();
    let mut l = LoopDev::blank(&dir.path().join("ext4.img"), 64 << 20);
    let mnt = dir.path().join("mnt");
    if l.ext4(&mnt, "rw").is_none() {
        return skip_note("mkfs.ext4 is missing; ext4 folder test skipped");
    }
    let doc = run_json(
        dm_in(dir.path())
            .args(["run", "--rw", "randread", "--size", "16M", "--runtime", "500ms", "--target"])
            .arg(&mnt),
    );
    assert_eq!(target(&doc)["folder"], named(&mnt));
    assert_eq!(target(&doc)["path"], mnt.join("diskmeter.test").display().to_string());
    assert_eq!(target(&doc)["filesystem"], "ext4");
    // The state it was measured in: mount options, how full it was.
    let opts = target(&doc)["mount_options"].as_str().expect("mount options").to_string();
    assert!(opts.split(',').any(|o| o == "rw"), "{opts}");
    let (size, free) = (u64_at(target(&doc), "fs_size_bytes"), u64_at(target(&doc), "fs_free_bytes"));
    assert!(size > 50 << 20 && size <= 64 << 20 && free < size, "{size} {free}");
    let dev = l.dev.file_name().expect("loop name").to_string_lossy().into_owned();
    let view = &results(&doc)[0]["device_view"];
    assert_eq!(view["device"], dev, "the device view names the loop device: {view}");
    assert!(u64_at(&view["counters"], "reads") > 0, "{view}");
    let left: Vec<String> = entries(&mnt).into_iter().filter(|e| e != "lost+found").collect();
    assert_eq!(left, Vec::<String>::new(), "the test file is removed");
}

#[test]
fn a_read_only_folder_is_one_line_and_exit_2() {
    let dir = tempdir();
    let ro = dir.path().join("ro");
    // Root writes through permission bits: a read-only mount then; others: a folder without w.
    let _mount = if is_root() {
        std::fs::create_dir(&ro).expect("mount point");
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"])
            .arg(&ro)
            .status()
            .expect("mount");
        assert!(st.success(), "mount -o ro tmpfs");
        Some(Tmpfs(ro.clone()))
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir(&ro).expect("folder");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
        None
    };
    for args in
        [&["mark", "--quick"][..], &["run", "--runtime", "1s", "--target"][..], &["sla", "--latency", "1ms"][..]]
    {
        let o = output(dm_in(dir.path()).args(args).arg(&ro));
        assert_usage_error(&o, "choose a writable directory");
        assert_eq!(stderr_of(&o).trim().lines().count(), 1, "one line: {}", stderr_of(&o));
        assert_eq!(entries(&ro), Vec::<String>::new(), "nothing written");
    }
}

#[test]
fn two_runs_on_one_folder_take_turns() {
    let Some(d) = shm_dir() else {
        return skip_note("no /dev/shm to make a tmpfs folder in; folder lock test skipped");
    };
    let work = tempdir();
    let folder = d.path().to_str().expect("utf-8 path");
    let first = spawn(work.path(), &["run", "--size", "8M", "--runtime", "2s", "-q", "--target", folder]);
    std::thread::sleep(Duration::from_millis(800));
    let o =
        output(dm_in(work.path()).args(["run", "--size", "8M", "--runtime", "200ms", "--no-wait", "--target", folder]));
    assert_usage_error(&o, "in use by");
    let o = expect_code(
        dm_in(work.path()).args(["run", "--size", "8M", "--runtime", "200ms", "-q", "--json", "--target", folder]),
        0,
    );
    let (code, _, err) = wait_exit(first, Duration::from_secs(30));
    assert_eq!(code, Some(0), "{err}");
    assert!(stderr_of(&o).contains("waiting"), "the second run says it waits: {}", stderr_of(&o));
    assert_eq!(target(&json_of(&o))["folder"], folder);
    assert_eq!(entries(d.path()), Vec::<String>::new());
}
