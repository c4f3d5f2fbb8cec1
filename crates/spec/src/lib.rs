//! diskmeter's workload model: job specifications, units, distributions and the fio
//! job-file dialect. Pure data and parsing — no I/O besides reading a job file's text.

pub mod error;
pub mod fiojob;
pub mod model;
pub mod units;
pub mod validate;

pub use error::SpecError;
pub use model::*;
