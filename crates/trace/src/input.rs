//! Opening a trace the way every command that reads one does: the file given on the command
//! line, its format (given or detected) and the reading options (device filter, time window,
//! `--skip-bad`). `cache`, `replay` and `profile` all start here, so that a trace is refused
//! with the same words whichever command reads it.

use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::format::TraceFormat;
use crate::reader::ReadOptions;

/// Which trace and how to read it.
#[derive(Debug, Clone)]
pub struct TraceInput {
    pub path: PathBuf,
    /// `None`: detect from the file.
    pub format: Option<TraceFormat>,
    pub opts: ReadOptions,
}

/// Why a trace cannot be read: the user's input is wrong (exit 2) or reading the file failed
/// (exit 1). The commands map the two onto their own exit codes.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}

impl From<TraceError> for InputError {
    fn from(e: TraceError) -> Self {
        match e {
            TraceError::Io { .. } => InputError::Runtime(e.to_string()),
            other => InputError::Usage(other.to_string()),
        }
    }
}

/// The trace's format: as given, or detected; a missing, irregular or unknown file is bad input.
pub fn trace_format(input: &TraceInput) -> Result<TraceFormat, InputError> {
    files::input::check_regular(&input.path, "--trace").map_err(|e| InputError::Usage(e.to_string()))?;
    match &input.format {
        Some(f) => Ok(f.clone()),
        None => crate::detect::detect_file(&input.path)?.ok_or_else(|| {
            InputError::Usage(format!(
                "cannot tell the format of {}; give --format blkparse|fio|msr|alibaba|tencent|csv:MAPPING|binary",
                input.path.display()
            ))
        }),
    }
}

/// A reader error before the first request means the file is not that trace at all (bad input);
/// one after it means the trace is cut short.
pub fn from_the_start(path: &Path, e: TraceError) -> InputError {
    InputError::Usage(format!("{} is not a readable trace: {e}; check the file and --format", path.display()))
}
