//! From what the user named (a disk, partition, dm/md/loop device, mount point or any
//! file) to the physical whole disks that hold it, through platform's block walker: a
//! partition → its disk, dm and md → their slaves (recursively), a file → the device of
//! its `st_dev`.
//!
//! Virtual disks (virtio, Xen, Hyper-V, loop, RAM disks, zram, nbd, anything under
//! `/sys/devices/virtual`, QEMU/VirtualBox/VMware disk models) have no SMART of their
//! own: they are reported as "SMART unavailable: virtual device", not as failures.
//!
//! On Windows there is no sysfs: smartctl for Windows names the disks itself, so a drive
//! letter (`C:`) or one of smartctl's names (`/dev/sda`, `/dev/pd0`, `/dev/nvme0`) goes to it
//! as given, `\\.\PhysicalDriveN` as `/dev/pdN`, and any other file or folder as its
//! volume's drive letter (smartctl finds the physical drive under a letter). Without a
//! DEVICE, every `\\.\PhysicalDriveN` (N < 32) that opens is a disk.

use crate::HealthError;
use platform::block::{Roots, Topology};
use serde::Serialize;
#[cfg(unix)]
use std::collections::BTreeSet;
use std::fs;
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;

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

#[cfg(unix)]
fn major_minor(dev: u64) -> (u32, u32) {
    platform::block::split_dev(dev)
}

impl SysPaths {
    fn topo(&self) -> Topology {
        Topology::new(Roots {
            sys: self.sys.clone(),
            proc: self.proc_dir.clone(),
            dev: self.dev.clone(),
            ..Roots::default()
        })
    }

    #[cfg(unix)]
    fn exists(&self, name: &str) -> bool {
        self.topo().exists(name)
    }

    /// The kernel name behind a device number.
    #[cfg(unix)]
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

    #[cfg(unix)]
    fn size_bytes(&self, name: &str) -> Option<u64> {
        self.topo().device(name)?.size_bytes()
    }

    #[cfg(unix)]
    fn label(&self, name: &str) -> String {
        match self.topo().device(name).and_then(|d| d.dm_name) {
            Some(dm) => format!("{name} ({dm})"),
            None => name.to_string(),
        }
    }

    #[cfg(unix)]
    fn slaves(&self, name: &str) -> Vec<String> {
        self.topo().slaves(name)
    }

    /// The parent disk of a partition.
    #[cfg(unix)]
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

    #[cfg(unix)]
    fn leaf(&self, name: &str, via: Vec<String>) -> Disk {
        Disk {
            name: name.to_string(),
            path: self.dev.join(name),
            via,
            virtual_kind: self.virtual_kind(name),
            size_bytes: self.size_bytes(name),
        }
    }

    #[cfg(unix)]
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
    #[cfg(unix)]
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

    #[cfg(unix)]
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
    #[cfg(unix)]
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

/// Windows: the disk smartctl gets for `arg`, and how `arg` led to it ([`windows_name`]).
#[cfg(not(unix))]
impl SysPaths {
    fn windows_disk(&self, name: String, via: Vec<String>) -> Disk {
        Disk { path: PathBuf::from(&name), virtual_kind: self.virtual_kind(&name), name, via, size_bytes: None }
    }

    /// The disk behind `arg`, as smartctl for Windows names it (see the module's notes).
    pub fn resolve(&self, arg: &str) -> Result<Vec<Disk>, HealthError> {
        let (name, via) = windows_name(arg, |p| fs::canonicalize(p).map(|c| c.to_string_lossy().into_owned()))?;
        Ok(vec![self.windows_disk(name, via)])
    }

