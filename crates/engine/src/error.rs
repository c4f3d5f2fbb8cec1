use thiserror::Error;

/// Errors from the engine. `Invalid` and `Unsafe` are the user's to fix (exit 2,
/// nothing was written); `Io` is a runtime fault (exit 1).
#[derive(Debug, Error)]
pub enum EngineError {
    /// Bad input detected against the target (e.g. block size vs logical block size).
    #[error("{0}")]
    Invalid(String),
    /// Refused by the data-safety guard.
    #[error("{0}")]
    Unsafe(String),
    /// A runtime I/O fault.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl EngineError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }
    /// True when the user can fix this by changing the command (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Invalid(_) | Self::Unsafe(_))
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;
