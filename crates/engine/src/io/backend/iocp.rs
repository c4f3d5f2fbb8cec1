//! The IOCP backend (Windows): overlapped `ReadFile`/`WriteFile` on the worker's own handles,
//! completions from one I/O completion port per worker, as Microsoft DiskSpd does.
//!
//! - One completion port per worker (concurrency 1) and one handle per file of the job, reopened
//!   from the job's handle (`ReOpenFile`, overlapped): a handle can be associated with one port
//!   only, and the job's handle is shared by its workers. The completion key is the file's index.
//! - One `OVERLAPPED` per slot (the depth, plus one for the worker's fsync slot), allocated at
//!   set-up and never moved; a completion's slot is its `OVERLAPPED`'s index in that array.
//!   Nothing is allocated, locked or logged per I/O.
//! - Windows has no separate submission: `queue` issues the I/O at once. An I/O that completes
//!   inside the call (a cache hit, an extending write) posts no packet when the handle's
//!   completion mode skips the port on success (`FILE_SKIP_COMPLETION_PORT_ON_SUCCESS`, set at
//!   set-up where the OS takes it): its completion goes to a local list, as does an I/O refused
//!   at issue (no packet comes for it either). Everything else arrives as a packet through
//!   `GetQueuedCompletionStatusEx`.
//! - An fsync is `FlushFileBuffers` on the worker's handle, a discard or punched hole
//!   [`sync_discard`] on the job's handle: synchronous, completed at once.
//! - The worker's handle reads and writes, or only reads where the file cannot be reopened for
//!   writing: a write (or an fsync) through it then fails with ERROR_ACCESS_DENIED.
//! - A read at or past the end of the file (`STATUS_END_OF_FILE` / `ERROR_HANDLE_EOF`) is
//!   `Done(0)`, a transfer of no bytes, as `pread` past the end is on Linux: the worker reports it
//!   as the short transfer it is. Any other failure is `Failed` with the Win32 error code (an
//!   NTSTATUS is converted with `RtlNtStatusToDosError`).
//! - An I/O counts against the depth from `queue` until it is reaped: at most `depth` reads and
//!   writes, one I/O per slot. A request beyond that is refused with an error
//!   (`ERROR_INVALID_PARAMETER`), never issued.
//! - Dropping the backend with I/O in flight cancels it (`CancelIoEx`) and waits for the packets
//!   (about a minute at most) before the `OVERLAPPED`s are freed; should some never come, the
//!   array is leaked rather than freed under the kernel.
//!
//! Under Wine every regular-file I/O runs synchronously inside the call and is still reported
//! pending with a packet, whatever the completion mode: the inline path is exercised there only
//! by the unit tests' simulated returns.

use super::{sync_discard, Backend, BackendConfig, Completed, Completion, Op};
use platform::target::Raw;
use platform::OsCode;
use std::io;
use std::time::{Duration, Instant};
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, RtlNtStatusToDosError, ERROR_HANDLE_EOF, ERROR_INVALID_PARAMETER, ERROR_IO_PENDING,
    GENERIC_READ, GENERIC_WRITE, HANDLE, INVALID_HANDLE_VALUE, NTSTATUS, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{
    FlushFileBuffers, ReOpenFile, ReadFile, SetFileCompletionNotificationModes, WriteFile, FILE_FLAG_NO_BUFFERING,
    FILE_FLAG_OVERLAPPED, FILE_FLAG_RANDOM_ACCESS, FILE_FLAG_SEQUENTIAL_SCAN, FILE_FLAG_WRITE_THROUGH,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
};
use windows_sys::Win32::System::Threading::INFINITE;
use windows_sys::Win32::System::WindowsProgramming::{
    FILE_SKIP_COMPLETION_PORT_ON_SUCCESS, FILE_SKIP_SET_EVENT_ON_HANDLE,
};
use windows_sys::Win32::System::IO::{
    CancelIoEx, CreateIoCompletionPort, GetQueuedCompletionStatusEx, OVERLAPPED, OVERLAPPED_ENTRY,
};

/// The job's open flags that the worker's handles take over (`BackendConfig::flags`); the others
/// (attributes, security flags, delete-on-close, …) are not reopen flags and are left out.
const KEPT_FLAGS: u32 =
    FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH | FILE_FLAG_RANDOM_ACCESS | FILE_FLAG_SEQUENTIAL_SCAN;

/// How long `Drop` waits for cancelled I/O to come back: this many waits of 100 ms.
const DRAIN_WAITS: u32 = 600;

/// Where a slot's I/O is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Nothing queued: the slot may be queued.
    Free,
    /// Issued and not yet completed: the kernel owns the slot's `OVERLAPPED` until its packet.
    Kernel,
    /// Completed, in the local list until the worker reaps it.
    Ready,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    state: State,
    op: Op,
}

