//! What a `/proc/diskstats` name is: whole disk, partition, loop, device-mapper, md or
//! another virtual device, and which latency class it belongs to. Read from sysfs under a
//! root that tests point at a fake tree.

use platform::block::Topology;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The kind of block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A whole physical (or paravirtual) disk: `/sys/block/NAME` outside `/sys/devices/virtual`.
    Disk,
    /// A partition of a disk (`/sys/class/block/NAME/partition` exists); never summed into its disk.
    Partition,
    Loop,
    /// Device-mapper (LVM, LUKS, multipath); shown by its mapper name.
    Dm,
    /// Software RAID.
    Md,
    /// Other virtual devices (zram, ram, nbd, …).
    Virtual,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Disk => "disk",
            Kind::Partition => "partition",
            Kind::Loop => "loop",
            Kind::Dm => "dm",
            Kind::Md => "md",
            Kind::Virtual => "virtual",
        }
    }
}

/// Latency class: picks the saturation thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Nvme,
    Ssd,
    Hdd,
    /// Virtual disks (virtio, Xen, loop, zram, …): the medium behind them is unknown.
    Virtual,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Nvme => "nvme",
            Class::Ssd => "ssd",
            Class::Hdd => "hdd",
            Class::Virtual => "virtual",
        }
    }
}

/// Everything the monitor knows about a device besides its counters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// Kernel name (`vda`, `dm-0`).
    pub name: String,
    /// Device-mapper name (`vg0-root`) for dm devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapper: Option<String>,
    pub kind: Kind,
    pub class: Class,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// The disk a partition belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Devices below (dm/md members).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slaves: Vec<String>,
}

impl DeviceInfo {
    /// The name to show: the mapper name for dm devices, else the kernel name.
    pub fn display_name(&self) -> &str {
        self.mapper.as_deref().unwrap_or(&self.name)
    }

    /// A device seen in diskstats but absent from sysfs (or from a recording): guess from the name.
    pub fn guess(name: &str) -> DeviceInfo {
        let kind = kind_from_name(name).unwrap_or(Kind::Disk);
        DeviceInfo {
            name: name.to_string(),
            mapper: None,
            kind,
            class: class_from_name(name, kind, None),
            rotational: None,
            parent: None,
            slaves: Vec::new(),
        }
    }
}

fn kind_from_name(name: &str) -> Option<Kind> {
    if name.starts_with("loop") {
        Some(Kind::Loop)
    } else if name.starts_with("dm-") {
        Some(Kind::Dm)
    } else if name.starts_with("md") {
        Some(Kind::Md)
    } else if ["zram", "ram", "nbd", "rbd"].iter().any(|p| name.starts_with(p)) {
        Some(Kind::Virtual)
    } else {
        None
    }
}

/// Paravirtual disks report `rotational=1` by default whatever the host stores them on, so
/// the name decides before the flag does.
fn class_from_name(name: &str, kind: Kind, rotational: Option<bool>) -> Class {
    if name.starts_with("nvme") {
        return Class::Nvme;
    }
    if matches!(kind, Kind::Loop | Kind::Virtual | Kind::Dm | Kind::Md)
        || name.starts_with("vd")
        || name.starts_with("xvd")
    {
        return Class::Virtual;
    }
    match rotational {
        Some(true) => Class::Hdd,
        Some(false) => Class::Ssd,
        None => Class::Ssd,
    }
}

/// sysfs reader over platform's block walker; `root` is `/sys` on a live system.
#[derive(Debug, Clone, Default)]
pub struct Sysfs {
    topo: Topology,
}

impl Sysfs {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Sysfs { topo: Topology::with_sys(root) }
    }

    /// Classify one kernel block-device name.
    pub fn classify(&self, name: &str) -> DeviceInfo {
        let Some(dev) = self.topo.device(name) else {
            return DeviceInfo::guess(name);
        };
        if dev.is_partition() {
            let parent = Some(dev.disk.clone());
            let pinfo = parent.as_deref().map(|p| self.classify(p));
            return DeviceInfo {
                name: name.to_string(),
                mapper: None,
                kind: Kind::Partition,
                class: pinfo.as_ref().map(|p| p.class).unwrap_or(Class::Ssd),
                rotational: pinfo.as_ref().and_then(|p| p.rotational),
                parent,
                slaves: Vec::new(),
            };
        }
        let rotational = dev.queue.rotational;
        let slaves = dev.slaves;
        let kind = match kind_from_name(name) {
            Some(k) => k,
            None if dev.is_virtual => Kind::Virtual,
            None => Kind::Disk,
        };
        let mapper = if kind == Kind::Dm { dev.dm_name } else { None };
        let mut class = class_from_name(name, kind, rotational);
        // Stacked devices take the slowest class of their members (an LV on an HDD is an HDD).
        if matches!(kind, Kind::Dm | Kind::Md) && !slaves.is_empty() {
            let members: Vec<Class> = slaves.iter().map(|s| self.classify(s).class).collect();
            class = [Class::Hdd, Class::Virtual, Class::Ssd, Class::Nvme]
                .into_iter()
                .find(|c| members.contains(c))
                .unwrap_or(class);
        }
        DeviceInfo { name: name.to_string(), mapper, kind, class, rotational, parent: None, slaves }
    }
}

