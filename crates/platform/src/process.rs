//! Processes and their I/O: which processes exist, and for one its cumulative I/O counters and
//! what identifies it (command name, state, start time). Linux reads them from procfs
//! (`/proc/PID/io`, `/proc/PID/stat`) under the injectable [`Roots`]; elsewhere every call
//! answers [`ProcessError::Unsupported`].
//!
//! A process may exit between the listing and the read, and another user's process may not
//! be readable: the errors say which ([`ProcessError::Vanished`], [`ProcessError::Permission`]),
//! so that a sampler can skip the one and count the other.

use crate::block::Roots;

pub(crate) mod model;
pub use model::{IoCounters, ProcessError, Stat};

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

/// Raises this process's soft limit on open files to its hard limit (RLIMIT_NOFILE), best
/// effort: for runs that hold many files open at once. Nothing where the OS has no such limit.
pub fn raise_open_files_limit() {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
        let lim = getrlimit(Resource::Nofile);
        if lim.current < lim.maximum {
            let _ = setrlimit(Resource::Nofile, Rlimit { current: lim.maximum, ..lim });
        }
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
