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
//! I/O is synchronous `pread`/`pwrite` at queue depth 1 (O_DIRECT when possible): a
//! surface scan measures each block in isolation, like HD Tune's and Victoria's scans.
//! `--qd N` (read mode) keeps N blocks in flight from N threads for devices that need depth
//! to reach their sequential rate; the blocks are judged afterwards in position order.

mod badblocks;
mod command;
mod policy;
mod scanner;
pub mod slow;

pub use command::{parse_byte, parse_fs_block, parse_patterns, run, Config, Options, Outcome};
pub use policy::Ending;
pub use scanner::{block_offsets, scan, scan_with, Mode, Pattern, Quiet, SurfaceConfig, SurfaceObserver};

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
