//! From what the user named (a disk, partition, dm/md/loop device, mount point or any
//! file) to the physical whole disks that hold it, through platform's block walker: a
//! partition → its disk, dm and md → their slaves (recursively), a file → the device of
//! its `st_dev`.
//!
//! Virtual disks (virtio, Xen, Hyper-V, loop, RAM disks, zram, nbd, anything under
//! `/sys/devices/virtual`, QEMU/VirtualBox/VMware disk models) have no SMART of their
//! own: they are reported as "SMART unavailable: virtual device", not as failures.

use crate::HealthError;
use platform::block::{Roots, Topology};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where sysfs, procfs and /dev are (tests point these at a fake tree).
#[derive(Debug, Clone)]
pub struct SysPaths {
    pub sys: PathBuf,
    pub proc_dir: PathBuf,
    pub dev: PathBuf,
}

impl Default for SysPaths {
    fn default() -> Self {
        let r = Roots::default();
        Self { sys: r.sys, proc_dir: r.proc, dev: r.dev }
    }
}

/// One physical whole disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disk {
    /// Kernel name: "sda", "nvme0n1", "vda".
    pub name: String,
    /// The node smartctl opens: "/dev/sda".
    pub path: PathBuf,
    /// How the argument led here: ["/home is on dm-1", "dm-1 (vg-home) sits on sda2", "sda2 is a partition of sda"].
    pub via: Vec<String>,
    /// Why this disk is virtual ("virtio disk"), if it is.
    pub virtual_kind: Option<String>,
    pub size_bytes: Option<u64>,
}

fn major_minor(dev: u64) -> (u32, u32) {
    platform::block::split_dev(dev)
}

impl SysPaths {
    fn topo(&self) -> Topology {
        Topology::new(Roots { sys: self.sys.clone(), proc: self.proc_dir.clone(), dev: self.dev.clone() })
    }

    fn exists(&self, name: &str) -> bool {
        self.topo().exists(name)
    }

    /// The kernel name behind a device number.
    fn name_of_dev(&self, dev: u64) -> Option<String> {
        let (ma, mi) = major_minor(dev);
        self.topo().by_number(ma, mi).map(|d| d.name)
    }

    /// Sectors written (512 B units) from the device's `stat`, field 7.
    pub fn sectors_written(&self, name: &str) -> Option<u64> {
        let s = self.topo().attr(name, "stat")?;
        s.split_whitespace().nth(6)?.parse().ok()
    }

    /// Seconds since boot, from `/proc/uptime`.
    pub fn uptime_s(&self) -> Option<f64> {
        let s = fs::read_to_string(self.proc_dir.join("uptime")).ok()?;
        s.split_whitespace().next()?.parse().ok().filter(|u: &f64| u.is_finite() && *u > 0.0)
    }

    fn size_bytes(&self, name: &str) -> Option<u64> {
        self.topo().device(name)?.size_bytes()
    }

    fn label(&self, name: &str) -> String {
        match self.topo().device(name).and_then(|d| d.dm_name) {
            Some(dm) => format!("{name} ({dm})"),
            None => name.to_string(),
        }
    }

    fn slaves(&self, name: &str) -> Vec<String> {
        self.topo().slaves(name)
    }

    /// The parent disk of a partition.
    fn partition_parent(&self, name: &str) -> Option<String> {
        self.topo().device(name)?.partition.map(|p| p.disk)
    }

    /// Why `name` is a virtual disk, or `None` for a physical one.
    pub fn virtual_kind(&self, name: &str) -> Option<String> {
        for (prefix, kind) in [
            ("loop", "loop device"),
            ("zram", "zram compressed RAM disk"),
            ("ram", "RAM disk"),
            ("nbd", "nbd network block device"),
            ("xvd", "Xen virtual disk"),
            ("rbd", "Ceph RBD network disk"),
        ] {
            if name.starts_with(prefix) {
                return Some(kind.into());
            }
        }
        let dev = self.topo().device(name);
        let real = dev.as_ref().map(|d| d.node_path.to_string_lossy().into_owned()).unwrap_or_default();
        if real.contains("/devices/virtual/") {
            return Some("virtual block device with no physical disk below it".into());
        }
        if real.contains("/virtio") {
            return Some("virtio disk".into());
        }
        if real.contains("/xen/") || real.contains("/vbd-") {
            return Some("Xen virtual disk".into());
        }
        if real.to_ascii_lowercase().contains("vmbus") {
            return Some("Hyper-V virtual disk".into());
        }
        let ident = dev.map(|d| d.ident).unwrap_or_default();
        let model = ident.model.unwrap_or_default();
        let vendor = ident.vendor.unwrap_or_default();
        let both = format!("{vendor} {model}");
        for needle in ["QEMU", "VBOX", "VMware", "Virtual disk", "Virtual HD", "Msft"] {
            if both.contains(needle) {
                return Some(format!("virtual disk ({})", both.trim()));
            }
        }
        None
    }

