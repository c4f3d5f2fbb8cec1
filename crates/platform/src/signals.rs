//! Stop requests from the OS as one flag: a command stops the way Ctrl-C stops it (workers
//! finish their batch, partial results are printed, test files and temporary outputs are
//! removed, exit 130), whatever asked.
//!
//! - Linux: every terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, …) through
//!   `signal-hook`. Only SIGKILL cannot be handled; a kill -9 may leave a hidden
//!   `.NAME.*.diskmeter-tmp`.
//! - Windows: the console's control events through `SetConsoleCtrlHandler`
//!   ([`crate::windows::console`]): Ctrl-C, Ctrl-Break, the console window closing, log-off
//!   and shut-down. Windows ends the process about 5 s after a close, log-off or shut-down
//!   event is delivered, so clean-up then is best effort; `taskkill /F` (like kill -9) cannot
//!   be handled.
//! - Elsewhere: nothing is installed; the flag is never raised.
//!
//! [`describe`] words a [`Stop`] for messages ("interrupted (Ctrl-C)", "terminated
//! (SIGTERM)", …).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub(crate) mod stop;
pub use stop::Stop;

impl Stop {
    /// Ctrl-C (SIGINT on Unix, `CTRL_C_EVENT` on Windows): what to name a stop whose cause
    /// was not recorded.
    #[cfg(unix)]
    pub const INTERRUPT: Stop = Stop { code: 2, name: "SIGINT" };
    /// Ctrl-C (SIGINT on Unix, `CTRL_C_EVENT` on Windows): what to name a stop whose cause
    /// was not recorded.
    #[cfg(windows)]
    pub const INTERRUPT: Stop = Stop { code: 0, name: "CTRL_C_EVENT" };
    /// Ctrl-C (SIGINT on Unix, `CTRL_C_EVENT` on Windows): what to name a stop whose cause
    /// was not recorded.
    #[cfg(not(any(unix, windows)))]
    pub const INTERRUPT: Stop = Stop { code: 0, name: "an interrupt" };

    /// The stop this OS means by `code`.
    pub fn from_code(code: i32) -> Stop {
        Stop { code, name: imp::name(code) }
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&describe(*self))
    }
}

/// Installs the handlers (once) and returns the stop flag they raise. A repeated request
/// only raises the flag again: leaving from the handler would skip the clean-up.
pub fn install() -> Arc<AtomicBool> {
    imp::install()
}

/// The last stop request received, if any.
pub fn received() -> Option<Stop> {
    imp::received().map(Stop::from_code)
}

/// How a stop ended the command, for messages: "interrupted (Ctrl-C)", "terminated
/// (SIGTERM)", "the console closed", …
pub fn describe(stop: Stop) -> String {
    imp::describe(stop)
}

#[cfg(target_os = "linux")]
mod imp {
    use super::stop::Stop;
    use signal_hook::consts::signal::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Arc, OnceLock};

    /// The signals whose default action ends the process (less SIGPIPE, which Rust ignores so
    /// a closed stdout is an error, and the faults SIGSEGV/SIGBUS/SIGILL/SIGFPE, which cannot
    /// be handled safely).
    const TERMINATING: &[i32] = &[
        SIGINT,
        SIGTERM,
        SIGHUP,
        SIGQUIT,
        SIGUSR1,
        SIGUSR2,
        SIGALRM,
        SIGVTALRM,
        SIGPROF,
        SIGXCPU,
        SIGXFSZ,
        libc::SIGPWR,
    ];

    struct Handlers {
        stop: Arc<AtomicBool>,
        last: Arc<AtomicUsize>,
    }

    static HANDLERS: OnceLock<Handlers> = OnceLock::new();

    pub(super) fn install() -> Arc<AtomicBool> {
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

    pub(super) fn received() -> Option<i32> {
        let n = HANDLERS.get()?.last.load(Ordering::SeqCst);
        (n != 0).then_some(n as i32)
    }

    pub(super) fn describe(stop: Stop) -> String {
        match stop.code {
            SIGINT => "interrupted (Ctrl-C)".into(),
            SIGTERM => "terminated (SIGTERM)".into(),
            SIGHUP => "hung up (SIGHUP: the terminal closed)".into(),
            SIGQUIT => "quit (SIGQUIT)".into(),
            SIGXCPU => "stopped at the CPU time limit (SIGXCPU)".into(),
            SIGXFSZ => "stopped at the file size limit (SIGXFSZ)".into(),
            other => format!("stopped by signal {other} ({})", stop.name),
        }
    }

    pub(super) fn name(sig: i32) -> &'static str {
        match sig {
            SIGINT => "SIGINT",
            SIGTERM => "SIGTERM",
            SIGHUP => "SIGHUP",
            SIGQUIT => "SIGQUIT",
            SIGXCPU => "SIGXCPU",
            SIGXFSZ => "SIGXFSZ",
            SIGUSR1 => "SIGUSR1",
            SIGUSR2 => "SIGUSR2",
            SIGALRM => "SIGALRM",
            SIGVTALRM => "SIGVTALRM",
            SIGPROF => "SIGPROF",
            libc::SIGPWR => "SIGPWR",
            _ => "a terminating signal",
        }
    }
}

#[cfg(windows)]
mod imp {
    pub(super) use crate::windows::console::{describe, install, name, received};
}

#[cfg(not(any(target_os = "linux", windows)))]
mod imp {
    use super::stop::Stop;
    use std::sync::atomic::AtomicBool;
    use std::sync::{Arc, OnceLock};

    static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

    pub(super) fn install() -> Arc<AtomicBool> {
        STOP.get_or_init(|| Arc::new(AtomicBool::new(false))).clone()
    }

    pub(super) fn received() -> Option<i32> {
        None
    }

    pub(super) fn describe(stop: Stop) -> String {
        format!("stopped ({})", stop.name)
    }

    pub(super) fn name(_code: i32) -> &'static str {
        "an interrupt"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_descriptions_name_the_signal() {
        use signal_hook::consts::signal::*;
        let d = |s| describe(Stop::from_code(s));
        assert_eq!(d(SIGTERM), "terminated (SIGTERM)");
        assert_eq!(d(SIGINT), "interrupted (Ctrl-C)");
        assert_eq!(d(SIGHUP), "hung up (SIGHUP: the terminal closed)");
        assert_eq!(d(SIGQUIT), "quit (SIGQUIT)");
        assert_eq!(d(SIGXCPU), "stopped at the CPU time limit (SIGXCPU)");
        assert_eq!(d(SIGXFSZ), "stopped at the file size limit (SIGXFSZ)");
        assert_eq!(d(SIGUSR1), format!("stopped by signal {SIGUSR1} (SIGUSR1)"));
        assert_eq!(d(libc::SIGPWR), format!("stopped by signal {} (SIGPWR)", libc::SIGPWR));
        assert_eq!(d(64), "stopped by signal 64 (a terminating signal)");
        assert_eq!(Stop::INTERRUPT, Stop::from_code(SIGINT));
    }

    #[test]
    fn the_default_stop_is_ctrl_c() {
        if cfg!(any(target_os = "linux", windows)) {
            assert_eq!(describe(Stop::INTERRUPT), "interrupted (Ctrl-C)");
            assert_eq!(Stop::INTERRUPT.to_string(), "interrupted (Ctrl-C)");
        }
    }

    #[test]
    fn install_returns_one_flag() {
        let a = install();
        let b = install();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
