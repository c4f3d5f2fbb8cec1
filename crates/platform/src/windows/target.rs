//! Windows's target operations: `CreateFileW` flags (through std's `OpenOptionsExt`), the
//! disk and storage IOCTLs, the volume's sector sizes, and the NTFS file controls (sparse
//! ranges, zeroing, compression).
//!
//! Every handle opened here is overlapped (`FILE_FLAG_OVERLAPPED`): the IOCP engine needs it.
//! So a [`File`] from [`Windows::open`] must not be read or written through std's `Read`,
//! `Write` or `FileExt` (they expect a synchronous handle): use [`crate::rawio`] or
//! [`crate::fs::read_at`] and its kin, which carry an `OVERLAPPED` and wait. Its metadata,
//! `set_len` and `sync_all` work as usual. Device controls here go through
//! [`super::io::ioctl`] for the same reason.

use crate::target::ops::{DirectAlign, Discard, OpenHow, SectorSizes, TargetOps};
use crate::winpath;
use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use windows_sys::Win32::Foundation::{ERROR_INVALID_FUNCTION, ERROR_MORE_DATA, ERROR_NOT_SUPPORTED, FILETIME};
use windows_sys::Win32::Storage::FileSystem::{
    FileAllocationInfo, FileEndOfFileInfo, GetDiskFreeSpaceW, GetFileInformationByHandle, GetFileSizeEx,
    GetFinalPathNameByHandleW, GetVolumeNameForVolumeMountPointW, GetVolumePathNameW, SetFileInformationByHandle,
    SetFileTime, BY_HANDLE_FILE_INFORMATION, COMPRESSION_FORMAT_NONE, FILE_ALLOCATION_INFO, FILE_ATTRIBUTE_COMPRESSED,
    FILE_ATTRIBUTE_SPARSE_FILE, FILE_END_OF_FILE_INFO, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OVERLAPPED,
    FILE_FLAG_WRITE_THROUGH, FILE_NAME_NORMALIZED, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    VOLUME_NAME_DOS,
};
use windows_sys::Win32::System::Ioctl::{
    PropertyStandardQuery, StorageAccessAlignmentProperty, DISK_GEOMETRY_EX, FILE_ALLOCATED_RANGE_BUFFER,
    FILE_ZERO_DATA_INFORMATION, FSCTL_QUERY_ALLOCATED_RANGES, FSCTL_SET_COMPRESSION, FSCTL_SET_ZERO_DATA,
    GET_LENGTH_INFORMATION, IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, IOCTL_DISK_GET_LENGTH_INFO, IOCTL_STORAGE_QUERY_PROPERTY,
    STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR, STORAGE_PROPERTY_QUERY,
};

use super::handle;
use super::io::{ioctl, ioctl_typed};

/// Windows's [`TargetOps`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Windows;

impl TargetOps for Windows {
    type Handle = usize;

    #[inline]
    fn handle(file: &File) -> usize {
        file.as_raw_handle() as usize
    }

    /// `CreateFileW` with `FILE_FLAG_OVERLAPPED` always, `FILE_FLAG_NO_BUFFERING` for
    /// `direct` and `FILE_FLAG_WRITE_THROUGH` for `write_through`; `create` is `CREATE_NEW`.
    ///
    /// Others may read, write and delete the target meanwhile (`FILE_SHARE_READ | WRITE |
    /// DELETE`), as on Linux. `exclusive` shares it for reading only: Windows's share mode 0
    /// would also refuse the volume manager and any reader (and a disk cannot be mounted
    /// through a share mode anyway — it has no `O_EXCL`), so diskmeter asks only that nobody
    /// else writes it while it is open.
    ///
    /// A new file gets the directory's inherited permissions (Windows has no mode bits; the
    /// "owner only" of [`OpenHow::create`] is the ACL's business). Reads do not update the last
    /// access time where the handle may write attributes (write opens: `SetFileTime` with
    /// `0xFFFFFFFF`); a read-only open leaves it to the volume's policy (off by default on
    /// current Windows).
    fn open(path: &Path, how: OpenHow) -> io::Result<File> {
        let mut flags = FILE_FLAG_OVERLAPPED;
        if how.direct {
            flags |= FILE_FLAG_NO_BUFFERING;
        }
        if how.write_through {
            flags |= FILE_FLAG_WRITE_THROUGH;
        }
        let share =
            if how.exclusive { FILE_SHARE_READ } else { FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE };
        let mut o = OpenOptions::new();
        o.read(true).write(how.write).custom_flags(flags).share_mode(share);
        if how.create {
            o.create_new(true);
        }
        let f = o.open(path)?;
        if how.write {
            // 0xFFFFFFFF in both halves: this handle's I/O does not update the last access
            // time. Best effort: devices and some file systems refuse it, harmlessly.
            let keep = FILETIME { dwLowDateTime: u32::MAX, dwHighDateTime: u32::MAX };
            // SAFETY: `f` is open; `keep` lives across the call; null leaves a time alone.
            unsafe { SetFileTime(handle(Self::handle(&f)), std::ptr::null(), &keep, std::ptr::null()) };
        }
        Ok(f)
    }

