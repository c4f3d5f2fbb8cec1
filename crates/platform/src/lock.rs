//! Whole-file exclusive locks between processes (one diskmeter run per target at a time), and
//! who holds one.

use std::fs::File;
use std::io;

/// Takes an exclusive lock on `file` without waiting: `Ok(true)` when taken, `Ok(false)` when
/// another open file holds it.
pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::lock::try_lock_exclusive(file)
    }
    #[cfg(not(target_os = "linux"))]
    {
        match file.try_lock() {
            Ok(()) => Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => Ok(false),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
}

/// The process holding the lock on `file`, as (pid, "name (pid N)"), where the OS tells.
pub fn holder(file: &File) -> Option<(u32, String)> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::lock::holder(file)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}
