//! A physical drive's own I/O counters: `IOCTL_DISK_PERFORMANCE` on `\\.\PhysicalDriveN`, the
//! counters perfmon's PhysicalDisk object shows (kept by the partition manager, `partmgr.sys`,
//! for each disk). The control needs no access rights (`FILE_ANY_ACCESS`), so the drive is
//! opened with none and no elevation is needed.
//!
//! Windows keeps these counters only while they are enabled: they are on by default since
//! Vista, and `diskperf -y` turns them back on. A drive whose counters cannot be read answers
//! with an error (`ERROR_NOT_SUPPORTED` or `ERROR_INVALID_FUNCTION`: under Wine always), which
//! callers report as the device view being unavailable.
//!
//! The counts of completed reads, writes and split requests are 32-bit and wrap; [`read`]
//! widens them to 64 bits against its previous reading of the same drive in this process
//! ([`crate::diskstats::extend_u32`]), so the differences the device view takes stay right
//! across a wrap. It also holds busy time (`QueryTime - IdleTime`, see
//! [`crate::diskstats::from_disk_performance`]) from going back between two readings: the two
//! run on different clocks, and on an idle drive the wall clock's 10 to 16 ms ticks can make it
//! step back a little, which a reader that differences modulo 2³² (as `top` does, like iostat)
//! would take for a wrap.

use std::collections::BTreeMap;
use std::io;
use std::os::windows::io::AsRawHandle;
use std::sync::Mutex;

use windows_sys::Win32::Foundation::{
    ERROR_FILE_NOT_FOUND, ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED, ERROR_PATH_NOT_FOUND,
};
use windows_sys::Win32::System::Ioctl::{DISK_PERFORMANCE, IOCTL_DISK_PERFORMANCE};

use super::io::ioctl_typed;
use super::target::open_for_query;
use crate::diskstats::counters::{extend_u32, from_disk_performance, Counters, DiskPerformance};

/// Drive numbers [`all`] tries: Windows numbers disks from 0 as it finds them.
const MAX_DRIVES: u32 = 32;
/// Missing numbers in a row after which [`all`] stops looking: a removed disk leaves a gap.
const GAP: u32 = 8;

/// The last widened counts per drive (read, write, split) and the last 64-bit counters seen
/// (bytes read + written, read + write time), which tell a reset from a wrap.
#[derive(Clone, Copy)]
struct Last {
    reads: u64,
    writes: u64,
    splits: u64,
    bytes: u64,
    times: u64,
    /// `QueryTime - IdleTime` as reported (100 ns), never less than the previous one's.
    busy: i64,
}

static LAST: Mutex<BTreeMap<u32, Last>> = Mutex::new(BTreeMap::new());

/// The counters of `\\.\PhysicalDrive<n>`, with its 32-bit counts widened against this
/// process's previous reading of it. An error when the drive does not exist (`NotFound`), or
/// its counters cannot be read (disabled, or not implemented, as under Wine); the message names
/// the drive.
pub fn read(n: u32) -> io::Result<DiskPerformance> {
    let drive = format!(r"\\.\PhysicalDrive{n}");
    let raw = query(&drive).map_err(|e| io::Error::new(kind_of(&e), format!("{drive}: {e}")))?;
    let bytes = (raw.BytesRead.max(0) as u64).saturating_add(raw.BytesWritten.max(0) as u64);
    let times = (raw.ReadTime.max(0) as u64).saturating_add(raw.WriteTime.max(0) as u64);
    let busy = raw.QueryTime.saturating_sub(raw.IdleTime);
    let mut last = LAST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let prev = last.get(&n).copied();
    // A 64-bit counter that went back means the counters were reset (turned off and on):
    // widening then starts again from the new values rather than count a wrap.
    let widened = match prev {
        Some(p) if bytes >= p.bytes && times >= p.times => Last {
            reads: extend_u32(p.reads, raw.ReadCount),
            writes: extend_u32(p.writes, raw.WriteCount),
            splits: extend_u32(p.splits, raw.SplitCount),
            bytes,
            times,
            busy: busy.max(p.busy),
        },
        _ => Last {
            reads: u64::from(raw.ReadCount),
            writes: u64::from(raw.WriteCount),
            splits: u64::from(raw.SplitCount),
            bytes,
            times,
            busy,
        },
    };
    last.insert(n, widened);
    Ok(DiskPerformance {
        bytes_read: raw.BytesRead,
        bytes_written: raw.BytesWritten,
        read_time: raw.ReadTime,
        write_time: raw.WriteTime,
        // Idle time less any step back of busy time, which is then held (see the module's
        // comment); equal to IdleTime whenever busy time did not go back.
        idle_time: raw.QueryTime.saturating_sub(widened.busy),
        read_count: widened.reads,
        write_count: widened.writes,
        queue_depth: raw.QueueDepth,
        split_count: widened.splits,
        query_time: raw.QueryTime,
    })
}

