//! The stop request itself, shared by the facade ([`super`]) and each OS's handler (including
//! `windows::console`), so a handler never reaches back into the facade that installs it.

/// What stopped us, in OS-neutral form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    /// The OS's number for it: the signal number on Unix, the console control event
    /// (`CTRL_C_EVENT` = 0, …) on Windows.
    pub code: i32,
    /// Its name: "SIGTERM", "CTRL_BREAK_EVENT"; "a terminating signal" when unknown.
    pub name: &'static str,
}