    fn leaf(&self, name: &str, via: Vec<String>) -> Disk {
        Disk {
            name: name.to_string(),
            path: self.dev.join(name),
            via,
            virtual_kind: self.virtual_kind(name),
            size_bytes: self.size_bytes(name),
        }
    }

    fn expand(&self, name: &str, via: Vec<String>, depth: u32, out: &mut Vec<Disk>, seen: &mut BTreeSet<String>) {
        if depth > 16 || !seen.insert(name.to_string()) {
            return;
        }
        if let Some(parent) = self.partition_parent(name) {
            let mut v = via;
            v.push(format!("{name} is a partition of {parent}"));
            return self.expand(&parent, v, depth + 1, out, seen);
        }
        let slaves = self.slaves(name);
        if slaves.is_empty() {
            out.push(self.leaf(name, via));
            return;
        }
        for s in slaves {
            let mut v = via.clone();
            v.push(format!("{} sits on {s}", self.label(name)));
            self.expand(&s, v, depth + 1, out, seen);
        }
    }

    /// The physical whole disks behind `arg`.
    pub fn resolve(&self, arg: &str) -> Result<Vec<Disk>, HealthError> {
        let (name, mut via) = self.block_name_of(arg)?;
        let mut out = Vec::new();
        let mut seen = BTreeSet::new();
        let plain_node = Path::new(arg).file_name().is_some_and(|f| f.to_string_lossy() == name);
        if via.is_empty() && name != arg && arg.contains('/') && !plain_node {
            via.push(format!("{arg} is {}", self.label(&name)));
        }
        self.expand(&name, via, 0, &mut out, &mut seen);
        Ok(out)
    }

