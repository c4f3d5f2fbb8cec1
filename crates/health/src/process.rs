//! Running a helper program (smartctl) with a deadline.
//!
//! The child gets its own process group, stdout and stderr are read together with
//! `poll(2)` (so neither pipe fills up and blocks it), and the whole group is killed with
//! SIGKILL when the deadline passes or the stop flag is raised. A child that exits while
//! something it started still holds its stdout open gets a short grace for the pipes to
//! close; then the group is killed and what was read is used.
//!
//! The child's exit is noticed with `waitid(…, WNOWAIT)`, which leaves it a zombie until
//! the end: its pid, which is also the group id, cannot be reused while it is one, so the
//! group kill can never reach an unrelated process.
//!
//! That is Unix; elsewhere (Windows) [`run`] is [`portable`]'s: reader threads, `try_wait`,
//! and a kill of the child alone.

mod outcome;
#[cfg(not(unix))]
mod portable;
#[cfg(not(unix))]
pub use portable::run;

pub use outcome::{Finished, RunError};
#[cfg(unix)]
use outcome::{MAX_NAP, PIPE_GRACE};

#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::io::Read;
#[cfg(unix)]
use std::os::fd::AsRawFd;
#[cfg(unix)]
use std::os::unix::process::CommandExt;
#[cfg(unix)]
use std::process::ExitStatus;
#[cfg(unix)]
use std::process::{Child, Command, Stdio};
#[cfg(unix)]
use std::sync::atomic::{AtomicBool, Ordering};
#[cfg(unix)]
use std::time::Duration;
#[cfg(unix)]
use std::time::Instant;

#[cfg(unix)]
/// How long to collect what is left in the pipes once the group was killed.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(200);

/// A started child; dropping it kills its group and reaps it.
#[cfg(unix)]
struct Running {
    child: Child,
    pid: libc::pid_t,
    reaped: bool,
}

#[cfg(unix)]
impl Running {
    fn kill_group(&mut self) {
        // SAFETY: kill(2) takes plain integers. The group id is the child's pid, which is
        // still reserved (the child is alive or an unreaped zombie).
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
        // The child itself too, should it have left the group.
        let _ = self.child.kill();
    }

    fn reap(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait()?;
        self.reaped = true;
        Ok(status)
    }

