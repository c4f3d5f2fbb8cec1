//! I/O backends behind one trait, one file each: [`uring`] (io_uring, the default), [`psync`]
//! (pread/pwrite), [`null`] (completes at once) and [`mem`] (the mem engine: memcpy to a memory
//! region).
//!
//! A backend queues I/Os identified by a slot number, submits them in batches and hands
//! completions back as (slot, [`Completion`]) pairs: the bytes transferred, or the OS's error
//! as an opaque [`OsCode`] that the layers above class (`platform::error::IoErrorClass`) and
//! name, never compare. Workers are generic over the backend, so dispatch is static and the
//! hot path has no allocation, lock or log line.
//!
//! Shared here: [`Op`], [`BackendConfig`], the synchronous backends' completion list
//! (`Completed`) and [`sync_discard`] (psync's discards, and replay's when the ring cannot),
//! which goes through `platform::target::TargetOps` like every other operation on a target.

#[cfg(windows)]
pub mod iocp;
pub mod mem;
pub mod null;
pub mod psync;
#[cfg(target_os = "linux")]
pub mod uring;

use platform::target::Raw;
use platform::target::{Discard, Native, TargetOps};
use platform::{IoErrorClass, OsCode};
use std::io;
use std::time::Duration;

/// One buffer to register with the kernel: an `iovec` on Linux (io_uring's fixed buffers);
/// elsewhere its address and length (Windows registers none).
#[cfg(target_os = "linux")]
pub type RegBuf = libc::iovec;
/// One buffer to register with the kernel: an `iovec` on Linux (io_uring's fixed buffers);
/// elsewhere its address and length (Windows registers none).
#[cfg(not(target_os = "linux"))]
pub type RegBuf = (usize, usize);

/// The [`RegBuf`] of `len` bytes at `ptr`.
pub fn reg_buf(ptr: *mut u8, len: usize) -> RegBuf {
    #[cfg(target_os = "linux")]
    {
        libc::iovec { iov_base: ptr.cast(), iov_len: len }
    }
    #[cfg(not(target_os = "linux"))]
    {
        (ptr as usize, len)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
    /// Discard `len` bytes at `offset` of a block device (BLKDISCARD; `replay`).
    Discard,
    /// Punch a hole of `len` bytes at `offset` of a file (a file's discard; `replay`).
    PunchHole,
}

/// How one I/O ended: what a backend hands the worker per I/O. 8 bytes and `Copy`: laid out
/// as C would (`repr(C, u32)`: a u32 tag, then the u32 field), so that the worker's per-I/O
/// test "done, all of it" is one comparison of 8 bytes.
#[derive(Debug, Clone, Copy, Eq)]
#[repr(C, u32)]
pub enum Completion {
    /// Done: the bytes transferred (0 for an fsync, a discard or a punched hole; fewer than
    /// asked for is a short transfer).
    Done(u32),
    /// Failed with the OS's error.
    Failed(OsCode),
}

impl PartialEq for Completion {
    /// One comparison of the 8 bytes: the same tag and the same field.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.bits() == other.bits()
    }
}

impl Completion {
    /// The 8 bytes as one number (in the machine's byte order; only ever compared).
    #[inline]
    fn bits(self) -> u64 {
        // SAFETY: `repr(C, u32)`: a u32 tag and one u32 field (u32, or OsCode, a transparent
        // i32), 8 bytes without padding, all of them initialised in either variant.
        unsafe { std::mem::transmute::<Completion, u64>(self) }
    }

    /// The error, if it failed.
    #[inline]
    pub fn error(self) -> Option<OsCode> {
        match self {
            Completion::Done(_) => None,
            Completion::Failed(code) => Some(code),
        }
    }
}

/// The OS code of a failure of `class` found without an OS error (a request a backend refuses
/// itself, an injected fault). The engine runs on Linux, where every class it reports has a
/// code; should one not, it is reported as the OS's I/O error (EIO; Windows' ERROR_IO_DEVICE).
#[cold]
pub fn code_for(class: IoErrorClass) -> OsCode {
    OsCode::of_class(class).unwrap_or(OsCode::from_raw(EIO))
}

/// The OS's code of a plain I/O error.
#[cfg(unix)]
const EIO: i32 = libc::EIO;
/// The OS's code of a plain I/O error (ERROR_IO_DEVICE).
#[cfg(windows)]
const EIO: i32 = 1117;

/// The OS code of a failed call; a media error's where the error carries none (one a backend
/// made itself, such as a full submission queue).
#[cold]
pub fn code_of_error(e: &io::Error) -> OsCode {
    OsCode::of(e).unwrap_or_else(|| code_for(IoErrorClass::Media))
}

/// One synchronous discard (a block device's) or punch-hole (a file's), through the OS's
/// [`TargetOps`]: `Done(0)` or the error. The psync and fallback path.
pub fn sync_discard(fd: Raw, op: Op, offset: u64, len: u32) -> Completion {
    let r = match op {
        Op::Discard => Native::discard(fd, Discard::Plain, offset, u64::from(len)),
        _ => Native::punch_hole(fd, offset, u64::from(len)),
    };
    match r {
        Ok(()) => Completion::Done(0),
        Err(e) => Completion::Failed(code_of_error(&e)),
    }
}

