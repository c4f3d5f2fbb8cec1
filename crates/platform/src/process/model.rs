//! What the process facts are, shared by the facade ([`super`]) and each OS's reader (`linux::process`), so
//! that a reader never reaches back into the facade that calls it.

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
