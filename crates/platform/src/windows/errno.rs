//! Windows' error codes (`GetLastError`, and the NTSTATUS codes the completion port reports,
//! converted) in the classes the layers above speak ([`IoErrorClass`]), and back: the code a
//! backend reports for a class it found without an OS error.

use crate::error::errno::Errno;
use crate::IoErrorClass as C;

// Win32 error codes (winerror.h) the classes are made of.
const ERROR_FILE_NOT_FOUND: i32 = 2;
const ERROR_PATH_NOT_FOUND: i32 = 3;
const ERROR_TOO_MANY_OPEN_FILES: i32 = 4;
const ERROR_ACCESS_DENIED: i32 = 5;
const ERROR_NOT_ENOUGH_MEMORY: i32 = 8;
const ERROR_OUTOFMEMORY: i32 = 14;
const ERROR_INVALID_DRIVE: i32 = 15;
const ERROR_WRITE_PROTECT: i32 = 19;
const ERROR_NOT_READY: i32 = 21;
const ERROR_CRC: i32 = 23;
const ERROR_SEEK: i32 = 25;
const ERROR_SECTOR_NOT_FOUND: i32 = 27;
const ERROR_WRITE_FAULT: i32 = 29;
const ERROR_READ_FAULT: i32 = 30;
const ERROR_GEN_FAILURE: i32 = 31;
const ERROR_SHARING_VIOLATION: i32 = 32;
const ERROR_LOCK_VIOLATION: i32 = 33;
const ERROR_HANDLE_DISK_FULL: i32 = 39;
const ERROR_NOT_SUPPORTED: i32 = 50;
const ERROR_DEV_NOT_EXIST: i32 = 55;
const ERROR_INVALID_PARAMETER: i32 = 87;
const ERROR_DISK_FULL: i32 = 112;
const ERROR_INVALID_NAME: i32 = 123;
const ERROR_BUSY: i32 = 170;
const ERROR_FILENAME_EXCED_RANGE: i32 = 206;
const ERROR_DIRECTORY: i32 = 267;
const ERROR_DEVICE_HARDWARE_ERROR: i32 = 483;
const ERROR_OPERATION_ABORTED: i32 = 995;
const ERROR_IO_INCOMPLETE: i32 = 996;
const ERROR_IO_DEVICE: i32 = 1117;
const ERROR_DEVICE_NOT_CONNECTED: i32 = 1167;
const ERROR_NO_SYSTEM_RESOURCES: i32 = 1450;
const ERROR_TIMEOUT: i32 = 1460;
const ERROR_DISK_QUOTA_EXCEEDED: i32 = 1295;
const ERROR_CANT_RESOLVE_FILENAME: i32 = 1921;
const ERROR_INVALID_FUNCTION: i32 = 1;
const ERROR_CALL_NOT_IMPLEMENTED: i32 = 120;
const ERROR_DEVICE_REMOVED: i32 = 1617;
const ERROR_NO_MEDIA_IN_DRIVE: i32 = 1112;
const ERROR_LOCK_FAILED: i32 = 167;

/// The class of a Win32 error code.
pub fn classify(code: i32) -> C {
    match code {
        ERROR_CRC
        | ERROR_SEEK
        | ERROR_SECTOR_NOT_FOUND
        | ERROR_WRITE_FAULT
        | ERROR_READ_FAULT
        | ERROR_GEN_FAILURE
        | ERROR_DEVICE_HARDWARE_ERROR
        | ERROR_IO_DEVICE => C::Media,
        ERROR_NOT_READY
        | ERROR_DEV_NOT_EXIST
        | ERROR_DEVICE_NOT_CONNECTED
        | ERROR_DEVICE_REMOVED
        | ERROR_NO_MEDIA_IN_DRIVE
        | ERROR_INVALID_DRIVE => C::Vanished,
        ERROR_DISK_FULL | ERROR_HANDLE_DISK_FULL => C::NoSpace,
        ERROR_DISK_QUOTA_EXCEEDED => C::Quota,
        ERROR_ACCESS_DENIED => C::Permission,
        ERROR_WRITE_PROTECT => C::ReadOnly,
        ERROR_FILE_NOT_FOUND | ERROR_PATH_NOT_FOUND => C::NotFound,
        ERROR_DIRECTORY => C::NotADirectory,
        ERROR_CANT_RESOLVE_FILENAME => C::LinkLoop,
        ERROR_FILENAME_EXCED_RANGE => C::NameTooLong,
        ERROR_INVALID_PARAMETER | ERROR_INVALID_NAME => C::Invalid,
        ERROR_NOT_SUPPORTED | ERROR_INVALID_FUNCTION | ERROR_CALL_NOT_IMPLEMENTED => C::Unsupported,
        ERROR_NOT_ENOUGH_MEMORY | ERROR_OUTOFMEMORY | ERROR_NO_SYSTEM_RESOURCES | ERROR_TOO_MANY_OPEN_FILES => {
            C::Resources
        }
        ERROR_BUSY | ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION => C::Busy,
        ERROR_IO_INCOMPLETE => C::WouldBlock,
        ERROR_OPERATION_ABORTED => C::Interrupted,
        ERROR_TIMEOUT => C::TimedOut,
        _ => crate::other::classify_code(code),
    }
}

