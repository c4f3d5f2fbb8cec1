//! Why a generic-netlink socket failed ([`Error`]): apart from the OS module that makes them
//! (`crate::linux::netlink`) and the facade that calls it ([`super`]), so that neither uses the
//! other.

/// Why a socket could not be opened or a datagram not sent or received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The OS has no generic netlink.
    Unsupported,
    /// The kernel has no netlink of this kind (`EAFNOSUPPORT`, `EPROTONOSUPPORT`).
    NoFamily,
    /// A signal came before anything was received (`EINTR`): try again.
    Interrupted,
    /// The OS's error code (an errno; `ETIMEDOUT` when no datagram came within the receive
    /// timeout).
    Os(i32),
}
