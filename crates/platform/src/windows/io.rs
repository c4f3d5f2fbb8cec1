//! Synchronous positional I/O and device controls on a handle that may have been opened with
//! `FILE_FLAG_OVERLAPPED` (every target is: the IOCP engine needs it).
//!
//! On such a handle every `ReadFile`, `WriteFile` and `DeviceIoControl` must carry an
//! `OVERLAPPED`, and may return `ERROR_IO_PENDING`; the call then waits for it with
//! `GetOverlappedResult(.., TRUE)` on an event. The event is one manual-reset event per thread,
//! made on the thread's first call and closed when the thread ends, so that a call allocates
//! nothing after the first. Its value is passed with the low bit set: Windows then posts no
//! completion packet even if the handle is associated with a completion port, so these calls
//! are safe on the IOCP engine's handles too. On a handle opened without the flag the same
//! calls complete at once, the `OVERLAPPED` carrying only the offset.

use std::cell::Cell;
use std::io;
use windows_sys::Win32::Foundation::{
    CloseHandle, GetLastError, ERROR_HANDLE_EOF, ERROR_IO_PENDING, FALSE, HANDLE, TRUE,
};
use windows_sys::Win32::Storage::FileSystem::{FlushFileBuffers, ReadFile, WriteFile};
use windows_sys::Win32::System::Threading::CreateEventW;
use windows_sys::Win32::System::IO::{DeviceIoControl, GetOverlappedResult, OVERLAPPED};

use super::handle;

/// This thread's event for waiting on its synchronous calls (0 until made).
struct ThreadEvent(Cell<usize>);

impl Drop for ThreadEvent {
    fn drop(&mut self) {
        let h = self.0.get();
        if h != 0 {
            // SAFETY: the event this thread made and alone used; no call of its is in flight
            // (the thread is ending).
            unsafe { CloseHandle(handle(h)) };
        }
    }
}

thread_local! {
    static EVENT: ThreadEvent = const { ThreadEvent(Cell::new(0)) };
}

/// This thread's event, made on first use.
fn thread_event() -> io::Result<HANDLE> {
    EVENT
        .try_with(|e| {
            if e.0.get() == 0 {
                // SAFETY: a new unnamed manual-reset event, initially not signalled, with the
                // default security; no pointers but the null ones.
                let h = unsafe { CreateEventW(std::ptr::null(), TRUE, FALSE, std::ptr::null()) };
                if h.is_null() {
                    return Err(io::Error::last_os_error());
                }
                e.0.set(h as usize);
            }
            Ok(handle(e.0.get()))
        })
        .map_err(|_| io::Error::other("the thread's I/O event is gone (thread ending)"))?
}

/// An `OVERLAPPED` for one call at `offset`, waiting on this thread's event.
fn overlapped(offset: u64) -> io::Result<OVERLAPPED> {
    let ev = thread_event()?;
    // SAFETY: OVERLAPPED is plain data; all-zero is its documented initial state.
    let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
    ov.Anonymous.Anonymous.Offset = offset as u32;
    ov.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
    // The low bit keeps the completion off any completion port the handle is associated with.
    ov.hEvent = (ev as usize | 1) as HANDLE;
    Ok(ov)
}

/// The end of a call begun with `ov`: its count, waiting if it is pending. `ok` is what the
/// call returned.
///
/// # Safety
///
/// `ov` is the call's `OVERLAPPED` and the call's buffers are still valid: on a pending call
/// this waits for it, so they stay valid until it completes.
unsafe fn finish(h: HANDLE, ok: i32, ov: &OVERLAPPED) -> io::Result<u32> {
    if ok == 0 {
        // SAFETY: reads this thread's last error; no arguments.
        let e = unsafe { GetLastError() };
        if e != ERROR_IO_PENDING {
            return Err(io::Error::from_raw_os_error(e as i32));
        }
    }
    let mut n = 0u32;
    // SAFETY: `ov` is the call's OVERLAPPED, alive across the wait; `n` is a local. With
    // bWait TRUE this returns only once the call is complete (at once if it already is).
    if unsafe { GetOverlappedResult(h, ov, &mut n, TRUE) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n)
}

/// [`crate::rawio::read_at`] on Windows: `ERROR_HANDLE_EOF` (at or past the end) is 0 bytes.
///
/// # Safety
///
/// `buf` is valid for writes of `len` bytes and not accessed elsewhere during the call; `t` is
/// an open handle.
pub unsafe fn read_at(t: usize, buf: *mut u8, len: u32, offset: u64) -> io::Result<u32> {
    let h = handle(t);
    let mut ov = overlapped(offset)?;
    // SAFETY: the caller's contract for `buf`/`len`/`t`; `ov` lives until `finish` has waited
    // for the call. No byte count pointer: it is read from the OVERLAPPED.
    let ok = unsafe { ReadFile(h, buf, len, std::ptr::null_mut(), &mut ov) };
    // SAFETY: `ov` is this call's and `buf` stays valid (the caller's contract) while it waits.
    match unsafe { finish(h, ok, &ov) } {
        Err(e) if e.raw_os_error() == Some(ERROR_HANDLE_EOF as i32) => Ok(0),
        r => r,
    }
}

