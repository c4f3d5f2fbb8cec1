use std::path::PathBuf;

/// Everything that can go wrong reading, writing or generating a trace.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened, read, decompressed or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file concerned (`<memory>` for in-memory readers).
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a text trace is malformed. `line` is 1-based; `message` says which field was
    /// wrong and how, e.g. `offset "12x" is not a number`.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line number in the (decompressed) file.
        line: u64,
        /// What was wrong.
        message: String,
    },
    /// A binary trace is corrupt, truncated or of an unsupported version.
    #[error("binary trace: {0}")]
    Binary(String),
    /// A format name, CSV mapping, distribution or synthetic-trace parameter is invalid; the
    /// message names the setting and the accepted values.
    #[error("{0}")]
    Invalid(String),
}

impl TraceError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TraceError::Io { path: path.into(), source }
    }
}
