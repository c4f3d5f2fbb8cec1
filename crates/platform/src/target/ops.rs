//! The OS-neutral half of [`TargetOps`]: the trait and the values it speaks in. Each OS's
//! module implements it from here; `super::Native` names this OS's (apart, so that the OS
//! modules and the choice among them do not use each other).

use std::fs::File;
use std::io;
use std::path::Path;

/// How to open a target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpenHow {
    /// For writing too (always for reading).
    pub write: bool,
    /// Create it; it must not exist yet. Only its owner may read or write it.
    pub create: bool,
    /// Direct I/O: around the page cache (O_DIRECT).
    pub direct: bool,
    /// Writes reach the medium before they complete (Windows `FILE_FLAG_WRITE_THROUGH`,
    /// DiskSpd's `-Sh` with `direct`; Linux `O_DSYNC`).
    pub write_through: bool,
    /// Hold a block device exclusively, so that nobody can mount it while it is open (O_EXCL).
    pub exclusive: bool,
}

/// A block device's sector sizes, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SectorSizes {
    /// The smallest unit it addresses (direct I/O's offsets and lengths are multiples).
    pub logical: u32,
    /// The unit it writes internally (the logical size when it does not say).
    pub physical: u32,
}

/// What direct I/O on a file or device must be aligned to, where its OS reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectAlign {
    /// Of the memory buffers.
    pub mem: u32,
    /// Of the offsets and lengths.
    pub offset: u32,
}

/// Which discard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discard {
    /// The device may forget the range (BLKDISCARD).
    Plain,
    /// It must also erase what was there (BLKSECDISCARD).
    Secure,
}

/// The target operations of one OS. Associated functions only (no state): callers name
/// [`Native`], dispatch is static.
pub trait TargetOps {
    /// The OS's handle of an open target, as the I/O paths hold it (a descriptor on Linux).
    type Handle: Copy;

    /// The handle of an open file (borrowed: it stays the file's).
    fn handle(file: &File) -> Self::Handle;

    /// Open `path` as `how` says. Reads of it never change it (no access-time updates where
    /// the OS allows that).
    fn open(path: &Path, how: OpenHow) -> io::Result<File>;

    /// The size of an open block device in bytes.
    fn size(file: &File) -> io::Result<u64>;

    /// The sector sizes of an open block device.
    fn sector_sizes(file: &File) -> io::Result<SectorSizes>;

    /// The direct-I/O alignment of the file, directory or device at `path`; `None` where the
    /// OS does not report it.
    fn direct_align(path: &Path) -> Option<DirectAlign>;

    /// Discard `len` bytes at `offset` of a block device.
    fn discard(h: Self::Handle, how: Discard, offset: u64, len: u64) -> io::Result<()>;

    /// Deallocate `len` bytes at `offset` of a file, keeping its size (they then read as zeros).
    fn punch_hole(h: Self::Handle, offset: u64, len: u64) -> io::Result<()>;

    /// Allocate `len` bytes at `offset` of a file now, growing it if needed, so that writing
    /// them later cannot run out of space.
    fn reserve(h: Self::Handle, offset: u64, len: u64) -> io::Result<()>;
}
