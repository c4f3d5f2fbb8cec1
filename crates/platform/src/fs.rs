//! File-system facts the checks above need, in OS-neutral terms.

use crate::IoErrorClass;
use std::fs::{FileType, OpenOptions};
use std::path::Path;

/// What kind of thing a file type is, for messages ("a directory", "a FIFO", …).
pub fn kind_of(ft: FileType) -> &'static str {
    if ft.is_dir() {
        return "a directory";
    }
    if ft.is_symlink() {
        return "a symbolic link";
    }
    if ft.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Whether new files can be made in the directory `dir`: `Ok`, or why not (`ReadOnly`,
/// `Permission`, or another class with the OS's error).
pub fn dir_writable(dir: &Path) -> Result<(), (IoErrorClass, std::io::Error)> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::dir_writable(dir)
    }
    #[cfg(not(target_os = "linux"))]
    {
        match std::fs::metadata(dir) {
            Ok(m) if m.permissions().readonly() => Err((
                IoErrorClass::Permission,
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only directory"),
            )),
            Ok(_) => Ok(()),
            Err(e) => Err((crate::classify(&e), e)),
        }
    }
}

/// Makes `opts` create files readable and writable by their owner only (0600 on Unix).
pub fn owner_only(opts: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600)
    }
    #[cfg(not(unix))]
    {
        opts
    }
}

/// The permission bits of a file, where the OS has them (Unix mode bits).
pub fn mode_of(meta: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Gives `file` the permission bits `mode` (Unix), best effort.
pub fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// A file's identity: (device number, inode) where the OS has them (Unix), to tell two paths to
/// one file apart from two files.
pub fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The process's umask (0o022 where unknown): the bits a new file's mode loses.
pub fn umask() -> u32 {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::umask()
    }
    #[cfg(not(target_os = "linux"))]
    {
        0o022
    }
}

/// Reads up to `buf.len()` bytes at `offset` of `file` (at most 4 GiB − 1 at once); the bytes
/// read, 0 at the end. On Windows through [`crate::rawio`], so that handles opened overlapped
/// ([`crate::target::TargetOps::open`]) work too.
pub fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // SAFETY: `buf` is an exclusive borrow of at least `len` bytes for the call; `file` is
        // open and borrowed for the call.
        unsafe { crate::rawio::read_at(file.as_raw_handle() as usize, buf.as_mut_ptr(), len, offset) }
            .map(|n| n as usize)
    }
}

