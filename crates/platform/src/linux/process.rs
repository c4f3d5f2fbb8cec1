//! procfs: the numeric entries of `/proc`, `/proc/PID/io` and `/proc/PID/stat`.

use crate::block::Roots;
use crate::process::model::{IoCounters, ProcessError, Stat};
use std::io;

pub fn list(roots: &Roots) -> Result<Vec<u32>, ProcessError> {
    let dir = std::fs::read_dir(&roots.proc)?;
    // An entry that cannot be read is skipped, as a process that exits meanwhile would be.
    Ok(dir.filter_map(|e| pid_of(e.ok()?.file_name().to_str()?)).collect())
}

/// The pid a `/proc` entry names: digits only (`self`, `sys`, … are not processes).
fn pid_of(name: &str) -> Option<u32> {
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())).then(|| name.parse().ok()).flatten()
}

pub fn io(roots: &Roots, pid: u32) -> Result<IoCounters, ProcessError> {
    parse_io(&read(roots, pid, "io")?)
}

pub fn stat(roots: &Roots, pid: u32) -> Result<Stat, ProcessError> {
    parse_stat(&read(roots, pid, "stat")?)
}

/// `/proc/PID/<name>`, its bytes taken as UTF-8 where they are (a command name may not be).
fn read(roots: &Roots, pid: u32, name: &str) -> Result<String, ProcessError> {
    let bytes = std::fs::read(roots.proc.join(pid.to_string()).join(name)).map_err(error)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a failed read of a process's file means: the entry is gone (ENOENT on open, ESRCH
/// once the task has exited under an open file), or the caller may not read it.
fn error(e: io::Error) -> ProcessError {
    match (e.raw_os_error(), e.kind()) {
        (Some(libc::ESRCH), _) | (_, io::ErrorKind::NotFound) => ProcessError::Vanished,
        (_, io::ErrorKind::PermissionDenied) => ProcessError::Permission,
        _ => ProcessError::Os(e),
    }
}

/// A `/proc/PID/io` text: `name: value` lines, all seven counters required.
pub fn parse_io(text: &str) -> Result<IoCounters, ProcessError> {
    let mut c = IoCounters::default();
    let mut seen = 0u8;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let (slot, bit) = match key.trim() {
            "rchar" => (&mut c.rchar, 0),
            "wchar" => (&mut c.wchar, 1),
            "syscr" => (&mut c.syscr, 2),
            "syscw" => (&mut c.syscw, 3),
            "read_bytes" => (&mut c.read_bytes, 4),
            "write_bytes" => (&mut c.write_bytes, 5),
            "cancelled_write_bytes" => (&mut c.cancelled_write_bytes, 6),
            _ => continue,
        };
        *slot = value
            .trim()
            .parse()
            .map_err(|_| ProcessError::Malformed(format!("io: {} is not a number: {:?}", key.trim(), value.trim())))?;
        seen |= 1 << bit;
    }
    if seen != 0x7f {
        return Err(ProcessError::Malformed(format!("io: {} of 7 counters", seen.count_ones())));
    }
    Ok(c)
}

