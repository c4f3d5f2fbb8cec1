//! Linux's generic-netlink socket (`socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC)`).

use crate::netlink::error::Error;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// An all-zero `sockaddr_nl` of the netlink family: the kernel's port (0) as a destination, a
/// port of the kernel's choosing to bind.
fn kernel_address() -> libc::sockaddr_nl {
    // SAFETY: sockaddr_nl is a plain C struct for which all-zero bytes are a valid value.
    let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    sa
}

pub fn open(timeout: Duration) -> Result<OwnedFd, Error> {
    // SAFETY: socket(2) takes no pointers; the result is checked before use.
    let raw = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_GENERIC) };
    if raw < 0 {
        let e = last_errno();
        return Err(if e == libc::EAFNOSUPPORT || e == libc::EPROTONOSUPPORT { Error::NoFamily } else { Error::Os(e) });
    }
    // SAFETY: `raw` is a fresh descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let sa = kernel_address();
    // SAFETY: `sa` is a valid sockaddr_nl and the length passed is its size.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_nl).cast::<libc::sockaddr>(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(Error::Os(last_errno()));
    }
    let tv = libc::timeval {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_usec: libc::suseconds_t::from(timeout.subsec_micros() as i32),
    };
    // SAFETY: `tv` is a valid timeval and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast::<libc::c_void>(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(Error::Os(last_errno()));
    }
    Ok(fd)
}

pub fn send(fd: &OwnedFd, msg: &[u8]) -> Result<(), Error> {
    let to = kernel_address();
    loop {
        // SAFETY: `msg` and `to` are valid for the lengths passed; the fd is open.
        let rc = unsafe {
            libc::sendto(
                fd.as_raw_fd(),
                msg.as_ptr().cast::<libc::c_void>(),
                msg.len(),
                0,
                (&to as *const libc::sockaddr_nl).cast::<libc::sockaddr>(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc >= 0 {
            return Ok(());
        }
        match last_errno() {
            libc::EINTR => continue,
            e => return Err(Error::Os(e)),
        }
    }
}

pub fn recv(fd: &OwnedFd, buf: &mut [u8]) -> Result<(usize, bool), Error> {
    let mut from = kernel_address();
    let mut from_len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
    // SAFETY: `buf`, `from` and `from_len` are valid for writes of the sizes passed; MSG_TRUNC
    // only makes the return value the datagram's full length.
    let rc = unsafe {
        libc::recvfrom(
            fd.as_raw_fd(),
            buf.as_mut_ptr().cast::<libc::c_void>(),
            buf.len(),
            libc::MSG_TRUNC,
            (&mut from as *mut libc::sockaddr_nl).cast::<libc::sockaddr>(),
            &mut from_len,
        )
    };
    if rc < 0 {
        return Err(match last_errno() {
            libc::EINTR => Error::Interrupted,
            libc::EAGAIN => Error::Os(libc::ETIMEDOUT),
            e => Error::Os(e),
        });
    }
    Ok((rc as usize, from.nl_pid == 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_opens_or_says_why() {
        match open(Duration::from_millis(1500)) {
            Ok(fd) => {
                // Nothing was asked, so nothing comes: the receive times out.
                let mut buf = [0u8; 64];
                match recv(&fd, &mut buf) {
                    Err(Error::Os(e)) => assert_eq!(e, libc::ETIMEDOUT),
                    Err(Error::Interrupted) => {}
                    other => panic!("{other:?}"),
                }
            }
            Err(Error::NoFamily) => eprintln!("note: kernel without generic netlink"),
            Err(e) => panic!("{e:?}"),
        }
    }
}
