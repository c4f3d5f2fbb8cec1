//! The kernel's per-device I/O counters (`/proc/diskstats` on Linux): lines of 14 columns,
//! 18 with the discard group (kernel 4.18+) and 20 with the flush group (5.5+).

use crate::block::Roots;

/// Cumulative counters of one device (one line without its first three columns). Serialisable:
/// `top --record` keeps them in its recordings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    /// I/Os in flight (column 12, the only non-cumulative field).
    pub inflight: u64,
    /// ms during which at least one request was in flight (column 13).
    pub io_ticks: u64,
    /// Weighted ms: the sum over requests of their time in flight (column 14).
    pub time_in_queue: u64,
    pub dc_ios: u64,
    pub dc_merges: u64,
    pub dc_sectors: u64,
    pub dc_ticks: u64,
    pub fl_ios: u64,
    pub fl_ticks: u64,
    /// 14, 18 or 20: which of the optional groups (discard, flush) the kernel reported.
    pub columns: u8,
}

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskLine {
    pub major: u32,
    pub minor: u32,
    pub name: String,
    pub counters: Counters,
}

/// Why a line was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("diskstats line has {0} columns; expected 14, 18 or 20")]
    Columns(usize),
    #[error("diskstats column {column} is not a number: {value:?}")]
    Number { column: usize, value: String },
}

/// Parse one line. Columns beyond 20 (future kernels) are ignored; other counts are an error.
pub fn parse_line(line: &str) -> Result<DiskLine, ParseError> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let n = f.len();
    if n < 14 || (n > 14 && n < 18) || n == 19 {
        return Err(ParseError::Columns(n));
    }
    let num = |i: usize| -> Result<u64, ParseError> {
        f[i].parse::<u64>().map_err(|_| ParseError::Number { column: i + 1, value: f[i].to_string() })
    };
    let small = |i: usize| -> Result<u32, ParseError> {
        f[i].parse::<u32>().map_err(|_| ParseError::Number { column: i + 1, value: f[i].to_string() })
    };
    let mut c = Counters {
        rd_ios: num(3)?,
        rd_merges: num(4)?,
        rd_sectors: num(5)?,
        rd_ticks: num(6)?,
        wr_ios: num(7)?,
        wr_merges: num(8)?,
        wr_sectors: num(9)?,
        wr_ticks: num(10)?,
        inflight: num(11)?,
        io_ticks: num(12)?,
        time_in_queue: num(13)?,
        columns: 14,
        ..Counters::default()
    };
    if n >= 18 {
        c.dc_ios = num(14)?;
        c.dc_merges = num(15)?;
        c.dc_sectors = num(16)?;
        c.dc_ticks = num(17)?;
        c.columns = 18;
    }
    if n >= 20 {
        c.fl_ios = num(18)?;
        c.fl_ticks = num(19)?;
        c.columns = 20;
    }
    Ok(DiskLine { major: small(0)?, minor: small(1)?, name: f[2].to_string(), counters: c })
}

/// Parse a whole file; lines that cannot be parsed are counted, not fatal (a kernel with a
/// new layout must not stop a reader).
pub fn parse(text: &str) -> (Vec<DiskLine>, usize) {
    let mut out = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match parse_line(line) {
            Ok(d) => out.push(d),
            Err(_) => bad += 1,
        }
    }
    (out, bad)
}

/// Where the counters are read from under `roots`, for messages.
pub fn source(roots: &Roots) -> std::path::PathBuf {
    roots.proc.join("diskstats")
}

/// The raw text of the counters; an error where the OS keeps none.
pub fn read_text(roots: &Roots) -> std::io::Result<String> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string(source(roots))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = roots;
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// Every device's counters, read in one pass, and how many lines were not understood.
pub fn read(roots: &Roots) -> std::io::Result<(Vec<DiskLine>, usize)> {
    read_text(roots).map(|t| parse(&t))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const L14: &str = "   8       1 sda1 100 2 800 50 10 1 80 20 0 60 70";
    const L20: &str = " 254       0 vda 338248983 118598 3805157466 108430800 63241753 337230 2445472432 10472195 0 4042696 118985315 280230 31 133978608 73073 53060 9245";

    #[test]
    fn parses_14_18_20() {
        let l = parse_line(L14).unwrap();
        assert_eq!((l.name.as_str(), l.counters.columns, l.counters.time_in_queue), ("sda1", 14, 70));
        let l = parse_line(L20).unwrap();
        assert_eq!((l.major, l.minor, l.counters.columns), (254, 0, 20));
        assert_eq!((l.counters.fl_ticks, l.counters.dc_sectors), (9245, 133978608));
        let l18: String = L20.split_whitespace().take(18).collect::<Vec<_>>().join(" ");
        let l = parse_line(&l18).unwrap();
        assert_eq!((l.counters.columns, l.counters.fl_ios, l.counters.dc_ticks), (18, 0, 73073));
    }

    #[test]
    fn rejects_odd_lines() {
        assert_eq!(parse_line("8 0 sda 1 2 3"), Err(ParseError::Columns(6)));
        assert!(matches!(parse_line("8 0 sda 1 2 3 4 5 6 7 8 9 x 11"), Err(ParseError::Number { column: 13, .. })));
        assert_eq!(parse_line(&format!("{L14} 1 2 3 4 5")), Err(ParseError::Columns(19)));
        let (v, bad) = parse(&format!("{L14}\ngarbage\n\n{L20}\n"));
        assert_eq!((v.len(), bad), (2, 1));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_under_an_injected_root() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("diskstats"), format!("{L14}\n{L20}\n")).unwrap();
        let roots = Roots { proc: t.path().to_path_buf(), ..Roots::default() };
        let (v, bad) = read(&roots).unwrap();
        assert_eq!((v.len(), bad, v[1].name.as_str()), (2, 0, "vda"));
    }
}
