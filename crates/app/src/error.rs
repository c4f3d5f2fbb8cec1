//! One error type for every command, and the exit code it means.

use crate::{engine_words, spec_words};
use engine::EngineError;
use spec::validate::{FieldError, ValidationError};
use spec::SpecError;

/// Why a command failed. The exit code follows from the kind (README, "Exit codes").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Bad input the user fixes by changing the command: one line, exit 2, nothing written.
    Usage(String),
    /// A runtime fault before any result could be made: exit 1.
    Runtime(String),
    /// Stopped by Ctrl-C or another terminating signal before any result: exit 130.
    Interrupted(String),
}

impl Error {
    pub fn usage(m: impl Into<String>) -> Self {
        Self::Usage(m.into())
    }
    pub fn runtime(m: impl Into<String>) -> Self {
        Self::Runtime(m.into())
    }
    /// The process exit code: 2 bad input, 1 runtime fault, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Runtime(_) => 1,
            Self::Interrupted(_) => 130,
        }
    }
    pub fn message(&self) -> &str {
        match self {
            Self::Usage(m) | Self::Runtime(m) | Self::Interrupted(m) => m,
        }
    }
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::Usage(_))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

/// Bad input; a failed job check ([`SpecError::Invalid`]) in the command line's words.
impl From<SpecError> for Error {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Invalid(v) => v.into(),
            e => Self::Usage(e.to_string()),
        }
    }
}

/// A job that fails `spec::validate::validate_job`: bad input, its field named by its flag.
impl From<FieldError> for Error {
    fn from(e: FieldError) -> Self {
        Self::Usage(spec_words::field_error(&e))
    }
}

/// A plan that fails `spec::validate::validate_plan`: bad input, in the command line's words.
impl From<ValidationError> for Error {
    fn from(e: ValidationError) -> Self {
        Self::Usage(spec_words::validation_error(&e))
    }
}

/// The engine's error, in the command line's words ([`engine_words`]): bad input or a refusal
/// of the safety guard exits 2, a fault 1.
impl From<EngineError> for Error {
    fn from(e: EngineError) -> Self {
        let message = engine_words::message(&e);
        if e.is_usage() {
            Self::Usage(message)
        } else {
            Self::Runtime(message)
        }
    }
}

impl From<files::FileError> for Error {
    fn from(e: files::FileError) -> Self {
        match e {
            files::FileError::Usage(m) => Self::Usage(m),
            files::FileError::Runtime(m) => Self::Runtime(m),
        }
    }
}

impl From<trace::InputError> for Error {
    fn from(e: trace::InputError) -> Self {
        match e {
            trace::InputError::Usage(m) => Self::Usage(m),
            trace::InputError::Runtime(m) => Self::Runtime(m),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(Error::usage("x").exit_code(), 2);
        assert_eq!(Error::runtime("x").exit_code(), 1);
        assert_eq!(Error::Interrupted("x".into()).exit_code(), 130);
        assert_eq!(Error::from(SpecError::Value { option: "--qd".into(), message: "bad".into() }).exit_code(), 2);
    }
}
