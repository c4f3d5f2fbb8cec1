//! `blkparse` default text output:
//! `MAJ,MIN CPU SEQ SECS.NSECS PID ACTION RWBS [SECTOR + NSECTORS] [PROCESS]`.
//!
//! blkparse prints no column header of its own (its `HEADER` in `blkparse_fmt.c` is the
//! per-event prefix `"%D %2c %8s %5T.%9t %5p %2a %3d "`), but captures are often annotated
//! with one: lines starting with `#` and rules made of dashes (with spaces and `+`) are
//! comments.

use super::fields::{bytes_u32, bytes_u64, num, parse_scaled, parse_u64, show, trim, Words};
use super::line::{Event, EventKind, LineResult, Parsed, Rec};
use crate::request::Op;

const SECTOR: u64 = 512;

pub(crate) struct Blkparse {
    action: u8,
    /// Whether to report the events that pair kept requests with their completions
    /// (`C`, and `M`/`F` for `Q` or `R` for `D`): with the kept action `Q` or `D`.
    pairing: bool,
    /// Inside the per-CPU / total statistics blkparse prints after the events.
    in_summary: bool,
}

impl Blkparse {
    pub(crate) fn new(action: char) -> Self {
        let action = u8::try_from(action).unwrap_or(b'Q');
        Blkparse { action, pairing: matches!(action, b'Q' | b'D'), in_summary: false }
    }

    /// Whether this parser reports pairing events ([`Parsed::Event`]).
    pub(crate) fn pairs(&self) -> bool {
        self.pairing
    }

    pub(crate) fn parse<'a>(&mut self, line: &'a [u8]) -> LineResult<'a> {
        let mut w = Words::new(line);
        let Some(dev) = w.next() else { return Ok(Parsed::Skip) };
        if !is_devno(dev) {
            let t = trim(line);
            if is_comment(t) {
                return Ok(Parsed::Skip);
            }
            if (t.starts_with(b"CPU") && t.get(3).is_some_and(u8::is_ascii_digit)) || t.starts_with(b"Total (") {
                self.in_summary = true;
                return Ok(Parsed::Skip);
            }
            if self.in_summary || t.starts_with(b"Input file ") {
                return Ok(Parsed::Skip);
            }
            return Err(format!(
                "not a blkparse event line (expected \"MAJ,MIN CPU SEQ SECS.NSECS PID ACTION RWBS ...\"): {}",
                show(t)
            )
            .into());
        }
        self.in_summary = false;
        let (Some(_cpu), Some(_seq), Some(time), Some(_pid), Some(action)) =
            (w.next(), w.next(), w.next(), w.next(), w.next())
        else {
            return Err("truncated event line: expected \"MAJ,MIN CPU SEQ SECS.NSECS PID ACTION RWBS ...\""
                .to_string()
                .into());
        };
        if action != [self.action] {
            if self.pairing {
                if let Some(ev) = self.event(action, time, &mut w, dev) {
                    return Ok(Parsed::Event(ev));
                }
            }
            return Ok(Parsed::Skip);
        }
        let Some(rwbs) = w.next() else {
            return Err("missing RWBS field after the action".to_string().into());
        };
        let t_ns = parse_scaled(time, 1_000_000_000).ok_or_else(|| format!("time {} is not SECS.NSECS", show(time)))?;
        let (base, preflush) = decode_rwbs(rwbs)?;
        let (offset, len) = match payload(&mut w)? {
            Some((sector, n)) => (bytes_u64("sector", sector, SECTOR)?, bytes_u32("size", n, SECTOR)?),
            None => (0, 0),
        };
        let Some(op) = op_of(base, len, preflush) else { return Ok(Parsed::Skip) };
        Ok(Parsed::Req(Rec { t_ns, offset, len, op, dev, lat_ns: None }))
    }

    /// A line of another action that tells what became of a kept request: its completion
    /// (`C`), or that it will have none of its own: merged into another request (`M` back
    /// merge: the bio at the sector joined the request before it; `F` front merge: the
    /// request that started right after the bio now starts at the bio, so the request at
    /// `SECTOR + NSECTORS` is the one orphaned), or requeued (`R`, for `D`: it will be issued
    /// again). Lenient: a line it cannot read is not an error, only no event, so that pairing
    /// never fails a trace that reads today.
    fn event<'a>(&self, action: &[u8], time: &[u8], w: &mut Words<'a>, dev: &'a [u8]) -> Option<Event<'a>> {
        let kind = match (action, self.action) {
            (b"C", _) => EventKind::Complete,
            (b"M" | b"F", b'Q') | (b"R", b'D') => EventKind::Orphaned,
            _ => return None,
        };
        let t_ns = parse_scaled(time, 1_000_000_000)?;
        let (base, preflush) = decode_rwbs(w.next()?).ok()?;
        let (sector, n) = payload(w).ok()?.unwrap_or((0, 0));
        let len = u32::try_from(n.checked_mul(SECTOR)?).ok()?;
        let op = op_of(base, len, preflush)?;
        let sector = if action == b"F" { sector.checked_add(n)? } else { sector };
        Some(Event { kind, t_ns, offset: sector.checked_mul(SECTOR)?, op, dev })
    }
}