/// One `IOCTL_DISK_PERFORMANCE` on the device `drive`, opened with no access rights.
fn query(drive: &str) -> io::Result<DISK_PERFORMANCE> {
    let f = open_for_query(std::ffi::OsStr::new(drive))?;
    let h = f.as_raw_handle() as usize;
    let mut out = DISK_PERFORMANCE::default();
    // SAFETY: the control takes no input and writes one DISK_PERFORMANCE, which `out` is (plain
    // data); `f` stays open across the call.
    let got = unsafe { ioctl_typed::<(), DISK_PERFORMANCE>(h, IOCTL_DISK_PERFORMANCE, None, &mut out) }?;
    // The fields up to and including QueryTime are the counters; a shorter answer is not one.
    if (got as usize) < std::mem::offset_of!(DISK_PERFORMANCE, StorageDeviceNumber) {
        return Err(io::Error::other(format!("the disk performance answer was cut short ({got} bytes)")));
    }
    Ok(out)
}

/// The kind an error of [`query`] keeps once named: `NotFound` for a drive that does not exist,
/// `Unsupported` for counters Windows does not keep or implement (`ERROR_NOT_SUPPORTED`,
/// `ERROR_INVALID_FUNCTION`), else the error's own.
fn kind_of(e: &io::Error) -> io::ErrorKind {
    match e.raw_os_error() {
        Some(c) if c == ERROR_FILE_NOT_FOUND as i32 || c == ERROR_PATH_NOT_FOUND as i32 => io::ErrorKind::NotFound,
        Some(c) if c == ERROR_NOT_SUPPORTED as i32 || c == ERROR_INVALID_FUNCTION as i32 => io::ErrorKind::Unsupported,
        _ => e.kind(),
    }
}

/// The counters of every physical drive that answers, as diskstats [`Counters`], by drive
/// number: drives 0 to 31, stopping after 8 missing numbers in a row. A drive that exists but
/// whose counters cannot be read is left out; when no drive answers, the first such error (or
/// `NotFound` when no drive exists at all).
pub fn all() -> io::Result<Vec<(u32, Counters)>> {
    let mut out = Vec::new();
    let mut first_error = None;
    let mut missing = 0;
    for n in 0..MAX_DRIVES {
        match read(n) {
            Ok(p) => {
                missing = 0;
                out.push((n, from_disk_performance(&p)));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                missing += 1;
                if missing >= GAP {
                    break;
                }
            }
            Err(e) => {
                missing = 0;
                first_error.get_or_insert(e);
            }
        }
    }
    match (out.is_empty(), first_error) {
        (true, Some(e)) => Err(e),
        (true, None) => Err(io::Error::new(io::ErrorKind::NotFound, "no physical drive found")),
        _ => Ok(out),
    }
}

/// The volume root that holds `path` (`C:\`, or a folder a volume is mounted on) and the
/// physical drives that volume has extents on, ascending ([`super::volume::drives_of_root`]: a
/// lettered volume or one mounted in a folder). An error, naming the root, when the drives
/// cannot be found: a network share, or extents Windows does not report (Wine).
pub fn drives_of_path(path: &std::path::Path) -> (String, io::Result<Vec<u32>>) {
    let root = match super::target::volume_root(path.as_os_str()) {
        Ok(r) => r,
        Err(e) => return (path.display().to_string(), Err(e)),
    };
    let drives = super::volume::drives_of_root(&root);
    (root.to_string_lossy().into_owned(), drives)
}

/// Whether `e`, from [`read`] or [`all`], says the counters are not available on this system
/// (disabled or not implemented) rather than that something failed.
pub fn is_unsupported(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Unsupported
}

/// The physical drive under `at` (a target, or the directory of a file that does not exist
/// yet), as `PhysicalDriveN`: the drive itself for `\\.\PhysicalDriveN`; for a volume
/// (`\\.\D:`) or a file, the first drive the volume holding it has extents on. `None` when that
/// cannot be found (a folder mount point, a share, Wine).
pub fn drive_under(at: &std::path::Path) -> Option<String> {
    let s = at.to_string_lossy();
    let drive = if let Some(n) = crate::winpath::physical_drive(&s) {
        Some(n)
    } else if let Some(letter) = crate::winpath::volume_device(&s) {
        super::volume::drive_of_volume(letter).ok().and_then(|d| d.first().copied())
    } else {
        drives_of_path(at).1.ok().and_then(|d| d.first().copied())
    };
    drive.map(crate::diskstats::counters::drive_name)
}

