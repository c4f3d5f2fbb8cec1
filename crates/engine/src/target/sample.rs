//! Evidence for `unwritten-read` on block devices: before a read run, sample blocks spread
//! evenly over the region the jobs read and count those that read back as all zeros.
//!
//! A device holding real data reads back real data; a blank, new, thin-provisioned or
//! trimmed one returns zeros without touching media, and reads of it measure nothing. Only
//! zeros are evidence: a device that was filled before the run gets no warning. (Files have
//! better evidence — their holes, see [`crate::target::sparse`].)

use crate::io::buffers::BufferPool;
use std::fs::File;
use std::path::Path;

/// Blocks sampled per target.
pub const SAMPLES: u64 = 64;
/// Bytes per sampled block (raised to the logical block size when that is larger).
pub const SAMPLE_BLOCK: u64 = 4096;

/// What the sample found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeroSample {
    /// Blocks read (read errors and short reads are not counted).
    pub sampled: u64,
    /// Blocks that read back as all zeros.
    pub zero: u64,
}

/// Offsets of up to `n` blocks of `block` bytes spread evenly over `[start, end)`, each a
/// multiple of `block` and wholly inside the range, without repeats (a region of fewer than
/// `n` blocks gives fewer). Pure.
pub fn sample_offsets(start: u64, end: u64, block: u64, n: u64) -> Vec<u64> {
    if block == 0 || n == 0 {
        return Vec::new();
    }
    let first = start.div_ceil(block).saturating_mul(block);
    let last = match end.checked_sub(block) {
        Some(l) => l / block * block,
        None => return Vec::new(),
    };
    if first > last {
        return Vec::new();
    }
    let span = end - start;
    let mut out: Vec<u64> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let at = start + (u128::from(span) * u128::from(i) / u128::from(n)) as u64;
        let off = at.div_ceil(block).saturating_mul(block).clamp(first, last);
        if out.last() != Some(&off) {
            out.push(off);
        }
    }
    out
}

/// Read [`SAMPLES`] blocks spread over `[start, end)` of `file` with its own rules (an
/// O_DIRECT file gets a buffer aligned to `mem_align` and blocks of `block` bytes at
/// multiples of `block`; `block` must be a multiple of the logical block size) and count the
/// all-zero ones. `None` when no buffer could be had.
pub fn zero_blocks(file: &File, start: u64, end: u64, block: u64, mem_align: usize) -> Option<ZeroSample> {
    let offsets = sample_offsets(start, end, block, SAMPLES);
    let mut pool = BufferPool::new(1, usize::try_from(block).ok()?, mem_align)?;
    let mut s = ZeroSample { sampled: 0, zero: 0 };
    for off in offsets {
        let buf = pool.slot_mut(0);
        if platform::fs::read_exact_at(file, buf, off).is_err() {
            continue;
        }
        s.sampled += 1;
        if buf.iter().all(|&b| b == 0) {
            s.zero += 1;
        }
    }
    // Buffered reads leave the samples in the page cache, where the run would find them.
    // (Windows has no such advice; its device targets are read unbuffered.)
    platform::fs::drop_cached(file, start, end - start);
    Some(s)
}

/// The `unwritten-read` message for a block device whose sample found zeros; `None` when no
/// sampled block was zero (or nothing could be sampled).
pub fn unwritten_message(path: &Path, s: ZeroSample) -> Option<String> {
    if s.zero == 0 || s.sampled == 0 {
        return None;
    }
    let p = path.display();
    Some(format!(
        "{} of {} sampled blocks of {p}'s test region read as zeros: a new, blank, thin-provisioned or trimmed \
         region returns zeros without reading media, so reads there measure nothing; add --prefill \
         --destroy-data {p} to write the region first",
        s.zero, s.sampled
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;

    const MIB: u64 = 1 << 20;

    #[test]
    fn offsets_spread_evenly_aligned_and_inside() {
        let o = sample_offsets(0, 64 * MIB, 4096, 64);
        assert_eq!(o.len(), 64);
        assert_eq!(o[0], 0);
        assert_eq!(o[1], MIB);
        assert_eq!(o[63], 63 * MIB);
        // An unaligned range: every block is aligned and wholly inside.
        let o = sample_offsets(1000, 10 * MIB + 123, 4096, 64);
        assert_eq!(o.len(), 64);
        assert!(o.iter().all(|&x| x % 4096 == 0 && x >= 1000 && x + 4096 <= 10 * MIB + 123), "{o:?}");
        assert!(o.windows(2).all(|w| w[0] < w[1]));
        // A small region gives each block once.
        assert_eq!(sample_offsets(0, 3 * 4096, 4096, 64), vec![0, 4096, 8192]);
        // Smaller than a block, or empty: nothing.
        assert!(sample_offsets(0, 4095, 4096, 64).is_empty());
        assert!(sample_offsets(4096, 4096, 4096, 64).is_empty());
        assert!(sample_offsets(100, 4096 + 200, 4096, 64).is_empty());
        // Far offsets do not overflow.
        let o = sample_offsets(u64::MAX / 2, u64::MAX / 2 + 64 * MIB, 4096, 64);
        assert_eq!(o.len(), 64);
    }

    fn file_with(parts: &[(u8, u64)]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        for &(byte, len) in parts {
            f.write_all(&vec![byte; len as usize]).unwrap();
        }
        drop(f);
        (dir, File::open(&path).unwrap())
    }

    #[test]
    fn zero_blocks_are_counted() {
        // Written zeros (not holes): 16 MiB of data, then 16 MiB of zeros.
        let (_d, f) = file_with(&[(0x5a, 16 * MIB), (0, 16 * MIB)]);
        let s = zero_blocks(&f, 0, 32 * MIB, 4096, 4096).unwrap();
        assert_eq!(s, ZeroSample { sampled: 64, zero: 32 });
        let s = zero_blocks(&f, 0, 16 * MIB, 4096, 4096).unwrap();
        assert_eq!(s, ZeroSample { sampled: 64, zero: 0 });
        assert_eq!(unwritten_message(Path::new("/dev/x"), s), None);
        // Past the end of the file: short reads are not samples.
        let s = zero_blocks(&f, 16 * MIB, 48 * MIB, 4096, 4096).unwrap();
        assert_eq!(s, ZeroSample { sampled: 32, zero: 32 });
    }

    #[test]
    fn message_says_how_many() {
        let m = unwritten_message(Path::new("/dev/loop9"), ZeroSample { sampled: 64, zero: 12 }).unwrap();
        assert!(m.starts_with("12 of 64 sampled blocks of /dev/loop9's test region read as zeros:"), "{m}");
        assert!(m.ends_with("add --prefill --destroy-data /dev/loop9 to write the region first"), "{m}");
        assert_eq!(unwritten_message(Path::new("/dev/x"), ZeroSample { sampled: 0, zero: 0 }), None);
    }
}