    /// A file's length (`GetFileSizeEx`); a device's (`\\.\PhysicalDriveN`, `\\.\X:`), which
    /// reports none that way, from `IOCTL_DISK_GET_LENGTH_INFO`. An error when neither says.
    fn size(file: &File) -> io::Result<u64> {
        let h = Self::handle(file);
        let mut n = 0i64;
        // SAFETY: `file` is open; `n` is a local the call fills.
        let by_size = if unsafe { GetFileSizeEx(handle(h), &mut n) } != 0 {
            Ok(n as u64)
        } else {
            Err(io::Error::last_os_error())
        };
        if let Ok(n) = by_size {
            if n > 0 {
                return Ok(n);
            }
        }
        let mut li = GET_LENGTH_INFORMATION::default();
        // SAFETY: the IOCTL takes no input and fills a GET_LENGTH_INFORMATION; `file` is open.
        match unsafe { ioctl_typed::<(), _>(h, IOCTL_DISK_GET_LENGTH_INFO, None, &mut li) } {
            Ok(_) => Ok(li.Length as u64),
            // An empty file.
            Err(_) if by_size.is_ok() => Ok(0),
            Err(dev) => Err(io::Error::new(
                dev.kind(),
                format!(
                    "the size is unknown: GetFileSizeEx: {}; IOCTL_DISK_GET_LENGTH_INFO: {dev}",
                    by_size.err().map(|e| e.to_string()).unwrap_or_default()
                ),
            )),
        }
    }

    /// The device's (or the file's volume's) sector sizes: `IOCTL_STORAGE_QUERY_PROPERTY`'s
    /// `StorageAccessAlignmentProperty` on the handle; else the drive geometry's bytes per
    /// sector (both logical and physical); for a file, else the same questions to its volume
    /// (found through `GetFinalPathNameByHandleW`), and last the volume's bytes per sector
    /// (`GetDiskFreeSpaceW`). An error when nothing answers: a guess (512) would make direct
    /// I/O fail later, or misreport the device.
    fn sector_sizes(file: &File) -> io::Result<SectorSizes> {
        let h = Self::handle(file);
        let on_handle = match handle_sectors(h) {
            Ok(s) => return Ok(s),
            Err(e) => e,
        };
        let via_path = match final_path(h) {
            Ok(p) => match volume_root(&p) {
                Ok(root) => match root_sectors(&root) {
                    Ok(s) => return Ok(s),
                    Err(e) => e,
                },
                Err(e) => e,
            },
            Err(e) => e,
        };
        Err(io::Error::new(
            on_handle.kind(),
            format!("the sector sizes are unknown: on the handle: {on_handle}; through its volume: {via_path}"),
        ))
    }

    /// The alignment of the device at `path` (`\\.\PhysicalDriveN`, `\\.\X:`), or of the volume
    /// holding the file or directory at `path` (`GetVolumePathNameW`; `path` need not exist):
    /// offsets and lengths in logical sectors, buffers at the physical sector (which Windows
    /// documents for `FILE_FLAG_NO_BUFFERING`; `VirtualAlloc` buffers are page-aligned and so
    /// meet it). `None` when the sizes are unknown.
    fn direct_align(path: &Path) -> Option<DirectAlign> {
        let s = path.as_os_str().to_str().map(str::to_owned);
        let sectors = if s.as_deref().is_some_and(winpath::is_device_path) {
            device_sectors(path.as_os_str())
        } else {
            volume_root(path.as_os_str()).and_then(|root| root_sectors(&root))
        };
        let s = sectors.ok()?;
        Some(DirectAlign { mem: s.physical.max(s.logical), offset: s.logical })
    }

