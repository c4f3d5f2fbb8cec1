//! The `surface` command: options in plain values → a validated [`Config`] (every limit of the
//! scan's options and its message is here) → [`run`]: the engine's scan, its result document,
//! then the bad-block list.

use super::{badblocks, document};
use crate::error::{Error, Result};
use engine::scan::{Mode, Pattern, SurfaceConfig, SurfaceObserver};
use files::output::OutputFile;
use spec::units::{self, TimeUnit};
use spec::SpecError;
use stats::ResultDoc;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// The options of `diskmeter surface`, as given (sizes, counts and durations as typed).
#[derive(Debug, Clone)]
pub struct Options {
    pub target: Option<PathBuf>,
    pub mode: String,
    pub block: String,
    pub offset: Option<String>,
    pub size: Option<String>,
    pub sample: Option<String>,
    pub qd: String,
    pub zones: String,
    pub slow_factor: String,
    pub slow_window: String,
    pub slow_floor: String,
    pub rereads: String,
    pub access: String,
    pub access_only: bool,
    pub pattern: String,
    pub patterns: String,
    pub badblocks_out: Option<PathBuf>,
    pub fs_block: String,
    pub buffered: bool,
    pub overwrite: bool,
    pub destroy_data: Option<PathBuf>,
    pub seed: Option<u64>,
    /// Replace an existing `--badblocks-out` file that is not diskmeter's.
    pub force: bool,
}

impl Default for Options {
    /// The command line's defaults.
    fn default() -> Self {
        Self {
            target: None,
            mode: "read".into(),
            block: "1M".into(),
            offset: None,
            size: None,
            sample: None,
            qd: "1".into(),
            zones: "100".into(),
            slow_factor: "5".into(),
            slow_window: "64".into(),
            slow_floor: "20ms".into(),
            rereads: "2".into(),
            access: "200".into(),
            access_only: false,
            pattern: "0xaa".into(),
            patterns: "0xaa,0x55,0xff,0x00".into(),
            badblocks_out: None,
            fs_block: "4096".into(),
            buffered: false,
            overwrite: false,
            destroy_data: None,
            seed: None,
            force: false,
        }
    }
}

/// A validated `surface` command: the target, the scan's settings, the bad-block list's block
/// size and the checked file for it. Nothing is read or written before this exists.
pub struct Config {
    pub target: PathBuf,
    pub scan: SurfaceConfig,
    /// File-system block size of the bad-block list.
    pub fs_block: u64,
    pub bad_list: Option<OutputFile>,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        let scan = scan_config(o)?;
        let fs_block = parse_fs_block(&o.fs_block)?;
        let Some(target) = o.target.clone() else {
            return Err(Error::usage(
                "surface needs a TARGET: a block device or file, e.g. diskmeter surface /dev/sdb",
            ));
        };
        let bad_list = match &o.badblocks_out {
            Some(p) => Some(files::output::plan(p, "--badblocks-out", o.force)?),
            None => None,
        };
        Ok(Config { target, scan, fs_block, bad_list })
    }
}

/// A finished (or partial) scan.
pub struct Outcome {
    pub doc: ResultDoc,
    /// The bad-block list could not be written; reported after the results, exit 1.
    pub bad_list_error: Option<Error>,
}

/// Scans the target, then writes the bad-block list (named in the document). `Err` only for
/// problems found before anything was read or written; runtime faults end the scan with
/// partial results and `doc.error` set.
pub fn run(cfg: &Config, stop: &AtomicBool, obs: &mut dyn SurfaceObserver) -> Result<Outcome> {
    let mut doc = document::document(engine::scan::scan(&cfg.target, &cfg.scan, stop, obs)?, cfg.fs_block);
    let bad_list_error = match &cfg.bad_list {
        Some(out) => badblocks::write(out, &mut doc).err(),
        None => None,
    };
    Ok(Outcome { doc, bad_list_error })
}

fn count_in(option: &str, s: &str, lo: u64, hi: u64) -> Result<u64, SpecError> {
    let v = units::parse_count(option, s)?;
    if v < lo || v > hi {
        return Err(SpecError::value(option, format!("{v} is out of range; use {lo} to {hi}")));
    }
    Ok(v)
}

