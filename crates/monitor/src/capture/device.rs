//! The block device to capture: its numbers, its kernel name, and for a partition the disk
//! it is on and where (the block tracepoints report the whole disk and absolute sectors).
//! Linux only: elsewhere [`resolve`] fails with `unsupported`.

#[cfg(target_os = "linux")]
use std::fs;
#[cfg(target_os = "linux")]
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::MonitorError;
#[cfg(target_os = "linux")]
use platform::block::Roots;
use platform::block::Topology;

/// A partition's place on its disk, in 512-byte sectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The whole disk's kernel name.
    pub disk: String,
    pub start_sector: u64,
    pub sectors: u64,
}

/// A block device, resolved through sysfs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// As given.
    pub path: PathBuf,
    /// Kernel name (`loop0`, `sda1`).
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// The whole disk's numbers (the device's own for a whole disk).
    pub disk_major: u32,
    pub disk_minor: u32,
    pub partition: Option<Partition>,
}

impl BlockDevice {
    /// The whole disk's `dev_t` as the kernel stores it in events: `major << 20 | minor`.
    pub fn kernel_dev(&self) -> u32 {
        (self.disk_major << 20) | self.disk_minor
    }
}

#[cfg(target_os = "linux")]
use platform::block::split_dev;

/// Resolves `path` (a device node) with the system's sysfs.
#[cfg(target_os = "linux")]
pub fn resolve(path: &Path) -> Result<BlockDevice, MonitorError> {
    resolve_in(path, &Roots::default().sys)
}

/// Resolves `path`: where there is no tracefs, always [`unsupported`] (a usage error).
#[cfg(not(target_os = "linux"))]
pub fn resolve(_path: &Path) -> Result<BlockDevice, MonitorError> {
    Err(unsupported())
}

/// Why capture fails where there is no tracefs: one line, a usage error (exit 2).
#[cfg(not(target_os = "linux"))]
pub fn unsupported() -> MonitorError {
    let os = if cfg!(windows) { "Windows" } else { "this OS" };
    MonitorError::Usage(format!("capture needs Linux's tracefs; it is not available on {os}"))
}

/// [`resolve`] with sysfs at `sys` (tests).
#[cfg(target_os = "linux")]
pub fn resolve_in(path: &Path, sys: &Path) -> Result<BlockDevice, MonitorError> {
    let shown = path.display();
    let meta = fs::metadata(path).map_err(|e| {
        MonitorError::Usage(match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("{shown} does not exist; name a block device such as /dev/sdb or /dev/loop0")
            }
            _ => format!("cannot look at {shown}: {e}"),
        })
    })?;
    if !meta.file_type().is_block_device() {
        return Err(MonitorError::Usage(format!(
            "{shown} is not a block device; capture records the requests of a disk or partition (/dev/NAME)"
        )));
    }
    let (major, minor) = split_dev(meta.rdev());
    from_sysfs(path, major, minor, sys)
}

