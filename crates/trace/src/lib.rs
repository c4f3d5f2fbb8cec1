//! Block I/O traces for the `cache` simulator: one request model, readers for the common
//! trace formats, a compact binary format, and synthetic traces. Pure: no device I/O.
//!
//! - [`open`] streams a trace file (optionally `.gz`) in any [`TraceFormat`] as a
//!   [`TraceReader`], an iterator of [`Request`]s rebased to start at `t_ns = 0`.
//! - [`binary`] is diskmeter's own compact format ([`BinaryWriter`], [`BinaryReader`],
//!   [`convert`]), several times faster to read than any text format.
//! - [`synth`] generates uniform, Zipf and hot-set traces deterministically from a seed.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod binary;
mod error;
pub mod format;
#[doc(hidden)]
pub mod fuzz_support;
mod lines;
mod parse;
mod reader;
pub mod synth;

pub use binary::{convert, BinaryReader, BinaryWriter, ConvertEnd, ConvertStats};
pub use error::TraceError;
pub use format::{CsvMapping, Delimiter, SizeUnit, TimeUnit, TraceFormat};
pub use reader::{detect_file, detect_reader, open, ReadOptions, TraceReader};
pub use synth::{parse_dist, Dist, Synth, SynthParam, SynthSpec};

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read data.
    Read,
    /// Write data.
    Write,
    /// Discard / trim: invalidates cached data, moves none.
    Discard,
    /// Flush / FUA barrier without data.
    Flush,
}

/// One block request, in bytes. `t_ns` is nanoseconds since the start of the trace (readers
/// rebase absolute timestamps to the first request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Issue time, ns since the start of the trace.
    pub t_ns: u64,
    /// First byte addressed.
    pub offset: u64,
    /// Length in bytes (0 for flushes).
    pub len: u32,
    /// What the request does.
    pub op: Op,
    /// Device / volume id as the trace names it, mapped to a small integer by the reader.
    pub dev: u32,
}
