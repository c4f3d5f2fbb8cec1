//! diskmeter top: the live I/O monitor (issue 5).
//!
//! Layers: [`sample`] reads raw samples (live /proc, or a recording), [`monitor`] turns two
//! samples into an interval [`monitor::Report`] with [`diskstats`] deltas, [`metrics`]
//! (iostat -x and perfmon figures), [`psi`], [`procs`] (with [`taskstats`] delays) and a
//! [`verdict`]; [`render`] prints it as text or JSON Lines, [`run`] drives plain mode and
//! recordings, [`tui`] the terminal UI.

pub mod capture;
pub mod devices;
pub mod diskstats;
mod error;
pub mod metrics;
pub mod monitor;
pub mod procs;
pub mod psi;
pub mod render;
pub mod run;
pub mod sample;
pub mod taskstats;
pub mod tui;
pub mod verdict;

pub use error::MonitorError;
pub use monitor::{Monitor, Options, Report, SortKey};
pub use render::Columns;
