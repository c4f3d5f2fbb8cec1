//! The console's control events as a stop flag ([`crate::signals`] on Windows):
//! `SetConsoleCtrlHandler` with a handler that records the event, raises the flag and
//! returns `TRUE`, so the process is not ended and the main thread cleans up.
//!
//! The handler runs on a thread the system starts for it. For Ctrl-C and Ctrl-Break the
//! process lives on after it returns. For the console's close, log-off and shut-down it does
//! not: Windows ends the process as soon as the handler returns, and in any case about 5 s
//! after the event (log-off and shut-down give console processes the same few seconds). So
//! for those the handler waits up to [`CLOSE_GRACE`] for the main thread to finish its
//! clean-up and exit (the process ends then, the handler thread with it); clean-up that takes
//! longer is cut short, as by kill -9 on Linux.

use crate::signals::stop::Stop;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
};

/// How long the handler holds a close, log-off or shut-down event while the main thread
/// cleans up: under the 5 s after which Windows ends the process anyway.
pub const CLOSE_GRACE: Duration = Duration::from_millis(4500);

/// The flag the handler raises.
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();
/// The last event handled, plus one (0: none yet).
static LAST: AtomicU32 = AtomicU32::new(0);

const TRUE: BOOL = 1;
const FALSE: BOOL = 0;

/// Whether `event` ends the process once the handler returns.
fn ends_the_process(event: u32) -> bool {
    matches!(event, CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT)
}

/// Records `event` and raises the flag; `false` for an event that is not a stop request.
fn handle(event: u32) -> bool {
    if !matches!(event, CTRL_C_EVENT | CTRL_BREAK_EVENT) && !ends_the_process(event) {
        return false;
    }
    // The event first, so whoever sees the flag also finds it.
    LAST.store(event.saturating_add(1), Ordering::SeqCst);
    if let Some(stop) = STOP.get() {
        stop.store(true, Ordering::SeqCst);
    }
    true
}

/// The handler `SetConsoleCtrlHandler` calls, on a thread of its own.
unsafe extern "system" fn on_event(event: u32) -> BOOL {
    if !handle(event) {
        // Not ours: the next handler (or the default one) decides.
        return FALSE;
    }
    if ends_the_process(event) {
        // Returning ends the process now: give the main thread its clean-up time first. The
        // process usually exits during the wait (the main thread finished).
        let start = Instant::now();
        while start.elapsed() < CLOSE_GRACE {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    TRUE
}

/// Installs the handler (once) and returns the stop flag it raises. A repeated event only
/// raises the flag again.
pub fn install() -> Arc<AtomicBool> {
    let mut first = false;
    let stop = STOP
        .get_or_init(|| {
            first = true;
            Arc::new(AtomicBool::new(false))
        })
        .clone();
    if first {
        // SAFETY: `on_event` has the PHANDLER_ROUTINE signature and lives as long as the
        // process (a plain function); it only touches atomics and sleeps.
        let _ = unsafe { SetConsoleCtrlHandler(Some(on_event), TRUE) };
    }
    stop
}

/// The last console event handled (`CTRL_C_EVENT` = 0, …), if any.
pub fn received() -> Option<i32> {
    let n = LAST.load(Ordering::SeqCst);
    n.checked_sub(1).and_then(|e| i32::try_from(e).ok())
}

/// A console event's name: "CTRL_C_EVENT", …; "a console event" when unknown.
pub fn name(event: i32) -> &'static str {
    match u32::try_from(event) {
        Ok(CTRL_C_EVENT) => "CTRL_C_EVENT",
        Ok(CTRL_BREAK_EVENT) => "CTRL_BREAK_EVENT",
        Ok(CTRL_CLOSE_EVENT) => "CTRL_CLOSE_EVENT",
        Ok(CTRL_LOGOFF_EVENT) => "CTRL_LOGOFF_EVENT",
        Ok(CTRL_SHUTDOWN_EVENT) => "CTRL_SHUTDOWN_EVENT",
        _ => "a console event",
    }
}

/// How a console event ended the command, for messages.
pub fn describe(stop: Stop) -> String {
    match u32::try_from(stop.code) {
        Ok(CTRL_C_EVENT) => "interrupted (Ctrl-C)".into(),
        Ok(CTRL_BREAK_EVENT) => "interrupted (Ctrl-Break)".into(),
        Ok(CTRL_CLOSE_EVENT) => "the console closed".into(),
        Ok(CTRL_LOGOFF_EVENT) => "the user logged off".into(),
        Ok(CTRL_SHUTDOWN_EVENT) => "the system is shutting down".into(),
        _ => format!("stopped by console event {} ({})", stop.code, stop.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_and_described() {
        let d = |e: u32| describe(Stop::from_code(e as i32));
        assert_eq!(d(CTRL_C_EVENT), "interrupted (Ctrl-C)");
        assert_eq!(d(CTRL_BREAK_EVENT), "interrupted (Ctrl-Break)");
        assert_eq!(d(CTRL_CLOSE_EVENT), "the console closed");
        assert_eq!(d(CTRL_LOGOFF_EVENT), "the user logged off");
        assert_eq!(d(CTRL_SHUTDOWN_EVENT), "the system is shutting down");
        assert_eq!(d(9), "stopped by console event 9 (a console event)");
        assert_eq!(name(CTRL_BREAK_EVENT as i32), "CTRL_BREAK_EVENT");
    }

    #[test]
    fn the_handler_raises_the_flag_and_records_the_event() {
        let stop = install();
        // An unknown event is not ours.
        assert!(!handle(3));
        // SAFETY: a direct call of the handler with a Ctrl-Break event: it only touches
        // atomics (and returns at once for this event).
        assert_eq!(unsafe { on_event(CTRL_BREAK_EVENT) }, TRUE);
        assert!(stop.load(Ordering::SeqCst));
        assert_eq!(received(), Some(CTRL_BREAK_EVENT as i32));
        assert_eq!(crate::signals::received().map(|s| s.name), Some("CTRL_BREAK_EVENT"));
        assert!(ends_the_process(CTRL_CLOSE_EVENT) && !ends_the_process(CTRL_C_EVENT));
    }
}
