//! A device of known speed: a block-I/O cgroup (v2 `io` or v1 `blkio`) throttling one
//! device, and diskmeter started inside it.

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Output};

/// A block-I/O cgroup limiting one device to `iops` reads and writes per second (and, with
/// `bps`, bytes per second); removed on drop.
pub struct Throttle {
    dir: PathBuf,
    devno: String,
    v2: bool,
}

impl Throttle {
    /// Err (with the reason) where neither a cgroup v2 `io` nor a v1 `blkio` controller is mounted.
    pub fn new(dev: &Path, iops: u32, bps: Option<u64>) -> Result<Throttle, String> {
        use std::os::unix::fs::MetadataExt;
        let rdev = std::fs::metadata(dev).map_err(|e| format!("stat {}: {e}", dev.display()))?.rdev();
        let devno = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
        let name = format!("diskmeter-test-{}", std::process::id());
        let v2 = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"].into_iter().map(Path::new).find(|root| {
            std::fs::read_to_string(root.join("cgroup.controllers"))
                .is_ok_and(|c| c.split_whitespace().any(|x| x == "io"))
        });
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        let (dir, is_v2) = if let Some(root) = v2 {
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+io");
            (root.join(&name), true)
        } else if v1.join("blkio.throttle.read_iops_device").exists() {
            (v1.join(&name), false)
        } else {
            return Err("no block-I/O cgroup controller (v2 io or v1 blkio) is mounted".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("create cgroup {}: {e}", dir.display()))?;
        let t = Throttle { dir, devno, v2: is_v2 };
        t.set(iops, bps)?;
        Ok(t)
    }

    /// Change the limits while diskmeter runs (blk-throttle applies them at once). A `bps` of
    /// `None` lifts the byte limit.
    pub fn set(&self, iops: u32, bps: Option<u64>) -> Result<(), String> {
        let devno = &self.devno;
        let files: Vec<(&str, String)> = if self.v2 {
            let b = bps.map_or(" rbps=max wbps=max".to_string(), |b| format!(" rbps={b} wbps={b}"));
            vec![("io.max", format!("{devno} riops={iops} wiops={iops}{b}"))]
        } else {
            // v1: a limit of 0 removes it.
            let b = bps.unwrap_or(0);
            vec![
                ("blkio.throttle.read_iops_device", format!("{devno} {iops}")),
                ("blkio.throttle.write_iops_device", format!("{devno} {iops}")),
                ("blkio.throttle.read_bps_device", format!("{devno} {b}")),
                ("blkio.throttle.write_bps_device", format!("{devno} {b}")),
            ]
        };
        for (file, value) in files {
            std::fs::write(self.dir.join(file), &value).map_err(|e| format!("set {file} to {value}: {e}"))?;
        }
        Ok(())
    }

    /// `diskmeter ARGS` started inside the cgroup (a shell joins it, then execs the binary).
    pub fn diskmeter(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run diskmeter in the cgroup")
    }

    /// The command that runs `diskmeter ARGS` inside the cgroup, to add to, spawn or run.
    pub fn command(&self, args: &[&str]) -> Std {
        let bin = assert_cmd::cargo::cargo_bin("diskmeter");
        let procs = self.dir.join("cgroup.procs");
        let mut c = Std::new("sh");
        c.arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(&procs)
            .arg(&bin)
            .args(args)
            .envs(super::home_env())
            .env("NO_COLOR", "1");
        c
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// Bytes written to a block device so far (its own counter: /sys/block/NAME/stat, sectors
/// written × 512).
pub fn written_bytes(name: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/block/{name}/stat"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(6).and_then(|v| v.parse::<u64>().ok()))
        .unwrap_or(0)
        * 512
}

/// A stand-in for an SSD's SLC write cache on a throttled loop device: `fast` limits until
/// `cache` bytes have been written (counted from the device's own write counter, from
/// `armed_at` bytes on), then `slow` limits; with `idle_reset`, a device that wrote nothing
/// for that long gets its fast limits and a full cache again. Every switch is recorded as
/// (fast?, device bytes written at the switch).
pub struct SlcCache {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<(bool, u64)>>>,
}

/// Limits: IOPS and optional bytes per second.
pub type Limits = (u32, Option<u64>);

impl SlcCache {
    pub fn start(
        throttle: std::sync::Arc<Throttle>,
        name: &str,
        fast: Limits,
        slow: Limits,
        armed_at: u64,
        cache: u64,
        idle_reset: Option<std::time::Duration>,
    ) -> SlcCache {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let name = name.to_string();
        throttle.set(fast.0, fast.1).expect("fast limits");
        let handle = std::thread::spawn(move || {
            let mut switches = Vec::new();
            let mut is_fast = true;
            let mut base = armed_at;
            let mut last = written_bytes(&name);
            let mut quiet_since = Instant::now();
            while !s.load(Ordering::Relaxed) {
                let w = written_bytes(&name);
                if w != last {
                    last = w;
                    quiet_since = Instant::now();
                }
                if is_fast && w >= base && w - base >= cache {
                    throttle.set(slow.0, slow.1).expect("slow limits");
                    switches.push((false, w));
                    is_fast = false;
                } else if !is_fast && idle_reset.is_some_and(|d| quiet_since.elapsed() >= d) {
                    throttle.set(fast.0, fast.1).expect("fast limits");
                    switches.push((true, w));
                    is_fast = true;
                    base = w;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            switches
        });
        SlcCache { stop, handle: Some(handle) }
    }

    /// Stop watching; the switches made.
    pub fn finish(mut self) -> Vec<(bool, u64)> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.take().map(|h| h.join().expect("SLC thread")).unwrap_or_default()
    }
}

impl Drop for SlcCache {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
