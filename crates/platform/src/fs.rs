//! File-system facts the checks above need, in OS-neutral terms.

use crate::IoErrorClass;
use std::fs::{FileType, OpenOptions};
use std::path::Path;

/// What kind of thing a file type is, for messages ("a directory", "a FIFO", …).
pub fn kind_of(ft: FileType) -> &'static str {
    if ft.is_dir() {
        return "a directory";
    }
    if ft.is_symlink() {
        return "a symbolic link";
    }
    if ft.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Whether new files can be made in the directory `dir`: `Ok`, or why not (`ReadOnly`,
/// `Permission`, or another class with the OS's error).
pub fn dir_writable(dir: &Path) -> Result<(), (IoErrorClass, std::io::Error)> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::dir_writable(dir)
    }
    #[cfg(not(target_os = "linux"))]
    {
        match std::fs::metadata(dir) {
            Ok(m) if m.permissions().readonly() => Err((
                IoErrorClass::Permission,
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, "read-only directory"),
            )),
            Ok(_) => Ok(()),
            Err(e) => Err((crate::classify(&e), e)),
        }
    }
}

/// Makes `opts` create files readable and writable by their owner only (0600 on Unix).
pub fn owner_only(opts: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600)
    }
    #[cfg(not(unix))]
    {
        opts
    }
}

/// The permission bits of a file, where the OS has them (Unix mode bits).
pub fn mode_of(meta: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Gives `file` the permission bits `mode` (Unix), best effort.
pub fn set_mode(file: &std::fs::File, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// A file's identity: (device number, inode) where the OS has them (Unix), to tell two paths to
/// one file apart from two files.
pub fn file_id(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// The process's umask (0o022 where unknown): the bits a new file's mode loses.
pub fn umask() -> u32 {
    #[cfg(target_os = "linux")]
    {
        crate::linux::fs::umask()
    }
    #[cfg(not(target_os = "linux"))]
    {
        0o022
    }
}
