//! Diagnosis of a chunk that failed the fast check: what went wrong, told from the bytes.
//!
//! The chunk is compared sector by sector (512 bytes) with regenerated payloads of the
//! expected generation E and the older ones down to max(1, E-16), and of the generation its
//! own header names. Each sector is labelled with the generation it holds exactly, as
//! *damaged* when it is close to one (at most a quarter of its bytes differ: a bit flip, not
//! other data), or as *foreign* (other data: from before the run, zeros, or older than the
//! window). Sector 0 also carries the header: it holds generation g only when its header is
//! valid, names this offset and run and generation g, and its payload bytes are g's.
//!
//! The "expected bytes" of the hex dump cannot reproduce the writer's timestamp and worker
//! index: they are taken from the found header when its magic is there (0 otherwise), and
//! the rest of the expected header is built from [`Expect`] and [`Context`], digest and CRC
//! included. So the first difference points at the field or payload byte that is wrong
//! (a damaged timestamp or worker field shows as a CRC difference at byte 88).

use serde::{Deserialize, Serialize};

use super::checksum::CheckKind;
use super::chunk::{check_chunk, payload_ok, Context, Expect, SECTOR};
use super::header::{decode_header, encode_header, Header, HeaderError, HeaderFields, HEADER_LEN, MAGIC};
use super::payload::{fill_pattern, fill_payload, payload_seed};

/// How many generations below the expected one are regenerated to explain a chunk.
pub const GENERATION_WINDOW: u32 = 16;

/// Bytes shown by the hex dump (from the first difference, rounded down to 16).
pub const DUMP_BYTES: usize = 64;

/// The class of a diagnosis. Serialized lowercase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindingKind {
    /// The chunk is what was expected (not a failure).
    Ok,
    /// A valid chunk of a later generation than expected, e.g. written after the state file
    /// was saved. Not a failure; the caller may accept it.
    Newer,
    /// Sectors of the chunk hold different generations.
    Torn,
    /// A whole valid chunk of an older generation (the write was lost), or of another run.
    Stale,
    /// A valid chunk of this run whose header names another offset.
    Misdirected,
    /// Every byte is zero.
    Zeroed,
    /// No diskmeter header and no sector of any generation: the chunk was never written.
    Unwritten,
    /// Anything else: a damaged payload or header.
    Corrupt,
}

impl FindingKind {
    /// The lowercase name (as serialized).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Ok => "ok",
            FindingKind::Newer => "newer",
            FindingKind::Torn => "torn",
            FindingKind::Stale => "stale",
            FindingKind::Misdirected => "misdirected",
            FindingKind::Zeroed => "zeroed",
            FindingKind::Unwritten => "unwritten",
            FindingKind::Corrupt => "corrupt",
        }
    }
}

/// A run of consecutive sectors holding the same generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectorRun {
    /// First sector (0 = the one with the header).
    pub first: u32,
    /// Last sector, inclusive.
    pub last: u32,
    /// Generation held; `None`: data of no generation in the window (from before the run,
    /// or older than [`GENERATION_WINDOW`] generations).
    pub generation: Option<u32>,
}

/// The diagnosis of one chunk; goes into the JSON result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The class.
    pub kind: FindingKind,
    /// Offset of the chunk on the target.
    pub offset: u64,
    /// Chunk length.
    pub len: u32,
    /// Generation expected (0 = never written).
    pub expected_generation: u32,
    /// Generation in the found header, when one could be read (even a damaged one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_generation: Option<u32>,
    /// Offset in the found header, when one could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_offset: Option<u64>,
    /// Run id in the found header, when one could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_run_id: Option<u64>,
    /// The chunk was written by another run (its run id differs).
    #[serde(default)]
    pub other_run: bool,
    /// Why the header is not valid, if it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_error: Option<String>,
    /// For `torn`: which sectors hold which generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sectors: Vec<SectorRun>,
    /// Index in the chunk of the first byte that differs from the expected bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_bad_byte: Option<u64>,
    /// More detail, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// `xxd`-like lines of the first differing 64 bytes: `exp` (expected) and `got` (found)
    /// rows, each `exp <target offset>: <16 hex bytes>  |ascii|`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hexdump: Vec<String>,
}