/// The request an event of `base` with `len` bytes is, or `None` for an event that moves
/// nothing the cache cares about.
fn op_of(base: Option<Op>, len: u32, preflush: bool) -> Option<Op> {
    match (base, len, preflush) {
        (Some(Op::Flush), _, _) => Some(Op::Flush),
        (Some(op), 1.., _) => Some(op),
        // An empty request with the flush flag is a flush; without it (SCSI pass-through,
        // zero-length completions, ops without data) it moves nothing the cache cares about.
        (_, _, true) => Some(Op::Flush),
        _ => None,
    }
}

/// A comment: a line starting with `#` (a column header added to a capture), or a rule
/// made of dashes, spaces and `+` (the line under such a header).
pub(crate) fn is_comment(t: &[u8]) -> bool {
    t.starts_with(b"#") || (t.contains(&b'-') && t.iter().all(|c| matches!(c, b'-' | b'+' | b' ' | b'\t')))
}

/// `8,32`.
fn is_devno(b: &[u8]) -> bool {
    match memchr::memchr(b',', b) {
        Some(i) => {
            let (maj, min) = b.split_at(i);
            parse_u64(maj).is_some() && min.get(1..).and_then(parse_u64).is_some()
        }
        None => false,
    }
}

/// RWBS as blkparse prints it: an optional `F` (preflush), then `R`, `W`, `D` (discard),
/// `N` (no data) or `F` (a flush op, kernel notation), then flags (`F` FUA, `A`, `S`, `M`,
/// `E`…) that do not change the op. Returns the op (`None` for `N`) and the preflush flag.
fn decode_rwbs(rwbs: &[u8]) -> Result<(Option<Op>, bool), String> {
    let (preflush, rest) = match rwbs {
        [b'F', rest @ ..] => (true, rest),
        _ => (false, rwbs),
    };
    let base = match rest.first() {
        Some(b'R') => Some(Op::Read),
        Some(b'W') => Some(Op::Write),
        Some(b'D') => Some(Op::Discard),
        Some(b'F') => Some(Op::Flush),
        Some(b'N') => None,
        None if preflush => Some(Op::Flush),
        _ => {
            return Err(format!(
                "RWBS {} is not an operation (expected R, W, D, N or F, optionally after F)",
                show(rwbs)
            ))
        }
    };
    Ok((base, preflush))
}

/// `SECTOR + NSECTORS`, `SECTOR` alone (zero-length completion), or nothing before the
/// process name / pass-through payload (`[fio]`, `(12 34 ..)`).
fn payload(w: &mut Words<'_>) -> Result<Option<(u64, u64)>, String> {
    let opens_tail = |t: &[u8]| t.starts_with(b"[") || t.starts_with(b"(");
    let Some(first) = w.next() else { return Ok(None) };
    if opens_tail(first) {
        return Ok(None);
    }
    let sector = num("sector", first)?;
    match w.next() {
        Some(b"+") => {
            let n = w.next().unwrap_or_default();
            Ok(Some((sector, num("sector count", n)?)))
        }
        None => Ok(Some((sector, 0))),
        Some(t) if opens_tail(t) => Ok(Some((sector, 0))),
        Some(t) => Err(format!("expected \"+ NSECTORS\" after sector {sector}, found {}", show(t))),
    }
}

