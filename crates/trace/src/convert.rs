//! [`convert`]: any trace, read with its reader, written in the binary format.

use std::io::{Seek, Write};
use std::path::Path;

use crate::binary::BinaryWriter;
use crate::error::TraceError;
use crate::format::TraceFormat;
use crate::reader::{open, ReadOptions};
use crate::request::Op;

/// What [`convert`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConvertStats {
    /// Requests written.
    pub requests: u64,
    /// Reads, writes and other requests (discards, flushes) among them.
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    /// Bytes read and written by them.
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Malformed lines skipped (with [`ReadOptions::skip_bad`]).
    pub skipped: u64,
    /// Devices written.
    pub devices: usize,
    /// Time of the last request written, ns (the trace's duration as kept).
    pub duration_ns: u64,
    /// Requests written with a recorded latency (in a version 2 output).
    pub with_latency: u64,
}

/// How a [`convert`] ended.
#[derive(Debug)]
pub enum ConvertEnd {
    /// Every request of the input was written.
    Complete,
    /// `stop` was set: the requests so far were written.
    Stopped,
    /// The input failed after `stats.requests` requests had been written (a trace cut short).
    Cut(TraceError),
}

/// Converts the trace at `input` (any format, `opts` applied: filters, rebasing, skipping)
/// into `writer`, checking `stop` every 64 Ki requests. An input that fails before its first
/// request is an `Err`; one that fails later ends as [`ConvertEnd::Cut`] with what was written.
/// The writer is left unfinished: call [`BinaryWriter::finish`] to keep the output.
///
/// When the input [carries latencies](crate::TraceReader::carries_latency) (MSR, blkparse
/// `Q`/`D`, binary version 2), a fresh writer (nothing written after its header) is switched
/// to version 2 ([`BinaryWriter::enable_latency`]) and each request is written with its
/// recorded latency; a writer created with latencies keeps them in any case. Otherwise the
/// output is version 1, as before.
pub fn convert<W: Write + Seek>(
    input: &Path,
    format: &TraceFormat,
    opts: &ReadOptions,
    writer: &mut BinaryWriter<W>,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(ConvertStats, ConvertEnd), TraceError> {
    let mut reader = open(input, format, opts)?;
    if reader.carries_latency() && writer.devices().is_empty() && writer.requests() == 0 {
        writer.enable_latency()?;
    }
    let latency = writer.carries_latency();
    let mut stats = ConvertStats::default();
    let mut end = ConvertEnd::Complete;
    while let Some(r) = reader.next() {
        if stats.requests % 65536 == 0 && stop.load(std::sync::atomic::Ordering::Relaxed) {
            end = ConvertEnd::Stopped;
            break;
        }
        let r = match r {
            Ok(r) => r,
            Err(e) if stats.requests == 0 => return Err(e),
            Err(e) => {
                end = ConvertEnd::Cut(e);
                break;
            }
        };
        while writer.devices().len() <= r.dev as usize {
            let name = reader.devices().get(writer.devices().len()).cloned().unwrap_or_default();
            writer.define_device(&name)?;
        }
        if latency {
            let lat = reader.recorded_latency_ns();
            writer.push_with_latency(r, lat)?;
            stats.with_latency += u64::from(lat.is_some_and(|l| l != 0));
        } else {
            writer.push(r)?;
        }
        stats.requests += 1;
        match r.op {
            Op::Read => {
                stats.reads += 1;
                stats.read_bytes += u64::from(r.len);
            }
            Op::Write => {
                stats.writes += 1;
                stats.write_bytes += u64::from(r.len);
            }
            Op::Discard | Op::Flush => stats.other += 1,
        }
        stats.duration_ns = stats.duration_ns.max(r.t_ns);
    }
    stats.devices = writer.devices().len();
    stats.skipped = reader.skipped();
    Ok((stats, end))
}
