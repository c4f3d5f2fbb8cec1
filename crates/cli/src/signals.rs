//! Every terminating signal stops a command the way Ctrl-C does: workers finish their batch,
//! partial results are printed, test files and temporary outputs are removed, exit 130.
//! (Only SIGKILL cannot be handled; a kill -9 may leave a hidden `.NAME.*.diskmeter-tmp`.)

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::signal::*;

/// The signals whose default action ends the process (less SIGPIPE, which Rust ignores so a
/// closed stdout is an error, and the faults SIGSEGV/SIGBUS/SIGILL/SIGFPE, which cannot be
/// handled safely).
const TERMINATING: &[i32] =
    &[SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, libc::SIGPWR];

struct Handlers {
    stop: Arc<AtomicBool>,
    last: Arc<AtomicUsize>,
}

static HANDLERS: OnceLock<Handlers> = OnceLock::new();

/// Installs the handlers (once) and returns the stop flag they raise. A repeated signal only
/// raises the flag again: leaving from the handler would skip the clean-up.
pub fn install() -> Arc<AtomicBool> {
    let h = HANDLERS.get_or_init(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let last = Arc::new(AtomicUsize::new(0));
        for &sig in TERMINATING {
            // The signal's number first, so whoever sees the flag also finds the number.
            let _ = signal_hook::flag::register_usize(sig, last.clone(), sig as usize);
            let _ = signal_hook::flag::register(sig, stop.clone());
        }
        Handlers { stop, last }
    });
    h.stop.clone()
}

/// The last terminating signal received, if any.
pub fn received() -> Option<i32> {
    let n = HANDLERS.get()?.last.load(Ordering::SeqCst);
    (n != 0).then_some(n as i32)
}

/// How a signal ended the command, for messages: "interrupted (Ctrl-C)", "terminated (SIGTERM)", …
pub fn describe(sig: i32) -> String {
    match sig {
        SIGINT => "interrupted (Ctrl-C)".into(),
        SIGTERM => "terminated (SIGTERM)".into(),
        SIGHUP => "hung up (SIGHUP: the terminal closed)".into(),
        SIGQUIT => "quit (SIGQUIT)".into(),
        SIGXCPU => "stopped at the CPU time limit (SIGXCPU)".into(),
        SIGXFSZ => "stopped at the file size limit (SIGXFSZ)".into(),
        other => format!("stopped by signal {other} ({})", name(other)),
    }
}

fn name(sig: i32) -> &'static str {
    match sig {
        SIGUSR1 => "SIGUSR1",
        SIGUSR2 => "SIGUSR2",
        SIGALRM => "SIGALRM",
        SIGVTALRM => "SIGVTALRM",
        SIGPROF => "SIGPROF",
        libc::SIGPWR => "SIGPWR",
        _ => "a terminating signal",
    }
}

/// Names the signal in an interrupted result: its error message and its `partial` warning.
pub fn name_in(doc: &mut stats::ResultDoc) {
    let what = describe(received().unwrap_or(SIGINT));
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
        assert_eq!(describe(SIGTERM), "terminated (SIGTERM)");
        assert!(describe(SIGINT).contains("Ctrl-C"));
        assert!(describe(SIGUSR1).contains("SIGUSR1"));
        assert!(!describe(SIGTERM).contains("Ctrl-C"));
    }
}
