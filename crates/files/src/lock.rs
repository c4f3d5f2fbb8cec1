//! An exclusive lock on a test file or device for the length of a run, so two diskmeter runs
//! never measure each other silently. The lock is an advisory `flock`, released when the file
//! closes (also when the process dies).

use crate::path::shown;
use crate::FileError;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What to do when another process holds the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenBusy {
    /// Wait for it (telling the user once), until it is released or the run is stopped.
    #[default]
    Wait,
    /// Refuse at once (a usage error, exit 2).
    Refuse,
}

/// How taking the lock ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// Held at once.
    Now,
    /// Held after waiting for another process to release it.
    AfterWaiting,
    /// The run was stopped while waiting: not held.
    Stopped,
}

/// Takes an exclusive lock on `file` (opened from `path`). `on_wait` is called once, with a
/// description of the holder, before waiting.
pub fn lock_exclusive(
    file: &File,
    path: &Path,
    when_busy: WhenBusy,
    stop: &AtomicBool,
    on_wait: &mut dyn FnMut(&str),
) -> Result<Locked, FileError> {
    let mut waited = false;
    loop {
        match platform::lock::try_lock_exclusive(file) {
            Ok(true) => return Ok(if waited { Locked::AfterWaiting } else { Locked::Now }),
            Ok(false) => {}
            Err(e) => {
                return Err(FileError::Runtime(format!("cannot lock {}: {e}", shown(path))));
            }
        }
        let (pid, holder) = platform::lock::holder(file).unwrap_or((0, "another process".into()));
        if pid == std::process::id() {
            // Waiting for ourselves would never end: the same target under two names.
            return Err(FileError::Usage(format!(
                "{} is already in use by this same run (the same file or device named twice, perhaps through \
                 a link); name each target once",
                shown(path)
            )));
        }
        if when_busy == WhenBusy::Refuse {
            return Err(FileError::Usage(format!(
                "{} is in use by {holder}, and measuring alongside it would give wrong figures; wait for it to \
                 finish (drop --no-wait to wait automatically) or choose another target",
                shown(path)
            )));
        }
        if !waited {
            on_wait(&format!("{} is in use by {holder}; waiting for it to finish (Ctrl-C to stop)", shown(path)));
            waited = true;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(Locked::Stopped);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_waits_or_is_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("t");
        std::fs::write(&p, b"x").expect("write");
        let a = File::open(&p).expect("open");
        let b = File::open(&p).expect("open");
        let stop = AtomicBool::new(false);
        assert_eq!(lock_exclusive(&a, &p, WhenBusy::Wait, &stop, &mut |_| {}).expect("a"), Locked::Now);
        // Held by this same process: waiting would never end.
        match lock_exclusive(&b, &p, WhenBusy::Wait, &stop, &mut |_| {}) {
            Err(FileError::Usage(m)) => assert!(m.contains("this same run"), "{m}"),
            other => panic!("{other:?}"),
        }
        drop(a);
        // Held by another process (flock(1) from util-linux, where present).
        let Ok(mut holder) = std::process::Command::new("flock").arg(&p).args(["sleep", "0.8"]).spawn() else {
            eprintln!("note: flock(1) missing; the cross-process part of this test is skipped");
            return;
        };
        std::thread::sleep(Duration::from_millis(300));
        match lock_exclusive(&b, &p, WhenBusy::Refuse, &stop, &mut |_| {}) {
            Err(FileError::Usage(m)) => assert!(m.contains("in use by") && m.contains("pid"), "{m}"),
            other => panic!("{other:?}"),
        }
        stop.store(true, Ordering::Relaxed);
        let mut told = String::new();
        assert_eq!(
            lock_exclusive(&b, &p, WhenBusy::Wait, &stop, &mut |m| told = m.into()).expect("b"),
            Locked::Stopped
        );
        assert!(told.contains("waiting"), "{told}");
        stop.store(false, Ordering::Relaxed);
        assert_eq!(lock_exclusive(&b, &p, WhenBusy::Wait, &stop, &mut |_| {}).expect("b"), Locked::AfterWaiting);
        let _ = holder.wait();
    }
}
