//! The device's own counters at the edges of a measured window: which /proc/diskstats entry a
//! target's I/O reaches, and snapshots of it.

use crate::target::probe::{Probe, TargetKind};
use stats::DiskCounters;
use std::collections::BTreeMap;

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
    match &p.device {
        Some(name) if snapshot_one(name).is_some() => Watch::Device { name: name.clone(), backing: backing(name) },
        Some(name) => Watch::None(format!("{name} is not in /proc/diskstats")),
        None => Watch::None(match (p.kind, p.filesystem.as_deref()) {
            (TargetKind::File, Some(fs)) => format!("{fs} has no block device under it"),
            _ => "no block device under the target".to_string(),
        }),
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
