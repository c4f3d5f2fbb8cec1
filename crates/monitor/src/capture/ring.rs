//! Decoding the kernel's ring-buffer pages, as `per_cpu/cpuN/trace_pipe_raw` hands them out,
//! into block events. Pure: a page in, events out; every read is bounds-checked, so a page
//! the decoder does not understand yields fewer events, never a panic.
//!
//! A page is a header (a full timestamp, the commit word: bytes of data, with "events were
//! missed before this page" flags in its top bits) and events. Each event starts with a
//! 32-bit word: `type_len` (5 low bits) and a `time_delta` (27 bits) added to the running
//! timestamp. `type_len` 1..=28 is a data event of `type_len × 4` bytes; 0 is a data event
//! whose length is in the next word; 29 is padding (a discarded event, or the end of the
//! page when its delta is 0), 30 a time extension (a delta too large for 27 bits), 31 an
//! absolute timestamp.

use super::format::{EventFormat, Field, PageLayout};

/// What a request does, from the event's `rwbs` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpClass {
    Read,
    Write,
    Discard,
    Flush,
    /// Write-zeroes, zone management, driver-private: not in the trace model.
    Other,
}

/// Which tracepoint an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Issue,
    Complete,
    Requeue,
}

/// One block event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawEvent {
    /// Trace clock (`mono`), ns.
    pub ts: u64,
    pub kind: Kind,
    /// Kernel `dev_t` (major << 20 | minor) of the whole disk.
    pub dev: u32,
    /// 512-byte sectors from the start of the disk.
    pub sector: u64,
    pub sectors: u32,
    /// Bytes of the request (issue events; 0 where the event has no `bytes` field).
    pub bytes: u32,
    pub op: OpClass,
    /// A completion with an error.
    pub error: bool,
}

/// The operation an `rwbs` string names: an optional `F` (pre-flush), then the operation
/// letter (`R`, `W`, `D`, `F` for a flush request, `N` for others), then modifiers (`F` FUA,
/// `A`, `S`, `M`, `E`).
pub fn op_of_rwbs(rwbs: &[u8]) -> OpClass {
    let letter = match rwbs {
        [b'F', next, ..] if matches!(next, b'R' | b'W' | b'D' | b'N' | b'F') => *next,
        [first, ..] => *first,
        [] => 0,
    };
    match letter {
        b'R' => OpClass::Read,
        b'W' => OpClass::Write,
        b'D' => OpClass::Discard,
        b'F' => OpClass::Flush,
        _ => OpClass::Other,
    }
}

/// Where one event's fields are.
#[derive(Debug, Clone, Copy)]
struct EventFields {
    id: u16,
    kind: Kind,
    dev: Field,
    sector: Field,
    nr_sector: Field,
    bytes: Option<Field>,
    rwbs: Field,
    error: Option<Field>,
}

impl EventFields {
    fn new(kind: Kind, f: &EventFormat) -> Result<Self, String> {
        Ok(EventFields {
            id: f.id,
            kind,
            dev: f.field("dev")?,
            sector: f.field("sector")?,
            nr_sector: f.field("nr_sector")?,
            bytes: f.fields.get("bytes").copied(),
            rwbs: f.field("rwbs")?,
            error: f.fields.get("error").copied(),
        })
    }
}

/// What a page held besides its block events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageInfo {
    /// Data events of any kind.
    pub events: u64,
    /// The kernel marked the page: events were lost before it.
    pub missed: bool,
    /// How many, when the kernel stored the count.
    pub missed_count: u64,
}

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
const TS_SHIFT: u32 = 27;
/// Top bits of a timestamp that an absolute-timestamp event does not carry.
const TS_MSB: u64 = 0xf8 << 56;
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const COMMIT_MASK: u64 = (1 << 27) - 1;

fn bytes_at(b: &[u8], at: usize, n: usize) -> Option<&[u8]> {
    b.get(at..at.checked_add(n)?)
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes_at(b, at, 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes_at(b, at, 8)?.try_into().ok()?))
}