/// The device view of a target (`path`; `at`: the file, or its directory when it does not exist
/// yet) whose drive is `device`: that drive and the volume's other drives when `readable` says
/// the drive's counters can be read; otherwise why not.
pub fn drive_view(
    path: &std::path::Path,
    at: &std::path::Path,
    device: Option<&str>,
    readable: impl Fn(&str) -> bool,
) -> Result<(String, Vec<String>), String> {
    match device {
        Some(name) if readable(name) => Ok((name.to_string(), other_drives(path, at, name))),
        Some(name) => Err(unreadable(name)),
        None => Err(no_drive(path, at)),
    }
}

/// The volume's drives other than `name` (a volume spanning disks), for a file or volume
/// target; none for a physical drive.
fn other_drives(path: &std::path::Path, at: &std::path::Path, name: &str) -> Vec<String> {
    let s = path.to_string_lossy();
    if crate::winpath::physical_drive(&s).is_some() {
        return Vec::new();
    }
    let drives = match crate::winpath::volume_device(&s) {
        Some(letter) => super::volume::drive_of_volume(letter),
        None => drives_of_path(at).1,
    };
    drives.unwrap_or_default().into_iter().map(crate::diskstats::counters::drive_name).filter(|d| d != name).collect()
}

/// Why the counters of drive `name` cannot be read.
fn unreadable(name: &str) -> String {
    let Some(n) = crate::diskstats::counters::drive_number(name) else {
        return format!("{name} is not a physical drive");
    };
    match read(n) {
        Err(e) if is_unsupported(&e) => format!(
            "the disk counters of \\\\.\\{name} are not kept here ({e}); on Windows `diskperf -y` (as \
             administrator) turns them on"
        ),
        Err(e) => format!("the disk counters of \\\\.\\{name} cannot be read ({e})"),
        Ok(_) => format!("\\\\.\\{name} is not among the drives whose counters were read"),
    }
}

/// Why no drive was found under the target.
fn no_drive(path: &std::path::Path, at: &std::path::Path) -> String {
    let s = path.to_string_lossy();
    if let Some(letter) = crate::winpath::volume_device(&s) {
        return match super::volume::drive_of_volume(letter) {
            Err(e) => format!("the disk under {letter}: cannot be found ({e})"),
            Ok(_) => format!("the disk under {letter}: cannot be found"),
        };
    }
    match drives_of_path(at) {
        (root, Err(e)) => format!("the disk under {root} cannot be read ({e})"),
        (root, Ok(_)) => format!("the disk under {root} cannot be read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drive_0_answers_or_says_why_and_never_panics() {
        // Under Wine the control is not implemented (or the drive cannot be opened): an error
        // naming the drive. On Windows, counters that hang together.
        match read(0) {
            Ok(p) => {
                assert!(p.bytes_read >= 0 && p.read_time >= 0 && p.idle_time >= 0);
                assert!(p.query_time > 0);
                let again = read(0).expect("a second read");
                assert!(again.read_count >= p.read_count && again.query_time >= p.query_time);
            }
            Err(e) => {
                println!("note: read(0): {e} ({:?})", e.kind());
                assert!(e.to_string().contains("PhysicalDrive0"), "{e}");
            }
        }
        let e = read(999).expect_err("no such drive");
        assert!(e.to_string().contains("PhysicalDrive999"), "{e}");
        match all() {
            Ok(v) => assert!(!v.is_empty() && v.iter().all(|(_, c)| c.columns == 14)),
            Err(e) => {
                println!("note: all(): {e} ({:?})", e.kind());
                assert!(!e.to_string().is_empty());
            }
        }
        // Through the facade: text when a drive answers, an error otherwise; never a panic.
        let (root, drives) = drives_of_path(std::path::Path::new(r"C:\Windows"));
        assert!(root.starts_with("C:"), "{root}");
        match drives {
            Ok(d) => assert!(!d.is_empty()),
            Err(e) => println!("note: the drives under {root}: {e}"),
        }
        let roots = crate::block::Roots::default();
        if let Ok((lines, bad)) = crate::diskstats::read(&roots) {
            assert_eq!(bad, 0);
            assert!(lines.iter().all(|l| crate::diskstats::drive_number(&l.name) == Some(l.minor)));
        }
    }
}
