//! [`run`] where there are no process groups, `poll(2)` or `waitid(2)` (Windows): std only.
//!
//! Two threads read stdout and stderr to their end (so neither pipe fills up and blocks the
//! child) into buffers this thread can take at any time; this thread looks at the child
//! (`try_wait`), the deadline and the stop flag, with naps that start at 1 ms and grow to
//! 50 ms. At the deadline or the stop flag the child is killed (`TerminateProcess`) and
//! reaped.
//!
//! Limits, against the Unix version: only the child itself is killed, not what it started
//! (smartctl starts nothing); and a pipe that something the child started still holds open
//! after the grace keeps its reader thread blocked until that process exits (the thread is
//! left behind, what it had read is used).

use super::outcome::{Finished, RunError, MAX_NAP, PIPE_GRACE};
use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What one reader thread has read so far, and whether it reached the end.
#[derive(Default)]
struct Shared {
    buf: Mutex<Vec<u8>>,
    done: AtomicBool,
}

/// One output pipe, read by a thread of its own.
struct Pipe {
    shared: Arc<Shared>,
}

impl Pipe {
    /// Starts reading `src` (a closed pipe when `None`).
    fn start<R: Read + Send + 'static>(src: Option<R>) -> Pipe {
        let shared = Arc::new(Shared::default());
        match src {
            None => shared.done.store(true, Ordering::SeqCst),
            Some(mut src) => {
                let s = Arc::clone(&shared);
                let spawned = std::thread::Builder::new().name("smartctl-pipe".into()).spawn(move || {
                    let mut chunk = [0u8; 16 * 1024];
                    loop {
                        match src.read(&mut chunk) {
                            Ok(0) => break,
                            Ok(n) => {
                                s.buf.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(&chunk[..n])
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(_) => break,
                        }
                    }
                    s.done.store(true, Ordering::SeqCst);
                });
                // Without a thread the pipe is not read: treat it as closed.
                if spawned.is_err() {
                    shared.done.store(true, Ordering::SeqCst);
                }
            }
        }
        Pipe { shared }
    }

    fn open(&self) -> bool {
        !self.shared.done.load(Ordering::SeqCst)
    }

    /// What was read (all of it once the pipe is closed).
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.shared.buf.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A started child; dropping it kills and reaps it.
struct Running {
    child: Child,
    reaped: bool,
}

impl Running {
    fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }

    /// Kill the child and reap it, for a run that ends without a result.
    fn abandon(&mut self, why: RunError) -> RunError {
        let _ = self.child.kill();
        let _ = self.reap();
        why
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Run `cmd` (stdin from the null device) for at most `timeout`, killing it early when
/// `stop` is raised (looked at every 50 ms at most).
pub fn run(mut cmd: Command, timeout: Duration, stop: Option<&AtomicBool>) -> Result<Finished, RunError> {
    let stopped = || stop.is_some_and(|s| s.load(Ordering::SeqCst));
    if stopped() {
        return Err(RunError::Interrupted);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let out = Pipe::start(child.stdout.take());
    let err = Pipe::start(child.stderr.take());
    let mut run = Running { child, reaped: false };
    // No deadline at all when start + timeout is past what Instant can hold.
    let deadline = start.checked_add(timeout);
    let left = |now: Instant, until: Option<Instant>| until.map_or(MAX_NAP, |d| d.saturating_duration_since(now));

    // Until the child exits: watch the deadline and the stop flag.
    let mut nap = Duration::from_millis(1);
    let (status, exited_at) = loop {
        if stopped() {
            return Err(run.abandon(RunError::Interrupted));
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Err(run.abandon(RunError::TimedOut));
        }
        match run.child.try_wait() {
            Ok(Some(status)) => {
                run.reaped = true;
                break (status, now);
            }
            Ok(None) => {}
            Err(e) => return Err(run.abandon(RunError::Io(e))),
        }
        std::thread::sleep(nap.min(left(now, deadline)));
        nap = (nap * 2).min(MAX_NAP);
    };

    // The child exited: its pipes close now unless something it started holds them.
    let grace_end = deadline.map_or(exited_at + PIPE_GRACE, |d| d.min(exited_at + PIPE_GRACE));
    let mut nap = Duration::from_millis(1);
    while out.open() || err.open() {
        if stopped() {
            return Err(RunError::Interrupted);
        }
        let now = Instant::now();
        if now >= grace_end {
            break;
        }
        std::thread::sleep(nap.min(grace_end - now));
        nap = (nap * 2).min(MAX_NAP);
    }
    Ok(Finished { stdout: out.take(), stderr: err.take(), status })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test binary, running only the test `name` (which is `#[ignore]`d, so a normal
    /// run skips it) with `DISKMETER_TEST_CHILD` set.
    fn child(name: &str) -> Command {
        let mut c = Command::new(std::env::current_exe().unwrap());
        c.args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"]).env("DISKMETER_TEST_CHILD", "1");
        c
    }

    #[test]
    #[ignore = "a child process of the tests below"]
    fn child_sleeps() {
        if std::env::var_os("DISKMETER_TEST_CHILD").is_some() {
            println!("child started");
            std::thread::sleep(Duration::from_secs(30));
        }
    }

    #[test]
    #[ignore = "a child process of the tests below"]
    fn child_prints() {
        if std::env::var_os("DISKMETER_TEST_CHILD").is_some() {
            println!("{{\"hello\":1}}");
            eprintln!("on stderr");
            std::process::exit(3);
        }
    }

    #[test]
    fn output_and_exit_code() {
        let f = run(child("process::portable::tests::child_prints"), Duration::from_secs(60), None).unwrap();
        assert!(String::from_utf8_lossy(&f.stdout).contains("{\"hello\":1}"), "{f:?}");
        assert!(String::from_utf8_lossy(&f.stderr).contains("on stderr"), "{f:?}");
        assert_eq!(f.status.code(), Some(3));
    }

    #[test]
    fn timeout_kills_the_child() {
        let t = Instant::now();
        let e = run(child("process::portable::tests::child_sleeps"), Duration::from_millis(1500), None).unwrap_err();
        assert!(matches!(e, RunError::TimedOut), "{e:?}");
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    }

    #[test]
    fn stop_flag() {
        let stop = AtomicBool::new(true);
        let e = run(child("process::portable::tests::child_prints"), Duration::from_secs(60), Some(&stop)).unwrap_err();
        assert!(matches!(e, RunError::Interrupted), "{e:?}");
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let raiser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            s.store(true, Ordering::SeqCst);
        });
        let e = run(child("process::portable::tests::child_sleeps"), Duration::from_secs(60), Some(&stop)).unwrap_err();
        raiser.join().unwrap();
        assert!(matches!(e, RunError::Interrupted), "{e:?}");
    }

    #[test]
    fn missing_program() {
        let e = run(Command::new("no-such-program-diskmeter"), Duration::from_secs(5), None).unwrap_err();
        assert!(matches!(e, RunError::Spawn(_)), "{e:?}");
    }
}
