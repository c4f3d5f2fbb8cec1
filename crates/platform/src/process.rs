//! Processes and their I/O: which processes exist, and for one its cumulative I/O counters and
//! what identifies it (command name, state, start time). Linux reads them from procfs
//! (`/proc/PID/io`, `/proc/PID/stat`) under the injectable [`Roots`]; elsewhere every call
//! answers [`ProcessError::Unsupported`].
//!
//! A process may exit between the listing and the read, and another user's process may not
//! be readable: the errors say which ([`ProcessError::Vanished`], [`ProcessError::Permission`]),
//! so that a sampler can skip the one and count the other.

use crate::block::Roots;

/// Cumulative I/O of one process, its exited threads included (`/proc/PID/io` on Linux).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Bytes passed to read-like calls (page-cache hits and terminals included).
    pub rchar: u64,
    /// Bytes passed to write-like calls.
    pub wchar: u64,
    /// Read-like calls.
    pub syscr: u64,
    /// Write-like calls.
    pub syscw: u64,
    /// Bytes the process caused to be fetched from storage.
    pub read_bytes: u64,
    /// Bytes the process dirtied for storage.
    pub write_bytes: u64,
    /// Dirtied bytes that never reached storage (the file was truncated or deleted first).
    pub cancelled_write_bytes: u64,
}

/// What identifies a process and where it stands (`/proc/PID/stat` on Linux).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The command name (at most 15 bytes on Linux; not the command line).
    pub comm: String,
    /// One letter: `R` running, `S` sleeping, `D` waiting uninterruptibly (usually for I/O),
    /// `Z` zombie, …
    pub state: char,
    /// Start time in clock ticks after boot: with the pid, it tells a reused pid from the
    /// process that had it before.
    pub start_ticks: u64,
    /// Clock ticks spent waiting for block I/O (delay accounting); `None` where the kernel
    /// does not report it.
    pub blkio_ticks: Option<u64>,
}

/// Why a process could not be listed or read.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// The process exited (or never existed).
    #[error("no such process")]
    Vanished,
    /// Not allowed (another user's process without root or CAP_SYS_PTRACE, ptrace rules).
    #[error("permission denied")]
    Permission,
    /// This OS keeps no such counters, or diskmeter cannot read them here yet.
    #[error("process counters are not available on this system")]
    Unsupported,
    /// The OS answered in a form not understood.
    #[error("{0}")]
    Malformed(String),
    /// Another error of the OS.
    #[error(transparent)]
    Os(#[from] std::io::Error),
}

/// The processes that exist now, in the order the OS lists them.
pub fn list(roots: &Roots) -> Result<Vec<u32>, ProcessError> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::process::list(roots)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = roots;
        Err(ProcessError::Unsupported)
    }
}

/// The cumulative I/O counters of process `pid`.
pub fn io(roots: &Roots, pid: u32) -> Result<IoCounters, ProcessError> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::process::io(roots, pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (roots, pid);
        Err(ProcessError::Unsupported)
    }
}

/// The command name, state and start time of process `pid`.
pub fn stat(roots: &Roots, pid: u32) -> Result<Stat, ProcessError> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::process::stat(roots, pid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (roots, pid);
        Err(ProcessError::Unsupported)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The calling process, read through the live OS.
    #[test]
    fn the_current_process() {
        let roots = Roots::default();
        let me = std::process::id();
        if cfg!(not(target_os = "linux")) {
            assert!(matches!(list(&roots), Err(ProcessError::Unsupported)));
            assert!(matches!(io(&roots, me), Err(ProcessError::Unsupported)));
            return;
        }
        assert!(list(&roots).unwrap().contains(&me));
        // A read of our own makes rchar and syscr move.
        let before = io(&roots, me).unwrap();
        let text = std::fs::read_to_string("/proc/self/comm").unwrap();
        let after = io(&roots, me).unwrap();
        assert!(after.rchar >= before.rchar + text.len() as u64, "{before:?} → {after:?}");
        assert!(after.syscr > before.syscr);
        let s = stat(&roots, me).unwrap();
        assert_eq!(s.comm, text.trim_end_matches('\n'));
        // The main thread (the pid's own) waits for the test threads, or runs.
        assert!(matches!(s.state, 'R' | 'S'), "{s:?}");
        assert!(s.start_ticks > 0 && s.blkio_ticks.is_some(), "{s:?}");
        // No process has the largest pid.
        assert!(matches!(io(&roots, i32::MAX as u32), Err(ProcessError::Vanished)));
        assert!(matches!(stat(&roots, i32::MAX as u32), Err(ProcessError::Vanished)));
    }
}
