//! The I/O kernel: engines behind one trait, the worker's hot loop, and the runner that
//! starts workers and turns their output into results.
//!
//! Layers: [`backend`] (one trait, one file per engine: io_uring, psync, null, mem) ←
//! [`worker`] (the hot loop) ← [`runner`] (threads, collection, results).
//! [`buffers`] and [`offsets`] are what the worker touches per I/O; [`memory`] is what a
//! plan of workers will allocate, checked before any of them starts. [`replay`] is the
//! other issuing loop: a block trace's requests at their own times, one ring per target.
//! [`files`] picks the file of each I/O of a job over several files. [`verifier`] is
//! `--verify`'s table of chunk generations, touched per I/O by the workers of a verified job.
//!
//! The runner, memory and hand-off planning and the worker are the engine's own: the commands
//! reach them through [`crate::measure`].
pub mod backend;
pub mod buffers;
pub(crate) mod bursts;
pub mod files;
pub(crate) mod handoff;
pub(crate) mod memory;
pub mod offsets;
pub mod replay;
pub(crate) mod runner;
pub mod verifier;
pub mod wallclock;
/// The hot loop: the engine's own, reached through [`crate::measure`]; public only to the
/// engine's benchmarks (feature `internals`, set by its dev-dependency on itself).
#[cfg(feature = "internals")]
pub mod worker;
#[cfg(not(feature = "internals"))]
pub(crate) mod worker;