    fn block_name_of(&self, arg: &str) -> Result<(String, Vec<String>), HealthError> {
        if self.exists(arg) {
            return Ok((arg.to_string(), Vec::new()));
        }
        let p = Path::new(arg);
        let md = fs::metadata(p).map_err(|e| {
            HealthError::Usage(format!(
                "invalid value for DEVICE: cannot use {arg}: {e}; name a disk (/dev/sda or sda), a partition, \
                 a dm/md device, a mount point or a file"
            ))
        })?;
        if md.file_type().is_block_device() {
            if let Some(n) = self.name_of_dev(md.rdev()) {
                return Ok((n, Vec::new()));
            }
            let base = fs::canonicalize(p).ok().and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()));
            return match base.filter(|b| self.exists(b)) {
                Some(b) => Ok((b, Vec::new())),
                None => Err(HealthError::Runtime(format!("{arg} is a block device that sysfs does not list"))),
            };
        }
        let (ma, mi) = major_minor(md.dev());
        match self.name_of_dev(md.dev()) {
            Some(n) => {
                let label = self.label(&n);
                Ok((n, vec![format!("{arg} is on {label}")]))
            }
            None => Err(HealthError::Usage(format!(
                "invalid value for DEVICE: {arg} is on device {ma}:{mi}, which is not a block device \
                 (tmpfs, overlay, NFS, or btrfs's per-subvolume numbers); name the disk instead, such as /dev/sda"
            ))),
        }
    }

    /// Every whole disk for a run without DEVICE: the entries of `/sys/block` except
    /// loop, RAM and zram devices, empty devices (card readers without a card), and
    /// dm/md devices (their member disks are listed themselves).
    pub fn all_disks(&self) -> Result<Vec<Disk>, HealthError> {
        let names = self
            .topo()
            .disk_names()
            .map_err(|nl| HealthError::Runtime(format!("cannot list {}: {}", nl.path.display(), nl.error)))?;
        Ok(names
            .iter()
            .filter(|n| !["loop", "ram", "zram"].iter().any(|p| n.starts_with(p)))
            .filter(|n| self.size_bytes(n) != Some(0))
            .filter(|n| self.slaves(n).is_empty())
            .map(|n| self.leaf(n, Vec::new()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A fake sysfs: sda (SATA, two partitions), vda (virtio), dm-0 on sda2 and sdb1,
    /// md0 on sdb2 and sdc, loop0, zram0 (size 0).
    pub(crate) fn fake_sys() -> (tempfile::TempDir, SysPaths) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        let dev = |p: &str| {
            let d = root.join("devices").join(p);
            fs::create_dir_all(d.join("slaves")).unwrap();
            fs::write(d.join("size"), "1000\n").unwrap();
            fs::write(d.join("stat"), "1 0 8 0 10 0 2048 0 0 0 0\n").unwrap();
            d
        };
        let sda = dev("pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");
        let sdb = dev("pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0/block/sdb");
        let sdc = dev("pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdc");
        let vda = dev("pci0000:00/0000:00:02.0/virtio1/block/vda");
        let dm0 = dev("virtual/block/dm-0");
        let md0 = dev("virtual/block/md0");
        let loop0 = dev("virtual/block/loop0");
        let zram0 = dev("virtual/block/zram0");
        fs::write(zram0.join("size"), "0\n").unwrap();
        fs::create_dir_all(dm0.join("dm")).unwrap();
        fs::write(dm0.join("dm/name"), "vg-root\n").unwrap();
        let part = |disk: &Path, name: &str| {
            let p = disk.join(name);
            fs::create_dir_all(&p).unwrap();
            fs::write(p.join("partition"), "1\n").unwrap();
            p
        };
        let sda1 = part(&sda, "sda1");
        let sda2 = part(&sda, "sda2");
        let sdb1 = part(&sdb, "sdb1");
        let sdb2 = part(&sdb, "sdb2");
        let class = root.join("class/block");
        let block = root.join("block");
        fs::create_dir_all(&class).unwrap();
        fs::create_dir_all(&block).unwrap();
        for (n, p) in [
            ("sda", &sda),
            ("sdb", &sdb),
            ("sdc", &sdc),
            ("vda", &vda),
            ("dm-0", &dm0),
            ("md0", &md0),
            ("loop0", &loop0),
            ("zram0", &zram0),
            ("sda1", &sda1),
            ("sda2", &sda2),
            ("sdb1", &sdb1),
            ("sdb2", &sdb2),
        ] {
            symlink(p, class.join(n)).unwrap();
            if !n.chars().last().is_some_and(|c| c.is_ascii_digit())
                || n.contains('-')
                || n.starts_with("md")
                || n.starts_with("loop")
                || n.starts_with("zram")
            {
                symlink(p, block.join(n)).unwrap();
            }
        }
        symlink(&sda2, dm0.join("slaves/sda2")).unwrap();
        symlink(&sdb1, dm0.join("slaves/sdb1")).unwrap();
        symlink(&sdb2, md0.join("slaves/sdb2")).unwrap();
        symlink(&sdc, md0.join("slaves/sdc")).unwrap();
        let paths = SysPaths { sys: root.to_path_buf(), proc_dir: root.join("proc"), dev: "/dev".into() };
        (t, paths)
    }

    fn names(v: &[Disk]) -> Vec<&str> {
        v.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn partition_to_disk() {
        let (_t, s) = fake_sys();
        let d = s.resolve("sda1").unwrap();
        assert_eq!(names(&d), vec!["sda"]);
        assert_eq!(d[0].via, vec!["sda1 is a partition of sda"]);
        assert_eq!(d[0].virtual_kind, None);
        assert_eq!(d[0].path, PathBuf::from("/dev/sda"));
    }

    #[test]
    fn dm_over_two_disks() {
        let (_t, s) = fake_sys();
        let d = s.resolve("dm-0").unwrap();
        assert_eq!(names(&d), vec!["sda", "sdb"]);
        assert_eq!(d[0].via, vec!["dm-0 (vg-root) sits on sda2", "sda2 is a partition of sda"]);
    }

    #[test]
    fn md_over_partition_and_disk() {
        let (_t, s) = fake_sys();
        assert_eq!(names(&s.resolve("md0").unwrap()), vec!["sdb", "sdc"]);
    }

    #[test]
    fn virtual_kinds() {
        let (_t, s) = fake_sys();
        assert_eq!(s.resolve("vda").unwrap()[0].virtual_kind.as_deref(), Some("virtio disk"));
        assert_eq!(s.resolve("loop0").unwrap()[0].virtual_kind.as_deref(), Some("loop device"));
        assert_eq!(s.virtual_kind("sda"), None);
    }

    #[test]
    fn all_disks_skips_loop_zram_and_stacked() {
        let (_t, s) = fake_sys();
        assert_eq!(names(&s.all_disks().unwrap()), vec!["sda", "sdb", "sdc", "vda"]);
    }

    #[test]
    fn missing_device_is_a_usage_error() {
        let (_t, s) = fake_sys();
        let e = s.resolve("/nonexistent/disk").unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("DEVICE"));
    }

    #[test]
    fn sectors_written_field_7() {
        let (_t, s) = fake_sys();
        assert_eq!(s.sectors_written("sda"), Some(2048));
    }

    #[test]
    fn major_minor_split() {
        assert_eq!(major_minor(0xfe00), (254, 0));
        assert_eq!(major_minor(0x0801), (8, 1));
        assert_eq!(major_minor((259 << 8) | 3), (259, 3));
    }
}
