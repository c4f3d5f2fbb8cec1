//! The warnings that rest on what diskmeter remembers about a device ([`super::state`]):
//! `not-preconditioned` and `inside-write-cache`. Below the commands that give them (`mark`,
//! `run`, `steady --sustained`), so that each reads them from one place.

use super::state;
use engine::measure::OpenTarget;
use spec::units;
use stats::{codes, ResultDoc};

/// `mark`/`run`: the `not-preconditioned` and `inside-write-cache` warnings, and what this
/// run teaches the device state (a fill that covered a purged range). `area` is the region
/// the jobs used; `writes` whether any job wrote.
pub(crate) fn device_state_checks(doc: &mut ResultDoc, t: Option<&OpenTarget>, writes: bool, area: u64) {
    let Some(t) = t else { return };
    let rec = state::load(t);
    if writes {
        if t.found_blank {
            doc.warn(
                codes::NOT_PRECONDITIONED,
                format!(
                    "{} read as blank before this run filled it (every sampled block was zeros: new, or discarded \
                     since it was last written), so it has been written whole only once: the write figures may be \
                     fresh-out-of-box figures; `diskmeter steady` preconditions it (PTS: written twice)",
                    t.path.display()
                ),
            );
        } else if let Some(r) =
            rec.as_ref().filter(|r| r.purged_at.is_some() && r.full_writes < state::FULL_WRITES_NEEDED)
        {
            doc.warn(
                codes::NOT_PRECONDITIONED,
                format!(
                    "{} was purged ({}) by `diskmeter steady` and has been written whole {} time(s) since (PTS \
                     preconditioning: {}): the write figures may be fresh-out-of-box figures",
                    t.path.display(),
                    r.purge_method.as_deref().unwrap_or("purge"),
                    r.full_writes,
                    state::FULL_WRITES_NEEDED
                ),
            );
        }
        if let Some(c) = rec.as_ref().and_then(|r| r.cliff_bytes) {
            if doc.sustained.is_none() {
                inside_cache_warning(doc, area, c, "an earlier --sustained run found on this device");
            }
        }
    }
    if t.filled_to > 0 {
        state::record_full_write(t, t.filled_to);
    }
}

/// A `mark` whose test area is smaller than a write cache found on this device: its write
/// figures are the cache's.
fn inside_cache_warning(doc: &mut ResultDoc, area: u64, cliff: u64, how: &str) {
    if area < cliff {
        doc.warn(
            codes::INSIDE_WRITE_CACHE,
            format!(
                "the test area ({}) is smaller than the write cache {how} ({} written before the write cliff): the \
                 write figures are the cache's; use --size of at least {} for figures past it",
                units::format_size(area),
                units::format_size(cliff),
                units::format_size(cliff.saturating_mul(2))
            ),
        );
    }
}