/// The IOCP backend of one worker.
pub struct Iocp {
    /// The worker's completion port.
    port: HANDLE,
    /// The worker's own handles, one per file of the job (reopened, overlapped, on `port`).
    handles: Vec<HANDLE>,
    /// The job's handles they were reopened from (discards and punched holes go through these).
    job: Vec<Raw>,
    /// Per handle: an I/O that completes inside its call posts no packet (the skip mode is set).
    skip: Vec<bool>,
    /// Offsets carry a file index (several files).
    multi: bool,
    /// One `OVERLAPPED` per slot: a boxed slice turned into a raw pointer at set-up, so that it
    /// never moves and no Rust reference ever covers memory the kernel may write.
    ovs: *mut OVERLAPPED,
    slots: Box<[Slot]>,
    /// `GetQueuedCompletionStatusEx`'s output, one entry per slot.
    entries: Box<[OVERLAPPED_ENTRY]>,
    done: Completed,
    /// Completions in `done`.
    ready: u32,
    /// I/Os whose packet is still to come.
    in_kernel: u32,
    /// Reads and writes queued and not yet reaped, and their limit.
    data: u32,
    depth: u32,
}

// SAFETY: the port and the handles are process-wide kernel objects, usable from any thread; the
// OVERLAPPED array is owned by this value alone and reached only through `&mut self`.
unsafe impl Send for Iocp {}

/// The error of a request the backend refuses itself (a busy slot, beyond the depth, no such
/// slot or file): ERROR_INVALID_PARAMETER, an invalid request.
#[cold]
fn refused() -> io::Error {
    io::Error::from_raw_os_error(ERROR_INVALID_PARAMETER as i32)
}

/// A `HANDLE` from its value.
#[inline]
fn handle(raw: Raw) -> HANDLE {
    raw as HANDLE
}

/// The completion of an I/O that failed with the Win32 error `err`: a read at or past the end
/// of the file transferred nothing (`Done(0)`, as `pread` there does), anything else failed.
#[inline]
fn completion_of_error(err: u32, op: Op) -> Completion {
    if err == ERROR_HANDLE_EOF && op == Op::Read {
        Completion::Done(0)
    } else {
        Completion::Failed(OsCode::from_raw(err as i32))
    }
}

/// The completion of an I/O that ended with `status` (an NTSTATUS) after `bytes`.
#[inline]
fn completion_of_status(status: NTSTATUS, bytes: u32, op: Op) -> Completion {
    if status >= 0 {
        // NT_SUCCESS: success or an informational status.
        return Completion::Done(bytes);
    }
    // SAFETY: a table look-up of a plain number (it also sets the thread's last error).
    let err = unsafe { RtlNtStatusToDosError(status) };
    completion_of_error(err, op)
}

/// Milliseconds for a wait of `t`, rounded up (a wait shorter than a millisecond is not a poll),
/// below INFINITE.
#[inline]
fn millis(t: Duration) -> u32 {
    t.as_nanos().div_ceil(1_000_000).min(u128::from(INFINITE - 1)) as u32
}

/// A handle of the caller's own on the file behind `h`, for overlapped I/O with the `KEPT_FLAGS`
/// of `flags`: read and write, or read only where it cannot be reopened for writing (a read-only
/// file or medium, a reader's rights, a job's handle that does not share writing); a write
/// through it then fails with ERROR_ACCESS_DENIED, as through a read-only job handle. When it
/// cannot be reopened for reading either, the error of the read-write attempt.
fn reopen(h: HANDLE, flags: u32) -> io::Result<HANDLE> {
    let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    let flags = (flags & KEPT_FLAGS) | FILE_FLAG_OVERLAPPED;
    // SAFETY: `h` is an open handle of the job's (the caller's contract); ReOpenFile only reads it.
    let rw = unsafe { ReOpenFile(h, GENERIC_READ | GENERIC_WRITE, share, flags) };
    if rw != INVALID_HANDLE_VALUE && !rw.is_null() {
        return Ok(rw);
    }
    let e = io::Error::last_os_error();
    // SAFETY: as above.
    let r = unsafe { ReOpenFile(h, GENERIC_READ, share, flags) };
    if r != INVALID_HANDLE_VALUE && !r.is_null() {
        Ok(r)
    } else {
        Err(e)
    }
}

impl Iocp {
    /// The backend of one worker over the job's files (`cfg.fds()`, handles opened with
    /// `FILE_FLAG_OVERLAPPED` and shared for reading and writing): a completion port and a
    /// reopened handle per file, with `cfg.flags`' buffering flags; `cfg.depth` reads and writes
    /// in flight, plus one slot (the worker's fsync).
    pub fn new(cfg: &BackendConfig) -> io::Result<Self> {
        Self::open(cfg, true)
    }

