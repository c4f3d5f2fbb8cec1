//! diskmeter's I/O engine: targets, engines (io_uring, psync, null, mem), workers, data safety.
//!
//! Layers: `backend` (one trait, three engines; `mem` the fourth) ← `worker` (the hot loop)
//! ← `runner` (threads, collection, results) ← `session` (whole commands: targets, groups,
//! honesty checks). `probe`, `safety`, `sparse`, `sample` and `target` deal with what is
//! being measured.
pub mod backend;
pub mod buffers;
pub mod compare;
pub mod devview;
pub mod error;
pub mod fault;
pub mod mem;
pub mod memory;
pub mod offsets;
pub mod probe;
pub mod runner;
pub mod safety;
pub mod sample;
pub mod session;
pub mod sla;
pub mod sparse;
pub mod surface;
pub mod target;
pub mod worker;

pub use error::{EngineError, Result};