/// [`crate::rawio::write_at`] on Windows.
///
/// # Safety
///
/// `buf` is valid for reads of `len` bytes and not written elsewhere during the call; `t` is
/// an open handle.
pub unsafe fn write_at(t: usize, buf: *const u8, len: u32, offset: u64) -> io::Result<u32> {
    let h = handle(t);
    let mut ov = overlapped(offset)?;
    // SAFETY: as in read_at, with `buf` only read.
    let ok = unsafe { WriteFile(h, buf, len, std::ptr::null_mut(), &mut ov) };
    // SAFETY: as in read_at.
    unsafe { finish(h, ok, &ov) }
}

/// [`crate::rawio::sync`] on Windows: `FlushFileBuffers`.
pub fn sync(t: usize) -> io::Result<()> {
    // SAFETY: a plain call on a handle value; no memory is passed.
    if unsafe { FlushFileBuffers(handle(t)) } == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// One `DeviceIoControl`, waited for: the bytes it returned in `out`. An error keeps the OS's
/// code (`ERROR_MORE_DATA`, `ERROR_NOT_SUPPORTED`, … — callers decide what each means).
///
/// # Safety
///
/// `inp` holds `in_len` readable bytes and `out` `out_len` writable ones (either may be null
/// with a length of 0), both laid out as `code` expects; `h` is an open handle.
pub(crate) unsafe fn ioctl(
    h: usize,
    code: u32,
    inp: *const core::ffi::c_void,
    in_len: u32,
    out: *mut core::ffi::c_void,
    out_len: u32,
) -> io::Result<u32> {
    let h = handle(h);
    let mut ov = overlapped(0)?;
    // SAFETY: the caller's contract for the buffers and the handle; `ov` lives until `finish`
    // has waited for the call.
    let ok = unsafe { DeviceIoControl(h, code, inp, in_len, out, out_len, std::ptr::null_mut(), &mut ov) };
    // SAFETY: `ov` is this call's; the buffers stay valid (the caller's contract) while it waits.
    unsafe { finish(h, ok, &ov) }
}

/// [`ioctl`] with a typed input and output.
///
/// # Safety
///
/// `I` and `O` are plain data laid out as `code` expects (or `()` for none); `h` is open.
pub(crate) unsafe fn ioctl_typed<I, O>(h: usize, code: u32, inp: Option<&I>, out: &mut O) -> io::Result<u32> {
    let (ip, il) = match inp {
        Some(i) => ((i as *const I).cast(), std::mem::size_of::<I>() as u32),
        None => (std::ptr::null(), 0),
    };
    let ol = std::mem::size_of::<O>() as u32;
    let op = if ol == 0 { std::ptr::null_mut() } else { (out as *mut O).cast() };
    // SAFETY: both buffers are live references of the sizes given; the caller vouches for their
    // layout and the handle.
    unsafe { ioctl(h, code, ip, il, op, ol) }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::target::{OpenHow, TargetOps};
    use windows_sys::Win32::Foundation::{INVALID_HANDLE_VALUE, WAIT_TIMEOUT};
    use windows_sys::Win32::System::IO::{CreateIoCompletionPort, GetQueuedCompletionStatus};

    /// On a handle associated with a completion port, these calls post nothing to the port
    /// (the event's low bit), so the IOCP engine never sees a completion it did not issue.
    #[test]
    fn no_completion_reaches_an_associated_port() {
        let dir = tempfile::tempdir().unwrap();
        let f = super::super::target::Windows::open(
            &dir.path().join("p"),
            OpenHow { write: true, create: true, ..OpenHow::default() },
        )
        .unwrap();
        let t = super::super::target::Windows::handle(&f);
        // SAFETY: a new port for the open handle `t`; the port is closed below.
        let port = unsafe { CreateIoCompletionPort(handle(t), std::ptr::null_mut(), 7, 1) };
        assert!(!port.is_null() && port != INVALID_HANDLE_VALUE);
        let data = [5u8; 4096];
        // SAFETY: `data` outlives the call; `t` is open.
        assert_eq!(unsafe { write_at(t, data.as_ptr(), 4096, 0) }.unwrap(), 4096);
        let mut back = [0u8; 4096];
        // SAFETY: as above.
        assert_eq!(unsafe { read_at(t, back.as_mut_ptr(), 4096, 0) }.unwrap(), 4096);
        assert_eq!(back, data);
        let (mut n, mut key, mut ov) = (0u32, 0usize, std::ptr::null_mut());
        // SAFETY: polls the port without waiting; the outputs are locals.
        let got = unsafe { GetQueuedCompletionStatus(port, &mut n, &mut key, &mut ov, 0) };
        // SAFETY: reads this thread's last error.
        let err = unsafe { GetLastError() };
        assert!(got == 0 && ov.is_null() && err == WAIT_TIMEOUT, "a completion was posted (key {key}, error {err})");
        // SAFETY: closes the port made above, once.
        unsafe { CloseHandle(port) };
    }
}