    /// Whether the child has exited, leaving it unreaped.
    fn has_exited(&self) -> io::Result<bool> {
        loop {
            // SAFETY: an all-zero siginfo_t is a valid value (plain integers and unions).
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: `info` is a valid, writable siginfo_t; the pid is our own child.
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            if r == 0 {
                // SAFETY: waitid filled in `info` (si_pid stays 0 when nothing changed).
                return Ok(unsafe { info.si_pid() } != 0);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Kill the group and reap the child, for a run that ends without a result.
    fn abandon(&mut self, why: RunError) -> RunError {
        self.kill_group();
        let _ = self.reap();
        why
    }
}

#[cfg(unix)]
impl Drop for Running {
    fn drop(&mut self) {
        if !self.reaped {
            self.kill_group();
            let _ = self.child.wait();
        }
    }
}

/// One output pipe and what has been read from it.
#[cfg(unix)]
struct Pipe<R> {
    src: Option<R>,
    buf: Vec<u8>,
}

#[cfg(unix)]
impl<R: Read + AsRawFd> Pipe<R> {
    fn new(src: Option<R>) -> Self {
        Self { src, buf: Vec::new() }
    }

    fn open(&self) -> bool {
        self.src.is_some()
    }

    fn pollfd(&self) -> Option<libc::pollfd> {
        self.src.as_ref().map(|s| libc::pollfd { fd: s.as_raw_fd(), events: libc::POLLIN, revents: 0 })
    }

    /// One read after poll said the pipe is readable or hung up; closes it at EOF.
    fn read_once(&mut self) {
        let Some(src) = self.src.as_mut() else { return };
        let mut chunk = [0u8; 16 * 1024];
        match src.read(&mut chunk) {
            Ok(0) => self.src = None,
            Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.src = None,
        }
    }
}

/// Wait up to `wait` for output on the open pipes and read what came. Returns at once
/// when no pipe is open (after sleeping `wait`).
#[cfg(unix)]
fn pump<A: Read + AsRawFd, B: Read + AsRawFd>(a: &mut Pipe<A>, b: &mut Pipe<B>, wait: Duration) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> = [a.pollfd(), b.pollfd()].into_iter().flatten().collect();
    if fds.is_empty() {
        std::thread::sleep(wait);
        return Ok(());
    }
    // Round up, so a wait shorter than a millisecond does not spin.
    let ms = libc::c_int::try_from(wait.as_nanos().div_ceil(1_000_000)).unwrap_or(libc::c_int::MAX);
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
    }
    for fd in &fds {
        if fd.revents != 0 {
            if a.src.as_ref().is_some_and(|s| s.as_raw_fd() == fd.fd) {
                a.read_once();
            } else if b.src.as_ref().is_some_and(|s| s.as_raw_fd() == fd.fd) {
                b.read_once();
            }
        }
    }
    Ok(())
}

/// Run `cmd` (stdin from /dev/null, in its own process group) for at most `timeout`,
/// killing its group early when `stop` is raised (looked at every 50 ms at most).
#[cfg(unix)]
pub fn run(mut cmd: Command, timeout: Duration, stop: Option<&AtomicBool>) -> Result<Finished, RunError> {
    let stopped = || stop.is_some_and(|s| s.load(Ordering::SeqCst));
    if stopped() {
        return Err(RunError::Interrupted);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let start = Instant::now();
    // ETXTBSY: another thread of this process forked while the program file was open for
    // writing (a wrapper script just installed); the fd closes at that child's exec, so retry.
    let mut tries = 0;
    let mut child = loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(25));
            }
            r => break r.map_err(RunError::Spawn)?,
        }
    };
    let mut out = Pipe::new(child.stdout.take());
    let mut err = Pipe::new(child.stderr.take());
    let pid = libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX);
    let mut run = Running { child, pid, reaped: false };
    // No deadline at all when start + timeout is past what Instant can hold.
    let deadline = start.checked_add(timeout);
    let left = |now: Instant, until: Option<Instant>| until.map_or(MAX_NAP, |d| d.saturating_duration_since(now));

    // Until the direct child exits: read, and watch the deadline and the stop flag.
    let mut nap = Duration::from_millis(1);
    let exited_at = loop {
        if stopped() {
            return Err(run.abandon(RunError::Interrupted));
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Err(run.abandon(RunError::TimedOut));
        }
        match run.has_exited() {
            Ok(true) => break now,
            Ok(false) => {}
            Err(e) => return Err(run.abandon(RunError::Io(e))),
        }
        // Output wakes poll at once; the child's exit does not, so with both pipes
        // closed the naps start short and grow.
        let wait = if out.open() || err.open() { MAX_NAP } else { nap };
        nap = (nap * 2).min(MAX_NAP);
        if let Err(e) = pump(&mut out, &mut err, wait.min(left(now, deadline))) {
            return Err(run.abandon(RunError::Io(e)));
        }
    };

    // The child exited: its pipes close now unless something it started holds them.
    let grace_end = deadline.map_or(exited_at + PIPE_GRACE, |d| d.min(exited_at + PIPE_GRACE));
    while out.open() || err.open() {
        if stopped() {
            return Err(run.abandon(RunError::Interrupted));
        }
        let now = Instant::now();
        if now >= grace_end {
            run.kill_group();
            let drain_end = now + DRAIN_AFTER_KILL;
            while out.open() || err.open() {
                let now = Instant::now();
                if now >= drain_end {
                    break;
                }
                if pump(&mut out, &mut err, (drain_end - now).min(MAX_NAP)).is_err() {
                    break;
                }
            }
            break;
        }
        if let Err(e) = pump(&mut out, &mut err, (grace_end - now).min(MAX_NAP)) {
            return Err(run.abandon(RunError::Io(e)));
        }
    }
    let status = run.reap().map_err(RunError::Io)?;
    Ok(Finished { stdout: out.buf, stderr: err.buf, status })
}
