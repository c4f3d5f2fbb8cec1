//! Stamping chunks on the write path and the fast check on the read path: both run per I/O,
//! so neither allocates.

use super::checksum::CheckKind;
use super::header::{decode_header, encode_header, Header, HeaderFields, HEADER_LEN};
use super::payload::{fill_pattern, fill_payload, is_pattern, payload_seed};

/// Sector size: the unit a chunk is compared in, and the unit `interval` is a multiple of.
pub const SECTOR: usize = 512;

/// Why a chunk or block cannot be stamped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StampError {
    /// A chunk must be a non-zero multiple of 512 bytes that fits the u32 length field.
    #[error("verify chunk of {0} bytes: must be a multiple of 512 bytes, at least 512, below 4 GiB")]
    BadChunkLen(usize),
    /// A block must be a whole number of chunks.
    #[error("block of {block} bytes is not a whole number of {interval}-byte verify chunks")]
    BadBlock {
        /// Block length.
        block: usize,
        /// Chunk length (the verify interval).
        interval: usize,
    },
    /// The `pattern` kind needs a non-empty pattern.
    #[error("verify kind pattern needs a non-empty pattern")]
    NoPattern,
}

/// Whether `len` is a valid chunk length: a non-zero multiple of [`SECTOR`] below 4 GiB.
pub fn valid_chunk_len(len: usize) -> bool {
    len >= SECTOR && len.is_multiple_of(SECTOR) && u32::try_from(len).is_ok()
}

/// What the run knows about every chunk it verifies: passed to stamp, check and diagnose.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The run's payload seed (kept in the state file with the run id).
    pub run_seed: u64,
    /// Checksum kind of the run.
    pub kind: CheckKind,
    /// `verify_pattern` bytes (used by the `pattern` kind only).
    pub pattern: &'a [u8],
}

/// What a chunk should hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Expect {
    /// Byte offset of the chunk on the target.
    pub offset: u64,
    /// Generation last written; 0 = never written in this run (anything but a chunk of this
    /// run is then acceptable).
    pub generation: u32,
    /// Job index that wrote it.
    pub job: u32,
    /// Run id.
    pub run_id: u64,
    /// Chunk length in bytes.
    pub len: u32,
}

/// Writes payload and header into `chunk` in place: the payload from `h.seed` (or the
/// pattern for the `pattern` kind), then the digest and the header with its CRC. No
/// allocation. The caller sets `h.seed`, normally to [`payload_seed`]`(run_seed, h.offset,
/// h.generation)` ([`stamp_block`] does).
pub fn stamp_chunk(chunk: &mut [u8], h: &HeaderFields, kind: CheckKind, pattern: &[u8]) -> Result<(), StampError> {
    if !valid_chunk_len(chunk.len()) {
        return Err(StampError::BadChunkLen(chunk.len()));
    }
    if kind == CheckKind::Pattern && pattern.is_empty() {
        return Err(StampError::NoPattern);
    }
    let len = chunk.len() as u32;
    let (head, payload) = chunk.split_at_mut(HEADER_LEN);
    if kind == CheckKind::Pattern {
        fill_pattern(pattern, payload);
    } else {
        fill_payload(h.seed, payload);
    }
    let digest = kind.digest(payload);
    encode_header(head, h, kind, len, &digest);
    Ok(())
}

/// The per-write fields of a block, shared by its chunks.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockStamp {
    /// Run id.
    pub run_id: u64,
    /// Job index.
    pub job: u32,
    /// Worker index.
    pub worker: u32,
    /// Write time, ns since the Unix epoch.
    pub timestamp_ns: u64,
}

