//! Purge (SNIA PTS): return a test range to its fresh state before preconditioning — a
//! secure discard, else a discard, of a block device's range; punch-hole and re-reserve of a
//! file's. The caller has passed the data-safety guard (the target is open for writing).

use crate::target::OpenTarget;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::io::backend::BLKDISCARD;

/// `BLKSECDISCARD` (`_IO(0x12, 125)`).
const BLKSECDISCARD: libc::c_ulong = (0x12 << 8) | 125;

/// Discards go down in pieces of this size, so that a signal is seen between them.
const PIECE: u64 = 1 << 30;

/// What a purge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeOutcome {
    /// `secure-discard`, `discard`, `punch-hole` or `none`.
    pub method: &'static str,
    pub done: bool,
    pub bytes: u64,
    pub message: String,
}

/// Purge `[from, from + len)` of `t` (rounded to its logical block). Never fails: what could
/// not be done is said in the outcome.
pub fn purge(t: &OpenTarget, from: u64, len: u64, stop: &AtomicBool) -> PurgeOutcome {
    let lb = u64::from(t.probe.logical_block.max(512));
    let from = from.div_ceil(lb) * lb;
    let len = len / lb * lb;
    let name = t.path.display();
    if len == 0 {
        return none(format!("nothing to purge: the test range of {name} is empty"));
    }
    if t.probe.kind == crate::target::probe::TargetKind::Block {
        let mut first_err = None;
        for (method, req) in [("secure-discard", BLKSECDISCARD), ("discard", BLKDISCARD)] {
            match ranges(t, from, len, req, stop) {
                Ok(done) if done == len => {
                    return PurgeOutcome {
                        method,
                        done: true,
                        bytes: len,
                        message: format!(
                            "{} {} of {name} ({})",
                            if method == "discard" { "discarded" } else { "securely discarded" },
                            spec::units::format_size(len),
                            if method == "discard" && first_err.is_some() {
                                "BLKDISCARD; the device refused a secure discard"
                            } else if method == "discard" {
                                "BLKDISCARD"
                            } else {
                                "BLKSECDISCARD"
                            }
                        ),
                    };
                }
                Ok(done) => {
                    return PurgeOutcome {
                        method,
                        done: false,
                        bytes: done,
                        message: format!("purge of {name} interrupted after {}", spec::units::format_size(done)),
                    }
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        let e = first_err.map(|e| e.to_string()).unwrap_or_default();
        return none(format!(
            "no purge possible: {name} accepts neither a secure discard nor a discard ({e}); the figures start from \
             its current state"
        ));
    }
    let fd = t.file.as_raw_fd();
    // SAFETY: valid fd; deallocates the range, keeping the file's size.
    let r = unsafe {
        libc::fallocate(
            fd,
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            from as libc::off_t,
            len as libc::off_t,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return none(format!(
            "no purge possible: the file system of {name} cannot punch holes ({e}); the figures start from its \
             current state"
        ));
    }
    // Re-create: reserve the range again (unwritten extents), so ENOSPC cannot come mid-run.
    // SAFETY: valid fd.
    let r = unsafe { libc::fallocate(fd, 0, from as libc::off_t, len as libc::off_t) };
    let again = if r == 0 { " and reserved again" } else { "" };
    PurgeOutcome {
        method: "punch-hole",
        done: true,
        bytes: len,
        message: format!("deallocated {} of {name} (punch-hole){again}", spec::units::format_size(len)),
    }
}

fn none(message: String) -> PurgeOutcome {
    PurgeOutcome { method: "none", done: false, bytes: 0, message }
}

/// Issue `req` over the range in pieces; the bytes done, or the first error.
fn ranges(t: &OpenTarget, from: u64, len: u64, req: libc::c_ulong, stop: &AtomicBool) -> std::io::Result<u64> {
    let fd = t.file.as_raw_fd();
    let mut done = 0;
    while done < len {
        if stop.load(Ordering::Relaxed) {
            return Ok(done);
        }
        let n = (len - done).min(PIECE);
        let range: [u64; 2] = [from + done, n];
        // SAFETY: valid fd and a 16-byte range argument, as the ioctl expects.
        let r = unsafe { libc::ioctl(fd, req, range.as_ptr()) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        done += n;
    }
    Ok(done)
}
