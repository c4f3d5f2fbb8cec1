use thiserror::Error;

/// A problem with user input. Messages name the option and say how to fix it.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SpecError {
    /// A value given for an option is invalid: `option`, then the message.
    #[error("invalid value for {option}: {message}")]
    Value { option: String, message: String },
    /// A job file problem, located at file:line.
    #[error("{}: {message}", location(file, *line))]
    JobFile { file: String, line: usize, message: String },
}

/// `file:line`, or just `file` for problems with the whole file (line 0).
fn location(file: &str, line: usize) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

impl SpecError {
    pub fn value(option: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Value { option: option.into(), message: message.into() }
    }
}
