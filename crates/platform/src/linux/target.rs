//! Linux's target operations: `open(2)` flags, the block layer's ioctls, `statx`, `fallocate`.

use crate::target::ops::{DirectAlign, Discard, OpenHow, SectorSizes, TargetOps};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `BLKDISCARD` (`_IO(0x12, 119)`).
const BLKDISCARD: libc::Ioctl = (0x12 << 8) | 119;
/// `BLKSECDISCARD` (`_IO(0x12, 125)`).
const BLKSECDISCARD: libc::Ioctl = (0x12 << 8) | 125;

/// Linux's [`TargetOps`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Linux;

impl TargetOps for Linux {
    type Handle = RawFd;

    #[inline]
    fn handle(file: &File) -> RawFd {
        file.as_raw_fd()
    }

    fn open(path: &Path, how: OpenHow) -> io::Result<File> {
        let mut flags = libc::O_CLOEXEC;
        if how.direct {
            flags |= libc::O_DIRECT;
        }
        if how.exclusive {
            flags |= libc::O_EXCL;
        }
        if how.write_through {
            flags |= libc::O_DSYNC;
        }
        // O_NOATIME: a benchmark's reads must not change the target. Without it every read of a
        // block device or file updates the inode's access time: CPU on each I/O in
        // `blkdev_read_iter`, and on a file system inode writes the workload never asked for. The
        // kernel allows it only to the file's owner (or CAP_FOWNER); anyone else gets EPERM and
        // the file is opened without it.
        match open_with(path, how, flags | libc::O_NOATIME) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => open_with(path, how, flags),
            r => r,
        }
    }

    fn size(file: &File) -> io::Result<u64> {
        use rustix::ioctl::{opcode, Getter, Opcode};
        // BLKGETSIZE64 = _IOR(0x12, 114, size_t); the kernel writes a u64.
        const BLKGETSIZE64: Opcode = opcode::read::<usize>(0x12, 114);
        // SAFETY: BLKGETSIZE64 is a getter ioctl whose argument is a pointer to a
        // u64 the kernel fills in; `Getter` provides exactly such a buffer.
        let r = unsafe { rustix::ioctl::ioctl(file, Getter::<BLKGETSIZE64, u64>::new()) };
        match r {
            Ok(n) => Ok(n),
            // Not a block device's ioctl: seek to the end.
            Err(_) => {
                let pos = rustix::fs::seek(file, rustix::fs::SeekFrom::End(0))?;
                rustix::fs::seek(file, rustix::fs::SeekFrom::Start(0))?;
                Ok(pos)
            }
        }
    }

    fn sector_sizes(file: &File) -> io::Result<SectorSizes> {
        let logical = rustix::fs::ioctl_blksszget(file)?;
        let physical = rustix::fs::ioctl_blkpbszget(file).unwrap_or(logical);
        Ok(SectorSizes { logical, physical })
    }

    fn direct_align(path: &Path) -> Option<DirectAlign> {
        use rustix::fs::{statx, AtFlags, StatxFlags, CWD};
        // STATX_DIOALIGN: Linux 6.1 and later, where the file system or device reports it.
        match statx(CWD, path, AtFlags::empty(), StatxFlags::DIOALIGN) {
            Ok(st)
                if StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::DIOALIGN)
                    && st.stx_dio_offset_align != 0 =>
            {
                Some(DirectAlign { mem: st.stx_dio_mem_align, offset: st.stx_dio_offset_align })
            }
            _ => None,
        }
    }

    fn discard(fd: RawFd, how: Discard, offset: u64, len: u64) -> io::Result<()> {
        let req = match how {
            Discard::Plain => BLKDISCARD,
            Discard::Secure => BLKSECDISCARD,
        };
        let range: [u64; 2] = [offset, len];
        // SAFETY: a plain ioctl on a descriptor the caller holds, with the 16-byte range
        // argument it expects, which lives across the call.
        check(unsafe { libc::ioctl(fd, req, range.as_ptr()) })
    }

    fn punch_hole(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: a plain syscall on a descriptor the caller holds; the range is by value.
        check(unsafe { libc::fallocate(fd, mode, offset as libc::off_t, len as libc::off_t) })
    }

    fn reserve(fd: RawFd, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: a plain syscall on a descriptor the caller holds; the range is by value.
        check(unsafe { libc::fallocate(fd, 0, offset as libc::off_t, len as libc::off_t) })
    }
}

fn open_with(path: &Path, how: OpenHow, flags: i32) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(how.write).custom_flags(flags);
    if how.create {
        o.create_new(true).mode(0o600);
    }
    o.open(path)
}

/// A call's 0 as `Ok`, anything else as the thread's last OS error.
fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_file_is_opened_reserved_and_punched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let how = OpenHow { write: true, create: true, ..OpenHow::default() };
        let f = Linux::open(&path, how).unwrap();
        assert!(Linux::open(&path, how).is_err(), "create needs a new file");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        let h = Linux::handle(&f);
        // tmpfs and the common file systems reserve and punch; others say so.
        if Linux::reserve(h, 0, 64 << 10).is_ok() {
            assert_eq!(f.metadata().unwrap().len(), 64 << 10);
            assert_eq!(Linux::size(&f).unwrap(), 64 << 10, "a file's size is its length");
            if Linux::punch_hole(h, 0, 4096).is_ok() {
                assert_eq!(f.metadata().unwrap().len(), 64 << 10, "a hole keeps the size");
            }
        }
        assert!(Linux::sector_sizes(&f).is_err(), "a file has no sector sizes");
        assert!(Linux::discard(h, Discard::Plain, 0, 4096).is_err(), "a file has no discard");
    }
}
