//! Linux errno values: their class and their name.

use crate::error::errno::Errno;
use crate::IoErrorClass as C;

/// The class of an errno.
pub fn classify(code: i32) -> C {
    match code {
        libc::EIO | libc::ENODATA | libc::EILSEQ | libc::EBADMSG | libc::EREMOTEIO | libc::EPROTO => C::Media,
        libc::ENODEV | libc::ENXIO | libc::ESHUTDOWN | libc::ENOLINK | libc::ENOMEDIUM => C::Vanished,
        libc::ENOSPC => C::NoSpace,
        libc::EDQUOT => C::Quota,
        libc::EACCES | libc::EPERM => C::Permission,
        libc::EROFS => C::ReadOnly,
        libc::ENOENT => C::NotFound,
        libc::ENOTDIR => C::NotADirectory,
        libc::EISDIR => C::IsADirectory,
        libc::ELOOP => C::LinkLoop,
        libc::ENAMETOOLONG => C::NameTooLong,
        libc::EINVAL | libc::EFAULT | libc::EBADF => C::Invalid,
        libc::EOPNOTSUPP | libc::ENOSYS | libc::ENOTTY => C::Unsupported,
        libc::ENOMEM | libc::EMFILE | libc::ENFILE => C::Resources,
        libc::EBUSY | libc::ETXTBSY => C::Busy,
        libc::EAGAIN => C::WouldBlock,
        libc::EINTR => C::Interrupted,
        libc::ETIMEDOUT => C::TimedOut,
        _ => C::Other,
    }
}

/// The errno's symbolic name, where diskmeter's messages use one.
pub fn name(code: i32) -> Option<&'static str> {
    Some(match code {
        libc::EIO => "EIO",
        libc::ENODATA => "ENODATA",
        libc::EILSEQ => "EILSEQ",
        libc::EBADMSG => "EBADMSG",
        libc::EREMOTEIO => "EREMOTEIO",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOSPC => "ENOSPC",
        libc::EDQUOT => "EDQUOT",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::ENOLINK => "ENOLINK",
        libc::ESHUTDOWN => "ESHUTDOWN",
        libc::ENOMEDIUM => "ENOMEDIUM",
        libc::EPROTO => "EPROTO",
        libc::EAGAIN => "EAGAIN",
        libc::EINVAL => "EINVAL",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EROFS => "EROFS",
        libc::ENOENT => "ENOENT",
        libc::EBUSY => "EBUSY",
        libc::EINTR => "EINTR",
        libc::ENOMEM => "ENOMEM",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        _ => return None,
    })
}

/// The errnos the layers above name ([`Errno`]), with their numbers.
const ERRNOS: [(Errno, i32); 25] = [
    (Errno::EACCES, libc::EACCES),
    (Errno::EBUSY, libc::EBUSY),
    (Errno::EDQUOT, libc::EDQUOT),
    (Errno::EINVAL, libc::EINVAL),
    (Errno::EIO, libc::EIO),
    (Errno::EISDIR, libc::EISDIR),
    (Errno::ELOOP, libc::ELOOP),
    (Errno::ENAMETOOLONG, libc::ENAMETOOLONG),
    (Errno::ENODATA, libc::ENODATA),
    (Errno::ENODEV, libc::ENODEV),
    (Errno::ENOENT, libc::ENOENT),
    (Errno::ENOLCK, libc::ENOLCK),
    (Errno::ENOLINK, libc::ENOLINK),
    (Errno::ENOMEDIUM, libc::ENOMEDIUM),
    (Errno::ENOMEM, libc::ENOMEM),
    (Errno::ENOSPC, libc::ENOSPC),
    (Errno::ENOSYS, libc::ENOSYS),
    (Errno::ENOTDIR, libc::ENOTDIR),
    (Errno::ENOTTY, libc::ENOTTY),
    (Errno::ENXIO, libc::ENXIO),
    (Errno::EOPNOTSUPP, libc::EOPNOTSUPP),
    (Errno::EPERM, libc::EPERM),
    (Errno::EROFS, libc::EROFS),
    (Errno::ESHUTDOWN, libc::ESHUTDOWN),
    (Errno::ETXTBSY, libc::ETXTBSY),
];

/// The [`Errno`] of an errno, where the layers above name it.
pub fn errno(code: i32) -> Option<Errno> {
    ERRNOS.iter().find(|&&(_, c)| c == code).map(|&(e, _)| e)
}

/// The number of an [`Errno`].
pub fn code_of_errno(e: Errno) -> i32 {
    ERRNOS.iter().find(|&&(n, _)| n == e).map_or(libc::EIO, |&(_, c)| c)
}

/// A representative errno of a class.
pub fn code_of(class: C) -> Option<i32> {
    Some(match class {
        C::Media => libc::EIO,
        C::Vanished => libc::ENODEV,
        C::NoSpace => libc::ENOSPC,
        C::Quota => libc::EDQUOT,
        C::Permission => libc::EACCES,
        C::ReadOnly => libc::EROFS,
        C::NotFound => libc::ENOENT,
        C::NotADirectory => libc::ENOTDIR,
        C::IsADirectory => libc::EISDIR,
        C::LinkLoop => libc::ELOOP,
        C::NameTooLong => libc::ENAMETOOLONG,
        C::Invalid => libc::EINVAL,
        C::Unsupported => libc::EOPNOTSUPP,
        C::Resources => libc::ENOMEM,
        C::Busy => libc::EBUSY,
        C::WouldBlock => libc::EAGAIN,
        C::Interrupted => libc::EINTR,
        C::TimedOut => libc::ETIMEDOUT,
        C::Other => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_round_trips_through_its_code() {
        for c in [
            C::Media,
            C::Vanished,
            C::NoSpace,
            C::Quota,
            C::Permission,
            C::ReadOnly,
            C::NotFound,
            C::NotADirectory,
            C::IsADirectory,
            C::LinkLoop,
            C::NameTooLong,
            C::Invalid,
            C::Unsupported,
            C::Resources,
            C::Busy,
            C::WouldBlock,
            C::Interrupted,
            C::TimedOut,
        ] {
            let code = code_of(c).expect("a code");
            assert_eq!(classify(code), c, "{c:?}");
        }
        assert_eq!(code_of(C::Other), None);
    }

    #[test]
    fn the_classes_the_scan_and_the_engine_act_on() {
        for (code, want) in [
            (libc::EIO, C::Media),
            (libc::EILSEQ, C::Media),
            (libc::ENODATA, C::Media),
            (libc::ENXIO, C::Vanished),
            (libc::ESHUTDOWN, C::Vanished),
            (libc::ENOSPC, C::NoSpace),
            (libc::EROFS, C::ReadOnly),
            (libc::EFAULT, C::Invalid),
            (12345, C::Other),
        ] {
            assert_eq!(classify(code), want, "{code}");
        }
        assert_eq!(name(libc::EREMOTEIO), Some("EREMOTEIO"));
        for e in Errno::ALL {
            assert_eq!(errno(code_of_errno(e)), Some(e), "{e:?}");
        }
        assert_eq!(code_of_errno(Errno::ETXTBSY), libc::ETXTBSY);
        assert_eq!(errno(libc::EAGAIN), None);
        assert_eq!(name(12345), None);
    }
}