/// An unsigned field of 1, 2, 4 or 8 bytes.
fn uint(b: &[u8], f: Field) -> Option<u64> {
    let s = bytes_at(b, f.offset, f.size)?;
    Some(match f.size {
        1 => u64::from(*s.first()?),
        2 => u64::from(u16::from_ne_bytes(s.try_into().ok()?)),
        4 => u64::from(u32::from_ne_bytes(s.try_into().ok()?)),
        8 => u64::from_ne_bytes(s.try_into().ok()?),
        _ => return None,
    })
}

/// Decodes pages of the block events it was made for.
#[derive(Debug, Clone)]
pub struct Decoder {
    page: PageLayout,
    events: Vec<EventFields>,
}

impl Decoder {
    /// A decoder for `issue` and `complete` (and `requeue`, when the kernel has it).
    pub fn new(
        page: PageLayout,
        issue: &EventFormat,
        complete: &EventFormat,
        requeue: Option<&EventFormat>,
    ) -> Result<Decoder, String> {
        let mut events = vec![EventFields::new(Kind::Issue, issue)?, EventFields::new(Kind::Complete, complete)?];
        if let Some(r) = requeue {
            events.push(EventFields::new(Kind::Requeue, r)?);
        }
        Ok(Decoder { page, events })
    }

    /// Appends the page's block events to `out`, in page order.
    pub fn decode(&self, page: &[u8], out: &mut Vec<RawEvent>) -> PageInfo {
        let mut info = PageInfo::default();
        let Some(mut ts) = uint(page, self.page.timestamp) else { return info };
        let Some(commit) = uint(page, self.page.commit) else { return info };
        let len = (commit & COMMIT_MASK) as usize;
        info.missed = commit & MISSED_EVENTS != 0;
        let Some(data) = page.get(self.page.data..).map(|d| d.get(..len).unwrap_or(d)) else { return info };
        if commit & MISSED_STORED != 0 {
            // The count follows the data, in a word the size of the commit field.
            let at = self.page.data + len;
            info.missed_count = match self.page.commit.size {
                8 => u64_at(page, at).unwrap_or(0),
                _ => u32_at(page, at).map(u64::from).unwrap_or(0),
            };
        }
        let mut i = 0usize;
        while let Some(head) = u32_at(data, i) {
            let type_len = head & 0x1f;
            let delta = u64::from(head >> 5);
            match type_len {
                TYPE_PADDING => {
                    if delta == 0 {
                        break; // the rest of the page is empty
                    }
                    let Some(n) = u32_at(data, i + 4) else { break };
                    ts = ts.wrapping_add(delta);
                    i += 4 + n as usize;
                }
                TYPE_TIME_EXTEND => {
                    let Some(hi) = u32_at(data, i + 4) else { break };
                    ts = ts.wrapping_add((u64::from(hi) << TS_SHIFT) + delta);
                    i += 8;
                }
                TYPE_TIME_STAMP => {
                    let Some(hi) = u32_at(data, i + 4) else { break };
                    ts = (ts & TS_MSB) | (u64::from(hi) << TS_SHIFT) | delta;
                    i += 8;
                }
                0 => {
                    let Some(n) = u32_at(data, i + 4) else { break };
                    let n = n as usize;
                    if n < 4 {
                        break;
                    }
                    ts = ts.wrapping_add(delta);
                    info.events += 1;
                    if let Some(payload) = data.get(i + 8..i + 4 + n) {
                        self.event(ts, payload, out);
                    }
                    i += 4 + n.next_multiple_of(4);
                }
                words => {
                    let n = words as usize * 4;
                    ts = ts.wrapping_add(delta);
                    info.events += 1;
                    if let Some(payload) = data.get(i + 4..i + 4 + n) {
                        self.event(ts, payload, out);
                    }
                    i += 4 + n;
                }
            }
        }
        info
    }

