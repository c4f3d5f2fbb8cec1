//! What an OS error means, in words every layer above the OS can act on. The OS's own code
//! ([`OsCode`]; [`code_name`]: `EIO`, `ENOSPC`, …) is carried opaque and kept only for
//! messages.

use std::io;

pub mod errno;
pub use errno::Errno;

/// The meaning of an I/O error, whatever the OS. One classifier for the engine's results, the
/// surface scan and the file checks: each decides what a class means for it (a surface scan
/// records `Media` and goes on, stops on `Vanished`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IoErrorClass {
    /// The medium failed at this place (EIO, ENODATA, EILSEQ, EBADMSG, EREMOTEIO, …).
    Media,
    /// The device or its link is gone (ENODEV, ENXIO, ESHUTDOWN, ENOLINK).
    Vanished,
    /// The file system is full (ENOSPC).
    NoSpace,
    /// The user's disk quota is exhausted (EDQUOT).
    Quota,
    /// Not allowed (EACCES, EPERM).
    Permission,
    /// A read-only file system or device (EROFS).
    ReadOnly,
    /// Nothing there (ENOENT).
    NotFound,
    /// A part of the path that should be a directory is not (ENOTDIR).
    NotADirectory,
    /// A directory where a file was expected (EISDIR).
    IsADirectory,
    /// A loop of symbolic links (ELOOP).
    LinkLoop,
    /// A name or path longer than the file system takes (ENAMETOOLONG).
    NameTooLong,
    /// The request itself was wrong: alignment, size, flags (EINVAL, EFAULT, EBADF).
    Invalid,
    /// The file system or device cannot do this (EOPNOTSUPP, ENOTSUP, ENOSYS, ENOTTY).
    Unsupported,
    /// Out of memory or of a kernel resource (ENOMEM, EMFILE, ENFILE).
    Resources,
    /// Held by someone else (EBUSY, ETXTBSY).
    Busy,
    /// Try again (EAGAIN/EWOULDBLOCK).
    WouldBlock,
    /// A signal came (EINTR).
    Interrupted,
    /// The device did not answer in time (ETIMEDOUT).
    TimedOut,
    /// Anything else, or an error without an OS code.
    Other,
}

impl IoErrorClass {
    /// The class's name in results and messages (`media`, `vanished`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Media => "media",
            Self::Vanished => "vanished",
            Self::NoSpace => "no-space",
            Self::Quota => "quota",
            Self::Permission => "permission",
            Self::ReadOnly => "read-only",
            Self::NotFound => "not-found",
            Self::NotADirectory => "not-a-directory",
            Self::IsADirectory => "is-a-directory",
            Self::LinkLoop => "link-loop",
            Self::NameTooLong => "name-too-long",
            Self::Invalid => "invalid",
            Self::Unsupported => "unsupported",
            Self::Resources => "resources",
            Self::Busy => "busy",
            Self::WouldBlock => "would-block",
            Self::Interrupted => "interrupted",
            Self::TimedOut => "timed-out",
            Self::Other => "other",
        }
    }
}

/// An OS error code, opaque above `platform`: an errno on Linux (a Win32 error code on
/// Windows, next). Layers above class it ([`OsCode::class`]) and name it ([`OsCode::name`]),
/// never compare its number; 4 bytes and `Copy`, so an I/O's result carries it without
/// allocating.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct OsCode(i32);

impl OsCode {
    /// The OS's own number (`errno`), as the OS's interfaces hand it.
    #[inline]
    pub const fn from_raw(code: i32) -> Self {
        Self(code)
    }

    /// The OS's own number, for the OS's interfaces.
    #[inline]
    pub const fn raw(self) -> i32 {
        self.0
    }

    /// The code `e` carries, if the OS made it.
    #[inline]
    pub fn of(e: &io::Error) -> Option<Self> {
        e.raw_os_error().map(Self)
    }

    /// The OS's code for a failure of `class` found without an OS error (an injected fault, a
    /// request a backend refuses itself): EIO for media, EINVAL for invalid, … `None` for
    /// [`IoErrorClass::Other`], and for every class on an OS without a module of its own.
    pub fn of_class(class: IoErrorClass) -> Option<Self> {
        code_of(class).map(Self)
    }

    /// What it means ([`classify_code`]).
    #[inline]
    pub fn class(self) -> IoErrorClass {
        classify_code(self.0)
    }

    /// The OS's name of it for messages ([`code_name`]: `EIO`, or `errno N`).
    pub fn name(self) -> String {
        code_name(self.0)
    }

    /// Which of the [`Errno`] names it is, if one.
    #[inline]
    pub fn errno(self) -> Option<Errno> {
        errno_of_code(self.0)
    }
}

impl std::fmt::Debug for OsCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OsCode({})", code_name(self.0))
    }
}

/// The OS's error of that code, as std shows it (`Input/output error (os error 5)`).
impl From<OsCode> for io::Error {
    fn from(c: OsCode) -> Self {
        io::Error::from_raw_os_error(c.0)
    }
}

