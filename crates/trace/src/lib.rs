//! Block I/O traces for the `cache` simulator: one request model, readers for the common
//! trace formats, a compact binary format, and synthetic traces. Pure: no device I/O.
//!
//! - [`open`] streams a trace file (optionally `.gz`) in any [`TraceFormat`] as a
//!   [`TraceReader`], an iterator of [`Request`]s rebased to start at `t_ns = 0`. Beside
//!   each request, [`TraceReader::recorded_latency_ns`] gives the latency the trace recorded
//!   for it, where the format has one (MSR, blkparse `Q`/`D` paired with `C`, binary v2).
//! - [`binary`] is diskmeter's own compact format ([`BinaryWriter`], [`BinaryReader`];
//!   [`convert`] writes any trace in it, with the recorded latencies when the source has
//!   them), several times faster to read than any text format.
//! - [`synth`] generates uniform, Zipf and hot-set traces deterministically from a seed.

#![cfg_attr(test, allow(clippy::unwrap_used))]

//!
//! Modules depend on each other in one direction only (each uses only those above it):
//! `error`, `request` → `lines`, `format` → `parse` (`fields`, `line`, then one module per
//! text format) → `binary` → `detect` → `pair` (blkparse's reorder buffer, pairing requests
//! with their completions) → `reader` → `convert`, `input` (a command's trace: its file, format and
//! reading options); `synth` needs only `error` and `request`.

pub mod binary;
mod convert;
mod detect;
mod error;
pub mod format;
/// Only with the `fuzz` feature: for the fuzz target and its corpus replay test.
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz_support;
pub mod input;
mod lines;
mod pair;
mod parse;
mod reader;
mod request;
pub mod synth;

pub use binary::{BinaryReader, BinaryWriter};
pub use convert::{convert, ConvertEnd, ConvertStats};
pub use detect::{detect_file, detect_reader};
pub use error::TraceError;
pub use format::{CsvMapping, Delimiter, SizeUnit, TimeUnit, TraceFormat};
pub use input::{from_the_start, trace_format, InputError, TraceInput};
pub use reader::{open, ReadOptions, TraceReader};
pub use request::{Op, Request};
pub use synth::{parse_dist, Dist, Synth, SynthParam, SynthSpec};
