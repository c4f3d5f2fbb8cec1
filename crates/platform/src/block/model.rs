//! What a block device is — its kinds, facts and the walker's roots — and the small parsers of
//! what sysfs says, shared by the facade ([`super`]) and each OS's walker (`linux::block`) and by
//! `mounts`, so that none of them reaches back into the facade.

use std::path::{Path, PathBuf};

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

/// Split a `dev_t` into major and minor (glibc's encoding).
pub fn split_dev(dev: u64) -> (u32, u32) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    // Both halves fit 32 bits by construction of the encoding.
    #[allow(clippy::cast_possible_truncation)]
    (major as u32, minor as u32)
}

/// The device number of `major:minor` (Linux's encoding, as glibc's `makedev`): the inverse of
/// [`split_dev`].
pub fn join_dev(major: u32, minor: u32) -> u64 {
    let (major, minor) = (u64::from(major), u64::from(minor));
    ((major & 0xffff_f000) << 32) | ((major & 0xfff) << 8) | ((minor & 0xffff_ff00) << 12) | (minor & 0xff)
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
