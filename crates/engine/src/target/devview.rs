//! The device's own counters at the edges of a measured window: which /proc/diskstats entry a
//! target's I/O reaches, and snapshots of it.

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
    let sys = Path::new("/sys/class/block").join(name);
    let mut out = Vec::new();
    if let Ok(file) = std::fs::read_to_string(sys.join("loop/backing_file")) {
        if let Ok(p) = crate::target::probe::probe(Path::new(file.trim())) {
            if let Some(d) = p.device {
                out.push(d);
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(sys.join("slaves")) {
        let mut v: Vec<String> = rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        out.extend(v);
    }
    out
}

fn counters(d: &procfs::DiskStat) -> DiskCounters {
    DiskCounters {
        reads: d.reads,
        read_merges: d.merged,
        read_sectors: d.sectors_read,
        read_ms: d.time_reading,
        writes: d.writes,
        write_merges: d.writes_merged,
        write_sectors: d.sectors_written,
        write_ms: d.time_writing,
        io_ms: d.time_in_progress,
        weighted_ms: d.weighted_time_in_progress,
    }
}

fn snapshot_one(name: &str) -> Option<DiskCounters> {
    procfs::diskstats().ok()?.iter().find(|d| d.name == name).map(counters)
}

/// Counters of every named device, read in one pass of /proc/diskstats.
pub fn snapshot(names: &[String]) -> BTreeMap<String, DiskCounters> {
    let Ok(all) = procfs::diskstats() else { return BTreeMap::new() };
    all.iter().filter(|d| names.iter().any(|n| n == &d.name)).map(|d| (d.name.clone(), counters(d))).collect()
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
