//! Every stop request from the OS stops a command the way Ctrl-C does: workers finish their
//! batch, partial results are printed, test files and temporary outputs are removed, exit 130.
//! The OS part (terminating signals on Linux, console control events on Windows) is
//! `platform::signals`; this module names the stop in results.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use platform::signals::Stop;

/// Installs the handlers (once) and returns the stop flag they raise. A repeated signal only
/// raises the flag again: leaving from the handler would skip the clean-up.
pub fn install() -> Arc<AtomicBool> {
    platform::signals::install()
}

/// The last stop request received, if any.
pub fn received() -> Option<Stop> {
    platform::signals::received()
}

/// How a stop ended the command, for messages: "interrupted (Ctrl-C)", "terminated (SIGTERM)", …
pub fn describe(stop: Stop) -> String {
    platform::signals::describe(stop)
}

/// Names the stop in an interrupted result: its error message and its `partial` warning.
pub fn name_in(doc: &mut stats::ResultDoc) {
    let what = describe(received().unwrap_or(Stop::INTERRUPT));
    if let Some(e) = doc.error.as_mut().filter(|e| e.kind == "interrupted") {
        e.message = format!("{what}: the results cover only the part before it");
        for w in doc.warnings.iter_mut().filter(|w| w.code == stats::codes::PARTIAL) {
            w.message = format!("{what}: figures cover only the part before it");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_name_the_signal() {
        assert!(describe(Stop::INTERRUPT).contains("Ctrl-C"));
        #[cfg(target_os = "linux")]
        {
            let d = |sig| describe(Stop::from_code(sig));
            assert_eq!(d(libc::SIGTERM), "terminated (SIGTERM)");
            assert!(d(libc::SIGINT).contains("Ctrl-C"));
            assert!(d(libc::SIGUSR1).contains("SIGUSR1"));
            assert!(!d(libc::SIGTERM).contains("Ctrl-C"));
        }
    }
}
