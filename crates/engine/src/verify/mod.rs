//! Data verification, the pure core: chunk layout, stamping, the fast check, diagnosis of
//! failures, and the state file. No I/O but the state file; the worker and `run --verify`
//! call it.
//!
//! A written block is split into verify chunks of `interval` bytes (fio's
//! `verify_interval`: by default the block size; a multiple of 512). Every chunk starts with
//! a 96-byte header ([`header`] has the layout) naming its offset, job, run and
//! *generation* (how many times this run has written the chunk), followed by a payload that
//! is a pure function of (run seed, offset, generation) — or fio's `verify_pattern` — so
//! the verifier regenerates any generation without storing data.
//!
//! Per I/O (no allocation):
//! * write: [`stamp_block`] (or [`stamp_chunk`] per chunk) fills payload and header;
//! * read: [`check_block`] / [`check_chunk`], true when header, fields and digest are right.
//!
//! Per failure (allocates): [`diagnose()`] says what the bytes are — torn, stale, misdirected,
//! zeroed, unwritten, corrupt, or newer than expected (not a failure) — as a serializable
//! [`Finding`] with a one-line [`Finding::summary`] and a hex dump.
//!
//! Between runs: [`VerifyState`] ([`save_state`], [`load_state`]) keeps the run id, seed,
//! kind, interval, target identity and every chunk's generation.
//!
//! The API in one place:
//! * options: [`CheckKind::parse`] / [`CheckKind::name`] (fio's `verify=`; `verify_pattern` and
//!   `verify_interval` are read and checked by the `spec` crate, with the job);
//! * payloads: [`payload_seed`]`(run_seed, offset, generation)`, [`fill_payload`]`(seed, buf)`,
//!   [`fill_pattern`]`(pattern, buf)`;
//! * write: [`stamp_chunk`]`(chunk, &HeaderFields, kind, pattern)`,
//!   [`stamp_block`]`(block, block_offset, interval, &BlockStamp, &Context, generation_of)`;
//! * read: [`decode_header`]`(chunk) -> Result<Header, HeaderError>`,
//!   [`check_chunk`]`(chunk, &Expect, &Context) -> bool`,
//!   [`check_block`]`(block, block_offset, interval, &Context, expect_of, on_bad) -> failures`;
//! * failures: [`diagnose()`]`(found, &Expect, &Context) -> Finding`, [`Finding::summary`],
//!   [`Finding::is_failure`], [`expected_bytes`];
//! * state: [`save_state`]`(path, &VerifyState)`, [`load_state`]`(path)`,
//!   [`state::parse_state`]`(bytes)`.
//!
//! The `meta` kind checks headers only, as fio's does: a chunk whose header is right but
//! whose tail sectors are torn passes [`check_chunk`].

pub mod checksum;
pub mod chunk;
pub mod diagnose;
/// Only with the `fuzz` feature: for the fuzz target and its corpus replay test.
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz_support;
pub mod header;
pub mod payload;
pub mod state;

#[cfg(test)]
mod tests;

pub use checksum::{CheckKind, DIGEST_LEN};
pub use chunk::{
    check_block, check_chunk, stamp_block, stamp_chunk, valid_chunk_len, BlockStamp, Context, Expect, StampError,
    SECTOR,
};
pub use diagnose::{diagnose, expected_bytes, Finding, FindingKind, SectorRun, GENERATION_WINDOW};
pub use header::{decode_header, Header, HeaderError, HeaderFields, HEADER_LEN};
pub use payload::{fill_pattern, fill_payload, payload_seed};
pub use state::{load_state, save_state, Region, TargetId, VerifyState};