pub trait Backend {
    /// Queue one I/O. `buf_index` is the registered-buffer index of the slot's buffer.
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, buf_index: u16) -> io::Result<()>;
    /// Submit everything queued, then wait until at least `want` completions are ready or
    /// `timeout` passes (None = no limit). `want` = 0 only submits.
    fn submit_and_wait(&mut self, want: u32, timeout: Option<Duration>) -> io::Result<()>;
    /// Submit everything queued and collect finished completions without sleeping.
    fn poll(&mut self) -> io::Result<()> {
        self.submit_and_wait(0, None)
    }
    /// True when at least one completion is ready to reap.
    fn ready(&mut self) -> bool {
        true
    }
    /// True when the kernel may hold completions not yet in the queue (io_uring: its
    /// task-run flag, or a completion already posted). A memory read, no system call: a
    /// polling wait checks it in a loop and enters the kernel only when it says so.
    fn pending(&mut self) -> bool {
        true
    }
    /// Hand every ready completion to `f(slot, completion)`.
    fn reap<F: FnMut(u32, Completion)>(&mut self, f: F);
}

/// Configuration shared by the backends.
pub struct BackendConfig {
    pub fd: Raw,
    /// A job over several files: every file's descriptor (`fd` is the first); an I/O's offset
    /// then carries its file's index ([`crate::io::files`]). Empty: `fd` alone.
    pub files: Vec<Raw>,
    pub depth: u32,
    /// Register buffers (io_uring fixed buffers); the pool's iovecs.
    pub buffers: Option<Vec<RegBuf>>,
    pub register_file: bool,
    /// Submission by the kernel's SQ polling thread (IORING_SETUP_SQPOLL; fio
    /// `io_submit_mode=offload`).
    pub sqpoll: bool,
    /// Windows: the `FILE_FLAG_*` bits the job's handle was opened with (the IOCP backend
    /// reopens it per worker with the same); 0 elsewhere.
    pub flags: u32,
}

impl BackendConfig {
    /// The descriptors of the files, `fd` alone for a single-file job.
    pub fn fds(&self) -> Vec<Raw> {
        if self.files.len() > 1 {
            self.files.clone()
        } else {
            vec![self.fd]
        }
    }
}

/// Completions of a synchronous backend, kept until the worker reaps them (preallocated:
/// the list never grows past the depth).
///
/// Each is packed into 8 bytes: whether it failed (bit 63), the slot (bits 32..63: slots are
/// fewer than the deepest queue, far below 2^31) and the bytes or the OS code's bits (0..32).
/// A `(slot, Completion)` pair takes 12 bytes, and with them the null engine's loop
/// (`worker/null/randread/qd32`) ran 3-4 % slower than with bytes-or-minus-errno.
pub(crate) struct Completed(Vec<u64>);

impl Completed {
    pub(crate) fn new(depth: u32) -> Self {
        Self(Vec::with_capacity(depth as usize + 1))
    }
    #[inline]
    pub(crate) fn push(&mut self, slot: u32, c: Completion) {
        debug_assert!(slot < 1 << 31, "slot {slot}");
        let (failed, field) = match c {
            Completion::Done(n) => (0, n),
            Completion::Failed(code) => (1, code.raw() as u32),
        };
        self.0.push((failed << 63) | (u64::from(slot) << 32) | u64::from(field));
    }
    #[inline]
    pub(crate) fn reap<F: FnMut(u32, Completion)>(&mut self, mut f: F) {
        for e in self.0.drain(..) {
            let (slot, field) = ((e >> 32) as u32 & 0x7fff_ffff, e as u32);
            let c =
                if e >> 63 == 0 { Completion::Done(field) } else { Completion::Failed(OsCode::from_raw(field as i32)) };
            f(slot, c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_completion_is_eight_bytes_compared_whole() {
        assert_eq!(std::mem::size_of::<Completion>(), 8);
        let (done, failed) = (Completion::Done(5), Completion::Failed(OsCode::from_raw(5)));
        assert_eq!(done, Completion::Done(5));
        assert_ne!(done, Completion::Done(6));
        assert_ne!(done, failed, "the tag counts");
        assert_eq!(failed, Completion::Failed(OsCode::from_raw(5)));
        assert_eq!((done.error(), failed.error()), (None, Some(OsCode::from_raw(5))));
    }

    #[test]
    fn completed_hands_back_what_was_pushed() {
        let max_slot = spec::validate::MAX_QD + 1;
        let all = [
            (0, Completion::Done(4096)),
            (max_slot, Completion::Done(u32::MAX)),
            (7, Completion::Done(0)),
            (max_slot, Completion::Failed(OsCode::from_raw(EIO))),
            (1, Completion::Failed(OsCode::from_raw(-1))),
            (2, Completion::Failed(OsCode::from_raw(i32::MIN))),
            (3, Completion::Failed(OsCode::from_raw(0))),
        ];
        let mut done = Completed::new(8);
        for (slot, c) in all {
            done.push(slot, c);
        }
        let mut got = Vec::new();
        done.reap(|slot, c| got.push((slot, c)));
        assert_eq!(got, all);
        done.reap(|_, _| panic!("reaped twice"));
    }
}
