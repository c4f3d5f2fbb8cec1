//! diskmeter statistics: HDR latency histograms, per-interval series and the versioned
//! result model (`diskmeter.result.v1`). Pure: no I/O, no command-line parsing.

pub mod cache;
pub mod compare;
pub mod compare_docs;
pub mod device;
pub mod hist;
pub mod infer;
pub mod model;
pub mod sla;
pub mod surface;

pub use device::{DeviceView, DiskCounters};
pub use hist::{CdfPoint, LatHist, CDF_FRACTIONS, LAT_MAX_NS};
pub use model::*;

/// Errors from reading a result document.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("result document is not valid JSON for {SCHEMA}: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "unsupported result schema {found:?}: this diskmeter reads {SCHEMA:?} \
         (written by a different diskmeter version?)"
    )]
    Schema { found: String },
    #[error("not a diskmeter result document: no \"schema\" field (expected {SCHEMA:?})")]
    NoSchema,
}
