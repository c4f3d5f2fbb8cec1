//! Purge (SNIA PTS): return a test range to its fresh state before preconditioning — a
//! secure discard, else a discard, of a block device's range; punch-hole and re-reserve of a
//! file's. The caller has passed the data-safety guard (the target is open for writing).

use crate::target::OpenTarget;
use platform::target::{Discard, Native, TargetOps};
use std::sync::atomic::{AtomicBool, Ordering};

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
        for (method, how) in [("secure-discard", Discard::Secure), ("discard", Discard::Plain)] {
            match ranges(t, from, len, how, stop) {
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
    let h = Native::handle(&t.file);
    if let Err(e) = Native::punch_hole(h, from, len) {
        return none(format!(
            "no purge possible: the file system of {name} cannot punch holes ({e}); the figures start from its \
             current state"
        ));
    }
    // Re-create: reserve the range again (unwritten extents), so ENOSPC cannot come mid-run.
    let again = if Native::reserve(h, from, len).is_ok() { " and reserved again" } else { "" };
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

/// Discard the range `how` says in pieces; the bytes done, or the first error.
fn ranges(t: &OpenTarget, from: u64, len: u64, how: Discard, stop: &AtomicBool) -> std::io::Result<u64> {
    let h = Native::handle(&t.file);
    let mut done = 0;
    while done < len {
        if stop.load(Ordering::Relaxed) {
            return Ok(done);
        }
        let n = (len - done).min(PIECE);
        Native::discard(h, how, from + done, n)?;
        done += n;
    }
    Ok(done)
}
