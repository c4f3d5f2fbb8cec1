//! The data-safety guard against real loop devices. Needs root and losetup;
//! skips (with a printed note) otherwise. Loop devices and mounts are always
//! released by Drop guards, also when an assertion panics.

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, File, OpenOptions};
use std::hash::Hasher;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

use diskmeter_engine::measure::{Refusal, Unsafe};
use diskmeter_engine::target::safety::{check_block_write, SafetyReport};
use diskmeter_engine::EngineError;

const IMG: u64 = 64 << 20;

/// Loop devices are a shared resource: run these tests one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

/// A test that cannot run here says so on stderr; under `DISKMETER_REQUIRE_LOOP=1` (CI as
/// root) it fails instead.
fn skip(why: &str) {
    if std::env::var("DISKMETER_REQUIRE_LOOP").as_deref() == Ok("1") {
        panic!("{why}, but DISKMETER_REQUIRE_LOOP=1 requires this test to run");
    }
    eprintln!("note: {why}");
}

/// The lock and a temp dir, or None (with a note) when the environment cannot run these tests.
fn setup(test: &str, tools: &[&str]) -> Option<(MutexGuard<'static, ()>, tempfile::TempDir)> {
    if !platform::host::is_root() {
        skip(&format!("{test} skipped: needs root for loop devices"));
        return None;
    }
    for t in tools.iter().chain(["losetup"].iter()) {
        if tool(t).is_none() {
            skip(&format!("{test} skipped: {t} not found"));
            return None;
        }
    }
    let guard = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = tempfile::tempdir().expect("tempdir");
    Some((guard, dir))
}

