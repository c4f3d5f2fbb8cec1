//! Finding never-written areas (holes) of a test file, so reads of them can be
//! prevented or flagged (`docs/METHOD.md`, "Principles": never read what was never written).
//! The OS's part (Linux's `lseek(SEEK_DATA/SEEK_HOLE)`, Windows' allocated ranges of a sparse
//! file) is `platform::fs::unwritten_bytes`.

/// Bytes of `[offset, offset + len)` that are holes in `file`. Bytes beyond the end of the file
/// count as unwritten; file systems without hole support (and block devices) give 0 within
/// the file. The file position is saved and restored; callers doing positional I/O are
/// unaffected.
pub use platform::fs::unwritten_bytes;
