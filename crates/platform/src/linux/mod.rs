//! Linux: sysfs, procfs, flock, extended attributes, mmap.

pub mod block;
pub mod errno;
pub mod fs;
pub mod lock;
pub mod mem;
pub mod process;
pub mod xattr;
