//! What a scan is asked to do ([`SurfaceConfig`]) and whom it tells how far it got
//! ([`SurfaceObserver`]). The option strings behind these values, their limits and defaults
//! as typed are `app::surface`'s.

use std::path::PathBuf;
use std::time::Duration;

/// What the scan does to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    NonDestructive,
    Destructive,
}

impl Mode {
    /// The mode's name in results and messages.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::NonDestructive => "nondestructive",
            Mode::Destructive => "destructive",
        }
    }
}

/// The data the non-destructive mode writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Byte(u8),
    Random,
}

/// Everything a scan needs; `app::surface` builds it from the command's options.
#[derive(Debug, Clone)]
pub struct SurfaceConfig {
    pub mode: Mode,
    /// Bytes per block (a multiple of the logical block size).
    pub block: u64,
    pub offset: u64,
    /// Span length (default: to the end of the target).
    pub size: Option<u64>,
    /// Scan only this many evenly spaced blocks.
    pub sample: Option<u64>,
    /// Blocks in flight during the read pass (read mode; 1 = one at a time).
    pub qd: u32,
    pub zones: u32,
    pub slow_factor: f64,
    pub slow_window: u32,
    pub slow_floor: Duration,
    pub rereads: u32,
    /// Random access-time reads after the scan (0 = none).
    pub access: u32,
    /// Only measure the access time.
    pub access_only: bool,
    /// Non-destructive mode's pattern.
    pub pattern: Pattern,
    /// Destructive mode's patterns, in order.
    pub patterns: Vec<u8>,
    pub buffered: bool,
    pub overwrite: bool,
    pub destroy_data: Option<PathBuf>,
    /// At most this many latency-map cells.
    pub map_cells: usize,
    pub seed: u64,
}

impl Default for SurfaceConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Read,
            block: 1 << 20,
            offset: 0,
            size: None,
            sample: None,
            qd: 1,
            zones: 100,
            slow_factor: 5.0,
            slow_window: 64,
            slow_floor: Duration::from_millis(20),
            rereads: 2,
            access: 200,
            access_only: false,
            pattern: Pattern::Byte(0xaa),
            patterns: vec![0xaa, 0x55, 0xff, 0x00],
            buffered: false,
            overwrite: false,
            destroy_data: None,
            map_cells: 2000,
            seed: 0x5eed_5afe,
        }
    }
}

/// Progress of a scan. All methods have no-op defaults; the engine never prints.
pub trait SurfaceObserver {
    /// A phase starts: `label` and the bytes it will move.
    fn phase(&mut self, _label: &str, _total_bytes: u64) {}
    /// `done` bytes of the current phase are finished.
    fn progress(&mut self, _done: u64) {}
    fn phase_done(&mut self) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl SurfaceObserver for Quiet {}
