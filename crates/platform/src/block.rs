//! Block devices and what sits under them: one walker over the kernel's device tree, with
//! its roots injectable so tests run on fixture trees ([`fixture`]).
//!
//! Facts the OS does not give are `None` or empty, never guessed; off Linux every lookup
//! answers that way, so callers above need no per-OS branches of their own.

use std::path::{Path, PathBuf};

#[cfg(unix)]
pub mod fixture;

/// Where the kernel's trees are mounted: `/sys`, `/proc` and `/dev` (and `/etc`) on a live system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roots {
    pub sys: PathBuf,
    pub proc: PathBuf,
    pub dev: PathBuf,
    /// `/etc`: configuration the doctor reads (the trim timer).
    pub etc: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Roots {
            sys: PathBuf::from("/sys"),
            proc: PathBuf::from("/proc"),
            dev: PathBuf::from("/dev"),
            etc: PathBuf::from("/etc"),
        }
    }
}

/// How a device reaches the machine, as far as its place in the device tree tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Nvme,
    Sata,
    Scsi,
    Usb,
    Virtio,
    Mmc,
    Xen,
    Loop,
    Dm,
    Md,
    Zram,
    /// brd RAM disks (`ram0`).
    Ram,
    Nbd,
    Unknown,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Nvme => "nvme",
            Transport::Sata => "sata",
            Transport::Scsi => "scsi",
            Transport::Usb => "usb",
            Transport::Virtio => "virtio",
            Transport::Mmc => "mmc",
            Transport::Xen => "xen",
            Transport::Loop => "loop",
            Transport::Dm => "dm",
            Transport::Md => "md",
            Transport::Zram => "zram",
            Transport::Ram => "ram",
            Transport::Nbd => "nbd",
            Transport::Unknown => "unknown",
        }
    }
}

/// A partition's place on its disk, in 512-byte sectors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// The whole disk's kernel name.
    pub disk: String,
    pub number: Option<u32>,
    /// None when sysfs lacks the attribute (callers decide whether that is fatal).
    pub start_sector: Option<u64>,
    pub sectors: Option<u64>,
}

/// The request queue's limits, read from the whole disk (partitions have no queue).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Queue {
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub max_sectors_kb: Option<u32>,
    pub max_hw_sectors_kb: Option<u32>,
    pub rotational: Option<bool>,
    /// The active scheduler: the bracketed word of `scheduler`, or its only word.
    pub scheduler: Option<String>,
    /// "write back" or "write through".
    pub write_cache: Option<String>,
    pub discard_granularity: Option<u64>,
}

/// What the device says it is (whole disk's `device/` attributes, trimmed, empty as None).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ident {
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub vendor: Option<String>,
}

/// One block device as the kernel lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Kernel name: "sda1", "nvme0n1", "dm-0".
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// The whole disk: the device itself unless it is a partition.
    pub disk: String,
    pub disk_major: u32,
    pub disk_minor: u32,
    pub partition: Option<Partition>,
    /// Where the device sits in the device tree (the resolved sysfs directory).
    pub node_path: PathBuf,
    /// Size in 512-byte sectors.
    pub sectors: Option<u64>,
    pub removable: Option<bool>,
    /// Under the virtual device tree (no bus: loop, dm, md, zram, …).
    pub is_virtual: bool,
    /// The disk queues requests of its own (blk-mq); dm, md and zram hand bios down instead.
    pub request_based: bool,
    pub transport: Transport,
    pub loop_backing_file: Option<PathBuf>,
    /// Device-mapper name ("vg0-root", "luks-…").
    pub dm_name: Option<String>,
    /// md RAID level ("raid1").
    pub md_level: Option<String>,
    /// Devices directly below (dm/md members), sorted.
    pub slaves: Vec<String>,
    /// Devices directly above, sorted.
    pub holders: Vec<String>,
    pub queue: Queue,
    pub ident: Ident,
}

impl Device {
    pub fn size_bytes(&self) -> Option<u64> {
        self.sectors.and_then(|s| s.checked_mul(512))
    }

    pub fn is_partition(&self) -> bool {
        self.partition.is_some()
    }
}

/// A device number the OS does not list: where the walker looked and why it found nothing.
#[derive(Debug)]
pub struct NotListed {
    pub path: PathBuf,
    pub error: std::io::Error,
}

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

/// Split a `dev_t` into major and minor (glibc's encoding).
pub fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    // Both halves fit 32 bits by construction of the encoding.
    #[allow(clippy::cast_possible_truncation)]
    (major as u32, minor as u32)
}

/// The active scheduler: the bracketed word, or the only word.
pub fn parse_scheduler(s: &str) -> Option<String> {
    if let (Some(a), Some(b)) = (s.find('['), s.find(']')) {
        if a < b {
            return Some(s[a + 1..b].to_string());
        }
    }
    let mut words = s.split_whitespace();
    match (words.next(), words.next()) {
        (Some(w), None) => Some(w.to_string()),
        _ => None,
    }
}

/// Transport from the device's name and its place in the device tree.
pub fn transport_of(name: &str, node_path: &Path) -> Transport {
    let digits_after =
        |p: &str| name.strip_prefix(p).is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()));
    if name.starts_with("loop") {
        return Transport::Loop;
    }
    if name.starts_with("dm-") {
        return Transport::Dm;
    }
    if name.starts_with("md") {
        return Transport::Md;
    }
    if name.starts_with("zram") {
        return Transport::Zram;
    }
    if digits_after("ram") {
        return Transport::Ram;
    }
    if name.starts_with("nbd") {
        return Transport::Nbd;
    }
    let p = node_path.to_string_lossy();
    if p.contains("/usb") {
        Transport::Usb
    } else if name.starts_with("nvme") || p.contains("/nvme") {
        Transport::Nvme
    } else if p.contains("/virtio") {
        Transport::Virtio
    } else if name.starts_with("mmcblk") || p.contains("/mmc") {
        Transport::Mmc
    } else if name.starts_with("xvd") || p.contains("/xen/") || p.contains("/vbd-") {
        Transport::Xen
    } else if p.contains("/ata") {
        Transport::Sata
    } else if p.contains("/host") && p.contains("/target") {
        Transport::Scsi
    } else {
        Transport::Unknown
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
    }
}
