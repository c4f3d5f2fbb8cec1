//! The io_uring backend: registered buffers and files, one ring per worker, entered through
//! its registered descriptor; discards through the block layer's ring command (6.12+).

use super::{Backend, BackendConfig, Completion, Op};
use io_uring::{opcode, types, IoUring};
use platform::OsCode;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// `BLOCK_URING_CMD_DISCARD` (`_IO(0x12, 0)`, linux/blkdev.h, 6.12+): an asynchronous
/// BLKDISCARD through io_uring; `addr` is the start, `addr3` the length.
const BLOCK_URING_CMD_DISCARD: u32 = 0x12 << 8;

/// The kernel's limit on a ring's submission-queue entries (IORING_MAX_ENTRIES); the
/// completion queue may be twice as large. `spec::validate::MAX_QD` is this number.
pub const URING_MAX_ENTRIES: u32 = 32_768;

/// Submission- and completion-queue entries of the ring for `depth` I/Os in flight (plus
/// one fsync slot): the SQ is a power of two capped at the kernel's limit (a full SQ is
/// submitted and refilled), the CQ twice the SQ, so every in-flight I/O always has room for
/// its completion.
pub fn uring_entries(depth: u32) -> (u32, u32) {
    let sq = depth.saturating_add(1).checked_next_power_of_two().unwrap_or(URING_MAX_ENTRIES);
    let sq = sq.clamp(4, URING_MAX_ENTRIES);
    (sq, sq * 2)
}

/// Why an io_uring backend could not be set up.
#[derive(Debug)]
pub enum UringSetupError {
    /// `io_uring_setup` failed: the ring itself.
    Ring { entries: u32, error: io::Error },
    /// Registering the I/O buffers failed.
    Buffers(io::Error),
}

pub struct Uring {
    ring: IoUring,
    fixed_file: bool,
    fixed_bufs: bool,
    /// The files' descriptors (one for a single-file job).
    fds: Vec<RawFd>,
    /// Offsets carry a file index (several files).
    multi: bool,
    /// The ring's own descriptor registered with this thread's io_uring context
    /// (IORING_REGISTER_RING_FDS): its index, or -1 to enter through the plain descriptor.
    ring_index: i32,
    /// Submission by the kernel's SQ polling thread: entered through the io-uring crate,
    /// which knows when that thread needs waking.
    sqpoll: bool,
    /// Every request is submitted to be handed to the kernel's workers at once (IOSQE_ASYNC):
    /// see [`Uring::hand_off`].
    force_async: bool,
}

/// Register the ring's descriptor with the calling thread's io_uring context: its index,
/// or -1 where the kernel cannot (before 5.18), and the ring is entered through `fd`.
fn register_ring_fd(fd: RawFd) -> i32 {
    let mut up = RsrcUpdate { offset: u32::MAX, resv: 0, data: fd as u64 };
    if ring_fds(fd, REGISTER_RING_FDS, &mut up) == 1 {
        up.offset as i32
    } else {
        -1
    }
}

/// One IORING_(UN)REGISTER_RING_FDS call on the ring `fd` with one update: the kernel's result.
fn ring_fds(fd: RawFd, opcode: u32, up: &mut RsrcUpdate) -> libc::c_long {
    // SAFETY: a plain register call with a struct that lives across it.
    unsafe { libc::syscall(libc::SYS_io_uring_register, fd, opcode, up as *mut RsrcUpdate, 1) }
}

/// `io_uring_enter` flags (kernel ABI).
const ENTER_GETEVENTS: u32 = 1;
const ENTER_EXT_ARG: u32 = 1 << 3;
const ENTER_REGISTERED_RING: u32 = 1 << 4;

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// IORING_REGISTER_RING_FDS / IORING_UNREGISTER_RING_FDS.
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

