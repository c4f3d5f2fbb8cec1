//! What a line parser returns: the request a line states, or why it has none.

use crate::request::Op;

/// One request as a line states it.
#[derive(Debug)]
pub(crate) struct Rec<'a> {
    /// Absolute time in ns, in the trace's own epoch (rebased by the reader).
    pub t_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub op: Op,
    /// Device name as the trace spells it.
    pub dev: &'a [u8],
    /// The device latency the line records for this request, in ns (MSR's ResponseTime);
    /// `None` when the line has none (blkparse pairs its requests in the reader instead).
    pub lat_ns: Option<u64>,
}

/// A blkparse event that is not a request of the kept action but tells what became of one:
/// the reader uses it to pair requests with their completions (see `crate::pair`).
#[derive(Debug)]
pub(crate) struct Event<'a> {
    pub kind: EventKind,
    /// Absolute time in ns, in the trace's own epoch.
    pub t_ns: u64,
    /// The request concerned: its first byte, op and device, as a kept request would have them.
    pub offset: u64,
    pub op: Op,
    pub dev: &'a [u8],
}

/// What an [`Event`] says about the request at its offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// `C`: the request completed now.
    Complete,
    /// `M`/`F` (merged into another request) or `R` (requeued): the request will see no
    /// completion of its own.
    Orphaned,
}

/// What a line holds.
#[derive(Debug)]
pub(crate) enum Parsed<'a> {
    /// Not a request, and not an error: header, comment, blank line, blkparse summary or
    /// other action, fio file action or `wait`.
    Skip,
    Req(Rec<'a>),
    /// Only from a blkparse parser that pairs (kept action `Q` or `D`).
    Event(Event<'a>),
}

/// Why a line was rejected.
#[derive(Debug)]
pub(crate) enum LineError {
    /// A malformed line: reported with its number, or skipped and counted with `skip_bad`.
    Bad(String),
    /// The file is not in this format at all (e.g. no fio header): always an error.
    Fatal(String),
}

impl From<String> for LineError {
    fn from(m: String) -> Self {
        LineError::Bad(m)
    }
}

pub(crate) type LineResult<'a> = Result<Parsed<'a>, LineError>;

/// A parse result flattened for assertions: `(t_ns, offset, len, op, device)` or the message.
#[cfg(test)]
pub(crate) type Flat = Result<Option<(u64, u64, u32, Op, String)>, String>;

#[cfg(test)]
pub(crate) fn flat(r: LineResult<'_>) -> Flat {
    match r {
        Ok(Parsed::Skip | Parsed::Event(_)) => Ok(None),
        Ok(Parsed::Req(r)) => Ok(Some((r.t_ns, r.offset, r.len, r.op, String::from_utf8_lossy(r.dev).into_owned()))),
        Err(LineError::Bad(m) | LineError::Fatal(m)) => Err(m),
    }
}
