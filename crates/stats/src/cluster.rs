//! Results of several hosts at once: what each rank measured, and the merged figures
//! (`ResultDoc::cluster`). Made by `diskmeter` under `mpirun` (rank 0 gathers every rank's
//! document) and by `diskmeter merge` (documents written by independent runs); both merge
//! the same way, so they give the same figures for the same documents.
//!
//! The merged `results` hold sums of IOPS, MB/s and queue depth, the operation-weighted
//! mean latency, the maximum, and percentiles of the union of every rank's histogram —
//! never averaged percentiles.

use serde::{Deserialize, Serialize};

/// A job's lossless latency histograms (HdrHistogram V2-deflate, base64; see
/// [`crate::LatHist::to_base64_v2`]). `None` for a direction that did no I/O.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Histograms {
    pub read: Option<String>,
    pub write: Option<String>,
    /// One entry per point of the job's `series`, in order: that second's histograms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<IntervalHistograms>,
}

/// One interval's histograms.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IntervalHistograms {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<String>,
}

/// When a measured window ran, by the wall clock, so that results of several hosts line up.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MeasuredWindow {
    /// Start of the measured window (after the ramp), Unix time in nanoseconds.
    pub start_unix_ns: u64,
    /// End of the measured window, Unix time in nanoseconds.
    pub end_unix_ns: u64,
    /// Seconds from the moment every rank was released (the barrier's release under MPI,
    /// `--start-at`'s instant otherwise) to this window's start; `None` when nothing
    /// released the ranks together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset_s: Option<f64>,
}

/// How the ranks' documents came together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClusterSource {
    /// One `mpirun`: rank 0 gathered every rank's figures.
    Mpi,
    /// `diskmeter merge` of documents written by independent runs.
    Merge,
}

/// The multi-host section of a result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterResult {
    pub source: ClusterSource,
    /// Every rank (or merged document), in rank order.
    pub ranks: Vec<RankInfo>,
    /// Per job (or `mark` test), in the order of `results`.
    pub jobs: Vec<ClusterJob>,
    /// The rank whose failure ended the run, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_rank: Option<u32>,
}

/// One rank: where it ran and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankInfo {
    pub rank: u32,
    pub host: String,
    /// The rank's target path (after `{rank}`, `{host}`, `{size}` expansion).
    pub target: Option<String>,
    pub started_at: String,
    /// This rank's result is partial (it failed, was stopped by another rank's failure, or
    /// was interrupted).
    pub partial: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::ErrorInfo>,
}

/// One job across the ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterJob {
    pub name: String,
    /// Per rank, in rank order (ranks without this job are left out).
    pub hosts: Vec<HostFigures>,
    /// The rank with the lowest IOPS.
    pub slowest_rank: Option<u32>,
    /// Latest minus earliest start of the measured windows, seconds (by the wall clock:
    /// across hosts this includes their clock offset).
    pub start_skew_s: f64,
    /// The window in which every rank was still measuring (IOR's stonewall), next to the
    /// whole-run figures in `results`.
    pub stonewall: Option<Stonewall>,
    /// Per wall-clock second since the earliest start: summed IOPS and MB/s, merged p99.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelinePoint>,
}

/// One rank's headline figures for a job (reads and writes together).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostFigures {
    pub rank: u32,
    pub host: String,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: u64,
    pub lat_max_ns: u64,
    pub qd_mean: f64,
    pub seconds: f64,
    /// Start of the measured window, Unix time in ns (0 when the document has none).
    pub start_unix_ns: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_offset_s: Option<f64>,
}

/// Figures of the window in which every rank was measuring.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stonewall {
    /// Length of the common window, seconds.
    pub seconds: f64,
    pub iops: f64,
    pub mb_s: f64,
}

/// One second of the merged timeline.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// End of the second, seconds since the earliest rank's start.
    pub t_s: f64,
    /// End of the second, Unix time in seconds.
    pub unix_s: f64,
    pub iops: f64,
    pub mb_s: f64,
    /// p99 of the union of the ranks' histograms of this second (reads and writes).
    pub lat_p99_ns: u64,
    /// Ranks that contributed to this second.
    pub ranks: u32,
}
