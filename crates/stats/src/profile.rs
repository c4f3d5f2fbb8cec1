//! Workloads recorded and summarised: `capture`'s summary (a document of its own, schema
//! [`CAPTURE_SCHEMA`]) and `profile`'s section of the result document ([`ProfileResult`]).
//! Numbers only; the sentences about them are in `report`.

use serde::{Deserialize, Serialize};

use crate::lat::LatSummary;

/// Schema of the document `diskmeter capture --json` prints.
pub const CAPTURE_SCHEMA: &str = "diskmeter.capture.v1";

/// What `diskmeter capture` recorded, and what it could not.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CaptureSummary {
    /// [`CAPTURE_SCHEMA`].
    pub schema: String,
    /// diskmeter's version.
    pub version: String,
    /// RFC 3339 UTC time the capture started.
    pub started_at: String,
    /// The device as given on the command line.
    pub device: String,
    /// Its kernel name (`loop0`, `sda1`): the device name stored in the trace.
    pub name: String,
    /// `MAJOR:MINOR` of the device.
    pub dev: String,
    /// A partition: the whole disk's kernel name and the partition's place on it (requests
    /// are filtered to it and their offsets made relative to its start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<CapturePartition>,
    /// The trace written (diskmeter's binary format).
    pub output: String,
    /// Version of the binary trace written: 2 when each request carries its latency.
    pub trace_version: u16,
    /// From enabling the tracepoints to disabling them.
    pub duration_s: f64,
    /// Online CPUs read (one kernel buffer each) and each buffer's size.
    pub cpus: u32,
    pub buffer_kib_per_cpu: u64,
    /// Requests written to the trace, by operation, and their bytes.
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub discards: u64,
    pub flushes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    /// Requests that completed with an error (they are in the trace).
    pub errors: u64,
    /// Issue → completion latency of the requests written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<LatSummary>,
    /// Tracepoint events read from the kernel's buffers.
    pub events: u64,
    /// Events the kernel could not store (its buffer was full: `overrun`, `commit overrun`,
    /// `dropped events` of the per-CPU stats, or pages marked as having missed events).
    pub lost_events: u64,
    /// Requests seen but not written, and why.
    pub dropped: CaptureDropped,
    /// Ctrl-C (or another terminating signal) ended the capture before `--duration`.
    pub interrupted: bool,
}

/// A partition's place on its disk.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CapturePartition {
    pub disk: String,
    pub start_bytes: u64,
    pub size_bytes: u64,
}

/// Requests the capture saw but did not write to the trace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CaptureDropped {
    /// Completions whose issue came before the capture started (or was lost).
    pub issued_before_start: u64,
    /// Requests issued during the capture and still in flight when it ended.
    pub in_flight_at_end: u64,
    /// Requests the driver gave back (`block_rq_requeue`); their reissue is recorded.
    pub requeued: u64,
    /// Requests without a completion for more than 60 s (counted, not waited for).
    pub no_completion: u64,
    /// Requests that are neither reads, writes, discards nor flushes (write-zeroes, zone
    /// management, driver-private).
    pub other_ops: u64,
}

/// The `profile` section: one streaming pass over a trace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProfileResult {
    pub trace: ProfileTrace,
    /// Requests read (after `--device`, `--from`, `--until`).
    pub requests: u64,
    pub bytes: u64,
    /// Reads' share of reads and writes, by count and by bytes (0..=1).
    pub read_fraction: f64,
    pub read_byte_fraction: f64,
    /// One entry per operation present, in the order read, write, discard, flush.
    pub ops: Vec<OpProfile>,
    /// Sequential requests among reads, writes and discards (see [`OpProfile::sequential`]).
    pub sequential_fraction: f64,
    /// The hot-set curve over the footprint in 4 KiB blocks.
    pub hot_set: HotSet,
    /// Time between consecutive requests (any device) and the mean rate.
    pub arrivals: Arrivals,
    /// Outstanding requests over time: only where the trace recorded completion times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<DepthProfile>,
    /// The latency the trace recorded, where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<LatSummary>,
    /// The fio job written with `--emit-job`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<ProfileJob>,
}

/// The trace profiled.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProfileTrace {
    pub path: String,
    pub format: String,
    pub devices: Vec<String>,
    /// From the first to the last request's issue time.
    pub span_s: f64,
    #[serde(default)]
    pub skipped_lines: u64,
    /// The format can carry recorded latencies (binary v2, MSR, blkparse Q/D).
    pub carries_latency: bool,
    /// Requests that came with a recorded latency.
    pub requests_with_latency: u64,
}

