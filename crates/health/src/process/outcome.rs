//! What [`run`](super::run) gives back, and the waits both of its versions (Unix, portable)
//! keep: shared by them, so neither reaches back into the other.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

/// How long the pipes may stay open after the direct child exited.
pub(super) const PIPE_GRACE: Duration = Duration::from_secs(1);
/// The longest wait between two looks at the stop flag and the child.
pub(super) const MAX_NAP: Duration = Duration::from_millis(50);

/// What a finished run printed and how it ended.
#[derive(Debug)]
pub struct Finished {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub status: ExitStatus,
}

/// Why a run produced no [`Finished`].
#[derive(Debug)]
pub enum RunError {
    /// The program could not be started.
    Spawn(io::Error),
    /// Waiting for it or reading its output failed (its group was killed).
    Io(io::Error),
    /// It did not finish within the timeout; its group was killed.
    TimedOut,
    /// The stop flag was raised; its group was killed (or it was never started).
    Interrupted,
}
