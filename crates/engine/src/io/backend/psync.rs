//! The psync backend: each I/O is a `pread`/`pwrite` inside `queue`; depth > 1 is served by
//! more threads (the runner's).

use super::{code_of_error, sync_discard, Backend, BackendConfig, Completed, Completion, Op};
use platform::target::Raw;
use std::io;
use std::time::Duration;

pub struct Psync {
    fds: Vec<Raw>,
    multi: bool,
    done: Completed,
}

impl Psync {
    pub fn new(cfg: &BackendConfig) -> Self {
        let fds = cfg.fds();
        Self { multi: fds.len() > 1, fds, done: Completed::new(cfg.depth) }
    }
}

/// One synchronous I/O: bytes transferred or the error, retried on EINTR. (Linux calls
/// `pread`/`pwrite` here, in the backend's own loop: the hot path of the psync and threads
/// engines, kept free of a call into another crate and of an `io::Error` per I/O.)
#[cfg(unix)]
#[inline]
fn sync_io(fd: Raw, op: Op, offset: u64, buf: *mut u8, len: u32) -> Completion {
    loop {
        // SAFETY: buf points to `len` bytes owned by the worker's pool for this slot.
        let r = unsafe {
            match op {
                Op::Read => libc::pread(fd, buf.cast(), len as usize, offset as libc::off_t),
                Op::Write => libc::pwrite(fd, buf.cast(), len as usize, offset as libc::off_t),
                Op::Fsync => libc::fsync(fd) as isize,
                Op::Discard | Op::PunchHole => return sync_discard(fd, op, offset, len),
            }
        };
        if r >= 0 {
            return Completion::Done(r.min(i32::MAX as isize) as u32);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Completion::Failed(code_of_error(&e));
        }
    }
}

/// One synchronous I/O through the OS's positional calls (`platform::rawio`: ReadFile or
/// WriteFile at an offset, FlushFileBuffers): bytes transferred or the error.
#[cfg(not(unix))]
fn sync_io(fd: Raw, op: Op, offset: u64, buf: *mut u8, len: u32) -> Completion {
    // SAFETY: `buf` points to `len` bytes owned by the worker's pool for this slot, which
    // nothing else touches until the I/O completes (here, before the call returns).
    let r = match op {
        Op::Read => unsafe { platform::rawio::read_at(fd, buf, len, offset) },
        Op::Write => unsafe { platform::rawio::write_at(fd, buf, len, offset) },
        Op::Fsync => platform::rawio::sync(fd).map(|()| 0),
        Op::Discard | Op::PunchHole => return sync_discard(fd, op, offset, len),
    };
    match r {
        Ok(n) => Completion::Done(n.min(i32::MAX as u32)),
        Err(e) => Completion::Failed(code_of_error(&e)),
    }
}

impl Backend for Psync {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, _: u16) -> io::Result<()> {
        let (file, offset) = if self.multi { crate::io::files::split(offset) } else { (0, offset) };
        self.done.push(slot, sync_io(self.fds[file], op, offset, buf, len));
        Ok(())
    }

    fn submit_and_wait(&mut self, _: u32, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap<F: FnMut(u32, Completion)>(&mut self, f: F) {
        self.done.reap(f)
    }
}