/// The Win32 codes of the POSIX names the layers above use ([`Errno`]), by meaning; the first
/// of a name is its code, the others name it too (a missing path is `ENOENT` as a missing
/// file is). `EISDIR`, `ENOLINK`, `ENXIO`, `EPERM`, `ESHUTDOWN` and `ETXTBSY` have none.
const ERRNOS: [(Errno, i32); 22] = [
    (Errno::EACCES, ERROR_ACCESS_DENIED),
    (Errno::EBUSY, ERROR_BUSY),
    (Errno::EDQUOT, ERROR_DISK_QUOTA_EXCEEDED),
    (Errno::EINVAL, ERROR_INVALID_PARAMETER),
    (Errno::EIO, ERROR_IO_DEVICE),
    (Errno::ELOOP, ERROR_CANT_RESOLVE_FILENAME),
    (Errno::ENAMETOOLONG, ERROR_FILENAME_EXCED_RANGE),
    (Errno::ENODATA, ERROR_CRC),
    (Errno::ENODEV, ERROR_DEVICE_NOT_CONNECTED),
    (Errno::ENOENT, ERROR_FILE_NOT_FOUND),
    (Errno::ENOENT, ERROR_PATH_NOT_FOUND),
    (Errno::ENOLCK, ERROR_LOCK_FAILED),
    (Errno::ENOMEDIUM, ERROR_NO_MEDIA_IN_DRIVE),
    (Errno::ENOMEM, ERROR_NOT_ENOUGH_MEMORY),
    (Errno::ENOMEM, ERROR_OUTOFMEMORY),
    (Errno::ENOSPC, ERROR_DISK_FULL),
    (Errno::ENOSPC, ERROR_HANDLE_DISK_FULL),
    (Errno::ENOSYS, ERROR_CALL_NOT_IMPLEMENTED),
    (Errno::ENOTDIR, ERROR_DIRECTORY),
    (Errno::ENOTTY, ERROR_INVALID_FUNCTION),
    (Errno::EOPNOTSUPP, ERROR_NOT_SUPPORTED),
    (Errno::EROFS, ERROR_WRITE_PROTECT),
];

/// The [`Errno`] a Win32 code means, where it is one of those.
pub fn errno(code: i32) -> Option<Errno> {
    ERRNOS.iter().find(|&&(_, c)| c == code).map(|&(e, _)| e)
}

/// The Win32 code of an [`Errno`], where Windows has one of that meaning.
pub fn code_of_errno(e: Errno) -> Option<i32> {
    ERRNOS.iter().find(|&&(n, _)| n == e).map(|&(_, c)| c)
}