/// The sysfs half of [`resolve_in`], through platform's walker: the device of MAJ:MIN and,
/// for a partition, its start, size and disk.
pub fn from_sysfs(path: &Path, major: u32, minor: u32, sys: &Path) -> Result<BlockDevice, MonitorError> {
    let d = Topology::with_sys(sys).lookup_number(major, minor).map_err(|nl| {
        MonitorError::Runtime(format!(
            "cannot find {} ({major}:{minor}) in sysfs ({}: {}); is /sys mounted?",
            path.display(),
            nl.path.display(),
            nl.error
        ))
    })?;
    let name = d.name.clone();
    let mut dev = BlockDevice {
        path: path.to_path_buf(),
        name: name.clone(),
        major,
        minor,
        disk_major: major,
        disk_minor: minor,
        partition: None,
    };
    if let Some(p) = &d.partition {
        let (Some(start), Some(size)) = (p.start_sector, p.sectors) else {
            return Err(MonitorError::Runtime(format!("cannot read the start and size of partition {name} in sysfs")));
        };
        if (d.disk_major, d.disk_minor) == (0, 0) {
            return Err(MonitorError::Runtime(format!("cannot find the disk partition {name} is on in sysfs")));
        }
        dev.disk_major = d.disk_major;
        dev.disk_minor = d.disk_minor;
        dev.partition = Some(Partition { disk: p.disk.clone(), start_sector: start, sectors: size });
    }
    // Request-based (blk-mq) disks queue requests of their own; bio-based ones (device-mapper,
    // md, NVMe multipath heads, zram) never go through the request tracepoints.
    if !d.request_based {
        let disk = &d.disk;
        return Err(MonitorError::Usage(format!(
            "{} ({disk}) does not queue requests of its own (device-mapper, md, zram or a multipath head \
             hands its I/O to the devices below it), so the block request tracepoints never see it; capture \
             the devices below it instead (ls /sys/block/{disk}/slaves)",
            path.display()
        )));
    }
    Ok(dev)
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fake_sys() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let sys = t.path();
        let disk = sys.join("devices/pci0/block/sda");
        fs::create_dir_all(disk.join("mq/0")).unwrap();
        fs::write(disk.join("dev"), "8:0\n").unwrap();
        let part = disk.join("sda2");
        fs::create_dir_all(&part).unwrap();
        fs::write(part.join("dev"), "8:2\n").unwrap();
        fs::write(part.join("partition"), "2\n").unwrap();
        fs::write(part.join("start"), "2048\n").unwrap();
        fs::write(part.join("size"), "1000000\n").unwrap();
        let dm = sys.join("devices/virtual/block/dm-0");
        fs::create_dir_all(&dm).unwrap();
        fs::write(dm.join("dev"), "253:0\n").unwrap();
        fs::create_dir_all(sys.join("dev/block")).unwrap();
        std::os::unix::fs::symlink(&disk, sys.join("dev/block/8:0")).unwrap();
        std::os::unix::fs::symlink(&part, sys.join("dev/block/8:2")).unwrap();
        std::os::unix::fs::symlink(&dm, sys.join("dev/block/253:0")).unwrap();
        t
    }

    #[test]
    fn whole_disk_partition_and_bio_based() {
        let t = fake_sys();
        let d = from_sysfs(Path::new("/dev/sda"), 8, 0, t.path()).unwrap();
        assert_eq!((d.name.as_str(), d.kernel_dev(), d.partition.is_none()), ("sda", 8 << 20, true));
        let p = from_sysfs(Path::new("/dev/sda2"), 8, 2, t.path()).unwrap();
        assert_eq!(p.name, "sda2");
        assert_eq!(p.kernel_dev(), 8 << 20);
        assert_eq!(p.partition, Some(Partition { disk: "sda".into(), start_sector: 2048, sectors: 1_000_000 }));
        let e = from_sysfs(Path::new("/dev/dm-0"), 253, 0, t.path()).unwrap_err();
        assert!(matches!(&e, MonitorError::Usage(m) if m.contains("slaves")), "{e:?}");
        assert!(matches!(from_sysfs(Path::new("/dev/x"), 9, 9, t.path()), Err(MonitorError::Runtime(_))));
    }

    #[test]
    fn bad_paths() {
        let t = tempfile::tempdir().unwrap();
        let missing = t.path().join("nope");
        let e = resolve(&missing).unwrap_err();
        assert!(matches!(&e, MonitorError::Usage(m) if m.contains("does not exist")), "{e:?}");
        let file = t.path().join("f");
        fs::write(&file, "x").unwrap();
        let e = resolve(&file).unwrap_err();
        assert!(matches!(&e, MonitorError::Usage(m) if m.contains("not a block device")), "{e:?}");
    }

    #[test]
    fn dev_t_encoding() {
        assert_eq!(split_dev(0x0801), (8, 1));
        assert_eq!(split_dev(libc::makedev(259, 70000)), (259, 70000));
    }
}
