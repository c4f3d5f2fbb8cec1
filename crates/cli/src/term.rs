//! What reaches the terminal: text without control characters, and one error line with its
//! exit code.

use std::io::Write;
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

/// Writes `text` to stdout. A closed pipe (`| head`) is not an error; any other failure is a
/// runtime fault.
pub fn print_stdout(text: &str) -> Result<(), app::Error> {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(app::Error::runtime(format!("cannot write to stdout: {e}")));
        }
    }
    Ok(())
}
