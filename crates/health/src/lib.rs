//! diskmeter health: SMART through smartctl's JSON, verdicts, self-tests and the SSD
//! endurance forecast.
//!
//! smartctl (smartmontools ≥ 7.0) is the only SMART source: diskmeter never sends ATA or
//! NVMe pass-through commands itself. The layers:
//! - [`smartctl`]: runs `smartctl -j …` behind the [`smartctl::SmartSource`] trait (a
//!   real runner and a fixture one for tests); [`process`] bounds each run in time;
//! - [`model`]: smartctl's JSON → a typed report, tolerant of missing keys;
//! - [`verdict`]: failing / warning / healthy / unavailable, with reasons;
//! - [`topology`]: partitions, dm, md, files and mount points → physical whole disks;
//! - [`state`] and [`endurance`]: write-rate history across runs and the forecast;
//!   [`known`]: the published ratings of a few models, with their source;
//! - [`selftest`]: start a self-test and follow its progress;
//! - [`report`] ties them together, [`render`] prints human text and JSON.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod endurance;
pub mod error;
pub mod exit;
pub mod known;
pub mod model;
pub mod process;
pub mod render;
pub mod report;
pub mod selftest;
pub mod smartctl;
pub mod state;
pub mod topology;
pub mod units;
pub mod verdict;

pub use error::HealthError;
