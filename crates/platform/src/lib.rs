//! diskmeter's one seam to the operating system. Every other crate above the engine's
//! backends asks this one: what a block device is and what sits under it, the kernel's disk
//! counters, processes and their I/O counters, file locks and owner markers, memory and CPU
//! facts, what an OS error means ([`error::IoErrorClass`], [`error::OsCode`]), and the engine's
//! operations on a test target ([`target::TargetOps`]: open for direct I/O, size, alignment,
//! discard, punch hole, reserve).
//!
//! Per OS one module, as fio keeps `os/` and bottom its per-OS collectors: [`linux`], and
//! `windows` (the Win32 API through `windows-sys`: [`target::TargetOps`] with overlapped
//! `CreateFileW` handles, `VirtualAlloc` memory, the OS and Wine versions, the facts of a
//! physical drive). Where a facade has no Windows branch yet, Windows shares the portable
//! fallbacks in [`other`] (std only) with the remaining OSes, which keep the crates above
//! compiling and safe — a lock through std's file locks, no owner marker (so diskmeter treats
//! its own files as foreign and only reads them), facts unknown. [`target::TargetOps`] has no
//! fallback: only the engine uses it, and the engine builds for Linux and Windows. Two modules
//! serve every OS alike: [`rawio`], one positional read or write on a raw handle, and
//! [`winpath`], Windows's device and drive names as plain strings (tested everywhere).

pub mod block;
pub mod clock;
pub mod cpu;
pub mod diag;
pub mod diskstats;
pub mod error;
pub mod fs;
pub mod host;
pub mod identity;
pub mod lock;
pub mod mark;
pub mod mem;
pub mod mounts;
pub mod netlink;
pub mod process;
pub mod rawio;
pub mod signals;
mod sysfile;
pub mod target;
pub mod threads;

#[cfg(target_os = "linux")]
pub mod linux;
#[cfg(not(target_os = "linux"))]
pub mod other;
#[cfg(windows)]
pub mod windows;
pub mod winpath;

pub use error::{classify, IoErrorClass, OsCode};
