//! The kernel's per-device I/O counters (`/proc/diskstats` on Linux): lines of 14 columns,
//! 18 with the discard group (kernel 4.18+) and 20 with the flush group (5.5+).
//!
//! On Windows the same [`Counters`] come from `IOCTL_DISK_PERFORMANCE` on each physical drive
//! ([`from_disk_performance`] converts them; `windows::diskperf` reads them), written out as
//! 14-column lines named `PhysicalDrive0`, `PhysicalDrive1`, … so that every reader of the text
//! works unchanged.

use crate::block::Roots;

pub(crate) mod counters;
pub use counters::{drive_name, drive_number, extend_u32, from_disk_performance, Counters, DiskPerformance};

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
    #[cfg(windows)]
    {
        let _ = roots;
        std::path::PathBuf::from(r"IOCTL_DISK_PERFORMANCE of \\.\PhysicalDrive*")
    }
    #[cfg(not(windows))]
    {
        roots.proc.join("diskstats")
    }
}

/// The raw text of the counters; an error where the OS keeps none.
pub fn read_text(roots: &Roots) -> std::io::Result<String> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string(source(roots))
    }
    #[cfg(windows)]
    {
        let _ = roots;
        crate::windows::diskperf::all().map(|drives| render(&drives))
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = roots;
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// Every device's counters, read in one pass, and how many lines were not understood.
pub fn read(roots: &Roots) -> std::io::Result<(Vec<DiskLine>, usize)> {
    read_text(roots).map(|t| parse(&t))
}

/// The drive whose counters a device view reads, under a target the OS names by its volume
/// (`at`: the target, or the directory of a file that does not exist yet): on Windows the
/// physical drive (`PhysicalDrive2`) of a `\\.\PhysicalDriveN` target, else the first drive the
/// volume holding it has extents on; `None` when it cannot be found, and on every other OS
/// (there the block device under a file is found from its device numbers).
pub fn drive_under(at: &std::path::Path) -> Option<String> {
    #[cfg(windows)]
    {
        crate::windows::diskperf::drive_under(at)
    }
    #[cfg(not(windows))]
    {
        let _ = at;
        None
    }
}

/// The OS's own device view of a target (`path`; `at`: the file, or its directory when it does
/// not exist yet) whose drive is `device`, where the OS has one: on Windows the drive and the
/// volume's other drives when `readable` says its counters can be read, else why not
/// (`diskperf -y`, a volume whose disk cannot be found). `None` on every other OS: there the
/// device under the target and the devices under it are the kernel's block devices.
pub fn drive_view(
    path: &std::path::Path,
    at: &std::path::Path,
    device: Option<&str>,
    readable: impl Fn(&str) -> bool,
) -> Option<Result<(String, Vec<String>), String>> {
    #[cfg(windows)]
    {
        Some(crate::windows::diskperf::drive_view(path, at, device, readable))
    }
    #[cfg(not(windows))]
    {
        let _ = (path, at, device, readable);
        None
    }
}

// ---------------------------------------------------------------- Windows's counters (pure)

/// One line in `/proc/diskstats`'s 14-column layout, which [`parse_line`] reads back whole: the
/// discard and flush groups are not written.
pub fn format_line(major: u32, minor: u32, name: &str, c: &Counters) -> String {
    format!(
        "{major:4} {minor:7} {name} {} {} {} {} {} {} {} {} {} {} {}",
        c.rd_ios,
        c.rd_merges,
        c.rd_sectors,
        c.rd_ticks,
        c.wr_ios,
        c.wr_merges,
        c.wr_sectors,
        c.wr_ticks,
        c.inflight,
        c.io_ticks,
        c.time_in_queue
    )
}

/// Physical drives' counters as diskstats text: major 0, the drive number as the minor, and the
/// name of [`drive_name`].
pub fn render(drives: &[(u32, Counters)]) -> String {
    drives.iter().map(|(n, c)| format_line(0, *n, &drive_name(*n), c) + "\n").collect()
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

    #[test]
    fn windows_counters_convert() {
        let p = DiskPerformance {
            bytes_read: 4096 * 10,
            bytes_written: 1 << 20,
            read_time: 123_456,
            write_time: 20_000_000,
            idle_time: 1_000_000_000,
            read_count: 10,
            write_count: 256,
            queue_depth: 3,
            split_count: 2,
            query_time: 1_000_000_000 + 5_000_000,
        };
        let c = from_disk_performance(&p);
        assert_eq!((c.rd_ios, c.rd_sectors, c.rd_ticks, c.rd_merges), (10, 80, 12, 0));
        assert_eq!((c.wr_ios, c.wr_sectors, c.wr_ticks, c.wr_merges), (256, 2048, 2000, 0));
        assert_eq!((c.inflight, c.io_ticks, c.time_in_queue, c.columns), (3, 500, 2012, 14));
        // Busy time as a difference: 40 ms later, idle for 15 of them.
        let later = DiskPerformance { query_time: p.query_time + 400_000, idle_time: p.idle_time + 150_000, ..p };
        assert_eq!(from_disk_performance(&later).io_ticks - c.io_ticks, 25);
        // Negative values (never reported) and idle beyond the query time read as 0.
        let odd = DiskPerformance { bytes_read: -1, read_time: -5, idle_time: 10, query_time: 5, ..p };
        let c = from_disk_performance(&odd);
        assert_eq!((c.rd_sectors, c.rd_ticks, c.io_ticks), (0, 0, 0));
    }

    #[test]
    fn u32_counters_widen_across_a_wrap() {
        assert_eq!(extend_u32(0, 5), 5);
        assert_eq!(extend_u32(u64::from(u32::MAX) - 1, 3), (1 << 32) + 3);
        assert_eq!(extend_u32((3 << 32) + 10, 10), (3 << 32) + 10);
        assert_eq!(extend_u32((3 << 32) + 10, 9), (4 << 32) + 9);
    }

    #[test]
    fn drive_names_and_rendered_lines() {
        assert_eq!(drive_name(3), "PhysicalDrive3");
        assert_eq!(drive_number("PhysicalDrive12"), Some(12));
        for bad in ["PhysicalDrive", "PhysicalDrive1x", "physicaldrive1", "sda", "PhysicalDrive-1"] {
            assert_eq!(drive_number(bad), None, "{bad}");
        }
        let c = Counters { rd_ios: 7, wr_sectors: 9, io_ticks: 11, columns: 14, ..Counters::default() };
        let text = render(&[(0, c), (2, Counters { columns: 14, ..Counters::default() })]);
        let (lines, bad) = parse(&text);
        assert_eq!((lines.len(), bad), (2, 0));
        assert_eq!((lines[0].name.as_str(), lines[0].minor, lines[0].counters), ("PhysicalDrive0", 0, c));
        assert_eq!(lines[1].name, "PhysicalDrive2");
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        fn perf() -> impl Strategy<Value = DiskPerformance> {
            (
                (any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
                (any::<u64>(), any::<u64>(), any::<u32>(), any::<u64>(), any::<i64>()),
            )
                .prop_map(|((br, bw, rt, wt, it), (rc, wc, qd, sc, qt))| DiskPerformance {
                    bytes_read: br,
                    bytes_written: bw,
                    read_time: rt,
                    write_time: wt,
                    idle_time: it,
                    read_count: rc,
                    write_count: wc,
                    queue_depth: qd,
                    split_count: sc,
                    query_time: qt,
                })
        }

        proptest! {
            /// Never panics; counts pass through; times and sizes are the structure's over their
            /// units; no merges; a 14-column line that reads back whole.
            #[test]
            fn conversion_is_total_and_round_trips(p in perf()) {
                let c = from_disk_performance(&p);
                prop_assert_eq!((c.rd_ios, c.wr_ios, c.inflight), (p.read_count, p.write_count, u64::from(p.queue_depth)));
                prop_assert_eq!((c.rd_merges, c.wr_merges, c.columns), (0, 0, 14));
                prop_assert_eq!(c.rd_sectors, u64::try_from(p.bytes_read).unwrap_or(0) / 512);
                prop_assert!(c.time_in_queue >= c.rd_ticks.max(c.wr_ticks));
                prop_assert!(c.time_in_queue <= c.rd_ticks + c.wr_ticks + 1);
                let back = parse_line(&format_line(0, 1, "PhysicalDrive1", &c)).unwrap();
                prop_assert_eq!(back.counters, c);
            }

            /// Counters that only grow give differences that are the structure's differences
            /// over their units (to the ms lost to truncation at each end).
            #[test]
            fn differences_follow_the_structure(p in perf(), dr in 0i64..1 << 40, dq in 0i64..1 << 40, di in 0i64..1 << 40) {
                let p = DiskPerformance {
                    read_time: p.read_time.rem_euclid(1 << 60),
                    query_time: p.query_time.rem_euclid(1 << 60) + (1 << 60),
                    idle_time: p.idle_time.rem_euclid(1 << 59),
                    ..p
                };
                let di = di.min(dq);
                let q = DiskPerformance { read_time: p.read_time + dr, query_time: p.query_time + dq, idle_time: p.idle_time + di, ..p };
                let (a, b) = (from_disk_performance(&p), from_disk_performance(&q));
                let d_read = (b.rd_ticks - a.rd_ticks) as i64;
                prop_assert!((d_read - dr / 10_000).abs() <= 1);
                let d_busy = b.io_ticks as i64 - a.io_ticks as i64;
                prop_assert!((d_busy - (dq - di) / 10_000).abs() <= 1);
            }

            /// Widening follows any run of increments below 2^32 between reads.
            #[test]
            fn widening_tracks_increments(start in 0u64..1 << 62, steps in proptest::collection::vec(0u64..=u64::from(u32::MAX), 0..20)) {
                let (mut truth, mut seen) = (start, start);
                for s in steps {
                    truth += s;
                    seen = extend_u32(seen, truth as u32);
                    prop_assert_eq!(seen, truth);
                }
            }
        }
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
