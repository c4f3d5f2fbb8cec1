//! The `sla` result: capacity under a latency bound (`docs/METHOD.md`, "sla"). Field names are
//! a contract (`docs/result-schema.md`): `latency_ns`, `percentile`, `best`, `points`, `knee`,
//! `search_seconds`.

use serde::{Deserialize, Serialize};

use crate::lat::LatSummary;

/// Which latency statistic the bound applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Percentile {
    #[serde(rename = "mean")]
    Mean,
    #[serde(rename = "50")]
    P50,
    #[serde(rename = "90")]
    P90,
    #[serde(rename = "99")]
    P99,
    #[serde(rename = "99.9")]
    P99_9,
}

impl Percentile {
    /// Parse `mean`, `50`, `90`, `99`, `99.9` (also with a leading `p`).
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        let s = s.strip_prefix(['p', 'P']).unwrap_or(s);
        Some(match s {
            "mean" | "avg" | "average" => Self::Mean,
            "50" | "median" => Self::P50,
            "90" => Self::P90,
            "99" => Self::P99,
            "99.9" => Self::P99_9,
            _ => return None,
        })
    }

    /// The JSON spelling: `mean`, `50`, `90`, `99`, `99.9`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::P50 => "50",
            Self::P90 => "90",
            Self::P99 => "99",
            Self::P99_9 => "99.9",
        }
    }

    /// Label for text: `mean`, `p50`, `p90`, `p99`, `p99.9`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::P50 => "p50",
            Self::P90 => "p90",
            Self::P99 => "p99",
            Self::P99_9 => "p99.9",
        }
    }

    /// Quantile in [0, 1]; `None` for the mean.
    pub fn quantile(self) -> Option<f64> {
        match self {
            Self::Mean => None,
            Self::P50 => Some(0.5),
            Self::P90 => Some(0.9),
            Self::P99 => Some(0.99),
            Self::P99_9 => Some(0.999),
        }
    }

    /// The statistic taken from a latency summary, in ns.
    pub fn of(self, l: &LatSummary) -> f64 {
        match self {
            Self::Mean => l.mean,
            Self::P50 => l.p50 as f64,
            Self::P90 => l.p90 as f64,
            Self::P99 => l.p99 as f64,
            Self::P99_9 => l.p99_9 as f64,
        }
    }
}

/// The whole `sla` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaResult {
    /// The bound, in ns.
    pub latency_ns: u64,
    /// The statistic bounded: `mean`, `50`, `90`, `99`, `99.9`.
    pub percentile: Percentile,
    /// `closed-loop` (queue depth × workers) or `open-loop` (offered rate).
    pub mode: String,
    /// True when every grid point was measured (`--exhaustive`).
    pub exhaustive: bool,
    /// The workload streams, e.g. `["randread"]` or `["randread", "randwrite"]`.
    pub streams: Vec<String>,
    /// Block size of every stream, bytes.
    #[serde(default)]
    pub bs: u64,
    /// Highest-IOPS feasible point; `None` when even the first point misses the bound.
    pub best: Option<SlaPoint>,
    /// Every measured point, in measurement order.
    pub points: Vec<SlaPoint>,
    /// Where latency starts to grow faster than throughput (on the best worker count).
    pub knee: Option<SlaPoint>,
    /// Depth went up and IOPS went down ("thrashing", `docs/METHOD.md`, "sla").
    #[serde(default)]
    pub thrashing: Vec<Thrash>,
    /// Even the shallowest point (QD 1, one worker) misses the bound.
    pub qd1_misses: bool,
    /// Wall time of the search (ramps and re-measurements included), seconds.
    pub search_seconds: f64,
    /// One plain-language sentence with the answer.
    pub verdict: String,
}

/// One measured point of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaPoint {
    /// Queue depth per worker (per stream for two streams; see `streams`).
    pub qd: u32,
    /// Workers per stream.
    pub threads: u32,
    /// Offered rate (open-loop mode only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
    /// I/Os in flight at most: sum over streams of qd × threads.
    pub outstanding: u32,
    /// All streams together.
    pub iops: f64,
    pub mb_s: f64,
    /// Latency of the constraining stream (the one with the highest bounded statistic).
    pub lat_ns: LatSummary,
    /// The bounded statistic of the constraining stream, ns.
    pub metric_ns: f64,
    pub feasible: bool,
    /// Measurement windows used (one second each) and their coefficients of variation.
    pub windows: u32,
    pub cv_iops: f64,
    pub cv_lat: f64,
    /// IOPS and the bounded statistic settled before the window cap: their relative
    /// standard error over the windows (cv / sqrt(windows)) fell under the target.
    pub stable: bool,
    /// The point was close to the bound and measured a second time.
    #[serde(default)]
    pub remeasured: bool,
    /// Rejected early: far over the bound after the minimum windows.
    #[serde(default)]
    pub early_reject: bool,
    /// Seconds since the search started when this point was finished.
    pub t_s: f64,
    /// Per-stream figures (one entry per job).
    pub streams: Vec<SlaStream>,
}

/// One stream's share of a point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlaStream {
    pub name: String,
    pub qd: u32,
    pub threads: u32,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_ns: LatSummary,
}

/// Deeper queue, fewer IOPS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thrash {
    pub threads: u32,
    pub from_qd: u32,
    pub to_qd: u32,
    pub from_iops: f64,
    pub to_iops: f64,
}