/// The modes `--mode` accepts, by their names in results.
pub const MODES: &str = "read, nondestructive, destructive";

/// `--mode`: a mode's name, or one of its aliases (`ro`, `rw`, `write`, …), any case.
pub fn parse_mode(s: &str) -> Option<Mode> {
    Some(match s.to_ascii_lowercase().as_str() {
        "read" | "ro" | "read-only" => Mode::Read,
        "nondestructive" | "non-destructive" | "rw" => Mode::NonDestructive,
        "destructive" | "write" => Mode::Destructive,
        _ => return None,
    })
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

fn scan_config(o: &Options) -> Result<SurfaceConfig, SpecError> {
    let mut c = SurfaceConfig {
        mode: parse_mode(&o.mode)
            .ok_or_else(|| SpecError::value("--mode", format!("unknown mode {:?}; use one of {}", o.mode, MODES)))?,
        ..SurfaceConfig::default()
    };
    c.block = units::parse_size("--block", &o.block)?;
    if c.block == 0 || !c.block.is_multiple_of(512) {
        return Err(SpecError::value(
            "--block",
            format!("{} is not a multiple of 512 bytes (the smallest logical block); use e.g. 1M", c.block),
        ));
    }
    if c.block > 64 << 20 {
        return Err(SpecError::value("--block", "at most 64M"));
    }
    if let Some(s) = &o.offset {
        c.offset = units::parse_size("--offset", s)?;
    }
    if let Some(s) = &o.size {
        let v = units::parse_size("--size", s)?;
        if v == 0 {
            return Err(SpecError::value("--size", "must be larger than 0"));
        }
        c.size = Some(v);
    }
    if let Some(s) = &o.sample {
        if c.mode == Mode::Destructive {
            return Err(SpecError::value("--sample", "the destructive mode writes the whole span; drop --sample"));
        }
        c.sample = Some(count_in("--sample", s, 1, 1 << 40)?);
    }
    c.qd = count_in("--qd", &o.qd, 1, 64)? as u32;
    if c.qd > 1 && c.mode != Mode::Read {
        return Err(SpecError::value("--qd", "applies to the read mode; the writing modes work one block at a time"));
    }
    c.zones = count_in("--zones", &o.zones, 1, 10_000)? as u32;
    c.slow_factor =
        o.slow_factor.trim().parse::<f64>().ok().filter(|k| k.is_finite() && *k > 1.0 && *k <= 1000.0).ok_or_else(
            || SpecError::value("--slow-factor", format!("{:?} is not a number above 1 (e.g. 5)", o.slow_factor)),
        )?;
    c.slow_window = count_in("--slow-window", &o.slow_window, 4, 100_000)? as u32;
    c.slow_floor = units::parse_duration("--slow-floor", &o.slow_floor, TimeUnit::Millis)?;
    c.rereads = count_in("--rereads", &o.rereads, 1, 10)? as u32;
    c.access = count_in("--access", &o.access, 0, 1_000_000)? as u32;
    c.access_only = o.access_only;
    if c.access_only {
        if c.mode != Mode::Read {
            return Err(SpecError::value("--access-only", "measures random reads only; use it with --mode read"));
        }
        if c.access == 0 {
            return Err(SpecError::value("--access", "--access-only needs at least 1 random read"));
        }
    }
    c.pattern = if o.pattern.trim().eq_ignore_ascii_case("random") {
        Pattern::Random
    } else {
        Pattern::Byte(parse_byte("--pattern", &o.pattern)?)
    };
    c.patterns = parse_patterns(&o.patterns)?;
    c.buffered = o.buffered;
    c.overwrite = o.overwrite;
    c.destroy_data = o.destroy_data.clone();
    if let Some(s) = o.seed {
        c.seed = s;
    }
    Ok(c)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::usage_message;

    #[test]
    fn modes_parse() {
        assert_eq!(parse_mode("read"), Some(Mode::Read));
        assert_eq!(parse_mode("NonDestructive"), Some(Mode::NonDestructive));
        assert_eq!(parse_mode("destructive"), Some(Mode::Destructive));
        assert_eq!(parse_mode("wipe"), None);
        for m in [Mode::Read, Mode::NonDestructive, Mode::Destructive] {
            assert_eq!(parse_mode(m.name()), Some(m));
            assert!(MODES.split(", ").any(|n| n == m.name()));
        }
    }

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

    fn usage(f: impl FnOnce(&mut Options)) -> String {
        let mut o = Options { target: Some("/dev/null".into()), ..Options::default() };
        f(&mut o);
        usage_message(Config::new(&o))
    }

    #[test]
    fn config_errors_name_their_option() {
        type Case = (fn(&mut Options), &'static str);
        let cases: Vec<Case> = vec![
            (|o| o.mode = "scrub".into(), "invalid value for --mode: unknown mode \"scrub\"; use one of read, nondestructive, destructive"),
            (
                |o| o.block = "1000".into(),
                "invalid value for --block: 1000 is not a multiple of 512 bytes (the smallest logical block); use e.g. 1M",
            ),
            (|o| o.block = "128M".into(), "invalid value for --block: at most 64M"),
            (|o| o.size = Some("0".into()), "invalid value for --size: must be larger than 0"),
            (
                |o| {
                    o.mode = "destructive".into();
                    o.sample = Some("10".into());
                },
                "invalid value for --sample: the destructive mode writes the whole span; drop --sample",
            ),
            (|o| o.qd = "65".into(), "invalid value for --qd: 65 is out of range; use 1 to 64"),
            (
                |o| {
                    o.mode = "nondestructive".into();
                    o.qd = "2".into();
                },
                "invalid value for --qd: applies to the read mode; the writing modes work one block at a time",
            ),
            (|o| o.zones = "0".into(), "invalid value for --zones: 0 is out of range; use 1 to 10000"),
            (|o| o.slow_factor = "1".into(), "invalid value for --slow-factor: \"1\" is not a number above 1 (e.g. 5)"),
            (|o| o.slow_window = "3".into(), "invalid value for --slow-window: 3 is out of range; use 4 to 100000"),
            (|o| o.rereads = "11".into(), "invalid value for --rereads: 11 is out of range; use 1 to 10"),
            (
                |o| {
                    o.mode = "nondestructive".into();
                    o.access_only = true;
                },
                "invalid value for --access-only: measures random reads only; use it with --mode read",
            ),
            (
                |o| {
                    o.access_only = true;
                    o.access = "0".into();
                },
                "invalid value for --access: --access-only needs at least 1 random read",
            ),
            (|o| o.pattern = "0x1ff".into(), "invalid value for --pattern: \"0x1ff\" is not a byte; use 0x00 to 0xff (e.g. 0xaa)"),
            (
                |o| o.patterns = ["0xaa"; 17].join(","),
                "invalid value for --patterns: at most 16 patterns",
            ),
            (
                |o| o.fs_block = "3000".into(),
                "invalid value for --fs-block: 3000 is not a power of two from 512 to 64k; ext2/3/4 use 1024, 2048 or 4096",
            ),
            (|o| o.target = None, "surface needs a TARGET: a block device or file, e.g. diskmeter surface /dev/sdb"),
        ];
        for (change, want) in cases {
            assert_eq!(usage(change), want);
        }
    }

    #[test]
    fn the_defaults_are_the_scans_defaults() {
        let cfg = Config::new(&Options { target: Some("/dev/null".into()), ..Options::default() }).unwrap();
        let d = SurfaceConfig::default();
        assert_eq!((cfg.scan.mode, cfg.scan.block, cfg.scan.qd, cfg.scan.zones), (Mode::Read, 1 << 20, 1, 100));
        assert_eq!((cfg.fs_block, cfg.scan.seed, cfg.scan.map_cells), (4096, d.seed, d.map_cells));
        assert_eq!(cfg.scan.pattern, Pattern::Byte(0xaa));
        assert!(cfg.bad_list.is_none());
    }
}
