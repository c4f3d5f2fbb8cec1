//! What the engine asks of a test target's OS, beyond reading and writing it: open it for
//! direct I/O, a block device's size and sector sizes, the direct-I/O alignment, discard a
//! block device's range, punch a hole in a file and reserve a file's range. One trait,
//! [`TargetOps`], implemented once per OS: [`Native`] is this OS's (Linux: `open(2)` flags,
//! the `BLK*` ioctls, `statx`, `fallocate`). Windows implements it next.
//!
//! Every method is an OS call and nothing more: the rules around them (when a target may be
//! written, what a refused direct open means to the user) are the engine's.

pub(crate) mod ops;

pub use ops::{DirectAlign, Discard, OpenHow, SectorSizes, TargetOps};

/// This OS's target operations.
#[cfg(target_os = "linux")]
pub type Native = crate::linux::target::Linux;
/// This OS's target operations.
#[cfg(windows)]
pub type Native = crate::windows::target::Windows;

/// An open target's OS handle as the I/O paths hold it: a descriptor on Unix, a `HANDLE`'s
/// value on Windows. Borrowed: the `File` it came from owns it.
#[cfg(unix)]
pub type Raw = std::os::fd::RawFd;
/// An open target's OS handle as the I/O paths hold it: a descriptor on Unix, a `HANDLE`'s
/// value on Windows. Borrowed: the `File` it came from owns it.
#[cfg(windows)]
pub type Raw = usize;

/// The handle of an open file, borrowed (it stays the file's): [`TargetOps::handle`] of
/// this OS's [`Native`].
#[cfg(any(target_os = "linux", windows))]
#[inline]
pub fn raw(file: &std::fs::File) -> Raw {
    <Native as TargetOps>::handle(file)
}

/// No handle: what a job without a target (the null and mem engines) holds.
#[cfg(unix)]
pub const NO_RAW: Raw = -1;
/// No handle: what a job without a target (the null and mem engines) holds
/// (`INVALID_HANDLE_VALUE`).
#[cfg(windows)]
pub const NO_RAW: Raw = usize::MAX;

/// Whether `path` names a disk or volume in the OS's device namespace rather than a file:
/// Windows' `\\.\PhysicalDriveN` (a whole disk) and `\\.\D:` (a volume). None do elsewhere (a
/// Unix device is a file, told by its metadata), so there the same string is a file name.
pub fn is_device_path(path: &std::path::Path) -> bool {
    #[cfg(windows)]
    {
        let s = path.to_string_lossy();
        crate::winpath::physical_drive(&s).is_some() || crate::winpath::volume_device(&s).is_some()
    }
    #[cfg(not(windows))]
    {
        let _ = path;
        false
    }
}

/// Opens `path` only to read what it is (a device's size and sector sizes, its first and last
/// bytes), sharing it with its other users: std's read-only open where a device is a file
/// (Unix); Windows' own ([`TargetOps::open`] with no flags: an overlapped handle, so read it
/// through [`crate::fs::read_at`] and its kin).
pub fn open_to_read(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    #[cfg(windows)]
    {
        <Native as TargetOps>::open(path, OpenHow::default())
    }
    #[cfg(not(windows))]
    {
        std::fs::File::open(path)
    }
}

/// The flags a target opened as `how` carries into each handle an asynchronous engine opens
/// of its own (Windows: `FILE_FLAG_NO_BUFFERING` for direct I/O, `FILE_FLAG_WRITE_THROUGH`);
/// 0 where the engine shares the one descriptor (Linux).
pub fn reopen_flags(how: OpenHow) -> u32 {
    #[cfg(windows)]
    {
        use windows_sys::Win32::Storage::FileSystem::{FILE_FLAG_NO_BUFFERING, FILE_FLAG_WRITE_THROUGH};
        (if how.direct { FILE_FLAG_NO_BUFFERING } else { 0 })
            | (if how.write_through { FILE_FLAG_WRITE_THROUGH } else { 0 })
    }
    #[cfg(not(windows))]
    {
        let _ = how;
        0
    }
}
