//! How a `cache` command ends: its result, why the result may cover only part of the trace,
//! and its errors. Both the commands (`session`) and the trace reader they share (`stream`)
//! produce these, so they sit below both.

use stats::CacheResult;

/// Errors of a `cache` command: bad input (exit 2) or a runtime fault reading files (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}

impl From<trace::TraceError> for SessionError {
    fn from(e: trace::TraceError) -> Self {
        match e {
            trace::TraceError::Io { .. } => SessionError::Runtime(e.to_string()),
            other => SessionError::Usage(other.to_string()),
        }
    }
}

impl From<trace::InputError> for SessionError {
    fn from(e: trace::InputError) -> Self {
        match e {
            trace::InputError::Usage(m) => SessionError::Usage(m),
            trace::InputError::Runtime(m) => SessionError::Runtime(m),
        }
    }
}

impl From<crate::config::ConfigError> for SessionError {
    fn from(e: crate::config::ConfigError) -> Self {
        SessionError::Usage(e.to_string())
    }
}

/// Why a `cache` command's results cover only part of the trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// The user (or a terminating signal) stopped the command.
    Interrupted,
    /// The trace failed partway (a truncated `.gz`, a corrupt line without `--skip-bad`): the
    /// message says where.
    Trace(String),
}

/// A `cache` command's result and, when it covers only part of the trace, why.
pub struct Outcome {
    pub result: CacheResult,
    pub cut: Option<Cut>,
}
