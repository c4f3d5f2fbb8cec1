//! Block devices and what sits under them: one walker over the kernel's device tree, with
//! its roots injectable so tests run on fixture trees ([`fixture`]).
//!
//! Facts the OS does not give are `None` or empty, never guessed; off Linux every lookup
//! answers that way, so callers above need no per-OS branches of their own.

use std::path::{Path, PathBuf};

#[cfg(unix)]
pub mod fixture;

pub(crate) mod model;
pub use model::{
    join_dev, parse_scheduler, split_dev, transport_of, Device, Ident, NotListed, Partition, Queue, Roots, Transport,
};

/// The block-device walker over one set of [`Roots`].
#[derive(Debug, Clone, Default)]
pub struct Topology {
    roots: Roots,
}

impl Topology {
    pub fn new(roots: Roots) -> Topology {
        Topology { roots }
    }

    /// A walker over `sys` with /proc and /dev at their usual places.
    pub fn with_sys(sys: impl Into<PathBuf>) -> Topology {
        Topology { roots: Roots { sys: sys.into(), ..Roots::default() } }
    }

    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The device of a kernel name.
    pub fn device(&self, name: &str) -> Option<Device> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::by_name(&self.roots, name)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = name;
            None
        }
    }

    /// The device of a major:minor pair.
    pub fn by_number(&self, major: u32, minor: u32) -> Option<Device> {
        self.lookup_number(major, minor).ok()
    }

    /// [`Topology::by_number`] saying where it looked and what failed, for messages.
    pub fn lookup_number(&self, major: u32, minor: u32) -> Result<Device, NotListed> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::by_number(&self.roots, major, minor)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (major, minor);
            Err(NotListed { path: PathBuf::new(), error: std::io::Error::from(std::io::ErrorKind::Unsupported) })
        }
    }

    /// The device a path leads to: a device node's own device, or the device holding a file
    /// or directory. None for files on devices the kernel has no block device for (tmpfs,
    /// overlay, NFS, btrfs subvolumes).
    pub fn for_path(&self, path: &Path) -> Option<Device> {
        let (major, minor) = dev_numbers(path)?;
        self.by_number(major, minor)
    }

    /// Every name directly under `name` and below, depth first, each once; `name` excluded.
    pub fn members(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.walk(name, &mut |n, _| {
            if n != name {
                out.push(n.to_string());
            }
        });
        out
    }

    /// Visit `name` and every dm/md slave below it, depth first, each once, with its slaves.
    /// The walk is bounded: sysfs holds cycles only through kernel bugs, and a bound costs nothing.
    pub fn walk(&self, name: &str, visit: &mut dyn FnMut(&str, &[String])) {
        fn go(t: &Topology, name: &str, seen: &mut Vec<String>, depth: u32, visit: &mut dyn FnMut(&str, &[String])) {
            if depth > 16 || seen.iter().any(|s| s == name) {
                return;
            }
            seen.push(name.to_string());
            let slaves = t.slaves(name);
            visit(name, &slaves);
            for s in &slaves {
                go(t, s, seen, depth + 1, visit);
            }
        }
        go(self, name, &mut Vec::new(), 0, visit)
    }

    /// Devices directly below `name`, sorted (cheaper than a whole [`Device`]).
    pub fn slaves(&self, name: &str) -> Vec<String> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::list(&self.roots, name, "slaves")
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = name;
            Vec::new()
        }
    }

    /// Whole disks under a device, tracing dm/md slaves down; a partition maps to its disk.
    pub fn leaf_disks(&self, name: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.walk(name, &mut |n, slaves| {
            if slaves.is_empty() {
                let disk = self.device(n).map_or_else(|| n.to_string(), |d| d.disk);
                if !out.contains(&disk) {
                    out.push(disk);
                }
            }
        });
        out
    }

    /// Every name in the stack under `name`: itself, dm/md slaves, and partitions' disks.
    pub fn stack(&self, name: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        self.walk(name, &mut |n, _| {
            out.push(n.to_string());
            if let Some(d) = self.device(n) {
                if d.disk != d.name && !out.contains(&d.disk) {
                    out.push(d.disk);
                }
            }
        });
        out
    }

    /// The whole disks and stacked devices the kernel lists (`block/`), sorted.
    pub fn disk_names(&self) -> Result<Vec<String>, NotListed> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::disk_names(&self.roots)
        }
        #[cfg(not(target_os = "linux"))]
        {
            Ok(Vec::new())
        }
    }

    /// The partitions of a whole disk, in name order.
    pub fn partitions(&self, disk: &str) -> Vec<Device> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::partitions(&self.roots, disk)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = disk;
            Vec::new()
        }
    }

    /// Whether the kernel lists a block device of this name.
    pub fn exists(&self, name: &str) -> bool {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::exists(&self.roots, name)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = name;
            false
        }
    }

    /// One of the device's own attribute files, trimmed (for facts this walker does not model).
    pub fn attr(&self, name: &str, rel: &str) -> Option<String> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::block::attr(&self.roots, name, rel)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (name, rel);
            None
        }
    }
}

/// The major:minor a path leads to: `st_rdev` of a block device node, else `st_dev` of the
/// file; None where the OS has no such numbers or the file system has no block device
/// (major 0 is the kernel's anonymous devices).
pub fn dev_numbers(path: &Path) -> Option<(u32, u32)> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::block::dev_numbers(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Opens the block device at `path` for reading exclusively and closes it again: the kernel's
/// own in-use check (Linux `O_EXCL`), which fails with `EBUSY` while a mounted file system,
/// RAID, LVM or another program holds the device. `Unsupported` where the OS has no such check.
pub fn open_exclusively(path: &Path) -> std::io::Result<()> {
    hold_exclusively(path).map(drop)
}

/// The device at `path` opened exclusively and held (Linux: `O_EXCL` on a block device, which
/// no mount, swap or other exclusive holder may share); where the OS has no such open,
/// `Unsupported`. What [`open_exclusively`] tries, kept open (a test's busy device).
pub fn hold_exclusively(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL | libc::O_CLOEXEC).open(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// What Windows' physical drive `n` (`\\.\PhysicalDriveN`) holds: its volumes, whether one is the
/// system's, its partitions in use (`windows::volume`). `Unsupported` on every other OS.
pub fn physical_drive_facts(n: u32) -> std::io::Result<crate::winpath::DriveFacts> {
    #[cfg(windows)]
    {
        crate::windows::volume::physical_drive_facts(n)
    }
    #[cfg(not(windows))]
    {
        let _ = n;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_parsers() {
        assert_eq!(parse_scheduler("mq-deadline kyber [bfq] none").as_deref(), Some("bfq"));
        assert_eq!(parse_scheduler("none").as_deref(), Some("none"));
        assert_eq!(parse_scheduler("a b"), None);
        assert_eq!(split_dev(0x0801), (8, 1));
        assert_eq!(split_dev(0xfe00), (254, 0));
        assert_eq!(split_dev((259 << 8) | 3), (259, 3));
        for (major, minor) in [(8, 1), (259, 70000), (4095, 255), (4096, 1 << 20), (u32::MAX, u32::MAX)] {
            assert_eq!(split_dev(join_dev(major, minor)), (major, minor));
        }
        #[cfg(target_os = "linux")]
        assert_eq!(join_dev(259, 70000), libc::makedev(259, 70000));
    }
}