    /// Every `\\.\PhysicalDriveN` (N < 32) that opens (with no access rights: no
    /// Administrator needed to list them), as `/dev/pdN`.
    pub fn all_disks(&self) -> Result<Vec<Disk>, HealthError> {
        use std::os::windows::fs::OpenOptionsExt;
        let disks: Vec<Disk> = (0..32)
            .filter(|n| fs::OpenOptions::new().access_mode(0).open(format!(r"\\.\PhysicalDrive{n}")).is_ok())
            .map(|n| self.windows_disk(format!("/dev/pd{n}"), Vec::new()))
            .collect();
        if disks.is_empty() {
            return Err(HealthError::Runtime(
                "cannot find any disk (no \\\\.\\PhysicalDriveN opens); name one, such as C: or /dev/pd0".into(),
            ));
        }
        Ok(disks)
    }
}

/// Windows: the name smartctl for Windows takes for `arg`, and how `arg` led to it.
/// `canonicalize` gives a path's full form (`\\?\C:\…`, `\\?\UNC\server\…`).
#[cfg(any(not(unix), test))]
fn windows_name(
    arg: &str,
    canonicalize: impl Fn(&str) -> std::io::Result<String>,
) -> Result<(String, Vec<String>), HealthError> {
    let b = arg.as_bytes();
    // A drive letter: `C:`, `c:\`, `C:/`.
    if (b.len() == 2 || (b.len() == 3 && matches!(b[2], b'\\' | b'/'))) && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Ok((format!("{}:", char::from(b[0].to_ascii_uppercase())), Vec::new()));
    }
    // smartctl's own names.
    if arg.starts_with("/dev/") {
        return Ok((arg.to_string(), Vec::new()));
    }
    for prefix in [r"\\.\PhysicalDrive", r"\\?\PhysicalDrive"] {
        if let Some(n) = arg.get(..prefix.len()).filter(|p| p.eq_ignore_ascii_case(prefix)).and(arg.get(prefix.len()..))
        {
            if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) {
                return Ok((format!("/dev/pd{n}"), Vec::new()));
            }
        }
    }
    let full = canonicalize(arg).map_err(|e| {
        HealthError::Usage(format!(
            "invalid value for DEVICE: cannot use {arg}: {e}; name a disk (C:, /dev/pd0 or /dev/sda) or a file or \
             folder on one"
        ))
    })?;
    let rest = full.strip_prefix(r"\\?\").unwrap_or(&full);
    let r = rest.as_bytes();
    if r.len() >= 2 && r[0].is_ascii_alphabetic() && r[1] == b':' {
        let letter = format!("{}:", char::from(r[0].to_ascii_uppercase()));
        let via = vec![format!("{arg} is on {letter}")];
        return Ok((letter, via));
    }
    if rest.get(..4).is_some_and(|p| p.eq_ignore_ascii_case(r"UNC\")) || rest.starts_with(r"\\") {
        return Err(HealthError::Usage(format!(
            "invalid value for DEVICE: {arg} is on a network share, which has no SMART here; name a local disk"
        )));
    }
    Err(HealthError::Usage(format!(
        "invalid value for DEVICE: cannot tell which drive {arg} is on ({full}); name a disk (C: or /dev/pd0)"
    )))
}

#[cfg(test)]
mod windows_tests {
    use super::*;

    fn name(arg: &str) -> Result<(String, Vec<String>), HealthError> {
        windows_name(arg, |p| match p {
            r"D:\data\f" => Ok(r"\\?\D:\data\f".into()),
            r"e:\x" => Ok(r"\\?\e:\x".into()),
            r"\\srv\share\f" => Ok(r"\\?\UNC\srv\share\f".into()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        })
    }

    #[test]
    fn drive_letters_and_smartctl_names() {
        for (arg, want) in [("C:", "C:"), ("c:", "C:"), (r"d:\", "D:"), ("z:/", "Z:")] {
            assert_eq!(name(arg).unwrap(), (want.to_string(), vec![]), "{arg}");
        }
        for arg in ["/dev/sda", "/dev/pd0", "/dev/nvme0", "/dev/csmi0,1"] {
            assert_eq!(name(arg).unwrap(), (arg.to_string(), vec![]), "{arg}");
        }
        assert_eq!(name(r"\\.\PhysicalDrive2").unwrap().0, "/dev/pd2");
        assert_eq!(name(r"\\.\physicaldrive12").unwrap().0, "/dev/pd12");
        assert!(name(r"\\.\PhysicalDriveX").is_err());
    }

    #[test]
    fn files_are_on_their_drive_letter() {
        assert_eq!(name(r"D:\data\f").unwrap(), ("D:".to_string(), vec![r"D:\data\f is on D:".to_string()]));
        assert_eq!(name(r"e:\x").unwrap().0, "E:");
        let e = name(r"\\srv\share\f").unwrap_err();
        assert!(matches!(&e, HealthError::Usage(m) if m.contains("network share")), "{e:?}");
        let e = name("nope").unwrap_err();
        assert!(matches!(&e, HealthError::Usage(m) if m.contains("cannot use nope")), "{e:?}");
    }
}

#[cfg(all(test, unix))]
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
