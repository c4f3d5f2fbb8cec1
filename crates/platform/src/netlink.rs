//! Generic netlink: a datagram socket to the kernel's generic-netlink families (Linux's
//! `AF_NETLINK`, `NETLINK_GENERIC`), for the callers above that speak one of them (`top`'s
//! TASKSTATS client, `monitor::taskstats`). The socket only carries datagrams; the messages in
//! them are the caller's to build and parse. On every other OS [`Socket::open`] answers
//! [`Error::Unsupported`].

use std::time::Duration;

pub mod error;
pub use error::Error;

/// A bound generic-netlink socket, closed on drop.
#[derive(Debug)]
pub struct Socket {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
    #[cfg(not(target_os = "linux"))]
    never: std::convert::Infallible,
}

impl Socket {
    /// A generic-netlink socket bound to a port of the kernel's choosing, whose receives give up
    /// after `timeout` ([`Error::Os`] of `ETIMEDOUT`). Opening needs no privilege.
    pub fn open(timeout: Duration) -> Result<Socket, Error> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::netlink::open(timeout).map(|fd| Socket { fd })
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = timeout;
            Err(Error::Unsupported)
        }
    }

    /// Sends one datagram to the kernel (port 0), again as long as a signal interrupts it.
    pub fn send(&self, msg: &[u8]) -> Result<(), Error> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::netlink::send(&self.fd, msg)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = msg;
            match self.never {}
        }
    }

    /// Receives one datagram into `buf`: its whole length (more than `buf.len()` when it was
    /// cut short) and whether the kernel sent it (port 0; anything else is not an answer).
    pub fn recv(&self, buf: &mut [u8]) -> Result<(usize, bool), Error> {
        #[cfg(target_os = "linux")]
        {
            crate::linux::netlink::recv(&self.fd, buf)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = buf;
            match self.never {}
        }
    }
}