    /// [`Iocp::new`]; `skip_inline`: ask that an I/O completing inside its call posts no packet
    /// (false only in tests, to take the other path on Windows).
    fn open(cfg: &BackendConfig, skip_inline: bool) -> io::Result<Self> {
        let nslots = cfg.depth as usize + 1;
        // SAFETY: OVERLAPPED and OVERLAPPED_ENTRY are plain C structs: all zeroes is valid.
        let ovs: Box<[OVERLAPPED]> = (0..nslots).map(|_| unsafe { std::mem::zeroed() }).collect();
        // SAFETY: as above.
        let entries: Box<[OVERLAPPED_ENTRY]> = (0..nslots).map(|_| unsafe { std::mem::zeroed() }).collect();
        let ovs = Box::into_raw(ovs).cast::<OVERLAPPED>();
        // SAFETY: a new port of no file (INVALID_HANDLE_VALUE), one thread at a time.
        let port = unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1) };
        let job = cfg.fds();
        let mut me = Self {
            port,
            handles: Vec::with_capacity(job.len()),
            skip: Vec::with_capacity(job.len()),
            multi: job.len() > 1,
            job,
            ovs,
            slots: vec![Slot { state: State::Free, op: Op::Read }; nslots].into_boxed_slice(),
            entries,
            done: Completed::new(cfg.depth),
            ready: 0,
            in_kernel: 0,
            data: 0,
            depth: cfg.depth,
        };
        if port.is_null() {
            return Err(io::Error::last_os_error());
        }
        // From here on, `me`'s Drop closes whatever was opened when a step fails.
        for i in 0..me.job.len() {
            let h = reopen(handle(me.job[i]), cfg.flags)?;
            me.handles.push(h);
            // SAFETY: `h` is ours and overlapped; the port is ours. The key is the file's index.
            if unsafe { CreateIoCompletionPort(h, me.port, i, 0) }.is_null() {
                return Err(io::Error::last_os_error());
            }
            let modes = (FILE_SKIP_COMPLETION_PORT_ON_SUCCESS | FILE_SKIP_SET_EVENT_ON_HANDLE) as u8;
            // SAFETY: a mode change on our own handle. When it fails, a success inside the call
            // still posts its packet, and `skip` says so.
            let skip = skip_inline && unsafe { SetFileCompletionNotificationModes(h, modes) } != 0;
            me.skip.push(skip);
        }
        Ok(me)
    }

    /// The slot's `OVERLAPPED` (a raw pointer: the kernel may own it).
    #[inline]
    fn ov(&self, slot: usize) -> *mut OVERLAPPED {
        debug_assert!(slot < self.slots.len());
        // SAFETY: `slot` is below the array's length (the callers check it).
        unsafe { self.ovs.add(slot) }
    }

    /// `slot` is done with `c` without a packet: into the local list.
    #[inline]
    fn finish(&mut self, slot: usize, c: Completion) {
        self.slots[slot].state = State::Ready;
        self.done.push(slot as u32, c);
        self.ready += 1;
    }

    /// What the issue of `slot`'s read or write on file `file` returned: `ok` (TRUE), or the
    /// error `err` of a FALSE. The slot is in the kernel's hands until this says otherwise.
    #[inline]
    fn issued(&mut self, slot: usize, file: usize, ok: bool, err: u32) {
        if ok {
            if self.skip[file] {
                // Completed inside the call, and no packet comes.
                // SAFETY: the I/O is complete: the kernel no longer writes the OVERLAPPED.
                let bytes = unsafe { (*self.ov(slot)).InternalHigh } as u32;
                self.in_kernel -= 1;
                self.finish(slot, Completion::Done(bytes));
            }
            // Otherwise the packet is on its way, as for a pending I/O.
        } else if err != ERROR_IO_PENDING {
            // Refused at issue: no packet comes.
            self.in_kernel -= 1;
            let op = self.slots[slot].op;
            self.finish(slot, completion_of_error(err, op));
        }
    }

    /// One `GetQueuedCompletionStatusEx` of up to `ms` milliseconds: its packets converted into
    /// completions. Returns the number of packets taken (0: the wait timed out).
    fn gather(&mut self, ms: u32) -> io::Result<u32> {
        let mut n = 0u32;
        // SAFETY: the entries array is ours and holds `len` entries; the port is ours.
        let ok = unsafe {
            GetQueuedCompletionStatusEx(self.port, self.entries.as_mut_ptr(), self.entries.len() as u32, &mut n, ms, 0)
        };
        if ok == 0 {
            // SAFETY: reads the thread's last error.
            let err = unsafe { GetLastError() };
            return if err == WAIT_TIMEOUT { Ok(0) } else { Err(io::Error::from_raw_os_error(err as i32)) };
        }
        for i in 0..(n as usize).min(self.entries.len()) {
            let e = self.entries[i];
            self.complete(e);
        }
        Ok(n)
    }

    /// One packet: its slot's completion into the local list. A packet that is not one of this
    /// backend's I/Os in flight is ignored.
    #[inline]
    fn complete(&mut self, e: OVERLAPPED_ENTRY) {
        let size = std::mem::size_of::<OVERLAPPED>();
        let at = (e.lpOverlapped as usize).wrapping_sub(self.ovs as usize);
        let slot = at / size;
        if !at.is_multiple_of(size) || slot >= self.slots.len() || self.slots[slot].state != State::Kernel {
            return;
        }
        // The I/O's status is in its OVERLAPPED (`Internal`, the IO_STATUS_BLOCK's status; the
        // entry's own `Internal` is documented as reserved).
        // SAFETY: the packet was dequeued: the kernel is done with the slot's OVERLAPPED.
        let status = unsafe { (*self.ov(slot)).Internal } as NTSTATUS;
        let op = self.slots[slot].op;
        self.in_kernel -= 1;
        self.finish(slot, completion_of_status(status, e.dwNumberOfBytesTransferred, op));
    }
}

