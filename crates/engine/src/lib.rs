//! diskmeter's I/O engine: targets, engines (io_uring, psync, null), workers, data safety.
pub mod error;
pub use error::{EngineError, Result};