/// A `/proc/PID/stat` line: `pid (comm) state` and numbers. The command name may hold spaces
/// and parentheses, so it runs to the last `)`. Start time is field 22,
/// `delayacct_blkio_ticks` field 42 (Linux 2.6.18+).
pub fn parse_stat(text: &str) -> Result<Stat, ProcessError> {
    let bad = |what: &str| ProcessError::Malformed(format!("stat: {what}: {:?}", text.trim()));
    let open = text.find('(').ok_or_else(|| bad("no command name"))?;
    let close = text.rfind(')').filter(|&c| c > open).ok_or_else(|| bad("no command name"))?;
    // Fields 3 onwards.
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).copied();
    let state = field(3).and_then(|s| s.chars().next()).ok_or_else(|| bad("no state"))?;
    let start_ticks = field(22).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no start time"))?;
    Ok(Stat {
        comm: text[open + 1..close].to_string(),
        state,
        start_ticks,
        blkio_ticks: field(42).and_then(|s| s.parse().ok()),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::fs;

    const IO: &str = "rchar: 4387\nwchar: 12\nsyscr: 9\nsyscw: 1\nread_bytes: 8192\nwrite_bytes: 4096\n\
                      cancelled_write_bytes: 512\n";
    /// A real line of Linux 6.x (52 fields), with a command name holding `) (`.
    const STAT: &str = "4242 (tmux: (x) y) D 1 4242 4242 0 -1 4194560 1416 0 0 0 2 1 0 0 20 0 1 0 \
                        917431 8523776 1120 18446744073709551615 94000 95000 140000 0 0 0 0 4096 134 \
                        0 0 0 17 1 0 0 7 0 0 1 2 3 4 5 6 7 0\n";

    #[test]
    fn parses_io_and_stat() {
        let io = parse_io(IO).unwrap();
        assert_eq!(
            io,
            IoCounters {
                rchar: 4387,
                wchar: 12,
                syscr: 9,
                syscw: 1,
                read_bytes: 8192,
                write_bytes: 4096,
                cancelled_write_bytes: 512
            }
        );
        let s = parse_stat(STAT).unwrap();
        assert_eq!(s, Stat { comm: "tmux: (x) y".into(), state: 'D', start_ticks: 917431, blkio_ticks: Some(7) });
        // A kernel before delay accounting in stat: no figure, not 0.
        let short: String = STAT.split(' ').take(30).collect::<Vec<_>>().join(" ");
        assert_eq!(parse_stat(&short).unwrap().blkio_ticks, None);
    }

    #[test]
    fn rejects_what_it_does_not_understand() {
        assert!(matches!(parse_io("rchar: 1\n"), Err(ProcessError::Malformed(m)) if m == "io: 1 of 7 counters"));
        assert!(matches!(parse_io(&IO.replace("12", "x")), Err(ProcessError::Malformed(m)) if m.contains("wchar")));
        assert!(matches!(parse_stat("4242 tmux R 1"), Err(ProcessError::Malformed(_))));
        assert!(
            matches!(parse_stat("4242 (tmux) R 1 2 3"), Err(ProcessError::Malformed(m)) if m.contains("start time"))
        );
    }

    #[test]
    fn errors_that_matter_are_told_apart() {
        let e = |code| error(io::Error::from_raw_os_error(code));
        assert!(matches!(e(libc::ENOENT), ProcessError::Vanished));
        assert!(matches!(e(libc::ESRCH), ProcessError::Vanished));
        assert!(matches!(e(libc::EACCES), ProcessError::Permission));
        assert!(matches!(e(libc::EPERM), ProcessError::Permission));
        assert!(matches!(e(libc::EIO), ProcessError::Os(_)));
    }

    #[test]
    fn reads_under_an_injected_root() {
        let t = tempfile::tempdir().unwrap();
        let roots = Roots { proc: t.path().to_path_buf(), ..Roots::default() };
        fs::create_dir_all(t.path().join("4242")).unwrap();
        fs::write(t.path().join("4242/io"), IO).unwrap();
        fs::write(t.path().join("4242/stat"), STAT).unwrap();
        // An entry whose files are gone: the process exited after the listing.
        fs::create_dir_all(t.path().join("77")).unwrap();
        for other in ["self", "sys", "+5", "12a"] {
            fs::create_dir_all(t.path().join(other)).unwrap();
        }
        fs::write(t.path().join("diskstats"), "").unwrap();
        let mut pids = list(&roots).unwrap();
        pids.sort_unstable();
        assert_eq!(pids, [77, 4242]);
        assert_eq!(io(&roots, 4242).unwrap().write_bytes, 4096);
        assert_eq!(stat(&roots, 4242).unwrap().comm, "tmux: (x) y");
        assert!(matches!(io(&roots, 77), Err(ProcessError::Vanished)));
        assert!(matches!(stat(&roots, 77), Err(ProcessError::Vanished)));
        // A procfs that is not there at all is an error of the listing, not an empty one.
        let none = Roots { proc: t.path().join("absent"), ..Roots::default() };
        assert!(matches!(list(&none), Err(ProcessError::Os(_))));
    }
}