impl Finding {
    /// Whether this is a verification failure (everything but `ok` and `newer`).
    pub fn is_failure(&self) -> bool {
        !matches!(self.kind, FindingKind::Ok | FindingKind::Newer)
    }

    /// One human line, e.g. `torn at 1048576: sectors 0-3 generation 5, sectors 4-7
    /// generation 4 (expected 5)`.
    pub fn summary(&self) -> String {
        let at = format!("{} at {}", self.kind.name(), self.offset);
        let e = self.expected_generation;
        let g = self.found_generation.unwrap_or(0);
        let first = self.first_bad_byte.map(|b| format!(", first difference at byte {b}")).unwrap_or_default();
        let note = self.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
        match self.kind {
            FindingKind::Ok => format!("{at}: generation {e} as expected"),
            FindingKind::Newer => format!("{at}: generation {g}, newer than the expected {e} (written after the state was saved)"),
            FindingKind::Torn => {
                let runs: Vec<String> = self
                    .sectors
                    .iter()
                    .map(|r| {
                        let gen = r.generation.map_or("of no known generation".to_string(), |g| format!("generation {g}"));
                        format!("sectors {}-{} {gen}", r.first, r.last)
                    })
                    .collect();
                format!("{at}: {} (expected {e})", runs.join(", "))
            }
            FindingKind::Stale if self.other_run => format!(
                "{at}: a chunk from another run (run id {:016x}, generation {g}, offset {}), expected generation {e} of this run",
                self.found_run_id.unwrap_or(0),
                self.found_offset.unwrap_or(self.offset)
            ),
            FindingKind::Stale => format!("{at}: generation {g} found, {e} expected (a write was lost)"),
            FindingKind::Misdirected => format!(
                "{at}: holds the chunk written for offset {} (generation {g}); expected generation {e}",
                self.found_offset.unwrap_or(0)
            ),
            FindingKind::Zeroed => format!("{at}: all {} bytes are zero (expected generation {e})", self.len),
            FindingKind::Unwritten => format!("{at}: no diskmeter data (expected generation {e})"),
            FindingKind::Corrupt => {
                let why = self.header_error.as_deref().map(|h| format!(": {h}")).unwrap_or_default();
                format!("{at}{why}{first}{note} (expected generation {e})")
            }
        }
    }
}

/// Classifies a chunk that failed [`check_chunk`] (see the module doc). Returns `ok` only
/// when [`check_chunk`] passes, so any chunk that fails it gets a non-ok finding. Never
/// panics, whatever the bytes; allocates (regenerated payloads, the dump).
pub fn diagnose(found: &[u8], expect: &Expect, ctx: &Context<'_>) -> Finding {
    let header = decode_header(found);
    let raw = match &header {
        Ok(h) => Some(*h),
        Err(e) => e.raw().copied(),
    };
    let mut f = Finding {
        kind: FindingKind::Corrupt,
        offset: expect.offset,
        len: expect.len,
        expected_generation: expect.generation,
        found_generation: raw.map(|h| h.fields.generation),
        found_offset: raw.map(|h| h.fields.offset),
        found_run_id: raw.map(|h| h.fields.run_id),
        other_run: false,
        header_error: header.as_ref().err().map(|e| e.to_string()),
        sectors: Vec::new(),
        first_bad_byte: None,
        note: None,
        hexdump: Vec::new(),
    };
    if check_chunk(found, expect, ctx) {
        f.kind = FindingKind::Ok;
        return f;
    }
    classify(&mut f, found, &header, expect, ctx);
    if f.kind != FindingKind::Ok {
        add_dump(&mut f, found, expect, ctx, raw.as_ref());
    }
    f
}

