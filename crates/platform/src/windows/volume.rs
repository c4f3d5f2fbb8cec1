//! What a physical drive holds, for the engine's guard before it writes to a drive: its
//! volumes (with their drive letters and mount points), whether Windows lives on one of them,
//! and its partitions. And the drives under a volume.
//!
//! Every fact must be read: a query that fails makes the whole answer an error that names the
//! fact, and the guard then refuses (it fails safe). Under Wine most of these queries are not
//! implemented (the partition table's is not), so there the answer is an error.

use std::ffi::OsString;
use std::io;
use std::os::windows::ffi::OsStringExt;
use std::os::windows::io::AsRawHandle;
use windows_sys::Win32::Foundation::{
    ERROR_INSUFFICIENT_BUFFER, ERROR_MORE_DATA, ERROR_NO_MORE_FILES, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    FindFirstVolumeW, FindNextVolumeW, FindVolumeClose, GetDriveTypeW, GetVolumePathNamesForVolumeNameW,
    IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS,
};
use windows_sys::Win32::System::Ioctl::{
    DISK_EXTENT, DRIVE_LAYOUT_INFORMATION_EX, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, PARTITION_INFORMATION_EX,
    PARTITION_STYLE_GPT, PARTITION_STYLE_MBR, VOLUME_DISK_EXTENTS,
};
use windows_sys::Win32::System::SystemInformation::GetSystemWindowsDirectoryW;
use windows_sys::Win32::System::WindowsProgramming::DRIVE_CDROM;

pub use crate::winpath::DriveFacts;

use super::io::ioctl;
use super::target::{open_for_query, until_nul, volume_name, volume_root, wide};

/// An error that says which fact could not be read.
fn fact(what: impl std::fmt::Display, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// The facts of `\\.\PhysicalDrive<n>`: its partitions in use (`IOCTL_DISK_GET_DRIVE_LAYOUT_EX`),
/// the volumes with an extent on it (every volume of `FindFirstVolumeW`/`FindNextVolumeW`, its
/// extents by `IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS`) with their letters and mount points
/// (`GetVolumePathNamesForVolumeNameW`), and whether one of them is the volume of the Windows
/// directory (`GetSystemWindowsDirectoryW`). CD and DVD volumes are skipped: they lie on CD-ROM
/// devices, never on a physical drive. An error, naming the fact, when any query fails.
pub fn physical_drive_facts(n: u32) -> io::Result<DriveFacts> {
    let drive = format!(r"\\.\PhysicalDrive{n}");
    let partitions = partitions_in_use(&drive).map_err(|e| fact(format!("the partition table of {drive}"), e))?;
    let system = system_volume().map_err(|e| fact("the volume of the Windows directory", e))?;
    let mut facts = DriveFacts { number: n, holds_system: false, volumes: Vec::new(), partitions };
    let mut system_seen = false;
    for vol in volumes().map_err(|e| fact("the list of volumes", e))? {
        let name = String::from_utf16_lossy(&vol);
        let is_system = name.eq_ignore_ascii_case(&system);
        system_seen |= is_system;
        let root = wide(&OsString::from_wide(&vol));
        // SAFETY: `root` is NUL-terminated.
        if unsafe { GetDriveTypeW(root.as_ptr()) } == DRIVE_CDROM {
            continue;
        }
        let disks = volume_disks(&device_of(&vol)).map_err(|e| fact(format!("the disks under volume {name}"), e))?;
        if !disks.contains(&n) {
            continue;
        }
        facts.holds_system |= is_system;
        let paths = volume_paths(&vol).map_err(|e| fact(format!("the mount points of volume {name}"), e))?;
        facts.volumes.extend(paths);
    }
    if !system_seen {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the volume of the Windows directory ({system}) is not among the volumes listed"),
        ));
    }
    Ok(facts)
}

