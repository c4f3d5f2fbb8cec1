//! The scan's block I/O: timed, fault-injectable `pread`/`pwrite` of whole blocks, and what an
//! error means for a scan.

use crate::target::fault::{Hook, Op};
use platform::IoErrorClass as C;
use std::fs::File;
use std::io;
use std::time::Instant;

pub struct Dev<'a> {
    pub file: &'a File,
    pub hook: &'a Hook,
    /// Logical block size: the unit of narrowing.
    pub lb: u64,
}

/// What an I/O error means for the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoClass {
    /// The medium failed at this place (EIO, ENODATA, EILSEQ, …): record and go on.
    Media,
    /// The device is gone (ENODEV, ENXIO): stop with partial results.
    Vanished,
    /// The request itself was wrong or the system is out of resources: stop.
    Fatal,
}

pub fn classify(e: &io::Error) -> IoClass {
    if e.raw_os_error().is_none() {
        return IoClass::Fatal;
    }
    match platform::classify(e) {
        C::Vanished => IoClass::Vanished,
        C::Invalid | C::Resources | C::Permission | C::ReadOnly => IoClass::Fatal,
        _ => IoClass::Media,
    }
}

/// `EIO`, `ENODATA`, … (or `errno N`).
pub fn errno_name(n: i32) -> String {
    platform::error::code_name(n)
}

/// An error's errno name, or its text when it has no OS code.
pub fn errno_text(e: &io::Error) -> String {
    e.raw_os_error().map(errno_name).unwrap_or_else(|| e.to_string())
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
            match platform::fs::read_at(self.file, &mut buf[done..], off + done as u64) {
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
            platform::fs::write_all_at(self.file, buf, off)
        };
        (r, t.elapsed().as_nanos() as u64)
    }

    /// Test builds only: write a corrupted copy (aligned for O_DIRECT).
    #[cold]
    fn write_corrupted(&self, off: u64, buf: &[u8]) -> io::Result<()> {
        let mut pool = crate::io::buffers::BufferPool::new(1, buf.len().max(4096), 4096)
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let copy = &mut pool.slot_mut(0)[..buf.len()];
        copy.copy_from_slice(buf);
        self.hook.corrupt(Op::Write, off, copy);
        platform::fs::write_all_at(self.file, copy, off)
    }
}