/// Which devices to show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Loop, dm, md and other virtual devices too.
    pub all_devices: bool,
    /// Partitions too.
    pub partitions: bool,
    /// Only these (kernel or mapper names); shown whatever their kind.
    pub names: Vec<String>,
    /// Interactive name-prefix filter (TUI `f`).
    pub prefix: Option<String>,
}

impl Filter {
    pub fn accepts(&self, d: &DeviceInfo) -> bool {
        self.accepts_parts(&d.name, d.mapper.as_deref(), d.kind)
    }

    /// The same test from a report's fields.
    pub fn accepts_parts(&self, name: &str, mapper: Option<&str>, kind: Kind) -> bool {
        if let Some(p) = &self.prefix {
            if !name.starts_with(p.as_str()) && !mapper.is_some_and(|m| m.starts_with(p.as_str())) {
                return false;
            }
        }
        if !self.names.is_empty() {
            return self.names.iter().any(|n| n == name || Some(n.as_str()) == mapper);
        }
        match kind {
            Kind::Disk => true,
            Kind::Partition => self.partitions,
            Kind::Loop | Kind::Dm | Kind::Md | Kind::Virtual => self.all_devices,
        }
    }
}

// A fake sysfs: Linux's (symlinks, and platform's sysfs walker).
#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::fs;
    use std::path::Path;

    fn mk(root: &Path, rel: &str, content: Option<&str>) {
        let p = root.join(rel);
        match content {
            Some(c) => {
                fs::create_dir_all(p.parent().unwrap()).unwrap();
                fs::write(p, c).unwrap();
            }
            None => fs::create_dir_all(p).unwrap(),
        }
    }

    fn link(root: &Path, from: &str, to: &str) {
        let f = root.join(from);
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(root.join(to), f).unwrap();
    }

    /// A fake /sys with sda (rotational) + sda1, nvme0n1, loop0, dm-0 over sda1, zram0.
    fn fake_sys() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        mk(r, "devices/pci0/ata1/block/sda/queue/rotational", Some("1\n"));
        mk(r, "devices/pci0/ata1/block/sda/sda1/partition", Some("1\n"));
        mk(r, "devices/pci0/nvme/block/nvme0n1/queue/rotational", Some("0\n"));
        mk(r, "devices/virtual/block/loop0/queue/rotational", Some("0\n"));
        mk(r, "devices/virtual/block/zram0/queue/rotational", Some("0\n"));
        mk(r, "devices/virtual/block/dm-0/dm/name", Some("vg0-root\n"));
        mk(r, "devices/virtual/block/dm-0/slaves/sda1", Some(""));
        for (n, p) in [
            ("sda", "devices/pci0/ata1/block/sda"),
            ("nvme0n1", "devices/pci0/nvme/block/nvme0n1"),
            ("loop0", "devices/virtual/block/loop0"),
            ("zram0", "devices/virtual/block/zram0"),
            ("dm-0", "devices/virtual/block/dm-0"),
        ] {
            link(r, &format!("block/{n}"), p);
            link(r, &format!("class/block/{n}"), p);
        }
        link(r, "class/block/sda1", "devices/pci0/ata1/block/sda/sda1");
        t
    }

    #[test]
    fn classifies_a_fake_tree() {
        let t = fake_sys();
        let s = Sysfs::new(t.path());
        let sda = s.classify("sda");
        assert_eq!((sda.kind, sda.class, sda.rotational), (Kind::Disk, Class::Hdd, Some(true)));
        let p = s.classify("sda1");
        assert_eq!((p.kind, p.class, p.parent.as_deref()), (Kind::Partition, Class::Hdd, Some("sda")));
        assert_eq!(s.classify("nvme0n1").class, Class::Nvme);
        assert_eq!(s.classify("loop0").kind, Kind::Loop);
        assert_eq!(s.classify("zram0").kind, Kind::Virtual);
        let dm = s.classify("dm-0");
        assert_eq!((dm.kind, dm.display_name(), dm.class), (Kind::Dm, "vg0-root", Class::Hdd));
        // Unknown to sysfs: guessed from the name.
        assert_eq!(s.classify("vdz").class, Class::Virtual);
    }

    #[test]
    fn filter_defaults_to_whole_disks() {
        let t = fake_sys();
        let s = Sysfs::new(t.path());
        let f = Filter::default();
        let shown: Vec<String> = ["sda", "sda1", "nvme0n1", "loop0", "dm-0", "zram0"]
            .iter()
            .map(|n| s.classify(n))
            .filter(|d| f.accepts(d))
            .map(|d| d.name)
            .collect();
        assert_eq!(shown, ["sda", "nvme0n1"]);
        let f = Filter { names: vec!["vg0-root".into()], ..Filter::default() };
        assert!(f.accepts(&s.classify("dm-0")));
        assert!(!f.accepts(&s.classify("sda")));
        let f = Filter { partitions: true, all_devices: true, ..Filter::default() };
        assert!(["sda1", "loop0", "dm-0", "zram0"].iter().all(|n| f.accepts(&s.classify(n))));
    }
}