/// Sets the kind (never `Ok`: the fast check failed), sectors and note.
fn classify(f: &mut Finding, found: &[u8], header: &Result<Header, HeaderError>, e: &Expect, ctx: &Context<'_>) {
    if usize::try_from(e.len).ok() != Some(found.len()) {
        f.note = Some(format!("chunk is {} bytes, expected {}", found.len(), e.len));
        return;
    }
    if found.iter().all(|&b| b == 0) {
        f.kind = FindingKind::Zeroed;
        return;
    }
    if let Ok(h) = header {
        if payload_ok(found, h, ctx) && classify_valid(f, h, e, ctx) {
            return;
        }
    }
    classify_sectors(f, found, header, e, ctx);
}

/// A valid chunk whose payload matches its own digest: stale, misdirected, newer, or a
/// field that differs. Returns false to fall through to the sector comparison.
fn classify_valid(f: &mut Finding, h: &Header, e: &Expect, ctx: &Context<'_>) -> bool {
    let hf = &h.fields;
    f.kind = if hf.run_id != e.run_id {
        f.other_run = true;
        FindingKind::Stale
    } else if hf.offset != e.offset {
        FindingKind::Misdirected
    } else if hf.generation > e.generation {
        FindingKind::Newer
    } else if hf.generation < e.generation {
        FindingKind::Stale
    } else {
        // Same run, offset and generation, yet the fast check failed: name the field.
        f.note = Some(field_mismatch(h, e, ctx));
        FindingKind::Corrupt
    };
    true
}

/// Which header field differs from the expected one (for a valid, self-consistent chunk).
fn field_mismatch(h: &Header, e: &Expect, ctx: &Context<'_>) -> String {
    if h.fields.job != e.job {
        format!("written by job {}, expected job {}", h.fields.job, e.job)
    } else if h.kind() != Some(ctx.kind) {
        format!("checksum kind {}, expected {}", h.kind().map_or("unknown", CheckKind::name), ctx.kind.name())
    } else if h.fields.seed != payload_seed(ctx.run_seed, e.offset, e.generation) {
        "payload seed is not the one of this offset and generation".to_string()
    } else {
        "header fields differ from the expected ones".to_string()
    }
}

/// What one sector holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    /// Exactly this generation's bytes.
    Gen(u32),
    /// This generation's bytes with a few differences (damage, not other data).
    Damaged(u32),
    /// Other data.
    Foreign,
}

/// Labels every sector and decides torn, unwritten or corrupt.
fn classify_sectors(
    f: &mut Finding,
    found: &[u8],
    header: &Result<Header, HeaderError>,
    e: &Expect,
    ctx: &Context<'_>,
) {
    let own = own_header_generation(header, e);
    let labels = label_sectors(found, header, own, e, ctx);
    let gens = distinct_gens(&labels);
    let damaged = labels.iter().position(|l| matches!(l, Label::Damaged(_)));
    let no_magic = matches!(header, Err(HeaderError::BadMagic { .. }) | Err(HeaderError::TooShort { .. }));
    if no_magic && gens.is_empty() && damaged.is_none() {
        f.kind = FindingKind::Unwritten;
    } else if let Some(s) = damaged {
        f.kind = FindingKind::Corrupt;
        if f.header_error.is_none() || s > 0 {
            f.note = Some(damage_note(&labels, s, header, e));
        }
    } else if gens.len() >= 2 || (gens.len() == 1 && foreign_at_one_end(&labels)) {
        f.kind = FindingKind::Torn;
        f.sectors = runs(&labels);
    } else {
        f.kind = FindingKind::Corrupt;
        f.note = Some("the data matches no generation of this chunk".to_string());
    }
}

/// The generation named by a valid header of this offset and run.
fn own_header_generation(header: &Result<Header, HeaderError>, e: &Expect) -> Option<u32> {
    match header {
        Ok(h) if h.fields.offset == e.offset && h.fields.run_id == e.run_id => Some(h.fields.generation),
        _ => None,
    }
}