impl Errno {
    /// The name of the OS error `e` carries, where it is one of these.
    #[inline]
    pub fn of(e: &io::Error) -> Option<Errno> {
        OsCode::of(e)?.errno()
    }

    /// This OS's code of it; `None` where the OS has none of that meaning.
    pub fn code(self) -> Option<OsCode> {
        errno_code(self).map(OsCode)
    }

    /// The OS's error of it, as std shows it (`No locks available (os error 37)`); where the OS
    /// has no such code, an error of its name.
    pub fn error(self) -> io::Error {
        match self.code() {
            Some(c) => c.into(),
            None => io::Error::other(self.name()),
        }
    }
}

/// This OS's code of `e` ([`Errno::code`]).
fn errno_code(e: Errno) -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        Some(crate::linux::errno::code_of_errno(e))
    }
    #[cfg(windows)]
    {
        crate::windows::errno::code_of_errno(e)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = e;
        None
    }
}

/// The [`Errno`] of the OS code `code`, where it is one.
fn errno_of_code(code: i32) -> Option<Errno> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::errno::errno(code)
    }
    #[cfg(windows)]
    {
        crate::windows::errno::errno(code)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = code;
        None
    }
}

/// The class of `e` (from its OS code; an error without one is classed by its kind).
pub fn classify(e: &io::Error) -> IoErrorClass {
    match e.raw_os_error() {
        Some(code) => classify_code(code),
        None => match e.kind() {
            io::ErrorKind::NotFound => IoErrorClass::NotFound,
            io::ErrorKind::PermissionDenied => IoErrorClass::Permission,
            io::ErrorKind::Interrupted => IoErrorClass::Interrupted,
            io::ErrorKind::WouldBlock => IoErrorClass::WouldBlock,
            io::ErrorKind::InvalidInput => IoErrorClass::Invalid,
            io::ErrorKind::Unsupported => IoErrorClass::Unsupported,
            io::ErrorKind::TimedOut => IoErrorClass::TimedOut,
            _ => IoErrorClass::Other,
        },
    }
}

/// The class of the OS error code `code` (an errno on Linux).
pub fn classify_code(code: i32) -> IoErrorClass {
    #[cfg(target_os = "linux")]
    {
        crate::linux::errno::classify(code)
    }
    #[cfg(windows)]
    {
        crate::windows::errno::classify(code)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        crate::other::classify_code(code)
    }
}

/// The OS's own name of `code` for messages (`EIO`), or `errno N` / `error N`.
pub fn code_name(code: i32) -> String {
    #[cfg(target_os = "linux")]
    {
        crate::linux::errno::name(code).map_or_else(|| format!("errno {code}"), str::to_string)
    }
    #[cfg(windows)]
    {
        crate::windows::errno::name(code).map_or_else(|| format!("error {code}"), str::to_string)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        format!("error {code}")
    }
}

/// The OS error code for a class, where a backend reports a class it found without one (an
/// injected fault, a short transfer): EIO for media, ENOSPC for no space, …
pub fn code_of(class: IoErrorClass) -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::errno::code_of(class)
    }
    #[cfg(windows)]
    {
        crate::windows::errno::code_of(class)
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = class;
        None
    }
}

/// An error of `class` as the OS reports it (its code where it has one), for faults found
/// without an OS error: a short read is a media error, a failed allocation a resource one.
pub fn os_error(class: IoErrorClass) -> io::Error {
    match code_of(class) {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::other(class.name()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_os_code_is_classed_and_named_as_its_number() {
        let e = io::Error::from_raw_os_error(5);
        let c = OsCode::of(&e).expect("an OS error");
        assert_eq!((c.raw(), c.class(), c.name()), (5, classify(&e), code_name(5)));
        assert_eq!(io::Error::from(c).to_string(), e.to_string());
        assert_eq!(OsCode::of(&io::Error::other("x")), None);
        assert_eq!(OsCode::of_class(IoErrorClass::Other), None);
        assert_eq!(std::mem::size_of::<OsCode>(), 4);
    }

    #[test]
    fn every_errno_with_a_code_is_named_back() {
        for e in Errno::ALL {
            if let Some(c) = e.code() {
                assert_eq!(c.errno(), Some(e), "{e:?} via {c:?}");
                assert_eq!(Errno::of(&e.error()), Some(e), "{e:?}");
            } else {
                assert_ne!(std::env::consts::OS, "linux", "Linux has every errno: {e:?}");
                assert_eq!(e.error().to_string(), e.name());
            }
        }
        assert_eq!(Errno::of(&io::Error::other("x")), None);
    }

    #[test]
    fn errors_without_a_code_are_classed_by_kind() {
        assert_eq!(classify(&io::Error::new(io::ErrorKind::NotFound, "x")), IoErrorClass::NotFound);
        assert_eq!(classify(&io::Error::other("x")), IoErrorClass::Other);
    }
}