/// The physical drives (their numbers, ascending) that volume `letter:` has extents on.
pub fn drive_of_volume(letter: char) -> io::Result<Vec<u32>> {
    if !letter.is_ascii_alphabetic() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{letter:?} is not a drive letter")));
    }
    let dev = format!(r"\\.\{}:", letter.to_ascii_uppercase());
    volume_disks(&OsString::from(&dev)).map_err(|e| fact(format!("the disks under {dev}"), e))
}

/// The physical drives (their numbers, ascending) that the volume mounted at `root` has extents
/// on: `root` is a volume root with its trailing backslash, a drive's (`D:\\`) or a folder a
/// volume is mounted on (`C:\\mnt\\data\\`), whose GUID name
/// (`GetVolumeNameForVolumeMountPointW`) is then the device asked. A root with a drive letter
/// whose GUID name cannot be read is asked as `\\.\\X:`.
pub fn drives_of_root(root: &std::ffi::OsStr) -> io::Result<Vec<u32>> {
    match volume_name(root) {
        Ok(vol) => volume_disks(&device_of(&vol))
            .map_err(|e| fact(format!("the disks under {}", String::from_utf16_lossy(&vol)), e)),
        Err(e) => match crate::winpath::drive_letter(&root.to_string_lossy()) {
            Some(letter) => drive_of_volume(letter),
            None => Err(fact(format!("the volume mounted at {}", root.to_string_lossy()), e)),
        },
    }
}

/// The device of a volume's GUID name: without its trailing backslash (with it, the name is
/// the root directory).
fn device_of(vol: &[u16]) -> OsString {
    let v = vol.strip_suffix(&[u16::from(b'\\')]).unwrap_or(vol);
    OsString::from_wide(v)
}

/// Every volume's GUID name (`\\?\Volume{…}\`), as UTF-16 without the NUL.
fn volumes() -> io::Result<Vec<Vec<u16>>> {
    let mut buf = vec![0u16; 64];
    // SAFETY: `buf` holds 64 u16s (a GUID name is 49 with the NUL).
    let find = unsafe { FindFirstVolumeW(buf.as_mut_ptr(), buf.len() as u32) };
    if find == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    let mut out = vec![until_nul(&buf).to_vec()];
    let r = loop {
        // SAFETY: `find` is the open search; `buf` holds 64 u16s.
        if unsafe { FindNextVolumeW(find, buf.as_mut_ptr(), buf.len() as u32) } == 0 {
            let e = io::Error::last_os_error();
            break if e.raw_os_error() == Some(ERROR_NO_MORE_FILES as i32) { Ok(out) } else { Err(e) };
        }
        out.push(until_nul(&buf).to_vec());
    };
    // SAFETY: closes the search opened above, once.
    unsafe { FindVolumeClose(find) };
    r
}

