use thiserror::Error;

/// A problem with user input. Messages name the option and say how to fix it.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SpecError {
    /// A value given for an option is invalid: `option`, then the message.
    #[error("invalid value for {option}: {message}")]
    Value { option: String, message: String },
    /// A job file problem, located at file:line.
    #[error("{file}:{line}: {message}")]
    JobFile { file: String, line: usize, message: String },
}

impl SpecError {
    pub fn value(option: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Value { option: option.into(), message: message.into() }
    }
}