/// The Win32 code that stands for `class`, where one does.
pub fn code_of(class: C) -> Option<i32> {
    Some(match class {
        C::Media => ERROR_IO_DEVICE,
        C::Vanished => ERROR_DEVICE_NOT_CONNECTED,
        C::NoSpace => ERROR_DISK_FULL,
        C::Quota => ERROR_DISK_QUOTA_EXCEEDED,
        C::Permission => ERROR_ACCESS_DENIED,
        C::ReadOnly => ERROR_WRITE_PROTECT,
        C::NotFound => ERROR_FILE_NOT_FOUND,
        C::NotADirectory => ERROR_DIRECTORY,
        C::LinkLoop => ERROR_CANT_RESOLVE_FILENAME,
        C::NameTooLong => ERROR_FILENAME_EXCED_RANGE,
        C::Invalid => ERROR_INVALID_PARAMETER,
        C::Unsupported => ERROR_NOT_SUPPORTED,
        C::Resources => ERROR_NOT_ENOUGH_MEMORY,
        C::Busy => ERROR_BUSY,
        C::WouldBlock => ERROR_IO_INCOMPLETE,
        C::Interrupted => ERROR_OPERATION_ABORTED,
        C::TimedOut => ERROR_TIMEOUT,
        C::IsADirectory | C::Other => return None,
    })
}

/// The symbolic name of a Win32 code for messages (`ERROR_IO_DEVICE`), where it is one of
/// those above.
pub fn name(code: i32) -> Option<&'static str> {
    Some(match code {
        ERROR_FILE_NOT_FOUND => "ERROR_FILE_NOT_FOUND",
        ERROR_PATH_NOT_FOUND => "ERROR_PATH_NOT_FOUND",
        ERROR_ACCESS_DENIED => "ERROR_ACCESS_DENIED",
        ERROR_WRITE_PROTECT => "ERROR_WRITE_PROTECT",
        ERROR_NOT_READY => "ERROR_NOT_READY",
        ERROR_CRC => "ERROR_CRC",
        ERROR_SECTOR_NOT_FOUND => "ERROR_SECTOR_NOT_FOUND",
        ERROR_WRITE_FAULT => "ERROR_WRITE_FAULT",
        ERROR_READ_FAULT => "ERROR_READ_FAULT",
        ERROR_GEN_FAILURE => "ERROR_GEN_FAILURE",
        ERROR_HANDLE_DISK_FULL => "ERROR_HANDLE_DISK_FULL",
        ERROR_NOT_SUPPORTED => "ERROR_NOT_SUPPORTED",
        ERROR_INVALID_PARAMETER => "ERROR_INVALID_PARAMETER",
        ERROR_DISK_FULL => "ERROR_DISK_FULL",
        ERROR_DISK_QUOTA_EXCEEDED => "ERROR_DISK_QUOTA_EXCEEDED",
        ERROR_OPERATION_ABORTED => "ERROR_OPERATION_ABORTED",
        ERROR_IO_DEVICE => "ERROR_IO_DEVICE",
        ERROR_DEVICE_NOT_CONNECTED => "ERROR_DEVICE_NOT_CONNECTED",
        ERROR_DEVICE_HARDWARE_ERROR => "ERROR_DEVICE_HARDWARE_ERROR",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_with_a_code_classes_back_to_itself() {
        let all = [
            C::Media,
            C::Vanished,
            C::NoSpace,
            C::Quota,
            C::Permission,
            C::ReadOnly,
            C::NotFound,
            C::NotADirectory,
            C::LinkLoop,
            C::NameTooLong,
            C::Invalid,
            C::Unsupported,
            C::Resources,
            C::Busy,
            C::WouldBlock,
            C::Interrupted,
            C::TimedOut,
        ];
        for c in all {
            let code = code_of(c).unwrap_or_else(|| panic!("{c:?} has a code"));
            assert_eq!(classify(code), c, "{c:?} via {code}");
        }
        assert_eq!(classify(ERROR_HANDLE_DISK_FULL), C::NoSpace);
        assert_eq!(name(ERROR_IO_DEVICE), Some("ERROR_IO_DEVICE"));
        // The injected faults' names, as the fault variables always gave them on Windows.
        for (e, code) in [(Errno::EIO, 1117), (Errno::ENODATA, 23), (Errno::ENODEV, 1167), (Errno::ENOSPC, 112)] {
            assert_eq!(code_of_errno(e), Some(code), "{e:?}");
        }
        assert_eq!(errno(ERROR_PATH_NOT_FOUND), Some(Errno::ENOENT));
        assert_eq!(code_of_errno(Errno::ETXTBSY), None);
    }
}
