//! The `replay` section of a result document: the trace, how it was mapped and timed, and
//! per pass the figures of each operation kind next to the trace's own, and the fidelity
//! (how late requests were issued against their intended times).

use crate::lat::LatSummary;
use serde::{Deserialize, Serialize};

/// `replay` only: what was replayed and how faithfully.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    pub trace: ReplayTrace,
    /// `original`, `afap` or `depth`.
    pub timing: String,
    /// Time scale of `original` timing (2.0 = twice as fast as recorded).
    pub speed: f64,
    /// Requests outstanding at most.
    pub qd: u32,
    /// `modulo`, `scale` or `offset`.
    pub map: String,
    pub targets: Vec<ReplayTarget>,
    /// Requests whose offset or length was rounded to the targets' direct-I/O block.
    pub realigned: u64,
    /// Requests cut to the largest length replayed (`max_request_bytes`).
    pub clamped: u64,
    pub max_request_bytes: u64,
    pub passes: Vec<ReplayPass>,
}

/// The trace as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayTrace {
    pub path: String,
    pub format: String,
    /// Requests replayed per pass (after the device selection).
    pub requests: u64,
    /// Every device the trace names.
    pub devices: Vec<String>,
    /// Lowest and highest byte the kept requests address.
    pub span_start: u64,
    pub span_end: u64,
    /// First to last request, seconds, in the trace's own time.
    pub duration_s: f64,
    /// Whether the trace carries its own latencies (compared with the replayed ones).
    pub recorded_latency: bool,
    /// Malformed lines skipped (`--skip-bad`).
    #[serde(default)]
    pub skipped_lines: u64,
}

/// One target and the trace devices replayed onto it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayTarget {
    pub path: String,
    pub size_bytes: u64,
    pub devices: Vec<String>,
    /// Bytes of the target the mapped requests may use (from 0).
    pub used_bytes: u64,
}

/// One pass over the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayPass {
    pub pass: u32,
    /// Start to last completion.
    pub seconds: f64,
    pub requests: u64,
    /// Per operation kind that occurred: read, write, discard, flush.
    pub ops: Vec<ReplayOpStats>,
    /// Requests completed on each target, in the order of `targets`.
    #[serde(default)]
    pub target_requests: Vec<u64>,
    pub fidelity: Fidelity,
}

/// Figures of one operation kind in one pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayOpStats {
    pub op: String,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mb_s: f64,
    /// From the intended issue time (`original` timing) or the issue to the completion.
    pub lat_ns: LatSummary,
    /// From the issue to the completion.
    pub service_ns: LatSummary,
    /// The latencies the trace recorded for the same requests, where it carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_ns: Option<LatSummary>,
}

/// How faithfully the pass followed the trace's timing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Fidelity {
    /// Issue time − intended time (`original` timing only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_ns: Option<LatSummary>,
    /// Share of requests issued within 1 ms of their intended time, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_time_pct: Option<f64>,
    /// Requests that were due while every slot was busy (the device's backlog).
    pub slot_waits: u64,
    /// Requests issued more than 1 ms late although a slot was free (the tool's own lag).
    pub tool_late: u64,
    /// Most requests outstanding at once.
    pub max_outstanding: u32,
    /// Mean requests outstanding (Σ service time / elapsed).
    pub qd_mean: f64,
    /// Discards that went through the synchronous BLKDISCARD fallback.
    #[serde(default)]
    pub sync_discards: u64,
}