    /// Unsupported on Windows: a device's discard (TRIM) is `IOCTL_STORAGE_MANAGE_DATA_SET_
    /// ATTRIBUTES`, which diskmeter does not issue yet.
    fn discard(_h: usize, _how: Discard, _offset: u64, _len: u64) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "discard is not implemented on Windows"))
    }

    /// `FSCTL_SET_ZERO_DATA` on the range. On a sparse file (NTFS, ReFS) that deallocates it;
    /// on a file that is not sparse the file system writes zeros there instead, keeping the
    /// space (the range still reads as zeros). `Unsupported` where the file system has no such
    /// control.
    fn punch_hole(h: usize, offset: u64, len: u64) -> io::Result<()> {
        let end = offset.checked_add(len).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let z = FILE_ZERO_DATA_INFORMATION { FileOffset: offset as i64, BeyondFinalZero: end as i64 };
        // SAFETY: the control reads a FILE_ZERO_DATA_INFORMATION and writes nothing; `h` is
        // the caller's open handle.
        unsafe { ioctl_typed::<_, ()>(h, FSCTL_SET_ZERO_DATA, Some(&z), &mut ()) }.map(drop).map_err(unsupported)
    }

    /// Grows the file to `offset + len` if it is shorter: first its allocation
    /// (`SetFileInformationByHandle(FileAllocationInfo)`, which reserves the clusters), then its
    /// end (`FileEndOfFileInfo`), as Linux's `fallocate` does. A range inside the file is left
    /// alone: a file that is not sparse already holds its space below its end (a sparse file's
    /// holes stay holes; Windows cannot allocate them without writing).
    fn reserve(h: usize, offset: u64, len: u64) -> io::Result<()> {
        let end = offset.checked_add(len).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut cur = 0i64;
        // SAFETY: `h` is the caller's open handle; `cur` is a local the call fills.
        if unsafe { GetFileSizeEx(handle(h), &mut cur) } == 0 {
            return Err(io::Error::last_os_error());
        }
        if end <= cur as u64 {
            return Ok(());
        }
        let a = FILE_ALLOCATION_INFO { AllocationSize: end as i64 };
        set_info(h, FileAllocationInfo, &a)?;
        let e = FILE_END_OF_FILE_INFO { EndOfFile: end as i64 };
        set_info(h, FileEndOfFileInfo, &e)
    }
}

/// One `SetFileInformationByHandle` with `info` of class `class`.
fn set_info<T>(h: usize, class: i32, info: &T) -> io::Result<()> {
    // SAFETY: `info` is a live value of the struct `class` names (the callers pair them), of
    // the size given; `h` is the caller's open handle.
    let ok = unsafe {
        SetFileInformationByHandle(handle(h), class, (info as *const T).cast(), std::mem::size_of::<T>() as u32)
    };
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `ERROR_INVALID_FUNCTION` and `ERROR_NOT_SUPPORTED` (a control the file system or device
/// does not have) as `Unsupported`, keeping the OS's message; other errors as they are.
fn unsupported(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(c) if c == ERROR_INVALID_FUNCTION as i32 || c == ERROR_NOT_SUPPORTED as i32 => {
            io::Error::new(io::ErrorKind::Unsupported, e)
        }
        _ => e,
    }
}

/// The sector sizes an open device handle reports: the storage alignment property, else the
/// drive geometry (bytes per sector as both).
pub(crate) fn handle_sectors(h: usize) -> io::Result<SectorSizes> {
    let q = STORAGE_PROPERTY_QUERY {
        PropertyId: StorageAccessAlignmentProperty,
        QueryType: PropertyStandardQuery,
        AdditionalParameters: [0],
    };
    let mut d = STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR::default();
    // SAFETY: the control reads a STORAGE_PROPERTY_QUERY and fills the descriptor the query
    // names; `h` is open.
    let align = unsafe { ioctl_typed(h, IOCTL_STORAGE_QUERY_PROPERTY, Some(&q), &mut d) };
    match align {
        Ok(n)
            if n as usize >= std::mem::size_of::<STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR>()
                && d.BytesPerLogicalSector != 0 =>
        {
            return Ok(SectorSizes {
                logical: d.BytesPerLogicalSector,
                physical: d.BytesPerPhysicalSector.max(d.BytesPerLogicalSector),
            });
        }
        _ => {}
    }
    let mut g = DISK_GEOMETRY_EX::default();
    // SAFETY: the control takes no input and fills a DISK_GEOMETRY_EX (its trailing data is
    // cut off, which the control allows: the fixed part is what is read); `h` is open.
    let geo = unsafe { ioctl_typed::<(), _>(h, IOCTL_DISK_GET_DRIVE_GEOMETRY_EX, None, &mut g) };
    match geo {
        Ok(n)
            if n as usize >= std::mem::size_of::<windows_sys::Win32::System::Ioctl::DISK_GEOMETRY>()
                && g.Geometry.BytesPerSector != 0 =>
        {
            Ok(SectorSizes { logical: g.Geometry.BytesPerSector, physical: g.Geometry.BytesPerSector })
        }
        Ok(_) => Err(io::Error::other("the drive geometry was empty")),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!(
                "StorageAccessAlignmentProperty: {}; IOCTL_DISK_GET_DRIVE_GEOMETRY_EX: {e}",
                align.err().map(|e| e.to_string()).unwrap_or_else(|| "no sizes".into())
            ),
        )),
    }
}

