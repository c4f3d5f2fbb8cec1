//! diskmeter statistics: HDR latency histograms, per-interval series and the versioned
//! result model (`diskmeter.result.v1`). Pure: no I/O, no command-line parsing.
//!
//! Modules depend on each other in one direction only (each uses only those above it):
//! `codes`, `lat`, `infer` → `verdict` → `hist`, `sla`, `compare`, `cache`, `surface`,
//! `device`, `replay`, `profile`, `steady`, `verify` → `model` → `compare_docs` → `trend`.

pub mod cache;
pub mod cluster;
pub mod codes;
pub mod compare;
pub mod compare_docs;
pub mod device;
pub mod hist;
pub mod infer;
pub mod lat;
pub mod margin;
pub mod model;
pub mod profile;
pub mod replay;
pub mod sla;
pub mod steady;
pub mod surface;
pub mod trend;
pub mod verdict;
pub mod verify;

pub use cluster::{
    ClusterJob, ClusterResult, ClusterSource, Histograms, HostFigures, IntervalHistograms, MeasuredWindow, RankInfo,
    Stonewall, TimelinePoint,
};
pub use device::{DeviceView, DiskCounters};
pub use hist::codec::HistCodecError;
pub use hist::{LatHist, CDF_FRACTIONS, LAT_MAX_NS};
pub use lat::{CdfPoint, LatSummary};
pub use model::*;
