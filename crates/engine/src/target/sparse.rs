//! Finding never-written areas (holes) of a test file, so reads of them can be
//! prevented or flagged (`docs/METHOD.md`, "Principles": never read what was never written).

use std::fs::File;
use std::io;

#[cfg(target_os = "linux")]
use rustix::fs::{seek, SeekFrom};
#[cfg(target_os = "linux")]
use rustix::io::Errno;

/// Bytes of `[offset, offset + len)` that are holes in `file`, found with
/// `lseek(SEEK_DATA/SEEK_HOLE)`. Bytes beyond the end of the file count as
/// unwritten. File systems without hole support (and block devices) report the
/// whole file as data, so they give 0 within the file.
///
/// The file position is saved and restored; callers doing positional I/O are unaffected.
///
/// On Windows the holes are what `FSCTL_QUERY_ALLOCATED_RANGES` leaves out of a sparse file
/// (a file that is not sparse has none); where the file system cannot say, 0 within the file.
#[cfg(windows)]
pub fn unwritten_bytes(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    use platform::windows::target::{allocated_ranges, is_sparse};
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
    let h = platform::target::raw(file);
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

/// Bytes of `[offset, offset + len)` that are holes in `file` (Linux: `lseek(SEEK_DATA/SEEK_HOLE)`).
/// Bytes beyond the end of the file count as unwritten; file systems without hole support
/// (and block devices) give 0 within the file. The file position is saved and restored.
#[cfg(target_os = "linux")]
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

#[cfg(target_os = "linux")]
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

#[cfg(all(test, target_os = "linux"))]
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
}
