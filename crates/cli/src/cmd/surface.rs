//! `diskmeter surface`: options → app::surface, then the results and the exit.

use super::common::{HistoryArgs, OutputArgs};
use crate::output::{self, Outcome};
use crate::progress::Progress;
use crate::signals;
use app::output::Outputs;
use app::surface;
use clap::Args;
use std::path::PathBuf;

/// Options of `diskmeter surface`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Modes:
  read            reads every block; never writes (the default)
  nondestructive  per block: read the original, write a pattern, read it back and compare,
                  write the original back and compare again (like badblocks -n); Ctrl-C and
                  errors stop only after the block in hand is restored
  destructive     per pattern: write the whole span, then read it back and compare
                  (like badblocks -w); the target ends filled with the last pattern
Both writing modes need --destroy-data naming the device (and pass the safety guard:
never a mounted, swap, held or system device), or --overwrite for a file.

Slow blocks: latency > --slow-factor x the median of the previous --slow-window blocks and
above --slow-floor (so scheduling jitter on fast devices is not flagged); each is re-read
--rereads times: \"confirmed\" when every re-read is slow too, else \"transient\".
Read errors are narrowed to the logical block (sector) and recorded with their errno.

Exit status: 0 scan complete, no bad sectors (slow blocks do not change it); 1 bad
sectors found (full results are still printed), a runtime fault, a block that could not
be restored, or the device vanished; 2 bad input (nothing read or written); 130
interrupted (the part scanned is printed, marked partial).

Examples:
  diskmeter surface /dev/sdb                       read scan of the whole disk
  diskmeter surface /dev/sdb --sample 2000         quick benchmark: 2000 evenly spaced blocks
  diskmeter surface /dev/sdb1 --badblocks-out bb.txt; e2fsck -l bb.txt /dev/sdb1   (unmounted)
  diskmeter surface /dev/sdb --mode destructive --destroy-data /dev/sdb")]
pub struct SurfaceArgs {
    /// Block device or file to scan (the whole of it unless --offset/--size).
    #[arg(value_name = "TARGET")]
    pub target_pos: Option<PathBuf>,
    /// Same as the positional TARGET.
    #[arg(long, value_name = "PATH", conflicts_with = "target_pos")]
    pub target: Option<PathBuf>,
    /// read (never writes), nondestructive (read, write pattern, verify, restore) or destructive.
    #[arg(long, default_value = app::surface::MODE, value_name = "MODE")]
    pub mode: String,
    /// Bytes per scanned block (a multiple of the logical block size).
    #[arg(long, default_value = app::surface::BLOCK, value_name = "SIZE")]
    pub block: String,
    /// Start of the span [default: 0].
    #[arg(long, value_name = "SIZE")]
    pub offset: Option<String>,
    /// Length of the span [default: to the end of the target].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Read only N evenly spaced blocks (HD Tune's quick benchmark); read and nondestructive modes.
    #[arg(long, value_name = "N")]
    pub sample: Option<String>,
    /// Blocks in flight during a read scan (read mode; slow-block re-reads run at 1).
    #[arg(long, default_value = app::surface::QD, value_name = "N")]
    pub qd: String,
    /// Zones of the transfer-rate chart (MB/s per zone = bytes / summed time of its blocks).
    #[arg(long, default_value = app::surface::ZONES, value_name = "N")]
    pub zones: String,
    /// A block is slow above this many times the rolling median latency.
    #[arg(long, default_value = app::surface::SLOW_FACTOR, value_name = "K")]
    pub slow_factor: String,
    /// Blocks in the rolling median.
    #[arg(long, default_value = app::surface::SLOW_WINDOW, value_name = "N")]
    pub slow_window: String,
    /// Never flag a block faster than this (jitter on fast devices), e.g. 20ms.
    #[arg(long, default_value = app::surface::SLOW_FLOOR, value_name = "DURATION")]
    pub slow_floor: String,
    /// Re-reads of a slow block to tell confirmed from transient (1 to 10).
    #[arg(long, default_value = app::surface::REREADS, value_name = "N")]
    pub rereads: String,
    /// Random 4k reads for the access time after the scan (0 = none).
    #[arg(long, default_value = app::surface::ACCESS, value_name = "N")]
    pub access: String,
    /// Measure only the random access time (no scan).
    #[arg(long)]
    pub access_only: bool,
    /// Non-destructive mode's pattern: a byte such as 0xaa, or random.
    #[arg(long, default_value = app::surface::PATTERN, value_name = "BYTE")]
    pub pattern: String,
    /// Destructive mode's patterns, written and verified in this order.
    #[arg(long, default_value = app::surface::PATTERNS, value_name = "LIST")]
    pub patterns: String,
    /// Write the bad blocks as e2fsck -l / mke2fs -l read them: block numbers in --fs-block
    /// units from the start of TARGET, one per line (an empty file when there are none).
    #[arg(long, value_name = "FILE")]
    pub badblocks_out: Option<PathBuf>,
    /// File-system block size of --badblocks-out (a power of two; badblocks' own default is
    /// 1024, ext4's usual block is 4096).
    #[arg(long, default_value = app::surface::FS_BLOCK, value_name = "SIZE")]
    pub fs_block: String,
    /// Read through the page cache instead of direct I/O (measures RAM; the result is flagged).
    #[arg(long)]
    pub buffered: bool,
    /// Allow the writing modes on an existing file.
    #[arg(long)]
    pub overwrite: bool,
    /// Allow the writing modes on this exact block device (must name TARGET).
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Random seed (access-time positions, random pattern).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
}

impl SurfaceArgs {
    fn options(&self) -> surface::Options {
        surface::Options {
            target: self.target_pos.clone().or_else(|| self.target.clone()),
            mode: self.mode.clone(),
            block: self.block.clone(),
            offset: self.offset.clone(),
            size: self.size.clone(),
            sample: self.sample.clone(),
            qd: self.qd.clone(),
            zones: self.zones.clone(),
            slow_factor: self.slow_factor.clone(),
            slow_window: self.slow_window.clone(),
            slow_floor: self.slow_floor.clone(),
            rereads: self.rereads.clone(),
            access: self.access.clone(),
            access_only: self.access_only,
            pattern: self.pattern.clone(),
            patterns: self.patterns.clone(),
            badblocks_out: self.badblocks_out.clone(),
            fs_block: self.fs_block.clone(),
            buffered: self.buffered,
            overwrite: self.overwrite,
            destroy_data: self.destroy_data.clone(),
            seed: self.seed,
            force: self.out.force,
        }
    }
}

pub fn run(a: &SurfaceArgs) -> Outcome {
    let out = super::common::outputs(&a.out, &a.history);
    // Output paths are checked before anything runs.
    let outputs = Outputs::plan(&out)?;
    let cfg = surface::Config::new(&a.options())?;
    let stop = signals::install();
    let mut progress = Progress::new(a.out.quiet);
    let scanned = surface::run(&cfg, &stop, &mut progress);
    drop(progress);
    let scanned = scanned.inspect_err(|e| output::scan_failed(&out, e))?;
    output::scan(&outputs, &out, scanned)
}
