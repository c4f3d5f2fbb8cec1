//! Linux: sysfs, procfs, flock, extended attributes, mmap, generic netlink, the target operations
//! (open flags, block ioctls, statx, fallocate).

pub mod block;
pub mod errno;
pub mod fs;
pub mod lock;
pub mod mem;
pub mod netlink;
pub mod process;
pub mod target;
pub mod xattr;
