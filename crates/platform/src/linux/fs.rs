//! access(2) for writable directories.

use crate::IoErrorClass;
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