/// The generations worth regenerating: the header's own first, then E down to max(1, E-16).
fn candidates(own: Option<u32>, expected: u32) -> Vec<u32> {
    let low = expected.saturating_sub(GENERATION_WINDOW).max(1);
    let mut c: Vec<u32> = own.filter(|&g| g > 0).into_iter().collect();
    c.extend((low..=expected).rev().filter(|g| Some(*g) != own));
    c
}

/// The payload `ctx` would write for generation `g` at `e.offset`.
fn regenerate(g: u32, len: usize, e: &Expect, ctx: &Context<'_>) -> Vec<u8> {
    let mut p = vec![0u8; len];
    if ctx.kind == CheckKind::Pattern {
        fill_pattern(ctx.pattern, &mut p);
    } else {
        fill_payload(payload_seed(ctx.run_seed, e.offset, g), &mut p);
    }
    p
}

/// Labels each sector (see the module doc).
fn label_sectors(
    found: &[u8],
    header: &Result<Header, HeaderError>,
    own: Option<u32>,
    e: &Expect,
    ctx: &Context<'_>,
) -> Vec<Label> {
    let payload_len = found.len().saturating_sub(HEADER_LEN);
    let sectors = found.len().div_ceil(SECTOR);
    // Per sector: (exact generation, best (differing bytes, generation)).
    let mut exact: Vec<Option<u32>> = vec![None; sectors];
    let mut best: Vec<Option<(usize, u32)>> = vec![None; sectors];
    for g in candidates(own, e.generation) {
        let regen = regenerate(g, payload_len, e, ctx);
        for s in 0..sectors {
            let (lo, hi) = (s * SECTOR, ((s + 1) * SECTOR).min(found.len()));
            let lo = lo.max(HEADER_LEN.min(hi));
            let got = &found[lo..hi];
            let want = regen.get(lo.saturating_sub(HEADER_LEN)..hi.saturating_sub(HEADER_LEN)).unwrap_or_default();
            let diff = got.iter().zip(want).filter(|(a, b)| a != b).count();
            if diff == 0 && exact[s].is_none() {
                exact[s] = Some(g);
            }
            if best[s].is_none_or(|(d, _)| diff < d) {
                best[s] = Some((diff, g));
            }
        }
    }
    (0..sectors)
        .map(|s| {
            let compared = ((s + 1) * SECTOR).min(found.len()) - (s * SECTOR).max(HEADER_LEN.min(found.len()));
            let close = best[s].filter(|(d, _)| *d <= compared / 4).map(|(_, g)| g);
            let label = match (exact[s], close) {
                (Some(g), _) => Label::Gen(g),
                (None, Some(g)) => Label::Damaged(g),
                (None, None) => Label::Foreign,
            };
            if s == 0 {
                header_sector_label(label, header, own, e)
            } else {
                label
            }
        })
        .collect()
}

/// Sector 0 holds generation g only if its header agrees; otherwise the header is damaged
/// (a sector is written whole, so header and payload bytes of one sector belong together).
fn header_sector_label(payload: Label, header: &Result<Header, HeaderError>, own: Option<u32>, e: &Expect) -> Label {
    let magic = !matches!(header, Err(HeaderError::BadMagic { .. }) | Err(HeaderError::TooShort { .. }));
    match payload {
        Label::Gen(g) if own == Some(g) => Label::Gen(g),
        Label::Gen(g) | Label::Damaged(g) => Label::Damaged(g),
        Label::Foreign if magic => Label::Damaged(own.unwrap_or(e.generation)),
        Label::Foreign => Label::Foreign,
    }
}

fn distinct_gens(labels: &[Label]) -> Vec<u32> {
    let mut g: Vec<u32> = labels.iter().filter_map(|l| if let Label::Gen(g) = l { Some(*g) } else { None }).collect();
    g.sort_unstable();
    g.dedup();
    g
}

