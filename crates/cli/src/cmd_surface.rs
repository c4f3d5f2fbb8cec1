//! `diskmeter surface`: transfer-rate map and bad-block scan (thin: options → app::surface).

use crate::args::OutputArgs;
use crate::{install_ctrlc, plan_outputs, sanitize, signals, write_outputs, Failure};
use app::surface::{self, Mode, Pattern, SurfaceConfig, SurfaceObserver};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use spec::units::{self, TimeUnit};
use spec::SpecError;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

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
    #[arg(long, default_value = "read", value_name = "MODE")]
    pub mode: String,
    /// Bytes per scanned block (a multiple of the logical block size).
    #[arg(long, default_value = "1M", value_name = "SIZE")]
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
    #[arg(long, default_value = "1", value_name = "N")]
    pub qd: String,
    /// Zones of the transfer-rate chart (MB/s per zone = bytes / summed time of its blocks).
    #[arg(long, default_value = "100", value_name = "N")]
    pub zones: String,
    /// A block is slow above this many times the rolling median latency.
    #[arg(long, default_value = "5", value_name = "K")]
    pub slow_factor: String,
    /// Blocks in the rolling median.
    #[arg(long, default_value = "64", value_name = "N")]
    pub slow_window: String,
    /// Never flag a block faster than this (jitter on fast devices), e.g. 20ms.
    #[arg(long, default_value = "20ms", value_name = "DURATION")]
    pub slow_floor: String,
    /// Re-reads of a slow block to tell confirmed from transient (1 to 10).
    #[arg(long, default_value = "2", value_name = "N")]
    pub rereads: String,
    /// Random 4k reads for the access time after the scan (0 = none).
    #[arg(long, default_value = "200", value_name = "N")]
    pub access: String,
    /// Measure only the random access time (no scan).
    #[arg(long)]
    pub access_only: bool,
    /// Non-destructive mode's pattern: a byte such as 0xaa, or random.
    #[arg(long, default_value = "0xaa", value_name = "BYTE")]
    pub pattern: String,
    /// Destructive mode's patterns, written and verified in this order.
    #[arg(long, default_value = "0xaa,0x55,0xff,0x00", value_name = "LIST")]
    pub patterns: String,
    /// Write the bad blocks as e2fsck -l / mke2fs -l read them: block numbers in --fs-block
    /// units from the start of TARGET, one per line (an empty file when there are none).
    #[arg(long, value_name = "FILE")]
    pub badblocks_out: Option<PathBuf>,
    /// File-system block size of --badblocks-out (a power of two; badblocks' own default is
    /// 1024, ext4's usual block is 4096).
    #[arg(long, default_value = "4096", value_name = "SIZE")]
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
}

fn count_in(option: &str, s: &str, lo: u64, hi: u64) -> Result<u64, SpecError> {
    let v = units::parse_count(option, s)?;
    if v < lo || v > hi {
        return Err(SpecError::value(option, format!("{v} is out of range; use {lo} to {hi}")));
    }
    Ok(v)
}

/// `0xaa`, `0XAA`, `170` → one byte.
pub fn parse_byte(option: &str, s: &str) -> Result<u8, SpecError> {
    let t = s.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u8::from_str_radix(h, 16).ok(),
        None => t.parse::<u8>().ok(),
    };
    v.ok_or_else(|| SpecError::value(option, format!("{t:?} is not a byte; use 0x00 to 0xff (e.g. 0xaa)")))
}

pub fn parse_patterns(s: &str) -> Result<Vec<u8>, SpecError> {
    let v = s.split(',').map(|p| parse_byte("--patterns", p)).collect::<Result<Vec<u8>, _>>()?;
    if v.len() > 16 {
        return Err(SpecError::value("--patterns", "at most 16 patterns"));
    }
    Ok(v)
}

pub fn parse_fs_block(s: &str) -> Result<u64, SpecError> {
    let v = units::parse_size("--fs-block", s)?;
    if !v.is_power_of_two() || !(512..=65536).contains(&v) {
        return Err(SpecError::value(
            "--fs-block",
            format!("{v} is not a power of two from 512 to 64k; ext2/3/4 use 1024, 2048 or 4096"),
        ));
    }
    Ok(v)
}