/// Reads exactly `buf.len()` bytes at `offset` of `file`: `UnexpectedEof` if the file ends
/// first (what was read is then in `buf`), as std's `read_exact_at`.
pub fn read_exact_at(file: &std::fs::File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => {
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "failed to fill whole buffer"));
            }
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` at `offset` of `file`: `WriteZero` if the OS stops writing, as std's
/// `write_all_at`. On Windows through [`crate::rawio`], as [`read_at`].
pub fn write_all_at(file: &std::fs::File, mut buf: &[u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match write_at(file, buf, offset) {
            Ok(0) => {
                return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "failed to write whole buffer"));
            }
            Ok(n) => {
                buf = &buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One positional write (at most 4 GiB − 1 at once).
pub fn write_at(file: &std::fs::File, buf: &[u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.write_at(buf, offset)
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        // SAFETY: `buf` is borrowed for the call and holds at least `len` bytes; `file` is open
        // and borrowed for the call.
        unsafe { crate::rawio::write_at(file.as_raw_handle() as usize, buf.as_ptr(), len, offset) }.map(|n| n as usize)
    }
}

/// Whether a file type is a block device (Unix); Windows has none (its disks are not files).
pub fn is_block_device(ft: &FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        ft.is_block_device()
    }
    #[cfg(not(unix))]
    {
        let _ = ft;
        false
    }
}

/// The device number a device file stands for (Unix `st_rdev`); `None` where the OS has none.
pub fn rdev(meta: &std::fs::Metadata) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(meta.rdev())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The device number of the file system holding a file (Unix `st_dev`); `None` where the OS
/// has none (Windows).
pub fn dev(meta: &std::fs::Metadata) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(meta.dev())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The size of the file system holding `path` and the bytes free on it (to anyone, as `df`
/// counts used space), where the OS tells.
pub fn space(path: &Path) -> Option<(u64, u64)> {
    #[cfg(target_os = "linux")]
    {
        let v = rustix::fs::statvfs(path).ok()?;
        Some((v.f_blocks.saturating_mul(v.f_frsize), v.f_bfree.saturating_mul(v.f_frsize)))
    }
    #[cfg(windows)]
    {
        let root = crate::windows::target::volume_root(path.as_os_str()).ok()?;
        let wide = crate::windows::target::wide(&root);
        let (mut avail, mut total, mut free) = (0u64, 0u64, 0u64);
        // SAFETY: a NUL-terminated wide string and valid out-pointers.
        let ok = unsafe {
            windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW(
                wide.as_ptr(),
                &mut avail,
                &mut total,
                &mut free,
            )
        };
        (ok != 0).then_some((total, free))
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = path;
        None
    }
}

/// Bytes free to this user on the file system holding `file`, where the OS tells.
pub fn free_bytes(file: &std::fs::File) -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        rustix::fs::fstatvfs(file).ok().map(|v| v.f_bavail.saturating_mul(v.f_frsize))
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        let path = crate::windows::target::final_path(file.as_raw_handle() as usize).ok()?;
        let root = crate::windows::target::volume_root(&path).ok()?;
        let wide = crate::windows::target::wide(&root);
        let mut free = 0u64;
        // SAFETY: a NUL-terminated wide string and a valid out-pointer; the others may be null.
        let ok = unsafe {
            windows_sys::Win32::Storage::FileSystem::GetDiskFreeSpaceExW(
                wide.as_ptr(),
                &mut free,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (ok != 0).then_some(free)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = file;
        None
    }
}

/// The name of the file system holding `path` where only the OS's volume can say (Windows:
/// "NTFS", "ReFS", "FAT32", …); `None` on Linux, where the mount table says it.
pub fn fs_name(path: &Path) -> Option<String> {
    #[cfg(windows)]
    {
        let root = crate::windows::target::volume_root(path.as_os_str()).ok()?;
        let wide = crate::windows::target::wide(&root);
        let mut name = [0u16; 64];
        // SAFETY: a NUL-terminated wide string and a buffer of the length given; the other
        // out-parameters may be null.
        let ok = unsafe {
            windows_sys::Win32::Storage::FileSystem::GetVolumeInformationW(
                wide.as_ptr(),
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                name.as_mut_ptr(),
                name.len() as u32,
            )
        };
        let name = String::from_utf16_lossy(crate::windows::target::until_nul(&name));
        (ok != 0 && !name.is_empty()).then_some(name)
    }
    #[cfg(not(windows))]
    {
        let _ = path;
        None
    }
}

/// Bytes of `[offset, offset + len)` of `file` that were never written (holes), so that reads
/// of them can be prevented or flagged. Bytes beyond the end of the file count as unwritten;
/// file systems that cannot tell holes (and block devices) give 0 within the file. Linux:
/// `lseek(SEEK_DATA/SEEK_HOLE)`, the file position saved and restored; Windows: what
/// `FSCTL_QUERY_ALLOCATED_RANGES` leaves out of a sparse file; elsewhere only the bytes beyond
/// the end.
pub fn unwritten_bytes(file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<u64> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::unwritten_bytes(file, offset, len)
    }
    #[cfg(windows)]
    {
        crate::windows::target::unwritten_bytes(file, offset, len)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let end = offset.saturating_add(len);
        Ok(end - end.min(file.metadata()?.len()).max(offset))
    }
}

/// The magic number of the file system holding `path` (Linux's `statfs` `f_type`: `0xEF53`
/// ext2/3/4, `0x01021994` tmpfs, …); `None` where the OS has none.
pub fn fs_magic(path: &Path) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::fs_magic(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Whether `file` is compressed by its file system (NTFS compression: every read and write then
/// goes through the compressor); false where the OS has no such attribute.
pub fn is_compressed(file: &std::fs::File) -> std::io::Result<bool> {
    #[cfg(windows)]
    {
        crate::windows::target::is_compressed(crate::target::raw(file))
    }
    #[cfg(not(windows))]
    {
        let _ = file;
        Ok(false)
    }
}

/// Turns the file system's compression of `file` off (NTFS); `Ok` where there is none to turn
/// off.
pub fn set_uncompressed(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(windows)]
    {
        crate::windows::target::set_uncompressed(crate::target::raw(file))
    }
    #[cfg(not(windows))]
    {
        let _ = file;
        Ok(())
    }
}

/// Advises the OS that the cached pages of `len` bytes at `offset` of `file` are not needed
/// any more (Linux: `posix_fadvise(POSIX_FADV_DONTNEED)`), so that a later read finds the
/// device, not the page cache. Advice only, best effort; nothing where the OS has no such
/// advice (Windows).
pub fn drop_cached(file: &std::fs::File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::drop_cached(file, offset, len);
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, offset, len);
    }
}

/// Makes the entries of directory `dir` durable (a rename into it, a new file): `fsync` of the
/// directory on Unix. Windows has no such call (a directory cannot be flushed; NTFS journals
/// its metadata), so there it is `Ok` once `dir` is a directory.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir).and_then(|d| d.sync_all())
    }
    #[cfg(not(unix))]
    {
        if std::fs::metadata(dir)?.is_dir() {
            Ok(())
        } else {
            Err(std::io::ErrorKind::NotADirectory.into())
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn positional_helpers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p");
        let f = OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
        write_all_at(&f, b"hello world", 3).unwrap();
        let mut b = [0u8; 5];
        read_exact_at(&f, &mut b, 9).unwrap();
        assert_eq!(&b, b"world");
        assert_eq!(read_at(&f, &mut b, 14).unwrap(), 0);
        let e = read_exact_at(&f, &mut b, 12).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        write_all_at(&f, b"", 100).unwrap();
        let m = f.metadata().unwrap();
        assert!(!is_block_device(&m.file_type()));
        assert_eq!(rdev(&m).is_some(), cfg!(unix));
        assert_eq!(dev(&m).is_some(), cfg!(unix));
    }
}
