//! A device of known speed: a block-I/O cgroup (v2 `io` or v1 `blkio`) throttling one
//! device, and diskmeter started inside it.

use std::path::{Path, PathBuf};
use std::process::{Command as Std, Output};

/// A block-I/O cgroup limiting one device to `iops` reads and writes per second (and, with
/// `bps`, bytes per second); removed on drop.
pub struct Throttle {
    dir: PathBuf,
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
        let (dir, files): (PathBuf, Vec<(&str, String)>) = if let Some(root) = v2 {
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+io");
            let b = bps.map(|b| format!(" rbps={b} wbps={b}")).unwrap_or_default();
            (root.join(&name), vec![("io.max", format!("{devno} riops={iops} wiops={iops}{b}"))])
        } else if v1.join("blkio.throttle.read_iops_device").exists() {
            let mut files = vec![
                ("blkio.throttle.read_iops_device", format!("{devno} {iops}")),
                ("blkio.throttle.write_iops_device", format!("{devno} {iops}")),
            ];
            if let Some(b) = bps {
                files.push(("blkio.throttle.read_bps_device", format!("{devno} {b}")));
                files.push(("blkio.throttle.write_bps_device", format!("{devno} {b}")));
            }
            (v1.join(&name), files)
        } else {
            return Err("no block-I/O cgroup controller (v2 io or v1 blkio) is mounted".into());
        };
        std::fs::create_dir(&dir).map_err(|e| format!("create cgroup {}: {e}", dir.display()))?;
        let t = Throttle { dir };
        for (file, value) in files {
            std::fs::write(t.dir.join(file), &value).map_err(|e| format!("set {file} to {value}: {e}"))?;
        }
        Ok(t)
    }

    /// `diskmeter ARGS` started inside the cgroup (a shell joins it, then execs the binary).
    pub fn diskmeter(&self, args: &[&str]) -> Output {
        let bin = assert_cmd::cargo::cargo_bin("diskmeter");
        let procs = self.dir.join("cgroup.procs");
        Std::new("sh")
            .arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(&procs)
            .arg(&bin)
            .args(args)
            .env("NO_COLOR", "1")
            .output()
            .expect("run diskmeter in the cgroup")
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