/// Stamps every `interval`-byte chunk of a block written at `block_offset`. Generations are
/// per chunk: `generation_of(chunk_offset)` gives each chunk's (the caller's table, already
/// advanced for this write). No allocation.
pub fn stamp_block(
    block: &mut [u8],
    block_offset: u64,
    interval: usize,
    s: &BlockStamp,
    ctx: &Context<'_>,
    mut generation_of: impl FnMut(u64) -> u32,
) -> Result<(), StampError> {
    check_block_layout(block.len(), interval)?;
    let mut offset = block_offset;
    for chunk in block.chunks_exact_mut(interval) {
        let generation = generation_of(offset);
        let h = HeaderFields {
            offset,
            job: s.job,
            generation,
            worker: s.worker,
            timestamp_ns: s.timestamp_ns,
            seed: payload_seed(ctx.run_seed, offset, generation),
            run_id: s.run_id,
        };
        stamp_chunk(chunk, &h, ctx.kind, ctx.pattern)?;
        offset = offset.wrapping_add(interval as u64);
    }
    Ok(())
}

fn check_block_layout(block: usize, interval: usize) -> Result<(), StampError> {
    if !valid_chunk_len(interval) {
        return Err(StampError::BadChunkLen(interval));
    }
    if block == 0 || !block.is_multiple_of(interval) {
        return Err(StampError::BadBlock { block, interval });
    }
    Ok(())
}

/// The fast check, run on every chunk read: true when the header is valid, its offset, job,
/// run id, generation, length, kind and payload seed are the expected ones, and the payload
/// matches the digest (and, for `pattern`, is the pattern). No allocation.
///
/// For `expect.generation == 0` (never written) a chunk passes unless it holds a valid
/// header of this run: such a chunk is either newer than the state or misdirected, which
/// [`super::diagnose()`] tells apart.
pub fn check_chunk(chunk: &[u8], expect: &Expect, ctx: &Context<'_>) -> bool {
    if usize::try_from(expect.len).ok() != Some(chunk.len()) {
        return false;
    }
    let header = decode_header(chunk);
    if expect.generation == 0 {
        return !matches!(header, Ok(h) if h.fields.run_id == expect.run_id);
    }
    match header {
        Ok(h) => header_matches(&h, expect, ctx) && payload_ok(chunk, &h, ctx),
        Err(_) => false,
    }
}

/// Every header field is the expected one.
fn header_matches(h: &Header, e: &Expect, ctx: &Context<'_>) -> bool {
    let f = &h.fields;
    f.offset == e.offset
        && f.generation == e.generation
        && f.job == e.job
        && f.run_id == e.run_id
        && h.chunk_len == e.len
        && h.kind() == Some(ctx.kind)
        && f.seed == payload_seed(ctx.run_seed, e.offset, e.generation)
}

/// The payload matches the header's digest (for `pattern`, also the run's pattern; `meta`
/// has nothing to check). `h` must be the valid header of `chunk`.
pub(crate) fn payload_ok(chunk: &[u8], h: &Header, ctx: &Context<'_>) -> bool {
    let Some(kind) = h.kind() else { return false };
    let payload = chunk.get(HEADER_LEN..).unwrap_or_default();
    match kind {
        CheckKind::Meta => true,
        CheckKind::Pattern => is_pattern(ctx.pattern, payload) && kind.digest(payload) == h.digest,
        _ => kind.digest(payload) == h.digest,
    }
}

/// Checks every chunk of a block read at `block_offset`; for each chunk that fails the fast
/// check, calls `on_bad(expect, chunk)` (the caller diagnoses it). Returns the number of
/// failed chunks. `expect_of(chunk_offset)` builds each chunk's [`Expect`] from the caller's
/// generation table (its `len` must be `interval`). No allocation.
pub fn check_block(
    block: &[u8],
    block_offset: u64,
    interval: usize,
    ctx: &Context<'_>,
    mut expect_of: impl FnMut(u64) -> Expect,
    mut on_bad: impl FnMut(&Expect, &[u8]),
) -> Result<usize, StampError> {
    check_block_layout(block.len(), interval)?;
    let mut bad = 0;
    let mut offset = block_offset;
    for chunk in block.chunks_exact(interval) {
        let e = expect_of(offset);
        if !check_chunk(chunk, &e, ctx) {
            bad += 1;
            on_bad(&e, chunk);
        }
        offset = offset.wrapping_add(interval as u64);
    }
    Ok(bad)
}
