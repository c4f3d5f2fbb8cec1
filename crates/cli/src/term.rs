//! What reaches the terminal: text without control characters, and one error line with its
//! exit code.

use std::process::ExitCode;

/// Replace control characters so file names cannot drive the terminal.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_control() && c != '\n' { '?' } else { c }).collect()
}

/// One error line on stderr and the exit code of the error's kind.
pub fn fail(e: &app::Error) -> ExitCode {
    eprintln!("error: {}", sanitize(e.message()));
    ExitCode::from(e.exit_code())
}