    fn event(&self, ts: u64, p: &[u8], out: &mut Vec<RawEvent>) {
        let Some(id) = uint(p, Field { offset: 0, size: 2 }) else { return };
        let Some(f) = self.events.iter().find(|f| u64::from(f.id) == id) else { return };
        let (Some(dev), Some(sector), Some(sectors), Some(rwbs)) =
            (uint(p, f.dev), uint(p, f.sector), uint(p, f.nr_sector), bytes_at(p, f.rwbs.offset, f.rwbs.size))
        else {
            return;
        };
        let rwbs = rwbs.split(|&b| b == 0).next().unwrap_or_default();
        let bytes = f.bytes.and_then(|b| uint(p, b)).unwrap_or(0);
        let error = f.error.and_then(|e| uint(p, e)).is_some_and(|e| e != 0);
        out.push(RawEvent {
            ts,
            kind: f.kind,
            dev: dev as u32,
            sector,
            sectors: sectors as u32,
            bytes: bytes as u32,
            op: op_of_rwbs(rwbs),
            error,
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::capture::format::parse_event;

    pub(crate) const COMPLETE: &str = "name: block_rq_complete
ID: 2107
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;
\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;
\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;
\tfield:int error;\toffset:28;\tsize:4;\tsigned:1;
\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;
\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;
\tfield:__data_loc char[] cmd;\toffset:44;\tsize:4;\tsigned:0;
";

    pub(crate) fn decoder() -> Decoder {
        let issue = parse_event(crate::capture::format::tests::ISSUE).unwrap();
        let complete = parse_event(COMPLETE).unwrap();
        Decoder::new(PageLayout::DEFAULT, &issue, &complete, None).unwrap()
    }

    /// An issue payload (64 bytes: the layout of `format::tests::ISSUE`).
    pub(crate) fn issue_payload(dev: u32, sector: u64, sectors: u32, rwbs: &str) -> Vec<u8> {
        let mut p = vec![0u8; 64];
        p[0..2].copy_from_slice(&2104u16.to_ne_bytes());
        p[8..12].copy_from_slice(&dev.to_ne_bytes());
        p[16..24].copy_from_slice(&sector.to_ne_bytes());
        p[24..28].copy_from_slice(&sectors.to_ne_bytes());
        p[28..32].copy_from_slice(&(sectors * 512).to_ne_bytes());
        p[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        p
    }

    /// A complete payload (48 bytes).
    pub(crate) fn complete_payload(dev: u32, sector: u64, sectors: u32, rwbs: &str, error: i32) -> Vec<u8> {
        let mut p = vec![0u8; 48];
        p[0..2].copy_from_slice(&2107u16.to_ne_bytes());
        p[8..12].copy_from_slice(&dev.to_ne_bytes());
        p[16..24].copy_from_slice(&sector.to_ne_bytes());
        p[24..28].copy_from_slice(&sectors.to_ne_bytes());
        p[28..32].copy_from_slice(&error.to_ne_bytes());
        p[34..34 + rwbs.len()].copy_from_slice(rwbs.as_bytes());
        p
    }

    /// Builds a page: `(delta, payload)` data events, with the given raw words in between.
    pub(crate) enum Item {
        Data(u32, Vec<u8>),
        /// A data event with its length in the next word (type_len 0).
        Long(u32, Vec<u8>),
        Extend(u64),
        Padding(u32, u32),
        Absolute(u64),
    }

    pub(crate) fn page(ts: u64, items: &[Item], commit_flags: u64) -> Vec<u8> {
        let mut data = Vec::new();
        for it in items {
            match it {
                Item::Data(delta, p) => {
                    assert!(p.len() % 4 == 0 && p.len() <= 112);
                    data.extend_from_slice(&((delta << 5) | (p.len() as u32 / 4)).to_ne_bytes());
                    data.extend_from_slice(p);
                }
                Item::Long(delta, p) => {
                    data.extend_from_slice(&(delta << 5).to_ne_bytes());
                    data.extend_from_slice(&(p.len() as u32 + 4).to_ne_bytes());
                    data.extend_from_slice(p);
                }
                Item::Extend(d) => {
                    let lo = (*d & ((1 << 27) - 1)) as u32;
                    data.extend_from_slice(&((lo << 5) | 30).to_ne_bytes());
                    data.extend_from_slice(&((*d >> 27) as u32).to_ne_bytes());
                }
                Item::Padding(delta, n) => {
                    data.extend_from_slice(&((delta << 5) | 29).to_ne_bytes());
                    data.extend_from_slice(&n.to_ne_bytes());
                    data.extend(std::iter::repeat_n(0xAAu8, *n as usize - 4));
                }
                Item::Absolute(t) => {
                    let lo = (*t & ((1 << 27) - 1)) as u32;
                    data.extend_from_slice(&((lo << 5) | 31).to_ne_bytes());
                    data.extend_from_slice(&((*t >> 27) as u32).to_ne_bytes());
                }
            }
        }
        let mut p = vec![0u8; 4096];
        p[0..8].copy_from_slice(&ts.to_ne_bytes());
        p[8..16].copy_from_slice(&(data.len() as u64 | commit_flags).to_ne_bytes());
        p[16..16 + data.len()].copy_from_slice(&data);
        p
    }

    #[test]
    fn rwbs_letters() {
        assert_eq!(op_of_rwbs(b"R"), OpClass::Read);
        assert_eq!(op_of_rwbs(b"RA"), OpClass::Read);
        assert_eq!(op_of_rwbs(b"WS"), OpClass::Write);
        assert_eq!(op_of_rwbs(b"FWS"), OpClass::Write);
        assert_eq!(op_of_rwbs(b"WFS"), OpClass::Write);
        assert_eq!(op_of_rwbs(b"D"), OpClass::Discard);
        assert_eq!(op_of_rwbs(b"DE"), OpClass::Discard);
        assert_eq!(op_of_rwbs(b"F"), OpClass::Flush);
        assert_eq!(op_of_rwbs(b"FF"), OpClass::Flush);
        assert_eq!(op_of_rwbs(b"FS"), OpClass::Flush);
        assert_eq!(op_of_rwbs(b"N"), OpClass::Other);
        assert_eq!(op_of_rwbs(b""), OpClass::Other);
    }

    #[test]
    fn decodes_events_and_timestamps() {
        let d = decoder();
        let p = page(
            1_000,
            &[
                Item::Data(5, issue_payload(7 << 20, 8, 8, "WS")),
                Item::Padding(3, 16),
                Item::Extend(1 << 30),
                Item::Long(2, complete_payload(7 << 20, 8, 8, "WS", 0)),
                Item::Data(1, complete_payload(7 << 20, 16, 8, "R", -5)),
                Item::Absolute(5_000_000_000),
                Item::Data(10, issue_payload(7 << 20, 0, 0, "FF")),
            ],
            0,
        );
        let mut out = Vec::new();
        let info = d.decode(&p, &mut out);
        assert_eq!(info, PageInfo { events: 4, missed: false, missed_count: 0 });
        let ts: Vec<u64> = out.iter().map(|e| e.ts).collect();
        let t2 = 1_000 + 5 + 3 + (1 << 30) + 2;
        assert_eq!(ts, [1_005, t2, t2 + 1, 5_000_000_010]);
        assert_eq!(out[0].kind, Kind::Issue);
        assert_eq!((out[0].dev, out[0].sector, out[0].sectors, out[0].bytes), (7 << 20, 8, 8, 4096));
        assert_eq!(out[0].op, OpClass::Write);
        assert_eq!((out[1].kind, out[1].error), (Kind::Complete, false));
        assert_eq!((out[2].op, out[2].error), (OpClass::Read, true));
        assert_eq!((out[3].op, out[3].sectors), (OpClass::Flush, 0));
    }

    #[test]
    fn missed_events_and_garbage() {
        let d = decoder();
        let mut p = page(0, &[Item::Data(1, issue_payload(1, 2, 8, "R"))], MISSED_EVENTS | MISSED_STORED);
        // The count after the data (4 + 64 bytes of it).
        p[16 + 68..16 + 76].copy_from_slice(&42u64.to_ne_bytes());
        let mut out = Vec::new();
        let info = d.decode(&p, &mut out);
        assert_eq!(info, PageInfo { events: 1, missed: true, missed_count: 42 });
        assert_eq!(out.len(), 1);
        // A truncated page, a page with a commit beyond its end, random bytes: no panic.
        for junk in [vec![0u8; 5], vec![0xFFu8; 4096], (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect()] {
            let _ = d.decode(&junk, &mut out);
        }
        let mut cut = page(0, &[Item::Data(1, issue_payload(1, 2, 8, "R"))], 0);
        cut.truncate(40);
        let before = out.len();
        d.decode(&cut, &mut out);
        assert_eq!(out.len(), before);
    }
}
