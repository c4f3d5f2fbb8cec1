//! The device's own counters at the edges of a measured window: which /proc/diskstats entry a
//! target's I/O reaches, and snapshots of it. On Windows the entries are the physical drives'
//! `IOCTL_DISK_PERFORMANCE` counters, named `PhysicalDriveN` (`platform::diskstats`), and a
//! target's entry is the drive under its volume.

use crate::target::probe::{Probe, TargetKind};
use stats::DiskCounters;
use std::collections::BTreeMap;
use std::path::Path;

/// Where a target's I/O can be watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watch {
    /// The /proc/diskstats name of the device the I/O reaches, and the devices under it.
    Device { name: String, backing: Vec<String> },
    /// No device can be read, and why (tmpfs, a network file system, …).
    None(String),
}

/// The watch for a probed target.
pub fn watch_for(p: &Probe) -> Watch {
    // The OS's own view of the drives under a volume (Windows: the physical drive's
    // `IOCTL_DISK_PERFORMANCE` counters), where it has one.
    if let Some(view) =
        platform::diskstats::drive_view(&p.path, at(p), p.device.as_deref(), |name| snapshot_one(name).is_some())
    {
        return match view {
            Ok((name, backing)) => Watch::Device { name, backing },
            Err(why) => Watch::None(why),
        };
    }
    match &p.device {
        Some(name) if snapshot_one(name).is_some() => Watch::Device { name: name.clone(), backing: backing(name) },
        Some(name) => Watch::None(format!("{name} is not in /proc/diskstats")),
        None => Watch::None(match (p.kind, p.filesystem.as_deref()) {
            (TargetKind::File, Some(fs)) => format!("{fs} has no block device under it"),
            _ => "no block device under the target".to_string(),
        }),
    }
}

/// Where the target's volume is looked up: the file, its directory before it exists, or the
/// device itself.
fn at(p: &Probe) -> &Path {
    match (p.kind, p.exists, p.path.parent()) {
        (TargetKind::File, false, Some(dir)) if !dir.as_os_str().is_empty() => dir,
        _ => &p.path,
    }
}

/// Devices under `name`: a loop device's backing file's device, a dm/md device's members.
fn backing(name: &str) -> Vec<String> {
    let Some(dev) = platform::block::Topology::default().device(name) else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(file) = &dev.loop_backing_file {
        if let Ok(p) = crate::target::probe::probe(file) {
            if let Some(d) = p.device {
                out.push(d);
            }
        }
    }
    out.extend(dev.slaves);
    out
}

fn counters(c: &platform::diskstats::Counters) -> DiskCounters {
    DiskCounters {
        reads: c.rd_ios,
        read_merges: c.rd_merges,
        read_sectors: c.rd_sectors,
        read_ms: c.rd_ticks,
        writes: c.wr_ios,
        write_merges: c.wr_merges,
        write_sectors: c.wr_sectors,
        write_ms: c.wr_ticks,
        io_ms: c.io_ticks,
        weighted_ms: c.time_in_queue,
    }
}

fn all_lines() -> Vec<platform::diskstats::DiskLine> {
    platform::diskstats::read(&platform::block::Roots::default()).map(|(lines, _)| lines).unwrap_or_default()
}

fn snapshot_one(name: &str) -> Option<DiskCounters> {
    all_lines().iter().find(|d| d.name == name).map(|d| counters(&d.counters))
}

/// Counters of every named device, read in one pass of /proc/diskstats.
pub fn snapshot(names: &[String]) -> BTreeMap<String, DiskCounters> {
    all_lines()
        .iter()
        .filter(|d| names.iter().any(|n| n == &d.name))
        .map(|d| (d.name.clone(), counters(&d.counters)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under Wine (volume extents and disk counters not implemented) a file's device view is
    /// unavailable and says which volume; on Windows it names a physical drive.
    #[cfg(windows)]
    #[test]
    fn a_windows_file_names_its_drive_or_says_why() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = crate::target::probe::probe(&d.path().join("x")).expect("probe");
        match watch_for(&p) {
            Watch::None(why) => {
                println!("note: {why}");
                assert!(why.contains("the disk") && why.contains(':'), "{why}");
            }
            Watch::Device { name, backing } => {
                assert!(platform::diskstats::drive_number(&name).is_some(), "{name}");
                assert!(!backing.contains(&name));
                assert!(snapshot(std::slice::from_ref(&name)).contains_key(&name));
            }
        }
    }

    // Linux's tmpfs (under Wine, /dev/shm is a folder of drive Z:, which the Windows test covers).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_on_tmpfs_has_no_device_and_says_why() {
        let Ok(d) = tempfile::tempdir_in("/dev/shm") else { return };
        let p = crate::target::probe::probe(&d.path().join("x")).expect("probe");
        match watch_for(&p) {
            Watch::None(why) => assert!(why.contains("tmpfs") || why.contains("no block device"), "{why}"),
            Watch::Device { name, .. } => panic!("tmpfs has a device? {name}"),
        }
    }
}
