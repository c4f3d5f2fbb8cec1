//! Portable fallbacks where no per-OS module exists yet (Windows comes next): std only.

use crate::IoErrorClass;
use std::io;

/// A code's class by the kind std gives it on this OS.
pub fn classify_code(code: i32) -> IoErrorClass {
    match io::Error::from_raw_os_error(code).kind() {
        io::ErrorKind::NotFound => IoErrorClass::NotFound,
        io::ErrorKind::PermissionDenied => IoErrorClass::Permission,
        io::ErrorKind::ReadOnlyFilesystem => IoErrorClass::ReadOnly,
        io::ErrorKind::StorageFull => IoErrorClass::NoSpace,
        io::ErrorKind::QuotaExceeded => IoErrorClass::Quota,
        io::ErrorKind::NotADirectory => IoErrorClass::NotADirectory,
        io::ErrorKind::IsADirectory => IoErrorClass::IsADirectory,
        io::ErrorKind::InvalidFilename => IoErrorClass::NameTooLong,
        io::ErrorKind::InvalidInput => IoErrorClass::Invalid,
        io::ErrorKind::Unsupported => IoErrorClass::Unsupported,
        io::ErrorKind::OutOfMemory => IoErrorClass::Resources,
        io::ErrorKind::ResourceBusy => IoErrorClass::Busy,
        io::ErrorKind::WouldBlock => IoErrorClass::WouldBlock,
        io::ErrorKind::Interrupted => IoErrorClass::Interrupted,
        io::ErrorKind::TimedOut => IoErrorClass::TimedOut,
        _ => IoErrorClass::Other,
    }
}
