//! Errors of the health crate: each message names the option or input and the fix.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum HealthError {
    /// Bad input (exit 2): a malformed option value, a device that does not exist.
    #[error("{0}")]
    Usage(String),
    /// smartctl is missing, too old, or did not answer (exit 1).
    #[error("{0}")]
    Smartctl(String),
    /// Any other runtime fault: sysfs unreadable, state file not writable (exit 1).
    #[error("{0}")]
    Runtime(String),
}

impl HealthError {
    pub fn is_usage(&self) -> bool {
        matches!(self, HealthError::Usage(_))
    }

    pub(crate) fn usage(option: &str, msg: impl std::fmt::Display) -> Self {
        HealthError::Usage(format!("invalid value for {option}: {msg}"))
    }
}