impl Backend for Iocp {
    // `buf` is the worker's buffer for the slot, valid until the slot is reaped: the contract of
    // every backend's `queue` (io_uring hands it to the kernel the same way).
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, _: u16) -> io::Result<()> {
        let s = slot as usize;
        let data = matches!(op, Op::Read | Op::Write);
        if s >= self.slots.len() || self.slots[s].state != State::Free || (data && self.data >= self.depth) {
            return Err(refused());
        }
        let (file, offset) = if self.multi { crate::io::files::split(offset) } else { (0, offset) };
        let Some(&h) = self.handles.get(file) else {
            return Err(refused());
        };
        self.slots[s].op = op;
        let c = match op {
            Op::Read | Op::Write => {
                let ov = self.ov(s);
                // SAFETY: the slot is free, so the kernel does not own its OVERLAPPED; a fresh
                // one with the offset (no event: completions go to the port).
                unsafe {
                    ov.write(std::mem::zeroed());
                    (*ov).Anonymous.Anonymous.Offset = offset as u32;
                    (*ov).Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
                }
                self.slots[s].state = State::Kernel;
                self.in_kernel += 1;
                self.data += 1;
                // SAFETY: `buf` holds `len` bytes of the worker's pool reserved for this slot
                // until it is reaped; the OVERLAPPED never moves and is not reused before its
                // completion (the slot stays busy until reaped, and Drop drains).
                let ok = unsafe {
                    if op == Op::Read {
                        ReadFile(h, buf, len, std::ptr::null_mut(), ov)
                    } else {
                        WriteFile(h, buf, len, std::ptr::null_mut(), ov)
                    }
                } != 0;
                // SAFETY: reads the thread's last error.
                let err = if ok { 0 } else { unsafe { GetLastError() } };
                self.issued(s, file, ok, err);
                return Ok(());
            }
            // SAFETY: a flush of our own handle.
            Op::Fsync => match unsafe { FlushFileBuffers(h) } {
                0 => {
                    // SAFETY: reads the thread's last error.
                    Completion::Failed(OsCode::from_raw(unsafe { GetLastError() } as i32))
                }
                _ => Completion::Done(0),
            },
            Op::Discard | Op::PunchHole => sync_discard(self.job[file], op, offset, len),
        };
        self.finish(s, c);
        Ok(())
    }

    fn submit_and_wait(&mut self, want: u32, timeout: Option<Duration>) -> io::Result<()> {
        if want == 0 {
            // Nothing to submit: every I/O was issued by `queue`.
            return Ok(());
        }
        let start = timeout.filter(|t| !t.is_zero()).map(|_| Instant::now());
        loop {
            if self.ready >= want || self.in_kernel == 0 {
                return Ok(());
            }
            let ms = match (timeout, start) {
                (None, _) => INFINITE,
                (Some(t), Some(s)) => millis(t.saturating_sub(s.elapsed())),
                (Some(_), None) => 0,
            };
            if self.gather(ms)? == 0 || ms == 0 {
                // Timed out, or a look without waiting.
                return Ok(());
            }
        }
    }

    #[inline]
    fn poll(&mut self) -> io::Result<()> {
        if self.in_kernel > 0 {
            self.gather(0)?;
        }
        Ok(())
    }

    #[inline]
    fn ready(&mut self) -> bool {
        self.ready > 0
    }

    #[inline]
    fn pending(&mut self) -> bool {
        self.in_kernel > 0
    }

    #[inline]
    fn reap<F: FnMut(u32, Completion)>(&mut self, mut f: F) {
        let (slots, data) = (&mut self.slots, &mut self.data);
        self.done.reap(|slot, c| {
            let s = &mut slots[slot as usize];
            if matches!(s.op, Op::Read | Op::Write) {
                *data -= 1;
            }
            s.state = State::Free;
            f(slot, c)
        });
        self.ready = 0;
    }
}

