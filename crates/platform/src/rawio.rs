//! One synchronous positional read or write on a target's raw handle ([`crate::target::Raw`]),
//! and its flush: the portable thread engine and the probes use these where the I/O engine's
//! queues are not wanted. Linux: `pread(2)`, `pwrite(2)`, `fsync(2)`. Windows: `ReadFile` and
//! `WriteFile` with the offset in an `OVERLAPPED`, which works on handles opened with or
//! without `FILE_FLAG_OVERLAPPED` ([`crate::windows::io`]), and `FlushFileBuffers`.
//!
//! # The buffer contract
//!
//! The functions take the buffer as a pointer and a length, as the engines hold their aligned
//! buffers. The caller promises that `buf` is valid for `len` bytes (for writes into it in
//! [`read_at`], for reads from it in [`write_at`]) for the whole call, that nothing else
//! touches those bytes meanwhile, and that `t` is an open handle for the whole call. For direct
//! I/O (`O_DIRECT`, `FILE_FLAG_NO_BUFFERING`) the buffer, `len` and `offset` must also meet the
//! target's alignment ([`crate::target::DirectAlign`]); the OS refuses them otherwise.
//!
//! A short count is not an error: it is what the OS did (end of file for a read).

use crate::target::Raw;
use std::io;

/// Reads up to `len` bytes at `offset` of `t` into `buf`; the bytes read, 0 at or past the end
/// of the file. Interrupted calls are retried.
///
/// # Safety
///
/// As the module says: `buf` is valid for writes of `len` bytes and not accessed elsewhere
/// during the call; `t` is an open handle.
#[inline]
pub unsafe fn read_at(t: Raw, buf: *mut u8, len: u32, offset: u64) -> io::Result<u32> {
    #[cfg(unix)]
    {
        let off = libc::off_t::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        loop {
            // SAFETY: the caller's contract: `buf` holds `len` writable bytes; `t` is open.
            let r = unsafe { libc::pread(t, buf.cast(), len as usize, off) };
            if r >= 0 {
                return Ok(r as u32);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    #[cfg(windows)]
    {
        // SAFETY: the caller's contract, passed on unchanged.
        unsafe { crate::windows::io::read_at(t, buf, len, offset) }
    }
}

/// Writes up to `len` bytes of `buf` at `offset` of `t`; the bytes written. Interrupted calls
/// are retried.
///
/// # Safety
///
/// As the module says: `buf` is valid for reads of `len` bytes and not written elsewhere
/// during the call; `t` is an open handle.
#[inline]
pub unsafe fn write_at(t: Raw, buf: *const u8, len: u32, offset: u64) -> io::Result<u32> {
    #[cfg(unix)]
    {
        let off = libc::off_t::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        loop {
            // SAFETY: the caller's contract: `buf` holds `len` readable bytes; `t` is open.
            let r = unsafe { libc::pwrite(t, buf.cast(), len as usize, off) };
            if r >= 0 {
                return Ok(r as u32);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    #[cfg(windows)]
    {
        // SAFETY: the caller's contract, passed on unchanged.
        unsafe { crate::windows::io::write_at(t, buf, len, offset) }
    }
}

/// Makes what was written to `t` durable: its data and the metadata needed to read it back
/// (`fsync(2)`; Windows `FlushFileBuffers`). `t` must be an open handle; a stale one gives an
/// error (or, if its value was reused, flushes another file: harmless).
pub fn sync(t: Raw) -> io::Result<()> {
    #[cfg(unix)]
    {
        loop {
            // SAFETY: a plain syscall on a descriptor value; no memory is passed.
            if unsafe { libc::fsync(t) } == 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    #[cfg(windows)]
    {
        crate::windows::io::sync(t)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Through `File`s std opened (synchronous handles on Windows; the overlapped case is in
    /// `windows::target`'s tests).
    #[test]
    fn positional_reads_and_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        let f = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).unwrap();
        let t = raw(&f);
        let data: Vec<u8> = (0..8192u32).map(|i| i as u8).collect();
        // SAFETY: `data` outlives the call; `f` is open.
        let n = unsafe { write_at(t, data.as_ptr(), 8192, 4096) }.unwrap();
        assert_eq!(n, 8192);
        sync(t).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 12288);
        let mut back = vec![0u8; 8192];
        // SAFETY: as above.
        let n = unsafe { read_at(t, back.as_mut_ptr(), 8192, 4096) }.unwrap();
        assert_eq!(n, 8192);
        assert_eq!(back, data);
        // A read across the end is short, at the end it gives 0.
        // SAFETY: as above.
        assert_eq!(unsafe { read_at(t, back.as_mut_ptr(), 8192, 8192) }.unwrap(), 4096);
        // SAFETY: as above.
        assert_eq!(unsafe { read_at(t, back.as_mut_ptr(), 8192, 12288) }.unwrap(), 0);
        // SAFETY: as above.
        assert_eq!(unsafe { read_at(t, back.as_mut_ptr(), 8192, 1 << 40) }.unwrap(), 0);
        // The hole before the write reads as zeros.
        // SAFETY: as above.
        assert_eq!(unsafe { read_at(t, back.as_mut_ptr(), 4096, 0) }.unwrap(), 4096);
        assert!(back[..4096].iter().all(|&b| b == 0));
    }

    fn raw(f: &std::fs::File) -> Raw {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            f.as_raw_fd()
        }
        #[cfg(windows)]
        {
            use std::os::windows::io::AsRawHandle;
            f.as_raw_handle() as usize
        }
    }
}