impl SurfaceArgs {
    fn target_path(&self) -> Option<PathBuf> {
        self.target_pos.clone().or_else(|| self.target.clone())
    }

    pub fn config(&self) -> Result<SurfaceConfig, SpecError> {
        let mut c = SurfaceConfig {
            mode: Mode::parse(&self.mode).ok_or_else(|| {
                SpecError::value("--mode", format!("unknown mode {:?}; use one of {}", self.mode, Mode::NAMES))
            })?,
            ..SurfaceConfig::default()
        };
        c.block = units::parse_size("--block", &self.block)?;
        if c.block == 0 || !c.block.is_multiple_of(512) {
            return Err(SpecError::value(
                "--block",
                format!("{} is not a multiple of 512 bytes (the smallest logical block); use e.g. 1M", c.block),
            ));
        }
        if c.block > 64 << 20 {
            return Err(SpecError::value("--block", "at most 64M"));
        }
        if let Some(s) = &self.offset {
            c.offset = units::parse_size("--offset", s)?;
        }
        if let Some(s) = &self.size {
            let v = units::parse_size("--size", s)?;
            if v == 0 {
                return Err(SpecError::value("--size", "must be larger than 0"));
            }
            c.size = Some(v);
        }
        if let Some(s) = &self.sample {
            if c.mode == Mode::Destructive {
                return Err(SpecError::value("--sample", "the destructive mode writes the whole span; drop --sample"));
            }
            c.sample = Some(count_in("--sample", s, 1, 1 << 40)?);
        }
        c.qd = count_in("--qd", &self.qd, 1, 64)? as u32;
        if c.qd > 1 && c.mode != Mode::Read {
            return Err(SpecError::value(
                "--qd",
                "applies to the read mode; the writing modes work one block at a time",
            ));
        }
        c.zones = count_in("--zones", &self.zones, 1, 10_000)? as u32;
        c.slow_factor = self
            .slow_factor
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|k| k.is_finite() && *k > 1.0 && *k <= 1000.0)
            .ok_or_else(|| {
                SpecError::value("--slow-factor", format!("{:?} is not a number above 1 (e.g. 5)", self.slow_factor))
            })?;
        c.slow_window = count_in("--slow-window", &self.slow_window, 4, 100_000)? as u32;
        c.slow_floor = units::parse_duration("--slow-floor", &self.slow_floor, TimeUnit::Millis)?;
        c.rereads = count_in("--rereads", &self.rereads, 1, 10)? as u32;
        c.access = count_in("--access", &self.access, 0, 1_000_000)? as u32;
        c.access_only = self.access_only;
        if c.access_only {
            if c.mode != Mode::Read {
                return Err(SpecError::value("--access-only", "measures random reads only; use it with --mode read"));
            }
            if c.access == 0 {
                return Err(SpecError::value("--access", "--access-only needs at least 1 random read"));
            }
        }
        c.pattern = if self.pattern.trim().eq_ignore_ascii_case("random") {
            Pattern::Random
        } else {
            Pattern::Byte(parse_byte("--pattern", &self.pattern)?)
        };
        c.patterns = parse_patterns(&self.patterns)?;
        c.fs_block = parse_fs_block(&self.fs_block)?;
        c.buffered = self.buffered;
        c.overwrite = self.overwrite;
        c.destroy_data = self.destroy_data.clone();
        if let Some(s) = self.seed {
            c.seed = s;
        }
        Ok(c)
    }
}