/// Whether a line looks like a blkparse event (for format detection).
pub(crate) fn looks_like_event(line: &[u8]) -> bool {
    let mut w = Words::new(line);
    let ok = |b: Option<&[u8]>, f: &dyn Fn(&[u8]) -> bool| b.is_some_and(f);
    let digits = |b: &[u8]| parse_u64(b).is_some();
    ok(w.next(), &is_devno)
        && ok(w.next(), &digits)
        && ok(w.next(), &digits)
        && ok(w.next(), &|b| b.contains(&b'.') && parse_scaled(b, 1_000_000_000).is_some())
        && ok(w.next(), &digits)
        && ok(w.next(), &|b| (1..=2).contains(&b.len()) && b.iter().all(u8::is_ascii_alphabetic))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> crate::parse::line::Flat {
        crate::parse::line::flat(Blkparse::new('Q').parse(line.as_bytes()))
    }

    #[test]
    fn events() {
        assert_eq!(
            one("  8,32   7        1     0.000000000  2923  Q   R 272208 + 2 [fio]"),
            Ok(Some((0, 272208 * 512, 1024, Op::Read, "8,32".into())))
        );
        assert_eq!(one("8,0 1 2 1.5 1 Q WS 8 + 8 [x]"), Ok(Some((1_500_000_000, 4096, 4096, Op::Write, "8,0".into()))));
        assert_eq!(one("8,0 1 2 1.5 1 Q FWS [kworker/0:1]"), Ok(Some((1_500_000_000, 0, 0, Op::Flush, "8,0".into()))));
        assert_eq!(one("8,0 1 2 1.5 1 Q FWFS 8 + 8 [x]").map(|r| r.map(|r| r.3)), Ok(Some(Op::Write)));
        assert_eq!(one("8,0 1 2 1.5 1 Q D 8 + 8 [x]").map(|r| r.map(|r| r.3)), Ok(Some(Op::Discard)));
        assert_eq!(one("8,0 1 2 1.5 1 Q DE 8 + 8 [x]").map(|r| r.map(|r| r.3)), Ok(Some(Op::Discard)));
        assert_eq!(one("8,0 1 2 1.5 1 Q FN [x]").map(|r| r.map(|r| r.3)), Ok(Some(Op::Flush)));
        assert_eq!(one("8,0 1 2 1.5 1 Q N [x]"), Ok(None));
        assert_eq!(one("8,0 1 2 1.5 1 G R 8 + 8 [x]"), Ok(None));
        assert_eq!(one("8,0 1 2 1.5 1 Q R 8 + 8 (    1234) [x]").map(|r| r.map(|r| r.2)), Ok(Some(4096)));
        assert_eq!(one(""), Ok(None));
        let e = one("8,0 1 2 1.5 1 Q R 12x + 8 [x]").err().unwrap_or_default();
        assert_eq!(e, "sector \"12x\" is not a number");
        assert!(one("8,0 1 2 1.5 1 Q Z 1 + 8 [x]").is_err());
        assert!(one("8,0 1 2 x 1 Q R 1 + 8 [x]").is_err());
        assert!(one("8,0 1 2 1.5 1 Q R 1 + [x]").is_err());
        assert!(one("8,0 1 2 1.5 1 Q R 1 - 8").is_err());
        assert!(one("8,0 1 2 1.5 1 Q R 1 + 99999999999").is_err());
        assert!(one("8,0 1 2").is_err());
        assert!(one("hello world").is_err());
    }

    #[test]
    fn summary_is_skipped() {
        let mut p = Blkparse::new('Q');
        for l in [
            "CPU0 (8,32):",
            " Reads Queued:           2,        8KiB\t Writes Queued: 0",
            "",
            "Total (8,32):",
            "Throughput (R/W): 0KiB/s / 0KiB/s",
            "Events (8,32): 6 entries",
            "Skips: 0 forward (0 -   0.0%)",
        ] {
            assert!(matches!(p.parse(l.as_bytes()), Ok(Parsed::Skip)), "{l}");
        }
        assert!(matches!(p.parse(b"8,0 1 2 1.5 1 Q R 8 + 8 [x]"), Ok(Parsed::Req(_))));
        assert!(p.parse(b" Reads Queued: 2").is_err());
    }

    #[test]
    fn detection() {
        assert!(looks_like_event(b"  8,32   7        1     0.000000000  2923  Q   R 272208 + 2 [fio]"));
        assert!(!looks_like_event(b"CPU0 (8,32):"));
        assert!(!looks_like_event(b"128166372003061629,hm,0,Read,7014609920,24576,41286"));
    }
}