fn run(cmd: &str, args: &[&str], path: &Path) {
    let out = Command::new(tool(cmd).unwrap_or_else(|| PathBuf::from(cmd)))
        .args(args)
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("spawn");
    assert!(out.status.success(), "{cmd} {args:?} {}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
}

fn image(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    File::create(&p).expect("create image").set_len(IMG).expect("set_len");
    p
}

/// An attached loop device; detached on drop.
struct Loop(PathBuf);

impl Loop {
    fn attach(img: &Path, partscan: bool) -> Option<Loop> {
        let mut cmd = Command::new(tool("losetup")?);
        cmd.args(["-f", "--show"]);
        if partscan {
            cmd.arg("-P");
        }
        let out = cmd.arg(img).output().ok()?;
        if !out.status.success() {
            eprintln!("note: losetup failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(Loop(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())))
    }
    fn name(&self) -> String {
        self.0.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(l) = tool("losetup") {
            let _ = Command::new(l).arg("-d").arg(&self.0).status();
        }
    }
}

/// A mount; unmounted on drop (declare after its Loop so it drops first).
struct Mount(PathBuf);

impl Mount {
    fn new(dev: &Path, dir: &Path) -> Mount {
        fs::create_dir_all(dir).expect("mkdir");
        let st = Command::new("mount").args(["-t", "ext4"]).arg(dev).arg(dir).status().expect("spawn mount");
        assert!(st.success(), "mount {} failed", dev.display());
        Mount(dir.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn hash_device(p: &Path) -> u64 {
    let mut f = File::open(p).expect("open for hash");
    let mut h = DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        h.write(&buf[..n]);
    }
    h.finish()
}

fn unsafe_msg(r: Result<SafetyReport, EngineError>) -> String {
    match r {
        Err(EngineError::Unsafe(m)) => {
            println!("refused: {m}");
            m.to_string()
        }
        other => panic!("expected an Unsafe refusal, got {other:?}"),
    }
}

/// Write an MBR with one Linux partition (1 MiB .. 33 MiB) into an image file.
fn write_mbr(img: &Path) {
    let f = OpenOptions::new().write(true).open(img).expect("open image");
    let mut sector = [0u8; 512];
    let e = &mut sector[446..462];
    e[0] = 0x00; // not bootable
    e[1..4].copy_from_slice(&[0xFE, 0xFF, 0xFF]); // CHS: use LBA
    e[4] = 0x83; // Linux
    e[5..8].copy_from_slice(&[0xFE, 0xFF, 0xFF]);
    e[8..12].copy_from_slice(&2048u32.to_le_bytes()); // first LBA
    e[12..16].copy_from_slice(&65536u32.to_le_bytes()); // sectors (32 MiB)
    sector[440..444].copy_from_slice(&0x1234_5678u32.to_le_bytes()); // disk id
    sector[510] = 0x55;
    sector[511] = 0xAA;
    f.write_all_at(&sector, 0).expect("write MBR");
    f.sync_all().expect("sync");
}

#[test]
fn ext4_is_refused_overridable_and_untouched() {
    let Some((_g, dir)) = setup("ext4_is_refused_overridable_and_untouched", &["mkfs.ext4"]) else {
        return;
    };
    let img = image(dir.path(), "ext4.img");
    run("mkfs.ext4", &["-q", "-F"], &img);
    let other_img = image(dir.path(), "other.img");
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let Some(other) = Loop::attach(&other_img, false) else {
        return;
    };
    let before = hash_device(&lo.0);

    // No flag: refused, naming the file system and the way forward.
    let m = unsafe_msg(check_block_write(&lo.0, None));
    assert!(m.contains("ext4"), "{m}");
    assert!(m.contains("1080"), "{m}");
    // The way forward (naming this device) is the command's to word: the refusal is for the signatures.
    let r = check_block_write(&lo.0, None);
    assert!(
        matches!(&r, Err(EngineError::Unsafe(Unsafe::Refused { device, why: Refusal::Signatures(_) })) if device == &lo.0),
        "{r:?}"
    );

    // The exact device: allowed, recorded as overridden.
    let r = check_block_write(&lo.0, Some(&lo.0)).expect("override accepted");
    assert!(r.overridden);
    assert!(r.signatures.iter().any(|s| s.name == "ext4" && s.offset == 1080), "{r:?}");

    // A symlink to the same device counts as the same device.
    let link = dir.path().join("link-to-dev");
    std::os::unix::fs::symlink(&lo.0, &link).expect("symlink");
    let r = check_block_write(&link, Some(&lo.0)).expect("symlink target accepted");
    assert!(r.overridden);

    // Another device, a regular file, or a missing path in --destroy-data: refused.
    let m = unsafe_msg(check_block_write(&lo.0, Some(&other.0)));
    assert!(m.contains("differ"), "{m}");
    let m = unsafe_msg(check_block_write(&lo.0, Some(&img)));
    assert!(m.contains("differ"), "{m}");
    let m = unsafe_msg(check_block_write(&lo.0, Some(&dir.path().join("nope"))));
    assert!(m.contains("differ"), "{m}");

    // Nothing was written.
    assert_eq!(hash_device(&lo.0), before, "the guard must only read");
    drop(other);
    drop(lo);
}

#[test]
fn blank_device_is_allowed() {
    let Some((_g, dir)) = setup("blank_device_is_allowed", &[]) else {
        return;
    };
    let img = image(dir.path(), "blank.img");
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let r = check_block_write(&lo.0, None).expect("blank device allowed");
    assert_eq!(r, SafetyReport { signatures: vec![], overridden: false });
    let r = check_block_write(&lo.0, Some(&lo.0)).expect("blank device allowed with flag");
    assert!(!r.overridden && r.signatures.is_empty());
}

#[test]
fn mbr_partitioned_device_is_refused() {
    let Some((_g, dir)) = setup("mbr_partitioned_device_is_refused", &[]) else {
        return;
    };
    let img = image(dir.path(), "mbr.img");
    write_mbr(&img);
    let Some(lo) = Loop::attach(&img, true) else {
        return;
    };
    let m = unsafe_msg(check_block_write(&lo.0, None));
    assert!(m.contains("MBR partition table"), "{m}");
    // With the flag naming it, a bare partition table may be destroyed.
    let r = check_block_write(&lo.0, Some(&lo.0)).expect("override accepted");
    assert!(r.overridden);
}

#[test]
fn gpt_device_is_refused() {
    let Some((_g, dir)) = setup("gpt_device_is_refused", &[]) else {
        return;
    };
    let img = image(dir.path(), "gpt.img");
    {
        let f = OpenOptions::new().write(true).open(&img).expect("open");
        let mut mbr = [0u8; 512];
        mbr[446 + 4] = 0xEE; // protective MBR
        mbr[446 + 8..446 + 12].copy_from_slice(&1u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&u32::MAX.to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        f.write_all_at(&mbr, 0).expect("write");
        f.write_all_at(b"EFI PART", 512).expect("write");
        f.sync_all().expect("sync");
    }
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let m = unsafe_msg(check_block_write(&lo.0, None));
    assert!(m.contains("GPT partition table"), "{m}");
}

#[test]
fn mounted_device_is_refused_even_with_flag() {
    let Some((_g, dir)) = setup("mounted_device_is_refused_even_with_flag", &["mkfs.ext4", "mount"]) else {
        return;
    };
    let img = image(dir.path(), "mnt.img");
    run("mkfs.ext4", &["-q", "-F"], &img);
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let mnt = Mount::new(&lo.0, &dir.path().join("mnt"));
    let m = unsafe_msg(check_block_write(&lo.0, Some(&lo.0)));
    assert!(m.contains("mounted"), "{m}");
    assert!(m.contains("does not override"), "{m}");
    let m = unsafe_msg(check_block_write(&lo.0, None));
    assert!(m.contains("mounted"), "{m}");
    drop(mnt);
    drop(lo);
}

#[test]
fn mounted_partition_is_refused_even_with_flag() {
    let Some((_g, dir)) = setup("mounted_partition_is_refused_even_with_flag", &["mkfs.ext4", "mount"]) else {
        return;
    };
    let img = image(dir.path(), "part.img");
    write_mbr(&img);
    let Some(lo) = Loop::attach(&img, true) else {
        return;
    };
    let part = PathBuf::from(format!("{}p1", lo.0.display()));
    // The partition node may take a moment to appear; kernels built without the
    // MBR parser need user space (partx) to add the partition.
    for attempt in 0..100 {
        if part.exists() {
            break;
        }
        if attempt == 25 {
            if let Some(partx) = tool("partx") {
                let _ = Command::new(partx).arg("-a").arg(&lo.0).status();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if !part.exists() {
        eprintln!("note: {} did not appear (no partition scanning?); skipped", part.display());
        return;
    }
    run("mkfs.ext4", &["-q", "-F"], &part);
    let mnt = Mount::new(&part, &dir.path().join("pmnt"));
    let m = unsafe_msg(check_block_write(&lo.0, Some(&lo.0)));
    assert!(m.contains(&format!("its partition {}p1 is mounted", lo.name())), "{m}");
    // The partition itself is refused too.
    let m = unsafe_msg(check_block_write(&part, Some(&part)));
    assert!(m.contains("mounted"), "{m}");
    drop(mnt);
    drop(lo);
}

#[test]
fn swap_signature_is_refused() {
    let Some((_g, dir)) = setup("swap_signature_is_refused", &["mkswap"]) else {
        return;
    };
    let img = image(dir.path(), "swap.img");
    run("mkswap", &[], &img);
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let m = unsafe_msg(check_block_write(&lo.0, None));
    assert!(m.contains("swap signature"), "{m}");
}

#[test]
fn exclusively_open_device_is_refused_even_with_flag() {
    let Some((_g, dir)) = setup("exclusively_open_device_is_refused_even_with_flag", &[]) else {
        return;
    };
    let img = image(dir.path(), "busy.img");
    let Some(lo) = Loop::attach(&img, false) else {
        return;
    };
    let holder = platform::block::hold_exclusively(&lo.0).expect("exclusive open");
    let m = unsafe_msg(check_block_write(&lo.0, Some(&lo.0)));
    assert!(m.contains("busy"), "{m}");
    drop(holder);
    check_block_write(&lo.0, None).expect("free again once released");
}

/// A device-mapper mapping; removed on drop (declare after its Loop so it drops first).
struct DmMap(String);

impl Drop for DmMap {
    fn drop(&mut self) {
        if let Some(d) = tool("dmsetup") {
            let _ = Command::new(d).args(["--noudevsync", "remove", &self.0]).stderr(Stdio::null()).status();
        }
    }
}

#[test]
fn held_device_is_refused_even_with_flag() {
    let Some((_g, dir)) = setup("held_device_is_refused_even_with_flag", &["dmsetup"]) else {
        return;
    };
    let img = image(dir.path(), "held.img");
    let Some(lo) = Loop::attach(&img, false) else { return };
    let name = format!("diskmeter-test-{}", std::process::id());
    let table = format!("0 {} linear {} 0", IMG / 512, lo.0.display());
    let ok = Command::new(tool("dmsetup").unwrap_or_default())
        .args(["--noudevsync", "create", &name, "--table", &table])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("note: held_device_is_refused_even_with_flag skipped: device-mapper unavailable");
        return;
    }
    let dm = DmMap(name);
    let m = unsafe_msg(check_block_write(&lo.0, Some(&lo.0)));
    assert!(m.contains("held by dm-"), "{m}");
    drop(dm);
    drop(lo);
}