/// The sector sizes of the device named `device` (`\\.\X:`, `\\.\PhysicalDriveN`,
/// `\\?\Volume{…}` without its trailing backslash), opened for queries only (no access).
pub(crate) fn device_sectors(device: &OsStr) -> io::Result<SectorSizes> {
    let f = open_for_query(device)?;
    handle_sectors(f.as_raw_handle() as usize)
}

/// The sector sizes of the volume mounted at `root` (`C:\`, `\\?\C:\`, a mount point's
/// directory): its device's, else its bytes per sector (`GetDiskFreeSpaceW`).
pub(crate) fn root_sectors(root: &OsStr) -> io::Result<SectorSizes> {
    let on_device = match volume_name(root) {
        Ok(mut name) => {
            // `\\?\Volume{…}\` names the root directory; without the backslash, the device.
            if name.last() == Some(&u16::from(b'\\')) {
                name.pop();
            }
            match device_sectors(&OsString::from_wide(&name)) {
                Ok(s) => return Ok(s),
                Err(e) => e,
            }
        }
        Err(e) => e,
    };
    let (mut spc, mut bps, mut free, mut total) = (0u32, 0u32, 0u32, 0u32);
    let w = wide(root);
    // SAFETY: `w` is NUL-terminated; the outputs are locals.
    if unsafe { GetDiskFreeSpaceW(w.as_ptr(), &mut spc, &mut bps, &mut free, &mut total) } != 0 && bps != 0 {
        return Ok(SectorSizes { logical: bps, physical: bps });
    }
    let e = io::Error::last_os_error();
    Err(io::Error::new(e.kind(), format!("the volume's device: {on_device}; GetDiskFreeSpaceW: {e}")))
}

/// Opens `path` with no access rights (queries only; no administrator needed for a device),
/// shared with everyone.
pub(crate) fn open_for_query(path: &OsStr) -> io::Result<File> {
    OpenOptions::new().access_mode(0).share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE).open(path)
}

/// The path of an open file (`\\?\C:\dir\file`), by `GetFinalPathNameByHandleW`.
pub(crate) fn final_path(h: usize) -> io::Result<OsString> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: `buf` holds `buf.len()` u16s; `h` is open.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                handle(h),
                buf.as_mut_ptr(),
                buf.len() as u32,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            return Ok(OsString::from_wide(&buf[..n]));
        }
        // Too small: `n` is the size needed, with the NUL.
        buf.resize(n + 1, 0);
    }
}