impl Uring {
    /// Whether this ring's requests run in io_uring's kernel workers rather than in the calling
    /// thread: one read of `buf.len()` bytes at `offset` of the first file into `buf` (the
    /// slots' buffers keep their data), then a look for a worker thread named after this one.
    /// `None` when the read failed or the OS does not tell. Call it before any other I/O.
    /// The second value is false when the read was never given back: the kernel may still
    /// write into `buf`, which the caller must then leak rather than free.
    ///
    /// A file or device that cannot take a request without blocking (zram, bio-based drivers)
    /// has every request handed off; one that can takes it in the submitting thread. So does a
    /// request whose pages exceed the queue's segment limit (a 1 MiB read on 4 KiB pages that
    /// happen not to be contiguous, against 128 segments): it must be split, which a
    /// non-blocking submission may not do. `buf` must therefore be the kind of memory the run
    /// uses ([`crate::io::buffers::BufferPool`]), or the answer follows the luck of the
    /// probe's pages.
    pub fn probe_handoff(&mut self, offset: u64, buf: &mut [u8]) -> (Option<bool>, bool) {
        let (Some(tid), Ok(len)) = (platform::threads::current_tid(), u32::try_from(buf.len())) else {
            return (None, true);
        };
        let sqe = if self.fixed_file {
            opcode::Read::new(types::Fixed(0), buf.as_mut_ptr(), len)
                .offset(offset)
                .build()
                .flags(io_uring::squeue::Flags::FIXED_FILE)
        } else {
            opcode::Read::new(types::Fd(self.fds[0]), buf.as_mut_ptr(), len).offset(offset).build()
        }
        .user_data(u64::from(u32::MAX));
        let mut res = None;
        // SAFETY: `buf` outlives the completion, which is reaped here; when the ring fails to
        // give it back, the caller is told to leak `buf`.
        if unsafe { self.ring.submission().push(&sqe) }.is_err() {
            return (None, true);
        }
        {
            for _ in 0..100 {
                if self.submit_and_wait(1, None).is_err() {
                    break;
                }
                self.reap(|_, c| res = Some(c));
                if res.is_some() {
                    break;
                }
            }
        }
        match res {
            None => (None, false),
            Some(Completion::Done(n)) if n > 0 => (Some(!platform::threads::io_workers_of(tid).is_empty()), true),
            Some(_) => (None, true),
        }
    }

    /// Requests are handed to the kernel's workers: submit each to be handed off at once
    /// (IOSQE_ASYNC), so that the kernel starts a worker for each request in flight instead of
    /// running them one after another in the one it started for the first (it adds a worker
    /// only when the running ones block, and a RAM device never blocks); let those workers run
    /// on `cpus` (IORING_REGISTER_IOWQ_AFF; empty: where they would) and cap them at
    /// `max_workers` per submitting thread (IORING_REGISTER_IOWQ_MAX_WORKERS). Returns what
    /// the kernel took: (CPUs set, cap set).
    pub fn hand_off(&mut self, cpus: &[usize], max_workers: u32) -> (bool, bool) {
        self.force_async = true;
        let aff = !cpus.is_empty() && {
            // SAFETY: a zeroed cpu_set_t is valid, and every CPU number came from the process's
            // allowed set, so it is below CPU_SETSIZE.
            let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
            for &c in cpus {
                unsafe { libc::CPU_SET(c, &mut set) };
            }
            self.ring.submitter().register_iowq_aff(&set).is_ok()
        };
        let mut max = [max_workers, max_workers];
        let capped = max_workers > 0 && self.ring.submitter().register_iowq_max_workers(&mut max).is_ok();
        (aff, capped)
    }

    pub fn new(cfg: &BackendConfig) -> Result<Self, UringSetupError> {
        let (entries, cq) = uring_entries(cfg.depth);
        // Single issuer + deferred task running cut kernel overhead per completion (6.1+);
        // fall back to a plain ring on older kernels.
        if cfg.sqpoll {
            // A kernel thread takes the I/Os off the ring; it sleeps after a second without any.
            // (Deferred task running does not go with SQ polling.)
            let ring = IoUring::builder()
                .setup_sqpoll(1000)
                .setup_cqsize(cq)
                .build(entries)
                .map_err(|error| UringSetupError::Ring { entries, error })?;
            return Self::registered(ring, cfg);
        }
        // The task-run flag lets a polling wait see completion work without a system call.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_taskrun_flag()
            .setup_cqsize(cq)
            .build(entries)
            .or_else(|_| IoUring::builder().setup_single_issuer().setup_defer_taskrun().setup_cqsize(cq).build(entries))
            .or_else(|_| IoUring::builder().setup_cqsize(cq).build(entries))
            .or_else(|_| IoUring::new(entries))
            .map_err(|error| UringSetupError::Ring { entries, error })?;
        Self::registered(ring, cfg)
    }

    /// The ring with the target's file and the worker's buffers registered.
    fn registered(ring: IoUring, cfg: &BackendConfig) -> Result<Self, UringSetupError> {
        let fds = cfg.fds();
        let mut fixed_file = false;
        if cfg.register_file {
            fixed_file = ring.submitter().register_files(&fds).is_ok();
        }
        let mut fixed_bufs = false;
        if let Some(iovecs) = &cfg.buffers {
            // SAFETY: the iovecs describe the worker's BufferPool, which outlives the ring
            // (the worker drops the ring first) and is not freed while registered.
            match unsafe { ring.submitter().register_buffers(iovecs) } {
                Ok(()) => fixed_bufs = true,
                Err(e) => return Err(UringSetupError::Buffers(e)),
            }
        }
        let sqpoll = ring.params().is_setup_sqpoll();
        let ring_index = if sqpoll { -1 } else { register_ring_fd(ring.as_raw_fd()) };
        Ok(Self { ring, fixed_file, fixed_bufs, multi: fds.len() > 1, fds, ring_index, sqpoll, force_async: false })
    }

