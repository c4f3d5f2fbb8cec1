use thiserror::Error;

/// A file rule was broken (`Usage`: the user can fix the command, exit 2, nothing written) or
/// the file system failed (`Runtime`: exit 1).
#[derive(Debug, Error)]
pub enum FileError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}

impl FileError {
    /// True when changing the command fixes it (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Usage(_))
    }
}
