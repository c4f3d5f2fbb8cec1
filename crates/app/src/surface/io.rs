//! Timed, fault-injectable `pread`/`pwrite` of whole blocks.

use engine::target::fault::{Hook, Op};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::time::Instant;

pub(super) struct Dev<'a> {
    pub file: &'a File,
    pub hook: &'a Hook,
    /// Logical block size: the unit of narrowing.
    pub lb: u64,
}

/// What an I/O error means for the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IoClass {
    /// The medium failed at this place (EIO, ENODATA, EILSEQ, …): record and go on.
    Media,
    /// The device is gone (ENODEV, ENXIO): stop with partial results.
    Vanished,
    /// The request itself was wrong or the system is out of resources: stop.
    Fatal,
}

pub(super) fn classify(e: &io::Error) -> IoClass {
    match e.raw_os_error() {
        Some(libc::ENODEV) | Some(libc::ENXIO) => IoClass::Vanished,
        Some(libc::EINVAL) | Some(libc::EFAULT) | Some(libc::EBADF) | Some(libc::ENOMEM) | Some(libc::EPERM)
        | Some(libc::EACCES) | Some(libc::EROFS) => IoClass::Fatal,
        Some(_) => IoClass::Media,
        None => IoClass::Fatal,
    }
}

/// `EIO`, `ENODATA`, … (or `errno N`).
pub(crate) fn errno_name(n: i32) -> String {
    let s = match n {
        libc::EIO => "EIO",
        libc::ENODATA => "ENODATA",
        libc::EILSEQ => "EILSEQ",
        libc::EBADMSG => "EBADMSG",
        libc::EREMOTEIO => "EREMOTEIO",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOSPC => "ENOSPC",
        libc::ENODEV => "ENODEV",
        libc::ENXIO => "ENXIO",
        libc::ENOLINK => "ENOLINK",
        libc::EPROTO => "EPROTO",
        libc::EAGAIN => "EAGAIN",
        _ => return format!("errno {n}"),
    };
    s.to_string()
}

impl Dev<'_> {
    /// Read `buf.len()` bytes at `off` (fewer only at the end of a file). Returns the bytes
    /// read and the latency in ns (injected delays included).
    pub fn read(&self, off: u64, buf: &mut [u8]) -> (io::Result<usize>, u64) {
        let t = Instant::now();
        if let Some(e) = self.hook.before(Op::Read, off, buf.len() as u64) {
            return (Err(e), t.elapsed().as_nanos() as u64);
        }
        let mut done = 0;
        let r = loop {
            if done == buf.len() {
                break Ok(done);
            }
            match self.file.read_at(&mut buf[done..], off + done as u64) {
                Ok(0) => break Ok(done),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let ns = t.elapsed().as_nanos() as u64;
        if r.is_ok() {
            self.hook.corrupt(Op::Read, off, &mut buf[..done]);
        }
        (r, ns)
    }

    /// Write all of `buf` at `off`. Returns the latency in ns.
    pub fn write(&self, off: u64, buf: &[u8]) -> (io::Result<()>, u64) {
        let t = Instant::now();
        if let Some(e) = self.hook.before(Op::Write, off, buf.len() as u64) {
            return (Err(e), t.elapsed().as_nanos() as u64);
        }
        let r = if self.hook.corrupts_write(off, buf.len() as u64) {
            self.write_corrupted(off, buf)
        } else {
            self.file.write_all_at(buf, off)
        };
        (r, t.elapsed().as_nanos() as u64)
    }

    /// Test builds only: write a corrupted copy (aligned for O_DIRECT).
    #[cold]
    fn write_corrupted(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        let mut pool = engine::io::buffers::BufferPool::new(1, buf.len().max(4096), 4096)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        let copy = &mut pool.slot_mut(0)[..buf.len()];
        copy.copy_from_slice(buf);
        self.hook.corrupt(Op::Write, off, copy);
        self.file.write_all_at(copy, off)
    }
}