/// The root of the volume holding `path` (`GetVolumePathNameW`: `C:\`, `\\?\C:\`, or a mount
/// point's directory), with its trailing backslash.
pub(crate) fn volume_root(path: &OsStr) -> io::Result<OsString> {
    let w = wide(path);
    // Room for the longest path Windows has (a relative `path`'s root may be longer than it).
    let mut buf = vec![0u16; w.len().max(32768) + 2];
    // SAFETY: `w` is NUL-terminated; `buf` holds `buf.len()` u16s.
    if unsafe { GetVolumePathNameW(w.as_ptr(), buf.as_mut_ptr(), buf.len() as u32) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(OsString::from_wide(until_nul(&buf)))
}

/// The volume's GUID name (`\\?\Volume{…}\`) of the volume mounted at `root` (with its
/// trailing backslash), without the NUL.
pub(crate) fn volume_name(root: &OsStr) -> io::Result<Vec<u16>> {
    let w = wide(root);
    let mut buf = vec![0u16; 64];
    // SAFETY: `w` is NUL-terminated; `buf` holds 64 u16s (a GUID name is 49 with the NUL).
    if unsafe { GetVolumeNameForVolumeMountPointW(w.as_ptr(), buf.as_mut_ptr(), buf.len() as u32) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(until_nul(&buf).to_vec())
}

/// `s` as a NUL-terminated UTF-16 string.
pub(crate) fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

/// The part of `buf` before its first NUL (all of it if none).
pub(crate) fn until_nul(buf: &[u16]) -> &[u16] {
    let n = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    &buf[..n]
}

/// The allocated ranges, as (offset, length), of `len` bytes at `offset` of a file
/// (`FSCTL_QUERY_ALLOCATED_RANGES`; the output grows while the OS says `ERROR_MORE_DATA`). On a
/// file that is not sparse, the whole range up to its end is one allocated range. The handle
/// needs read access.
pub fn allocated_ranges(h: usize, offset: u64, len: u64) -> io::Result<Vec<(u64, u64)>> {
    let q = FILE_ALLOCATED_RANGE_BUFFER { FileOffset: offset as i64, Length: len as i64 };
    let mut out: Vec<FILE_ALLOCATED_RANGE_BUFFER> = vec![FILE_ALLOCATED_RANGE_BUFFER::default(); 64];
    loop {
        let size = out.len() * std::mem::size_of::<FILE_ALLOCATED_RANGE_BUFFER>();
        // SAFETY: the control reads one FILE_ALLOCATED_RANGE_BUFFER and writes up to `size`
        // bytes of them into `out`, which holds that many; `h` is the caller's open handle.
        let r = unsafe {
            ioctl(
                h,
                FSCTL_QUERY_ALLOCATED_RANGES,
                (&q as *const FILE_ALLOCATED_RANGE_BUFFER).cast(),
                std::mem::size_of::<FILE_ALLOCATED_RANGE_BUFFER>() as u32,
                out.as_mut_ptr().cast(),
                size as u32,
            )
        };
        match r {
            Ok(n) => {
                let k = n as usize / std::mem::size_of::<FILE_ALLOCATED_RANGE_BUFFER>();
                return Ok(out[..k].iter().map(|r| (r.FileOffset as u64, r.Length as u64)).collect());
            }
            Err(e) if e.raw_os_error() == Some(ERROR_MORE_DATA as i32) && out.len() < 1 << 22 => {
                let n = out.len() * 4;
                out.resize(n, FILE_ALLOCATED_RANGE_BUFFER::default());
            }
            Err(e) => return Err(unsupported(e)),
        }
    }
}

/// Bytes of `[offset, offset + len)` that are holes in `file`: what
/// `FSCTL_QUERY_ALLOCATED_RANGES` leaves out of a sparse file (a file that is not sparse has
/// none); bytes beyond the end of the file count as unwritten; where the file system cannot
/// say, 0 within the file.
pub fn unwritten_bytes(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    let end = offset.saturating_add(len);
    if len == 0 {
        return Ok(0);
    }
    let size = file.metadata()?.len();
    let within_end = end.min(size);
    let beyond = end - within_end.max(offset);
    if within_end <= offset {
        return Ok(beyond);
    }
    let h = file.as_raw_handle() as usize;
    if !is_sparse(h).unwrap_or(false) {
        return Ok(beyond);
    }
    let Ok(ranges) = allocated_ranges(h, offset, within_end - offset) else {
        return Ok(beyond);
    };
    let data: u64 =
        ranges.iter().map(|&(o, l)| o.saturating_add(l).min(within_end).saturating_sub(o.max(offset))).sum();
    Ok((within_end - offset).saturating_sub(data) + beyond)
}

/// The file's attributes (`GetFileInformationByHandle`).
fn attributes(h: usize) -> io::Result<u32> {
    let mut i = BY_HANDLE_FILE_INFORMATION::default();
    // SAFETY: `h` is the caller's open handle; `i` is a local the call fills.
    if unsafe { GetFileInformationByHandle(handle(h), &mut i) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i.dwFileAttributes)
}

/// Whether the file is sparse (`FILE_ATTRIBUTE_SPARSE_FILE`).
pub fn is_sparse(h: usize) -> io::Result<bool> {
    Ok(attributes(h)? & FILE_ATTRIBUTE_SPARSE_FILE != 0)
}

/// Whether the file is compressed (`FILE_ATTRIBUTE_COMPRESSED`): its writes then cost CPU and
/// its on-disk size differs, so a benchmark's file should not be.
pub fn is_compressed(h: usize) -> io::Result<bool> {
    Ok(attributes(h)? & FILE_ATTRIBUTE_COMPRESSED != 0)
}

/// Makes the file uncompressed (`FSCTL_SET_COMPRESSION` with `COMPRESSION_FORMAT_NONE`; the
/// handle needs read and write access). A file system without compression (the control
/// refused as `ERROR_INVALID_FUNCTION` or `ERROR_NOT_SUPPORTED`) has nothing to undo: `Ok`.
pub fn set_uncompressed(h: usize) -> io::Result<()> {
    let format: u16 = COMPRESSION_FORMAT_NONE;
    // SAFETY: the control reads a u16 format and writes nothing; `h` is the caller's open
    // handle.
    match unsafe { ioctl_typed::<_, ()>(h, FSCTL_SET_COMPRESSION, Some(&format), &mut ()) } {
        Ok(_) => Ok(()),
        Err(e) => match unsupported(e) {
            e if e.kind() == io::ErrorKind::Unsupported => Ok(()),
            e => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::mem::AnonMap;
    use crate::rawio;

    /// An overlapped, unbuffered, write-through file: rawio reads, writes and sees the end;
    /// the fs helpers work on it too.
    #[test]
    fn rawio_on_an_overlapped_direct_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let how = OpenHow { write: true, create: true, direct: true, write_through: true, ..OpenHow::default() };
        let f = Windows::open(&path, how).unwrap();
        assert!(Windows::open(&path, how).is_err(), "create needs a new file");
        let h = Windows::handle(&f);
        let len = 64 << 10;
        let buf = AnonMap::new(len).unwrap();
        // SAFETY: the region holds `len` bytes; only this test uses it.
        let s = unsafe { std::slice::from_raw_parts_mut(buf.ptr(), len) };
        for (i, b) in s.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        // SAFETY: `buf` holds `len` bytes and outlives the calls; `f` is open.
        assert_eq!(unsafe { rawio::write_at(h, buf.ptr(), len as u32, 4096) }.unwrap(), len as u32);
        rawio::sync(h).unwrap();
        assert_eq!(Windows::size(&f).unwrap(), 4096 + len as u64);
        let back = AnonMap::new(len).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { rawio::read_at(h, back.ptr(), len as u32, 4096) }.unwrap(), len as u32);
        // SAFETY: both regions hold `len` bytes.
        let (a, b) =
            unsafe { (std::slice::from_raw_parts(buf.ptr(), len), std::slice::from_raw_parts(back.ptr(), len)) };
        assert!(a == b);
        // A read across the end is short; at or past it, 0 (ERROR_HANDLE_EOF).
        // SAFETY: as above.
        assert_eq!(unsafe { rawio::read_at(h, back.ptr(), 8192, len as u64) }.unwrap(), 4096);
        // SAFETY: as above.
        assert_eq!(unsafe { rawio::read_at(h, back.ptr(), 4096, 4096 + len as u64) }.unwrap(), 0);
        // SAFETY: as above.
        assert_eq!(unsafe { rawio::read_at(h, back.ptr(), 4096, 1 << 40) }.unwrap(), 0);

        // The fs helpers through the same overlapped handle (Wine ignores NO_BUFFERING, so an
        // unaligned length works here; on Windows it must be sector-aligned).
        let mut page = vec![0u8; 4096];
        crate::fs::read_exact_at(&f, &mut page, 4096).unwrap();
        assert_eq!(&page[..], &a[..4096]);
        assert_eq!(
            crate::fs::read_exact_at(&f, &mut page, len as u64 + 2048).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        crate::fs::write_all_at(&f, &page, 0).unwrap();
        assert_eq!(crate::fs::read_at(&f, &mut page, 0).unwrap(), 4096);

        // Many calls on one thread reuse its event; another thread gets its own.
        for i in 0..1000u64 {
            // SAFETY: as above.
            assert_eq!(unsafe { rawio::read_at(h, back.ptr(), 512, (i % 16) * 512) }.unwrap(), 512);
        }
        std::thread::scope(|sc| {
            sc.spawn(|| {
                let mut p = [0u8; 512];
                crate::fs::read_exact_at(&f, &mut p, 4096).unwrap();
                assert_eq!(&p[..], &a[..512]);
            });
        });
    }

    #[test]
    fn sizes_alignment_and_file_controls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let how = OpenHow { write: true, create: true, ..OpenHow::default() };
        let f = Windows::open(&path, how).unwrap();
        let h = Windows::handle(&f);
        assert_eq!(Windows::size(&f).unwrap(), 0, "an empty file");

        // Reserve grows the file; inside it, nothing changes. Wine 8 does not implement
        // SetFileInformationByHandle(FileAllocationInfo) (ERROR_CALL_NOT_IMPLEMENTED): there
        // the error says Unsupported and the file stays as it was (the engine then sets the
        // length itself).
        match Windows::reserve(h, 0, 1 << 20) {
            Ok(()) => {
                assert_eq!(Windows::size(&f).unwrap(), 1 << 20);
                Windows::reserve(h, 4096, 4096).unwrap();
                assert_eq!(f.metadata().unwrap().len(), 1 << 20);
            }
            Err(e) => {
                assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}");
                assert_eq!(Windows::size(&f).unwrap(), 0);
                f.set_len(1 << 20).unwrap();
            }
        }
        assert_eq!(Windows::size(&f).unwrap(), 1 << 20);

        // The volume's sector sizes: Wine has no StorageAccessAlignmentProperty, and
        // GetFinalPathNameByHandleW plus GetDiskFreeSpaceW answer instead.
        let s = Windows::sector_sizes(&f).unwrap();
        assert!(s.logical >= 512 && s.logical.is_power_of_two() && s.physical >= s.logical, "{s:?}");
        let a = Windows::direct_align(&path).unwrap();
        assert_eq!(a.offset, s.logical);
        assert!(a.mem >= a.offset);
        assert_eq!(Windows::direct_align(dir.path()), Some(a), "a directory's volume");

        assert_eq!(Windows::discard(h, Discard::Plain, 0, 4096).unwrap_err().kind(), io::ErrorKind::Unsupported);

        // A new file is neither sparse nor compressed; making it uncompressed is fine either way.
        assert!(!is_sparse(h).unwrap());
        assert!(!is_compressed(h).unwrap());
        set_uncompressed(h).unwrap();

        // Wine 8 routes FSCTL_QUERY_ALLOCATED_RANGES and FSCTL_SET_ZERO_DATA on a regular file to
        // its server, which answers ERROR_NOT_SUPPORTED: Unsupported. On NTFS a file that is not
        // sparse is one allocated range, and zeroing works.
        match allocated_ranges(h, 0, 1 << 20) {
            Ok(r) => assert_eq!(r, [(0, 1 << 20)]),
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}"),
        }
        match Windows::punch_hole(h, 0, 4096) {
            Ok(()) => assert_eq!(f.metadata().unwrap().len(), 1 << 20),
            Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{e}"),
        }
    }

    #[test]
    fn devices_fail_cleanly() {
        // No such drive: the open fails, nothing panics.
        assert!(Windows::open(Path::new(r"\\.\PhysicalDrive999"), OpenHow::default()).is_err());
        // Wine's PhysicalDrive0 exists but has no disk behind it; Windows needs administrator
        // rights to read a drive. Whatever the open gives, the queries must not panic.
        if let Ok(f) = Windows::open(Path::new(r"\\.\PhysicalDrive0"), OpenHow::default()) {
            let _ = (Windows::size(&f), Windows::sector_sizes(&f));
        }
        let _ = Windows::direct_align(Path::new(r"\\.\PhysicalDrive0"));
        let _ = Windows::direct_align(Path::new(r"\\.\C:"));
    }
}