/// The foreign sectors form one run at the start or the end of the chunk (the other part of
/// a tear, holding data from before the run).
fn foreign_at_one_end(labels: &[Label]) -> bool {
    let foreign: Vec<usize> =
        labels.iter().enumerate().filter(|(_, l)| **l == Label::Foreign).map(|(i, _)| i).collect();
    let (Some(&a), Some(&b)) = (foreign.first(), foreign.last()) else { return false };
    b - a + 1 == foreign.len() && (a == 0 || b == labels.len() - 1)
}

/// Consecutive sectors of one label, for a torn chunk (only Gen and Foreign occur there).
fn runs(labels: &[Label]) -> Vec<SectorRun> {
    let mut out: Vec<SectorRun> = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        let generation = if let Label::Gen(g) = l { Some(*g) } else { None };
        match out.last_mut() {
            Some(r) if r.generation == generation => r.last = i as u32,
            _ => out.push(SectorRun { first: i as u32, last: i as u32, generation }),
        }
    }
    out
}

fn damage_note(labels: &[Label], s: usize, header: &Result<Header, HeaderError>, e: &Expect) -> String {
    let g = if let Label::Damaged(g) = labels[s] { g } else { e.generation };
    match header {
        Ok(h) if h.fields.offset != e.offset || h.fields.run_id != e.run_id => format!(
            "a header for offset {} generation {} (run id {:016x}) over a payload that does not match its digest",
            h.fields.offset, h.fields.generation, h.fields.run_id
        ),
        Ok(_) => format!("payload does not match its digest: sector {s} is generation {g} with damaged bytes"),
        Err(_) => format!("sector {s} is generation {g} with damaged bytes"),
    }
}

/// The bytes `e` and `ctx` say the chunk should hold; timestamp and worker come from the
/// found header when it has the magic (see the module doc).
pub fn expected_bytes(e: &Expect, ctx: &Context<'_>, found: Option<&Header>, len: usize) -> Vec<u8> {
    let mut want = vec![0u8; len];
    if len < HEADER_LEN {
        return want;
    }
    let (head, payload) = want.split_at_mut(HEADER_LEN);
    let seed = payload_seed(ctx.run_seed, e.offset, e.generation);
    if ctx.kind == CheckKind::Pattern {
        fill_pattern(ctx.pattern, payload);
    } else {
        fill_payload(seed, payload);
    }
    let fields = HeaderFields {
        offset: e.offset,
        job: e.job,
        generation: e.generation,
        worker: found.map_or(0, |h| h.fields.worker),
        timestamp_ns: found.map_or(0, |h| h.fields.timestamp_ns),
        seed,
        run_id: e.run_id,
    };
    encode_header(head, &fields, ctx.kind, e.len, &ctx.kind.digest(payload));
    want
}

/// Sets the first differing byte and the hex dump.
fn add_dump(f: &mut Finding, found: &[u8], e: &Expect, ctx: &Context<'_>, raw: Option<&Header>) {
    let want = expected_bytes(e, ctx, raw, found.len());
    let first = found.iter().zip(&want).position(|(a, b)| a != b);
    f.first_bad_byte = first.map(|i| i as u64);
    let start = first.unwrap_or(0) & !15;
    let end = (start + DUMP_BYTES).min(found.len());
    for row in (start..end).step_by(16) {
        let stop = (row + 16).min(end);
        let at = e.offset.wrapping_add(row as u64);
        f.hexdump.push(dump_line("exp", at, &want[row..stop]));
        f.hexdump.push(dump_line("got", at, &found[row..stop]));
    }
}

/// One `xxd`-like line: tag, target offset, up to 16 hex bytes, ascii.
fn dump_line(tag: &str, at: u64, bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(48);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            hex.push(' ');
        }
        hex.push_str(&format!("{b:02x}"));
    }
    let ascii: String =
        bytes.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }).collect();
    format!("{tag} {at:010x}: {hex:<47}  |{ascii}|")
}

/// Whether `chunk` starts with a diskmeter magic (cheap; for callers sorting failures).
pub fn has_magic(chunk: &[u8]) -> bool {
    chunk.get(..4) == Some(&MAGIC[..])
}
