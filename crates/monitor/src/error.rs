//! The crate's error, in a module of its own: every layer returns it, and the crate root
//! re-exports those layers.

/// Errors: usage errors (bad options or input files, exit 2) and runtime faults (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MonitorError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}
