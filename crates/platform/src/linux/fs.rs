//! access(2) for writable directories, holes (`lseek(SEEK_DATA/SEEK_HOLE)`), statfs's magic.

use crate::IoErrorClass;
use rustix::fs::{seek, SeekFrom};
use rustix::io::Errno;
use std::fs::File;
use std::io;
use std::path::Path;

/// From /proc/self/status (reading it does not change it, as umask(2) would for a moment).
pub fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("Umask:")).and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

pub fn dir_writable(dir: &Path) -> Result<(), (IoErrorClass, std::io::Error)> {
    match rustix::fs::access(dir, rustix::fs::Access::WRITE_OK) {
        Ok(()) => Ok(()),
        Err(e) => {
            let e = std::io::Error::from(e);
            Err((crate::classify(&e), e))
        }
    }
}

/// Bytes of `[offset, offset + len)` that are holes in `file`, found with
/// `lseek(SEEK_DATA/SEEK_HOLE)`. Bytes beyond the end of the file count as unwritten; file
/// systems without hole support (and block devices) report the whole file as data, so they
/// give 0 within the file. The file position is saved and restored.
pub fn unwritten_bytes(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    let end = offset.saturating_add(len);
    if len == 0 {
        return Ok(0);
    }
    let saved = seek(file, SeekFrom::Current(0))?;
    let result = count_holes(file, offset, end);
    seek(file, SeekFrom::Start(saved))?;
    result
}

fn count_holes(file: &File, offset: u64, end: u64) -> io::Result<u64> {
    let mut holes = 0u64;
    let mut pos = offset;
    while pos < end {
        // Next data at or after `pos`.
        let data = match seek(file, SeekFrom::Data(pos)) {
            Ok(d) => d,
            // No data at or after pos (inside a trailing hole, or at/after EOF).
            Err(Errno::NXIO) => {
                holes += end - pos;
                break;
            }
            // The file system cannot tell holes from data.
            Err(Errno::INVAL | Errno::OPNOTSUPP | Errno::NOSYS) if holes == 0 && pos == offset => return Ok(0),
            Err(e) => return Err(e.into()),
        };
        if data > pos {
            holes += data.min(end) - pos;
            pos = data;
            if pos >= end {
                break;
            }
        }
        // Skip the data run that starts at `pos`.
        match seek(file, SeekFrom::Hole(pos)) {
            Ok(h) if h > pos => pos = h,
            // A hole right at a data offset should not happen; step on rather than spin.
            Ok(_) => pos += 1,
            Err(Errno::NXIO) => break,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(holes)
}

/// The statfs magic of the file system holding `path` (`f_type`, low 32 bits).
pub fn fs_magic(path: &Path) -> Option<u32> {
    let st = rustix::fs::statfs(path).ok()?;
    // f_type is a signed word of platform width; the magic lives in the low 32 bits.
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
    Some((st.f_type as u64 & 0xffff_ffff) as u32)
}

/// `posix_fadvise(POSIX_FADV_DONTNEED)` of the range (advice only).
pub fn drop_cached(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid fd, borrowed for the call; advice only.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), offset as libc::off_t, len as libc::off_t, libc::POSIX_FADV_DONTNEED)
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};
    use std::os::unix::fs::FileExt;

    const MIB: u64 = 1 << 20;

    fn supports_holes(f: &File) -> bool {
        matches!(seek(f, SeekFrom::Hole(0)), Ok(h) if h == 0)
    }

    #[test]
    fn sparse_file_counts_holes() {
        let mut f = tempfile::tempfile().expect("tempfile");
        f.set_len(16 * MIB).expect("set_len");
        if !supports_holes(&f) {
            println!("note: file system does not report holes; sparse test skipped");
            return;
        }
        // Write 1 MiB at 2 MiB and 1 MiB at 8 MiB; holes elsewhere.
        let block = vec![0xA5u8; MIB as usize];
        f.write_all_at(&block, 2 * MIB).expect("write");
        f.write_all_at(&block, 8 * MIB).expect("write");
        f.sync_all().expect("sync");
        f.seek(io::SeekFrom::Start(12345)).expect("seek");

        assert_eq!(unwritten_bytes(&f, 0, 16 * MIB).expect("holes"), 14 * MIB);
        assert_eq!(unwritten_bytes(&f, 2 * MIB, MIB).expect("holes"), 0);
        assert_eq!(unwritten_bytes(&f, MIB, 2 * MIB).expect("holes"), MIB);
        assert_eq!(unwritten_bytes(&f, 2 * MIB + 4096, 4096).expect("holes"), 0);
        assert_eq!(unwritten_bytes(&f, 9 * MIB, 7 * MIB).expect("holes"), 7 * MIB);
        // Beyond EOF counts as unwritten.
        assert_eq!(unwritten_bytes(&f, 15 * MIB, 2 * MIB).expect("holes"), 2 * MIB);
        assert_eq!(unwritten_bytes(&f, 0, 0).expect("holes"), 0);
        // Position restored.
        assert_eq!(f.stream_position().expect("pos"), 12345);
    }

    #[test]
    fn fully_written_file_has_no_holes() {
        let mut f = tempfile::tempfile().expect("tempfile");
        let block = vec![0x5Au8; MIB as usize];
        for _ in 0..4 {
            f.write_all(&block).expect("write");
        }
        f.sync_all().expect("sync");
        assert_eq!(unwritten_bytes(&f, 0, 4 * MIB).expect("holes"), 0);
        assert_eq!(unwritten_bytes(&f, 4096, 3 * MIB).expect("holes"), 0);
    }

    #[test]
    fn the_magic_of_proc() {
        // PROC_SUPER_MAGIC.
        assert_eq!(fs_magic(Path::new("/proc")), Some(0x9fa0));
        assert_eq!(fs_magic(Path::new("/no/such/path")), None);
    }
}