/// The disk numbers of a volume device's extents, ascending, without repeats.
fn volume_disks(device: &OsString) -> io::Result<Vec<u32>> {
    let f = open_for_query(device)?;
    let h = f.as_raw_handle() as usize;
    // u64s: the output's alignment (DISK_EXTENT holds i64s). Room for 8 extents, then more.
    let mut buf = vec![0u64; (8 + 8 * std::mem::size_of::<DISK_EXTENT>()) / 8];
    loop {
        let size = buf.len() * 8;
        // SAFETY: the control takes no input and writes up to `size` bytes into `buf`, which
        // holds that many; `f` stays open across the call.
        let r = unsafe {
            ioctl(h, IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, std::ptr::null(), 0, buf.as_mut_ptr().cast(), size as u32)
        };
        match r {
            // No extents at all says nothing about where the volume lies (Wine's stub answers
            // so): not knowing, the guard must not assume "on no drive".
            Ok(got) => match parse_extents(&buf, got as usize) {
                d if d.is_empty() => return Err(io::Error::other("the volume reported no disk extents")),
                d => return Ok(d),
            },
            Err(e)
                if matches!(e.raw_os_error(), Some(c) if c == ERROR_MORE_DATA as i32 || c == ERROR_INSUFFICIENT_BUFFER as i32)
                    && buf.len() < 1 << 16 =>
            {
                let n = buf.len() * 4;
                buf.resize(n, 0);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The disk numbers in a VOLUME_DISK_EXTENTS of `got` bytes at `buf`.
fn parse_extents(buf: &[u64], got: usize) -> Vec<u32> {
    let bytes = (buf.len() * 8).min(got);
    let first = std::mem::offset_of!(VOLUME_DISK_EXTENTS, Extents);
    if bytes < first {
        return Vec::new();
    }
    let base = buf.as_ptr().cast::<u8>();
    // SAFETY: `buf` holds at least `first` (> 4) bytes, and the u32 count is at its start.
    let count = unsafe { base.cast::<u32>().read() } as usize;
    let fit = (bytes - first) / std::mem::size_of::<DISK_EXTENT>();
    let mut disks: Vec<u32> = (0..count.min(fit))
        .map(|i| {
            // SAFETY: extent `i` lies within the `bytes` the OS wrote (i < fit), at an offset
            // aligned for DISK_EXTENT (the buffer is u64-aligned and the offsets are multiples
            // of 8); it is plain data.
            unsafe { base.add(first + i * std::mem::size_of::<DISK_EXTENT>()).cast::<DISK_EXTENT>().read() }.DiskNumber
        })
        .collect();
    disks.sort_unstable();
    disks.dedup();
    disks
}

/// The drive letters (`C:`) and mount-point directories (without their trailing backslash) of
/// a volume's GUID name.
fn volume_paths(vol: &[u16]) -> io::Result<Vec<String>> {
    let name = wide(&OsString::from_wide(vol));
    let mut buf = vec![0u16; 256];
    loop {
        let mut need = 0u32;
        // SAFETY: `name` is NUL-terminated; `buf` holds `buf.len()` u16s; `need` is a local.
        let ok =
            unsafe { GetVolumePathNamesForVolumeNameW(name.as_ptr(), buf.as_mut_ptr(), buf.len() as u32, &mut need) };
        if ok != 0 {
            return Ok(parse_multi(&buf));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(ERROR_MORE_DATA as i32) && (need as usize) > buf.len() && need < 1 << 20 {
            buf.resize(need as usize, 0);
        } else {
            return Err(e);
        }
    }
}

/// A double-NUL-terminated list of paths, each without its trailing backslash.
fn parse_multi(buf: &[u16]) -> Vec<String> {
    buf.split(|&c| c == 0)
        .take_while(|s| !s.is_empty())
        .map(|s| {
            let s = String::from_utf16_lossy(s);
            s.strip_suffix('\\').map(str::to_owned).unwrap_or(s)
        })
        .collect()
}

/// The GUID name of the volume holding the Windows directory.
fn system_volume() -> io::Result<String> {
    let mut buf = vec![0u16; 512];
    // SAFETY: `buf` holds 512 u16s.
    let n = unsafe { GetSystemWindowsDirectoryW(buf.as_mut_ptr(), buf.len() as u32) } as usize;
    if n == 0 || n >= buf.len() {
        return Err(io::Error::last_os_error());
    }
    let root = volume_root(&OsString::from_wide(&buf[..n]))?;
    Ok(String::from_utf16_lossy(&volume_name(&root)?))
}

/// The partitions in use on the drive `drive` (`\\.\PhysicalDriveN`).
fn partitions_in_use(drive: &str) -> io::Result<u32> {
    let f = open_for_query(std::ffi::OsStr::new(drive))?;
    let h = f.as_raw_handle() as usize;
    // u64s for alignment; room for 16 entries, then more.
    let entry = std::mem::size_of::<PARTITION_INFORMATION_EX>();
    let mut buf = vec![0u64; (std::mem::size_of::<DRIVE_LAYOUT_INFORMATION_EX>() + 16 * entry).div_ceil(8)];
    loop {
        let size = buf.len() * 8;
        // SAFETY: the control takes no input and writes up to `size` bytes into `buf`, which
        // holds that many; `f` stays open across the call.
        let r = unsafe {
            ioctl(h, IOCTL_DISK_GET_DRIVE_LAYOUT_EX, std::ptr::null(), 0, buf.as_mut_ptr().cast(), size as u32)
        };
        match r {
            Ok(got) => return parse_layout(&buf, got as usize),
            Err(e)
                if matches!(e.raw_os_error(), Some(c) if c == ERROR_MORE_DATA as i32 || c == ERROR_INSUFFICIENT_BUFFER as i32)
                    && buf.len() < 1 << 20 =>
            {
                let n = buf.len() * 4;
                buf.resize(n, 0);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The partitions in use in a DRIVE_LAYOUT_INFORMATION_EX of `got` bytes at `buf`.
fn parse_layout(buf: &[u64], got: usize) -> io::Result<u32> {
    let bytes = (buf.len() * 8).min(got);
    let first = std::mem::offset_of!(DRIVE_LAYOUT_INFORMATION_EX, PartitionEntry);
    let entry = std::mem::size_of::<PARTITION_INFORMATION_EX>();
    if bytes < first {
        return Err(io::Error::other("the drive layout was cut short"));
    }
    let base = buf.as_ptr().cast::<u8>();
    // SAFETY: `buf` holds at least `first` bytes; the count is the second u32.
    let count = unsafe { base.cast::<u32>().add(1).read() } as usize;
    if count > (bytes - first) / entry {
        return Err(io::Error::other("the drive layout lists more partitions than it holds"));
    }
    let mut used = 0;
    for i in 0..count {
        // SAFETY: entry `i` lies within the bytes the OS wrote (checked above), at an offset
        // aligned for it (the buffer is u64-aligned; `first` and `entry` are multiples of 8);
        // it is plain data.
        let p = unsafe { base.add(first + i * entry).cast::<PARTITION_INFORMATION_EX>().read() };
        let in_use = match p.PartitionStyle {
            // SAFETY: an MBR entry's union holds its MBR part.
            PARTITION_STYLE_MBR => unsafe { p.Anonymous.Mbr }.PartitionType != 0,
            PARTITION_STYLE_GPT => {
                // SAFETY: a GPT entry's union holds its GPT part.
                let t = unsafe { p.Anonymous.Gpt }.PartitionType;
                t.data1 != 0 || t.data2 != 0 || t.data3 != 0 || t.data4 != [0; 8]
            }
            _ => false,
        };
        used += u32::from(in_use);
    }
    Ok(used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_of_drive_0_never_panic() {
        // Under Wine the partition table's IOCTL is not implemented: an error naming it. On
        // Windows, facts that hang together (or an error without the rights).
        match physical_drive_facts(0) {
            Ok(f) => {
                assert_eq!(f.number, 0);
                if f.holds_system {
                    assert!(!f.volumes.is_empty());
                }
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
        let e = physical_drive_facts(999).expect_err("no such drive");
        assert!(e.to_string().contains("PhysicalDrive999"), "{e}");
        // Wine's extents IOCTL answers with no extents: that is an error, not "on no drive".
        if let Ok(d) = drive_of_volume('C') {
            assert!(!d.is_empty());
        }
        assert!(drive_of_volume('1').is_err());
    }

    #[test]
    fn multi_strings_and_layouts() {
        let w: Vec<u16> = "C:\\\0D:\\mnt\\x\\\0\0junk".encode_utf16().collect();
        assert_eq!(parse_multi(&w), ["C:", r"D:\mnt\x"]);
        assert!(parse_multi(&[0, 0]).is_empty());
        assert!(parse_extents(&[0; 1], 0).is_empty());
        assert!(parse_layout(&[0; 1], 4).is_err());
    }
}