    /// One `io_uring_enter`: through the registered ring index when there is one (the kernel
    /// then skips looking the descriptor up and pinning it on every call), else the plain
    /// descriptor. Returns the kernel's result or its errno.
    #[inline]
    fn enter(
        &mut self,
        to_submit: u32,
        min_complete: u32,
        flags: u32,
        arg: Option<&types::SubmitArgs>,
    ) -> io::Result<u32> {
        loop {
            let (fd, flags) = if self.ring_index >= 0 {
                (self.ring_index, flags | ENTER_REGISTERED_RING)
            } else {
                (self.ring.as_raw_fd(), flags)
            };
            let (argp, argsz) = match arg {
                // SubmitArgs is a transparent io_uring_getevents_arg.
                Some(a) => {
                    ((a as *const types::SubmitArgs).cast::<libc::c_void>(), std::mem::size_of::<types::SubmitArgs>())
                }
                None => (std::ptr::null(), 0),
            };
            // SAFETY: the ring is ours; `arg`, when given, points to a live io_uring_getevents_arg
            // whose timespec outlives the call.
            let r = unsafe { libc::syscall(libc::SYS_io_uring_enter, fd, to_submit, min_complete, flags, argp, argsz) };
            if r >= 0 {
                return Ok(r as u32);
            }
            let e = io::Error::last_os_error();
            // A registered index is valid only on the thread that registered it: on any other,
            // enter through the descriptor from now on.
            if self.ring_index >= 0 && matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::EBADF)) {
                self.ring_index = -1;
                continue;
            }
            return Err(e);
        }
    }

    pub fn uses_fixed_buffers(&self) -> bool {
        self.fixed_bufs
    }
    pub fn uses_fixed_file(&self) -> bool {
        self.fixed_file
    }
}

impl Drop for Uring {
    /// A ring is torn down asynchronously after its fd closes, holding its registered file
    /// (and so the target's lock) a moment longer; unregistering releases it now, so that the
    /// next run on the same target does not find it busy.
    fn drop(&mut self) {
        if self.ring_index >= 0 {
            let mut up = RsrcUpdate { offset: self.ring_index as u32, resv: 0, data: 0 };
            ring_fds(self.ring.as_raw_fd(), UNREGISTER_RING_FDS, &mut up);
        }
        if self.fixed_file {
            let _ = self.ring.submitter().unregister_files();
        }
    }
}

/// A completion-queue entry's result: bytes transferred, or -errno.
#[inline]
fn completion(res: i32) -> Completion {
    if res >= 0 {
        Completion::Done(res as u32)
    } else {
        Completion::Failed(OsCode::from_raw(-res))
    }
}

