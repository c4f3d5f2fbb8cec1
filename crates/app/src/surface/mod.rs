//! `surface`: an HD Tune / badblocks-style scan of a whole device or file — transfer rate
//! per zone, random access time, a latency map, slow blocks (re-read to confirm) and bad
//! sectors (narrowed to the logical block).
//!
//! Modes: `read` (never writes), `nondestructive` (per block: read the original, write a
//! pattern, verify, write the original back, verify — like `badblocks -n`) and
//! `destructive` (per pattern: write the whole span, then read-verify it — `badblocks -w`).
//! Both writing modes pass the data-safety guard and need `--destroy-data` naming the
//! device (or `--overwrite` for a file). Ctrl-C stops after the current block; the
//! non-destructive mode puts that block back first.
//!
//! The scan itself (opening the target, the passes, narrowing, slow-block re-reads, access
//! time, `--qd`) is the engine's kernel, [`engine::scan`], which reports progress to an
//! [`engine::scan::SurfaceObserver`]. This module holds the command around it: the options,
//! their limits and defaults ([`Config`], `command`), the result document with `report`'s
//! verdict (`document`), the bad-block list in `--fs-block` units and its file
//! (`badblocks`), and how a scan ends ([`Ending`], `policy`).

mod badblocks;
mod command;
mod document;
mod policy;

pub use command::{parse_byte, parse_fs_block, parse_mode, parse_patterns, run, Config, Options, Outcome};
pub use policy::Ending;

/// The scan's settings when the command line leaves them out, as typed.
pub const MODE: &str = "read";
pub const BLOCK: &str = "1M";
pub const QD: &str = "1";
pub const ZONES: &str = "100";
pub const SLOW_FACTOR: &str = "5";
pub const SLOW_WINDOW: &str = "64";
pub const SLOW_FLOOR: &str = "20ms";
pub const REREADS: &str = "2";
pub const ACCESS: &str = "200";
pub const PATTERN: &str = "0xaa";
pub const PATTERNS: &str = "0xaa,0x55,0xff,0x00";
pub const FS_BLOCK: &str = "4096";
