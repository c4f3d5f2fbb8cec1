//! The OS errors the layers above name ([`Errno`]): the names alone, apart from the OS modules
//! that give each its code (`crate::linux::errno`, `crate::windows::errno`) and the facade that
//! asks them ([`super`]), so that neither uses the other.

/// The OS errors some layer above tells apart by their very code, finer than their
/// [`IoErrorClass`](crate::IoErrorClass): opening a target (`EINVAL` of a direct open, `ETXTBSY` apart from
/// `EBUSY`, `ENOENT` of a missing directory), setting up a ring (`ENOMEM` apart from `EMFILE`,
/// `ENOSYS` and `EPERM`), the faults a test injects (`EIO`, `ENODATA`, `ENODEV`, `ENOSPC`).
/// Named as POSIX names them; on Windows each stands for the Win32 code of the same meaning
/// (`EACCES` is `ERROR_ACCESS_DENIED`, `EROFS` `ERROR_WRITE_PROTECT`, …), and a name Windows has
/// no code for ([`Errno::code`] `None`) never matches there. Like [`OsCode`](crate::OsCode), matched by the
/// layers above, never compared as numbers.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Errno {
    /// Not allowed (POSIX permissions).
    EACCES,
    /// Busy: held by the system (mounted, claimed exclusively).
    EBUSY,
    /// The user's disk quota is exhausted.
    EDQUOT,
    /// An invalid argument (Linux: a direct open the file system refuses).
    EINVAL,
    /// An I/O error of the device.
    EIO,
    /// A directory where a file was expected.
    EISDIR,
    /// A loop of symbolic links.
    ELOOP,
    /// A name longer than the file system takes.
    ENAMETOOLONG,
    /// No data (a medium error of a read).
    ENODATA,
    /// No such device.
    ENODEV,
    /// No such file or directory.
    ENOENT,
    /// No locks available.
    ENOLCK,
    /// The device's link was severed.
    ENOLINK,
    /// No medium in the drive.
    ENOMEDIUM,
    /// Out of memory.
    ENOMEM,
    /// No space left on the device.
    ENOSPC,
    /// The OS does not implement the call.
    ENOSYS,
    /// Not a directory.
    ENOTDIR,
    /// Not a terminal: an ioctl the device does not know.
    ENOTTY,
    /// No such device or address.
    ENXIO,
    /// Not supported by the file system or device.
    EOPNOTSUPP,
    /// Not permitted (privilege).
    EPERM,
    /// A read-only file system or device.
    EROFS,
    /// The transport endpoint is shut down (a device gone).
    ESHUTDOWN,
    /// A running program's file, which cannot be written.
    ETXTBSY,
}

impl Errno {
    /// Every name, in order.
    pub const ALL: [Errno; 25] = [
        Errno::EACCES,
        Errno::EBUSY,
        Errno::EDQUOT,
        Errno::EINVAL,
        Errno::EIO,
        Errno::EISDIR,
        Errno::ELOOP,
        Errno::ENAMETOOLONG,
        Errno::ENODATA,
        Errno::ENODEV,
        Errno::ENOENT,
        Errno::ENOLCK,
        Errno::ENOLINK,
        Errno::ENOMEDIUM,
        Errno::ENOMEM,
        Errno::ENOSPC,
        Errno::ENOSYS,
        Errno::ENOTDIR,
        Errno::ENOTTY,
        Errno::ENXIO,
        Errno::EOPNOTSUPP,
        Errno::EPERM,
        Errno::EROFS,
        Errno::ESHUTDOWN,
        Errno::ETXTBSY,
    ];

    /// Its POSIX name (`EIO`).
    pub fn name(self) -> &'static str {
        match self {
            Errno::EACCES => "EACCES",
            Errno::EBUSY => "EBUSY",
            Errno::EDQUOT => "EDQUOT",
            Errno::EINVAL => "EINVAL",
            Errno::EIO => "EIO",
            Errno::EISDIR => "EISDIR",
            Errno::ELOOP => "ELOOP",
            Errno::ENAMETOOLONG => "ENAMETOOLONG",
            Errno::ENODATA => "ENODATA",
            Errno::ENODEV => "ENODEV",
            Errno::ENOENT => "ENOENT",
            Errno::ENOLCK => "ENOLCK",
            Errno::ENOLINK => "ENOLINK",
            Errno::ENOMEDIUM => "ENOMEDIUM",
            Errno::ENOMEM => "ENOMEM",
            Errno::ENOSPC => "ENOSPC",
            Errno::ENOSYS => "ENOSYS",
            Errno::ENOTDIR => "ENOTDIR",
            Errno::ENOTTY => "ENOTTY",
            Errno::ENXIO => "ENXIO",
            Errno::EOPNOTSUPP => "EOPNOTSUPP",
            Errno::EPERM => "EPERM",
            Errno::EROFS => "EROFS",
            Errno::ESHUTDOWN => "ESHUTDOWN",
            Errno::ETXTBSY => "ETXTBSY",
        }
    }
}
