//! The SSD-cache simulator behind `diskmeter cache`. Pure computation over
//! [`trace::Request`]s: no device I/O, no command-line parsing.
//!
//! * [`qsan::QsanCache`] — the QSAN SSD-cache model (cache blocks / sub-blocks, read and write
//!   counters with populate thresholds, LRU of cache blocks, write-through / write-back /
//!   write-around / read-only, sequential cut-off), configured by [`config::CacheConfig`]
//!   and its presets.
//! * Comparison policies over fixed-size units, same [`stats::Stats`]: [`lru::Lru`],
//!   [`nhit::Nhit`] (Open CAS promotion), [`s3fifo::S3Fifo`], [`opt::Opt`] (Belady, offline).
//! * [`series`] — hit ratio over time, measured warm-up, the QSAN warm-up estimate.
//! * [`perf`] — hybrid throughput / latency by operational laws.
//! * [`stats::dwpd`] — SSD endurance use.
pub mod mrc;

mod access;
mod bits;
pub mod config;
mod counters;
pub mod lru;
pub mod nhit;
pub mod opt;
mod outcome;
pub mod perf;
pub mod policy;
pub mod qsan;
pub mod s3fifo;
mod seq;
pub mod series;
pub mod session;
mod slab;
pub mod stats;
mod stream;

pub use config::{CacheConfig, ConfigError, Mode, Preset};
pub use lru::Lru;
pub use nhit::Nhit;
pub use opt::{Opt, OptPlan};
pub use perf::{predict, Bottleneck, DeviceProfile, Prediction};
pub use policy::{Access, Policy};
pub use qsan::QsanCache;
pub use s3fifo::S3Fifo;
pub use series::{simulate, simulate_until, warmup, warmup_estimate, Series, SeriesBuilder, SeriesPoint, Warmup};
pub use stats::{dwpd, Stats};
