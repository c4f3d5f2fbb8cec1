//! Reading the kernel's one-value files (sysfs, procfs): shared by `linux::block` and `diag`.

use std::fs;
use std::path::Path;

/// A sysfs or procfs file's text, trimmed; None when missing, unreadable or empty.
pub(crate) fn read_trim(p: &Path) -> Option<String> {
    let s = fs::read_to_string(p).ok()?;
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// [`read_trim`] parsed.
pub(crate) fn read_num<T: std::str::FromStr>(p: &Path) -> Option<T> {
    read_trim(p)?.parse().ok()
}
