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
