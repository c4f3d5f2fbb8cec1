//! diskmeter's I/O engine: targets, engines (io_uring, psync, null, mem), workers, data safety.
//!
//! Layers: `backend` (one trait, three engines; `mem` the fourth) ← `worker` (the hot loop)
//! ← `runner` (threads, collection, results). `probe`, `safety`, `sparse`, `sample` and
//! `target` deal with what is being measured. Whole commands live in the `app` crate.
pub mod backend;
pub mod buffers;
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
pub mod sparse;
pub mod target;
pub mod worker;

pub use error::{EngineError, Result};