impl Drop for Iocp {
    /// Cancel what is in flight and wait for its packets, then close the handles and the port
    /// and free the OVERLAPPEDs (leaked instead if some I/O never came back).
    fn drop(&mut self) {
        if self.in_kernel > 0 {
            for &h in &self.handles {
                // SAFETY: cancels this process's I/O on our own handle; the OVERLAPPEDs stay.
                unsafe { CancelIoEx(h, std::ptr::null()) };
            }
            let mut waits = 0;
            while self.in_kernel > 0 && waits < DRAIN_WAITS {
                if !matches!(self.gather(100), Ok(n) if n > 0) {
                    waits += 1;
                }
            }
        }
        for &h in &self.handles {
            // SAFETY: our own handle, closed once.
            unsafe { CloseHandle(h) };
        }
        if !self.port.is_null() {
            // SAFETY: our own port, closed once.
            unsafe { CloseHandle(self.port) };
        }
        if self.in_kernel == 0 {
            // SAFETY: the array made in `open` (its length is the slots'), no longer in the
            // kernel's hands.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.ovs, self.slots.len())) });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use platform::IoErrorClass;
    use std::collections::BTreeSet;
    use std::fs::{File, OpenOptions};
    use std::io::Write;
    use std::os::windows::fs::OpenOptionsExt;
    use std::os::windows::io::AsRawHandle;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU32, Ordering};
    use windows_sys::Win32::Foundation::{
        ERROR_ACCESS_DENIED, STATUS_ACCESS_DENIED, STATUS_DISK_FULL, STATUS_END_OF_FILE,
    };
    use windows_sys::Win32::System::IO::PostQueuedCompletionStatus;

    const BLOCK: usize = 4096;

    /// A file of the test's own in the temp dir, removed when dropped.
    struct TempFile(PathBuf);

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn temp_path(dir: &Path, tag: &str) -> PathBuf {
        static N: AtomicU32 = AtomicU32::new(0);
        dir.join(format!("iocp-{}-{tag}-{}.bin", std::process::id(), N.fetch_add(1, Ordering::Relaxed)))
    }

    /// The content of byte `i` of the test files: each 8-byte word holds its offset, xor a tag.
    fn content(len: usize, tag: u64) -> Vec<u8> {
        (0..len / 8).flat_map(|w| ((w as u64 * 8) ^ tag).to_le_bytes()).collect()
    }

    /// A file of `blocks` blocks of [`content`] in `dir`.
    fn file_with(dir: &Path, blocks: usize, tag: u64) -> TempFile {
        let t = TempFile(temp_path(dir, "data"));
        File::create(&t.0).unwrap().write_all(&content(blocks * BLOCK, tag)).unwrap();
        t
    }

    /// The job's handle: the file opened for overlapped I/O, shared as the engine opens it.
    fn open_overlapped(path: &Path, write: bool) -> File {
        OpenOptions::new()
            .read(true)
            .write(write)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
            .custom_flags(FILE_FLAG_OVERLAPPED)
            .open(path)
            .unwrap()
    }

    fn raw(f: &File) -> Raw {
        f.as_raw_handle() as Raw
    }

    fn config(fd: Raw, files: Vec<Raw>, depth: u32) -> BackendConfig {
        BackendConfig { fd, files, depth, buffers: None, register_file: false, sqpoll: false, flags: 0 }
    }

    /// A buffer per slot, 4096-aligned (as the engine's pool is).
    struct Bufs(Vec<u8>);

    impl Bufs {
        fn new(slots: usize) -> Self {
            Self(vec![0u8; (slots + 1) * BLOCK])
        }
        fn ptr(&mut self, slot: u32) -> *mut u8 {
            let base = self.0.as_mut_ptr();
            let pad = base.align_offset(BLOCK);
            // SAFETY: inside the vector (one spare block for the alignment).
            unsafe { base.add(pad + slot as usize * BLOCK) }
        }
        fn get(&mut self, slot: u32) -> &[u8] {
            let p = self.ptr(slot);
            // SAFETY: BLOCK bytes of the vector, no I/O in flight on the slot.
            unsafe { std::slice::from_raw_parts(p, BLOCK) }
        }
    }

    /// Wait for and reap every completion until `n` are in: (slot, completion) in arrival order.
    fn reap_n(b: &mut Iocp, n: usize) -> Vec<(u32, Completion)> {
        let mut got = Vec::new();
        let mut spins = 0;
        while got.len() < n {
            b.submit_and_wait(1, Some(Duration::from_secs(5))).unwrap();
            b.reap(|s, c| got.push((s, c)));
            spins += 1;
            assert!(spins < 1000, "completions missing: {got:?}");
        }
        got
    }

    fn reads_complete_once_with_their_data(skip: bool) {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 64, 0x55);
        let job = open_overlapped(&f.0, true);
        let mut b = Iocp::open(&config(raw(&job), Vec::new(), 8), skip).unwrap();
        let mut bufs = Bufs::new(9);
        // Distinct offsets, not in slot order.
        let offsets: Vec<u64> = (0..8u64).map(|s| ((s * 5 + 3) % 64) * BLOCK as u64).collect();
        for (s, &off) in offsets.iter().enumerate() {
            b.queue(s as u32, Op::Read, off, bufs.ptr(s as u32), BLOCK as u32, 0).unwrap();
        }
        let got = reap_n(&mut b, 8);
        let slots: BTreeSet<u32> = got.iter().map(|(s, _)| *s).collect();
        assert_eq!(slots, (0..8).collect::<BTreeSet<_>>(), "each slot exactly once: {got:?}");
        assert_eq!(got.len(), 8);
        for (s, c) in got {
            assert_eq!(c, Completion::Done(BLOCK as u32));
            let off = offsets[s as usize] as usize;
            assert!(bufs.get(s) == &content(off + BLOCK, 0x55)[off..], "slot {s}: the data of offset {off}");
        }
        assert!(!b.ready() && !b.pending());
        b.submit_and_wait(1, Some(Duration::ZERO)).unwrap();
    }

    #[test]
    fn reads_complete_once_each_with_their_data_with_skip_mode() {
        reads_complete_once_with_their_data(true);
    }

    #[test]
    fn reads_complete_once_each_with_their_data_without_skip_mode() {
        reads_complete_once_with_their_data(false);
    }

