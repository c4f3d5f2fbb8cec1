//! diskmeter's I/O kernel: targets, engines (io_uring, iocp, psync, null, mem), workers, data safety.
//!
//! Two halves: [`io`] (engines, the worker's hot loop, the runner) and [`target`] (what is
//! being measured: opening, probing, the safety guard, hole and zero evidence, fault
//! injection). [`scan`] is the surface scan's kernel (its passes, narrowing to the bad sector,
//! slow-block re-reads, access time) and [`verify`] the I/O-free core of data verification.
//! Whole commands live in the `app` crate.
pub mod error;
pub mod io;
pub mod measure;
pub mod scan;
pub mod target;
pub mod verify;

pub use error::{EngineError, Result};