macro_rules! with_fd {
    ($self:ident, $file:ident, $build:expr) => {
        if $self.fixed_file {
            $build(types::Fixed($file as u32)).build().flags(io_uring::squeue::Flags::FIXED_FILE)
        } else {
            $build(types::Fd($self.fds[$file])).build()
        }
    };
}
impl Backend for Uring {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, buf_index: u16) -> io::Result<()> {
        let fixed_bufs = self.fixed_bufs;
        let (file, offset) = if self.multi { crate::io::files::split(offset) } else { (0, offset) };
        let sqe = match op {
            Op::Read if fixed_bufs => {
                with_fd!(self, file, |fd| opcode::ReadFixed::new(fd, buf, len, buf_index).offset(offset))
            }
            Op::Write if fixed_bufs => {
                with_fd!(self, file, |fd| opcode::WriteFixed::new(fd, buf, len, buf_index).offset(offset))
            }
            Op::Read => with_fd!(self, file, |fd| opcode::Read::new(fd, buf, len).offset(offset)),
            Op::Write => with_fd!(self, file, |fd| opcode::Write::new(fd, buf, len).offset(offset)),
            Op::Fsync => with_fd!(self, file, opcode::Fsync::new),
            Op::PunchHole => with_fd!(self, file, |fd| opcode::Fallocate::new(fd, u64::from(len))
                .offset(offset)
                .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)),
            Op::Discard => {
                let mut cmd = [0u8; 16];
                cmd[..8].copy_from_slice(&u64::from(len).to_le_bytes());
                with_fd!(self, file, |fd| opcode::UringCmd16::new(fd, BLOCK_URING_CMD_DISCARD)
                    .cmd(cmd)
                    .addr(Some(offset)))
            }
        }
        .user_data(slot as u64);
        let sqe = if self.force_async { sqe.flags(io_uring::squeue::Flags::ASYNC) } else { sqe };
        // SAFETY: the buffer stays valid and untouched until the completion for `slot` is
        // reaped; a full SQ is submitted first, and the CQ has room for every slot.
        unsafe {
            if self.ring.submission().push(&sqe).is_err() {
                self.ring.submit()?;
                self.ring.submission().push(&sqe).map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        Ok(())
    }

    #[inline]
    fn submit_and_wait(&mut self, want: u32, timeout: Option<Duration>) -> io::Result<()> {
        loop {
            let to_submit = self.ring.submission().len() as u32;
            let r = match timeout {
                Some(t) if want > 0 => {
                    let ts = types::Timespec::from(t);
                    let args = types::SubmitArgs::new().timespec(&ts);
                    if self.sqpoll {
                        self.ring.submitter().submit_with_args(want as usize, &args).map(|n| n as u32)
                    } else {
                        self.enter(to_submit, want, ENTER_GETEVENTS | ENTER_EXT_ARG, Some(&args))
                    }
                }
                _ if self.sqpoll => self.ring.submit_and_wait(want as usize).map(|n| n as u32),
                // GETEVENTS also with want = 0: deferred completion work runs only on it.
                _ => self.enter(to_submit, want, ENTER_GETEVENTS, None),
            };
            match r {
                Ok(_) => return Ok(()),
                Err(e) => match e.raw_os_error() {
                    Some(libc::ETIME) => return Ok(()),
                    Some(libc::EINTR) => continue,
                    // Completion queue overflow pressure: reap and come back.
                    Some(libc::EBUSY) | Some(libc::EAGAIN) => return Ok(()),
                    _ => return Err(e),
                },
            }
        }
    }

    #[inline]
    fn poll(&mut self) -> io::Result<()> {
        // GETEVENTS runs deferred completion work, here with min_complete 0 so the call never
        // sleeps.
        let to_submit = self.ring.submission().len() as u32;
        loop {
            let r = if self.sqpoll {
                // SAFETY: no argument struct is passed; the ring is ours.
                unsafe { self.ring.submitter().enter::<libc::sigset_t>(to_submit, 0, ENTER_GETEVENTS, None) }
                    .map(|n| n as u32)
            } else {
                self.enter(to_submit, 0, ENTER_GETEVENTS, None)
            };
            match r {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EBUSY) | Some(libc::EAGAIN)) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    #[inline]
    fn ready(&mut self) -> bool {
        !self.ring.completion().is_empty()
    }

    #[inline]
    fn pending(&mut self) -> bool {
        // Deferred task running sets IORING_SQ_TASKRUN when a completion waits for us; a
        // plain ring (older kernels) or an SQ-polling one posts completions straight to the CQ.
        self.ring.submission().taskrun() || !self.ring.completion().is_empty()
    }

    #[inline]
    fn reap<F: FnMut(u32, Completion)>(&mut self, mut f: F) {
        for cqe in self.ring.completion() {
            f(cqe.user_data() as u32, completion(cqe.result()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sizes_stay_within_the_kernel_limit() {
        assert_eq!(uring_entries(1), (4, 8));
        assert_eq!(uring_entries(32), (64, 128));
        assert_eq!(uring_entries(16_383), (16_384, 32_768));
        assert_eq!(uring_entries(16_384), (32_768, 65_536));
        // The deepest accepted queue: the SQ at the limit, the CQ still holds every I/O + fsync.
        assert_eq!(uring_entries(32_768), (32_768, 65_536));
        assert_eq!(uring_entries(spec::validate::MAX_QD).0, URING_MAX_ENTRIES);
        assert_eq!(uring_entries(u32::MAX), (32_768, 65_536));
    }

    #[test]
    fn deepest_ring_sets_up_where_io_uring_works() {
        let cfg = BackendConfig {
            fd: -1,
            files: Vec::new(),
            depth: spec::validate::MAX_QD,
            buffers: None,
            register_file: false,
            sqpoll: false,
            flags: 0,
        };
        match Uring::new(&cfg) {
            Ok(_) => {}
            // Sandboxes without io_uring: only the availability errors are acceptable.
            Err(UringSetupError::Ring { error, .. })
                if matches!(error.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) => {}
            Err(e) => panic!("a ring for the deepest accepted queue must set up: {e:?}"),
        }
    }
}