    #[test]
    fn writes_land_at_their_offsets() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 16, 0);
        let job = open_overlapped(&f.0, true);
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), 4)).unwrap();
        let mut bufs = Bufs::new(5);
        for s in 0..4u32 {
            let p = bufs.ptr(s);
            // SAFETY: BLOCK bytes of the slot's buffer.
            unsafe { std::ptr::write_bytes(p, 0xA0 + s as u8, BLOCK) };
            b.queue(s, Op::Write, u64::from(s) * 2 * BLOCK as u64, p, BLOCK as u32, 0).unwrap();
        }
        for (_, c) in reap_n(&mut b, 4) {
            assert_eq!(c, Completion::Done(BLOCK as u32));
        }
        b.queue(4, Op::Fsync, 0, std::ptr::null_mut(), 0, 0).unwrap();
        assert!(b.ready(), "an fsync completes at once");
        let mut got = Vec::new();
        b.reap(|s, c| got.push((s, c)));
        assert_eq!(got, [(4, Completion::Done(0))]);
        drop(b);
        drop(job);
        let data = std::fs::read(&f.0).unwrap();
        for s in 0..4usize {
            let at = s * 2 * BLOCK;
            assert!(data[at..at + BLOCK].iter().all(|&x| x == 0xA0 + s as u8), "block {s}");
        }
    }

    #[test]
    fn offsets_carry_the_file_of_a_multi_file_job() {
        let dir = std::env::temp_dir();
        let (f0, f1) = (file_with(&dir, 4, 0x10), file_with(&dir, 4, 0x20));
        let (j0, j1) = (open_overlapped(&f0.0, true), open_overlapped(&f1.0, true));
        let mut b = Iocp::new(&config(raw(&j0), vec![raw(&j0), raw(&j1)], 2)).unwrap();
        let mut bufs = Bufs::new(3);
        let second = 1u64 << crate::io::files::FILE_SHIFT;
        b.queue(0, Op::Read, BLOCK as u64, bufs.ptr(0), BLOCK as u32, 0).unwrap();
        b.queue(1, Op::Read, second | BLOCK as u64, bufs.ptr(1), BLOCK as u32, 0).unwrap();
        reap_n(&mut b, 2);
        assert!(bufs.get(0) == &content(2 * BLOCK, 0x10)[BLOCK..]);
        assert!(bufs.get(1) == &content(2 * BLOCK, 0x20)[BLOCK..]);
        // A file index beyond the job's files is refused.
        assert!(b.queue(0, Op::Read, 2 * second, bufs.ptr(0), BLOCK as u32, 0).is_err());
    }

    /// The inline path (TRUE from ReadFile/WriteFile), which Wine never takes for a file: with
    /// the skip mode the completion is local and no packet comes; without it, the slot waits for
    /// its packet (posted here as the kernel would).
    #[test]
    fn inline_success_posts_a_packet_only_without_skip_mode() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 1, 0);
        let job = open_overlapped(&f.0, true);
        for skip in [true, false] {
            let mut b = Iocp::open(&config(raw(&job), Vec::new(), 2), skip).unwrap();
            if skip && !b.skip[0] {
                eprintln!("the OS refused FILE_SKIP_COMPLETION_PORT_ON_SUCCESS: inline path untested");
                continue;
            }
            // What the kernel leaves in a completed OVERLAPPED; the slot issued.
            let ov = b.ov(1);
            // SAFETY: the slot is free; the test plays the kernel.
            unsafe {
                (*ov).Internal = 0;
                (*ov).InternalHigh = 512;
            }
            b.slots[1] = Slot { state: State::Kernel, op: Op::Read };
            (b.in_kernel, b.data) = (1, 1);
            b.issued(1, 0, true, 0);
            if skip {
                assert!(b.ready() && !b.pending(), "completed inline, no packet awaited");
            } else {
                assert!(!b.ready() && b.pending(), "its packet is awaited");
                b.poll().unwrap();
                assert!(!b.ready(), "no packet yet");
                // SAFETY: a packet for our own OVERLAPPED on our own port.
                assert_ne!(unsafe { PostQueuedCompletionStatus(b.port, 512, 0, ov) }, 0);
                b.submit_and_wait(1, None).unwrap();
            }
            let mut got = Vec::new();
            b.reap(|s, c| got.push((s, c)));
            assert_eq!(got, [(1, Completion::Done(512))]);
            assert_eq!((b.in_kernel, b.data, b.slots[1].state), (0, 0, State::Free));
            // A failure at issue: local, whatever the mode.
            b.slots[0] = Slot { state: State::Kernel, op: Op::Write };
            (b.in_kernel, b.data) = (1, 1);
            b.issued(0, 0, false, ERROR_ACCESS_DENIED);
            assert!(b.ready() && !b.pending());
            got.clear();
            b.reap(|s, c| got.push((s, c)));
            assert_eq!(got, [(0, Completion::Failed(OsCode::from_raw(5)))]);
        }
    }

    #[test]
    fn statuses_become_completions() {
        assert_eq!(completion_of_status(0, 4096, Op::Read), Completion::Done(4096));
        assert_eq!(completion_of_status(STATUS_END_OF_FILE, 0, Op::Read), Completion::Done(0));
        let c = completion_of_status(STATUS_DISK_FULL, 0, Op::Write).error().unwrap();
        assert_eq!((c.raw(), c.class()), (112, IoErrorClass::NoSpace));
        let c = completion_of_status(STATUS_ACCESS_DENIED, 0, Op::Write).error().unwrap();
        assert_eq!((c.raw(), c.class()), (5, IoErrorClass::Permission));
        assert_eq!(completion_of_error(ERROR_HANDLE_EOF, Op::Write), Completion::Failed(OsCode::from_raw(38)));
        assert_eq!(millis(Duration::from_micros(1)), 1);
        assert_eq!(millis(Duration::from_millis(7)), 7);
        assert_eq!(millis(Duration::MAX), INFINITE - 1);
    }

    #[test]
    fn a_read_at_or_past_the_end_transfers_nothing() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 2, 0);
        let job = open_overlapped(&f.0, true);
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), 4)).unwrap();
        let mut bufs = Bufs::new(5);
        b.queue(0, Op::Read, 2 * BLOCK as u64, bufs.ptr(0), BLOCK as u32, 0).unwrap();
        b.queue(1, Op::Read, 100 * BLOCK as u64, bufs.ptr(1), BLOCK as u32, 0).unwrap();
        // Straddling the end: a short read.
        b.queue(2, Op::Read, BLOCK as u64 + 1024, bufs.ptr(2), BLOCK as u32, 0).unwrap();
        let mut got = reap_n(&mut b, 3);
        got.sort_by_key(|(s, _)| *s);
        assert_eq!(got, [(0, Completion::Done(0)), (1, Completion::Done(0)), (2, Completion::Done(3072))]);
    }

    #[test]
    fn a_write_through_a_read_only_handle_fails_as_permission() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 1, 0);
        // A job's handle that reads and lets nobody write: the worker's handle reads only.
        let job = OpenOptions::new()
            .read(true)
            .share_mode(FILE_SHARE_READ)
            .custom_flags(FILE_FLAG_OVERLAPPED)
            .open(&f.0)
            .unwrap();
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), 2)).unwrap();
        let mut bufs = Bufs::new(3);
        b.queue(0, Op::Write, 0, bufs.ptr(0), BLOCK as u32, 0).unwrap();
        b.queue(1, Op::Read, 0, bufs.ptr(1), BLOCK as u32, 0).unwrap();
        let mut got = reap_n(&mut b, 2);
        got.sort_by_key(|(s, _)| *s);
        assert_eq!(got[1], (1, Completion::Done(BLOCK as u32)), "reads still work");
        let code = got[0].1.error().unwrap_or_else(|| panic!("the write must fail: {got:?}"));
        assert_eq!((code.raw(), code.class()), (5, IoErrorClass::Permission), "{code:?}");
    }

    /// A write to a full file system fails as "no space". Needs a tiny file system on drive Q:
    /// (CI: a 256 KiB tmpfs linked as the Wine prefix's `dosdevices/q:`); skipped without it.
    #[test]
    fn a_write_to_a_full_disk_fails_as_no_space() {
        let dir = Path::new("Q:\\");
        if !dir.exists() {
            eprintln!("skipped: no drive Q: (a tiny file system) to fill");
            return;
        }
        let t = TempFile(temp_path(dir, "full"));
        File::create(&t.0).unwrap();
        let job = open_overlapped(&t.0, true);
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), 4)).unwrap();
        let mut bufs = Bufs::new(5);
        let mut off = 0u64;
        let mut failure = None;
        // 64 KiB per turn of four writes: a 256 KiB file system is full after a few turns.
        'fill: for _ in 0..1024 {
            for s in 0..4u32 {
                b.queue(s, Op::Write, off, bufs.ptr(s), BLOCK as u32, 0).unwrap();
                off += BLOCK as u64;
            }
            for (_, c) in reap_n(&mut b, 4) {
                if let Some(code) = c.error() {
                    failure = Some(code);
                } else if c != Completion::Done(BLOCK as u32) {
                    failure = failure.or(Some(OsCode::from_raw(-1)));
                }
            }
            if failure.is_some() {
                break 'fill;
            }
        }
        let code = failure.expect("a 256 KiB file system must fill up");
        assert!(matches!(code.raw(), 112 | 39), "ERROR_DISK_FULL or ERROR_HANDLE_DISK_FULL: {code:?}");
        assert_eq!(code.class(), IoErrorClass::NoSpace);
    }

    #[test]
    fn requests_beyond_the_depth_or_on_a_busy_slot_are_refused() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 8, 0);
        let job = open_overlapped(&f.0, true);
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), 2)).unwrap();
        let mut bufs = Bufs::new(3);
        b.queue(0, Op::Read, 0, bufs.ptr(0), BLOCK as u32, 0).unwrap();
        let busy = b.queue(0, Op::Read, BLOCK as u64, bufs.ptr(0), BLOCK as u32, 0).unwrap_err();
        assert_eq!(busy.raw_os_error(), Some(ERROR_INVALID_PARAMETER as i32));
        b.queue(1, Op::Read, BLOCK as u64, bufs.ptr(1), BLOCK as u32, 0).unwrap();
        // Slot 2 exists (the fsync's) but a third read would exceed the depth.
        assert!(b.queue(2, Op::Read, 2 * BLOCK as u64, bufs.ptr(2), BLOCK as u32, 0).is_err());
        assert!(b.queue(3, Op::Fsync, 0, std::ptr::null_mut(), 0, 0).is_err(), "no slot 3");
        b.queue(2, Op::Fsync, 0, std::ptr::null_mut(), 0, 0).unwrap();
        // Completed but not reaped: still busy, still counted.
        b.submit_and_wait(3, Some(Duration::from_secs(5))).unwrap();
        assert!(b.queue(0, Op::Read, 0, bufs.ptr(0), BLOCK as u32, 0).is_err());
        assert_eq!(reap_n(&mut b, 3).len(), 3);
        b.queue(0, Op::Read, 0, bufs.ptr(0), BLOCK as u32, 0).unwrap();
        assert_eq!(reap_n(&mut b, 1), [(0, Completion::Done(BLOCK as u32))]);
    }

    #[test]
    fn outstanding_never_exceeds_the_depth_over_random_reads() {
        const DEPTH: u32 = 4;
        const BLOCKS: u64 = 256;
        let dir = std::env::temp_dir();
        let f = file_with(&dir, BLOCKS as usize, 0x77);
        let job = open_overlapped(&f.0, true);
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), DEPTH)).unwrap();
        let mut bufs = Bufs::new(DEPTH as usize + 1);
        let mut free: Vec<u32> = (0..DEPTH).collect();
        let mut offsets = [0u64; DEPTH as usize];
        let (mut issued, mut completed, mut outstanding, mut max) = (0u32, 0u32, 0u32, 0u32);
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        while completed < 10_000 {
            while issued < 10_000 {
                let Some(s) = free.pop() else { break };
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                offsets[s as usize] = (rng % BLOCKS) * BLOCK as u64;
                b.queue(s, Op::Read, offsets[s as usize], bufs.ptr(s), BLOCK as u32, 0).unwrap();
                (issued, outstanding) = (issued + 1, outstanding + 1);
                max = max.max(outstanding);
            }
            // One more is always refused while every slot is out.
            if free.is_empty() {
                assert!(b.queue(DEPTH, Op::Read, 0, bufs.ptr(DEPTH), BLOCK as u32, 0).is_err());
            }
            b.submit_and_wait(1, Some(Duration::from_secs(5))).unwrap();
            let mut got = Vec::new();
            b.reap(|s, c| got.push((s, c)));
            for (s, c) in got {
                assert_eq!(c, Completion::Done(BLOCK as u32));
                let off = offsets[s as usize];
                assert_eq!(bufs.get(s)[..8], (off ^ 0x77).to_le_bytes(), "slot {s} holds offset {off}'s data");
                free.push(s);
                (completed, outstanding) = (completed + 1, outstanding - 1);
            }
        }
        assert_eq!((issued, completed, outstanding, b.data, b.in_kernel), (10_000, 10_000, 0, 0, 0));
        assert!(max <= DEPTH && max == DEPTH, "at most (and up to) the depth in flight: {max}");
    }

    #[test]
    fn dropping_with_io_in_flight_drains_it() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 64, 0);
        let job = open_overlapped(&f.0, true);
        let mut bufs = Bufs::new(17);
        for reap_some in [false, true] {
            let mut b = Iocp::new(&config(raw(&job), Vec::new(), 16)).unwrap();
            for s in 0..16u32 {
                b.queue(s, Op::Read, u64::from(s) * BLOCK as u64, bufs.ptr(s), BLOCK as u32, 0).unwrap();
            }
            if reap_some {
                b.poll().unwrap();
            }
            drop(b);
        }
        // The job's handle is untouched and still usable by the next worker.
        let mut b = Iocp::new(&config(raw(&job), Vec::new(), 1)).unwrap();
        b.queue(0, Op::Read, 0, bufs.ptr(0), BLOCK as u32, 0).unwrap();
        assert_eq!(reap_n(&mut b, 1), [(0, Completion::Done(BLOCK as u32))]);
    }

    #[test]
    fn two_workers_reopen_one_job_handle() {
        let dir = std::env::temp_dir();
        let f = file_with(&dir, 4, 0x33);
        let job = open_overlapped(&f.0, true);
        let cfg = config(raw(&job), Vec::new(), 2);
        let (mut a, mut b) = (Iocp::new(&cfg).unwrap(), Iocp::new(&cfg).unwrap());
        let (mut ba, mut bb) = (Bufs::new(3), Bufs::new(3));
        a.queue(0, Op::Read, 0, ba.ptr(0), BLOCK as u32, 0).unwrap();
        b.queue(0, Op::Read, BLOCK as u64, bb.ptr(0), BLOCK as u32, 0).unwrap();
        assert_eq!(reap_n(&mut a, 1), [(0, Completion::Done(BLOCK as u32))]);
        assert_eq!(reap_n(&mut b, 1), [(0, Completion::Done(BLOCK as u32))]);
        assert!(bb.get(0) == &content(2 * BLOCK, 0x33)[BLOCK..]);
    }
}