/// The progress bar: bytes, MB/s and ETA of each phase (stderr, terminals only).
struct Bar {
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Bar {
    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl SurfaceObserver for Bar {
    fn phase(&mut self, label: &str, total: u64) {
        self.finish();
        if !self.enabled {
            return;
        }
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{prefix:.bold} [{bar:28.cyan/blue}] {decimal_bytes}/{decimal_total_bytes} \
                 {decimal_bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b.set_prefix(label.to_string());
        self.bar = Some(b);
    }
    fn progress(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }
    fn phase_done(&mut self) {
        self.finish();
    }
}

fn fail(m: &str, code: u8) -> ExitCode {
    eprintln!("error: {}", sanitize(m));
    ExitCode::from(code)
}

pub fn run(a: &SurfaceArgs) -> ExitCode {
    let prepared = (|| {
        let planned = plan_outputs(&a.out)?;
        let cfg = a.config()?;
        let Some(target) = a.target_path() else {
            return Err(Failure::Usage(
                "surface needs a TARGET: a block device or file, e.g. diskmeter surface /dev/sdb".into(),
            ));
        };
        let bad_list = match &a.badblocks_out {
            Some(p) => Some(files::output::plan(p, "--badblocks-out", a.out.force)?),
            None => None,
        };
        Ok((cfg, target, planned, bad_list))
    })();
    let (cfg, target, planned, bad_list) = match prepared {
        Ok(v) => v,
        Err(Failure::Usage(m)) => return fail(&m, 2),
        Err(Failure::Runtime(m)) => return fail(&m, 1),
    };
    let stop = install_ctrlc();
    let mut bar = Bar { enabled: !a.out.quiet && std::io::stderr().is_terminal(), bar: None };
    let scanned = surface::scan(&target, &cfg, &stop, &mut bar);
    bar.finish();
    let mut doc = match scanned {
        Ok(d) => d,
        Err(e) if e.is_usage() => return fail(&e.to_string(), 2),
        Err(e) => {
            let m = e.to_string();
            if a.out.json {
                let doc = app::session::error_doc("surface", "io", &m);
                println!("{}", report::render(&doc, report::Format::Json).trim_end());
            }
            return fail(&m, 1);
        }
    };
    signals::name_in(&mut doc);
    let mut bad_list_error = None;
    if let (Some(out), Some(s)) = (&bad_list, doc.surface.as_mut()) {
        if let Some(list) = s.badblocks.as_mut() {
            list.file = Some(out.path().display().to_string());
            if let Err(e) = out.write(stats::surface::badblock_file(&list.blocks).as_bytes()) {
                bad_list_error = Some(e.to_string());
            }
        }
    }
    if let Err(Failure::Usage(m) | Failure::Runtime(m)) = write_outputs(&doc, &a.out, &planned) {
        return fail(&m, 1);
    }
    if let Some(m) = bad_list_error {
        return fail(&m, 1);
    }
    match &doc.error {
        Some(e) if e.kind == "interrupted" => {
            eprintln!("{}", sanitize(&e.message));
            return ExitCode::from(130);
        }
        Some(e) => return fail(&e.message, 1),
        None => {}
    }
    let bad = doc.surface.as_ref().map(|s| s.bad_sectors.len()).unwrap_or(0);
    if bad > 0 {
        if a.out.json || a.out.quiet {
            eprintln!("diskmeter: {bad} bad sector{} found", if bad == 1 { "" } else { "s" });
        }
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bytes_and_patterns() {
        assert_eq!(parse_byte("--pattern", "0xaa").unwrap(), 0xaa);
        assert_eq!(parse_byte("--pattern", "0X55").unwrap(), 0x55);
        assert_eq!(parse_byte("--pattern", "255").unwrap(), 255);
        for bad in ["0x100", "256", "-1", "", "0x", "aa"] {
            assert!(parse_byte("--pattern", bad).is_err(), "{bad}");
        }
        assert_eq!(parse_patterns("0xaa,0x55,0xff,0x00").unwrap(), vec![0xaa, 0x55, 0xff, 0]);
        assert!(parse_patterns("0xaa,,0x55").is_err());
    }

    #[test]
    fn fs_blocks() {
        assert_eq!(parse_fs_block("4096").unwrap(), 4096);
        assert_eq!(parse_fs_block("1k").unwrap(), 1024);
        for bad in ["3000", "0", "256", "128k", "x"] {
            assert!(parse_fs_block(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_byte_round_trips() {
        for b in 0u8..=255 {
            assert_eq!(parse_byte("--pattern", &format!("0x{b:02x}")).unwrap(), b);
            assert_eq!(parse_byte("--pattern", &b.to_string()).unwrap(), b);
        }
    }

    #[test]
    fn fs_block_accepts_exactly_powers_of_two() {
        for v in 0u64..=70_000 {
            let ok = v.is_power_of_two() && (512..=65536).contains(&v);
            assert_eq!(parse_fs_block(&v.to_string()).is_ok(), ok, "{v}");
        }
    }
}
