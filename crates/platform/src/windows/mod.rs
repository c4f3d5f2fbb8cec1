//! Windows: the Win32 API through `windows-sys`. One module per concern, as [`crate::linux`]:
//!
//! - [`target`]: [`crate::target::TargetOps`] (`CreateFileW` with `FILE_FLAG_OVERLAPPED` and
//!   `FILE_FLAG_NO_BUFFERING`, sizes, alignment, sparse and compression checks);
//! - [`io`]: synchronous positional reads and writes on a target's handle (the portable thread
//!   engine and the probes);
//! - [`mem`]: memory facts and `VirtualAlloc` regions;
//! - [`host`]: the OS version and Wine;
//! - [`volume`]: what a physical drive holds (the guard's facts);
//! - [`console`]: Ctrl-C, Ctrl-Break and the console's close as a stop flag.
//!
//! A handle crosses the seam as its value (`usize`): `Copy`, `Send`, and the same width as
//! Linux's descriptors' role.

pub mod console;
pub mod diskperf;
pub mod errno;
pub mod host;
pub mod io;
pub mod mem;
pub mod target;
pub mod volume;

/// A `HANDLE` from its value.
#[inline]
pub(crate) fn handle(h: usize) -> windows_sys::Win32::Foundation::HANDLE {
    h as windows_sys::Win32::Foundation::HANDLE
}
