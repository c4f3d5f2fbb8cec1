//! Extended attributes (owner markers).

use std::fs::File;
use std::os::fd::AsFd;
use std::path::Path;

pub fn set(file: &File, name: &str, value: &[u8]) -> bool {
    rustix::fs::fsetxattr(file.as_fd(), name, value, rustix::fs::XattrFlags::empty()).is_ok()
}

pub fn get(path: &Path, name: &str, max: usize) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; max];
    let n = rustix::fs::getxattr(path, name, &mut buf).ok()?;
    buf.truncate(n);
    Some(buf)
}