/// One operation's figures.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OpProfile {
    /// `read`, `write`, `discard` or `flush`.
    pub op: String,
    pub requests: u64,
    pub bytes: u64,
    /// Share of all requests and of all bytes (0..=1).
    pub fraction: f64,
    pub byte_fraction: f64,
    /// Requests that start at the byte where the previous request of the same operation on
    /// the same device ended (0..=1; 0 for flushes).
    pub sequential: f64,
    /// Block sizes by count, most frequent first (at most [`MAX_SIZES_SHOWN`]).
    pub sizes: Vec<SizeCount>,
    /// Requests of the sizes not listed in `sizes`.
    #[serde(default)]
    pub other_sizes: u64,
}

/// Block sizes listed per operation; the rest are summed in [`OpProfile::other_sizes`].
pub const MAX_SIZES_SHOWN: usize = 16;

/// Requests of one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SizeCount {
    pub bytes: u64,
    pub count: u64,
}

/// How concentrated the I/O is: each read or write adds one access to every 4 KiB block it
/// touches; the footprint is the set of blocks touched.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HotSet {
    pub block_bytes: u64,
    pub footprint_blocks: u64,
    pub accesses: u64,
    /// The share of accesses that fall on the hottest `footprint_pct` % of the footprint.
    pub points: Vec<HotPoint>,
}

/// One point of the hot-set curve.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HotPoint {
    /// Share of the footprint, in percent (1, 5, 10, 20, 50, 100).
    pub footprint_pct: f64,
    /// Share of the accesses on it (0..=1).
    pub share: f64,
}

/// Inter-arrival times.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Arrivals {
    /// Requests per second over the span (requests − 1 over first to last).
    pub mean_iops: f64,
    /// Gaps between consecutive requests, ns (a request stamped before the one before it
    /// counts as a gap of 0 and in `out_of_order`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap_ns: Option<LatSummary>,
    pub out_of_order: u64,
}

/// Requests in flight, from each request's issue time and recorded latency.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DepthProfile {
    /// Time-weighted mean over the span (the sum of latencies over the span: Little's law).
    pub mean: f64,
    pub max: u64,
    /// Requests already in flight when a request arrives.
    pub at_arrival_p50: u64,
    pub at_arrival_p90: u64,
    pub at_arrival_p99: u64,
    /// Time-weighted mean per interval, in order.
    pub series: Vec<DepthPoint>,
}

/// The mean depth in `[t_s, t_s + interval_s)`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DepthPoint {
    pub t_s: f64,
    pub interval_s: f64,
    pub mean: f64,
}

/// The fio job written by `profile --emit-job`: what it asks for, and what of the trace it
/// could not express.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProfileJob {
    pub path: String,
    /// `size=`: the footprint, rounded up to a whole number of the largest block size.
    pub size_bytes: u64,
    /// `runtime=` (with `time_based`): the trace's span, whole seconds, at least 1.
    pub runtime_s: u64,
    /// `random_distribution=` (random jobs), e.g. `zoned:40.5/1:…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    /// Sequential jobs (`rw=read|write|readwrite`) instead of random ones.
    pub sequential: bool,
    /// `fsync=`: a flush every this many writes (the trace's writes per flush).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync: Option<u64>,
    /// The job sections, run together.
    pub jobs: Vec<ProfileJobSection>,
    /// `iodepth` comes from the trace's outstanding requests (else a default).
    pub depth_from_trace: bool,
    /// Sizes not given a job of their own, and the size their requests were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub folded: Vec<FoldedSize>,
    /// Discards in the trace (the dialect has none).
    #[serde(default)]
    pub discards_left_out: u64,
}

/// One `[section]` of the emitted job.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProfileJobSection {
    pub name: String,
    /// `rw=`.
    pub rw: String,
    /// `rwmixread=` (mixed jobs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_pct: Option<u8>,
    pub bs: u64,
    pub iodepth: u32,
    /// `rate_iops=`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
}

/// A block size folded into its operation's dominant size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FoldedSize {
    /// `read` or `write`.
    pub op: OpName,
    pub bytes: u64,
    pub count: u64,
    /// The size the job issues instead.
    pub into_bytes: u64,
}

/// A data operation's name in [`FoldedSize`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpName {
    #[default]
    Read,
    Write,
}

impl OpName {
    pub fn as_str(self) -> &'static str {
        match self {
            OpName::Read => "read",
            OpName::Write => "write",
        }
    }
}
