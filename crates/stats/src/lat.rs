//! The latency figures a result stores: the summary and the CDF points that a [`LatHist`]
//! produces and the result model carries.
//!
//! [`LatHist`]: crate::LatHist

use serde::{Deserialize, Serialize};

/// Completion-latency summary in nanoseconds; all zero when nothing completed.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatSummary {
    pub min: u64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
}

/// One point of a latency CDF: the fraction of I/Os completed within `ns`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CdfPoint {
    pub fraction: f64,
    pub ns: u64,
}
