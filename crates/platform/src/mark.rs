//! Owner markers: a small named value attached to a file (an extended attribute on Linux),
//! which says diskmeter made the file. Where the OS or file system keeps none, no file reads
//! as marked — diskmeter then treats its own files as foreign, the safe side.

use std::fs::File;
use std::path::Path;

/// Attaches `value` under `name` to `file`; best effort (false when the file system keeps none).
pub fn set(file: &File, name: &str, value: &[u8]) -> bool {
    #[cfg(target_os = "linux")]
    {
        crate::linux::xattr::set(file, name, value)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, name, value);
        false
    }
}

/// The value under `name` on the file at `path` (at most `max` bytes), if any.
pub fn get(path: &Path, name: &str, max: usize) -> Option<Vec<u8>> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::xattr::get(path, name, max)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (path, name, max);
        None
    }
}
