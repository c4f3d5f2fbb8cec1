//! Per-process I/O from `/proc/PID/io`. Bytes per second are the primary figure: taskstats
//! delay accounting (iotop's IO%) needs CAP_NET_ADMIN and `kernel.task_delayacct=1` and is
//! blind to io_uring, so it is not used.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Cumulative counters of one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcCounters {
    pub pid: i32,
    pub comm: String,
    /// Start time in clock ticks after boot: tells a reused PID from the old process.
    pub start: u64,
    pub rchar: u64,
    pub wchar: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cancelled_write_bytes: u64,
}

/// All processes at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcSnapshot {
    pub procs: Vec<ProcCounters>,
    /// Processes whose `io` file could not be read (other users' without root/CAP_SYS_PTRACE).
    pub hidden: u32,
    /// Read with root's rights: what is hidden then is hidden by ptrace rules (Yama, other
    /// user namespaces), not by missing privileges.
    #[serde(default)]
    pub as_root: bool,
}

/// Read every process's counters. Processes that exit while being read are skipped.
pub fn read_all() -> ProcSnapshot {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the effective user.
    let as_root = std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false);
    let mut snap = ProcSnapshot { as_root, ..ProcSnapshot::default() };
    let Ok(all) = procfs::process::all_processes() else {
        return snap;
    };
    for p in all.flatten() {
        let io = match p.io() {
            Ok(io) => io,
            Err(procfs::ProcError::PermissionDenied(_)) => {
                snap.hidden += 1;
                continue;
            }
            Err(_) => continue,
        };
        let Ok(stat) = p.stat() else { continue };
        snap.procs.push(ProcCounters {
            pid: p.pid(),
            comm: stat.comm,
            start: stat.starttime,
            rchar: io.rchar,
            wchar: io.wchar,
            read_bytes: io.read_bytes,
            write_bytes: io.write_bytes,
            cancelled_write_bytes: io.cancelled_write_bytes,
        });
    }
    snap
}

/// Per-second figures of one process over an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcRate {
    pub pid: i32,
    pub comm: String,
    /// Bytes fetched from storage per second.
    pub read_bytes_s: f64,
    /// Bytes written (dirtied) per second, net of cancelled writes.
    pub write_bytes_s: f64,
    /// Bytes passed to read-like syscalls per second (page-cache hits included).
    pub rchar_s: f64,
    pub wchar_s: f64,
}

/// Sort keys of the process list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcSort {
    #[default]
    Total,
    Read,
    Write,
    Pid,
}

/// Rates of the processes present in both snapshots (same PID and start time), busiest first.
/// Processes that did no I/O are left out.
pub fn rates(prev: &ProcSnapshot, cur: &ProcSnapshot, interval_s: f64, sort: ProcSort) -> Vec<ProcRate> {
    let before: HashMap<(i32, u64), &ProcCounters> = prev.procs.iter().map(|p| ((p.pid, p.start), p)).collect();
    let per_s = |d: u64| if interval_s > 0.0 { d as f64 / interval_s } else { 0.0 };
    let mut out: Vec<ProcRate> = cur
        .procs
        .iter()
        .filter_map(|c| {
            let p = before.get(&(c.pid, c.start))?;
            let net = |x: &ProcCounters| x.write_bytes.saturating_sub(x.cancelled_write_bytes);
            Some(ProcRate {
                pid: c.pid,
                comm: c.comm.clone(),
                read_bytes_s: per_s(c.read_bytes.saturating_sub(p.read_bytes)),
                write_bytes_s: per_s(net(c).saturating_sub(net(p))),
                rchar_s: per_s(c.rchar.saturating_sub(p.rchar)),
                wchar_s: per_s(c.wchar.saturating_sub(p.wchar)),
            })
        })
        .filter(|r| r.read_bytes_s + r.write_bytes_s + r.rchar_s + r.wchar_s > 0.0)
        .collect();
    let key = |r: &ProcRate| match sort {
        ProcSort::Total => r.read_bytes_s + r.write_bytes_s,
        ProcSort::Read => r.read_bytes_s,
        ProcSort::Write => r.write_bytes_s,
        ProcSort::Pid => -(r.pid as f64),
    };
    out.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.pid.cmp(&b.pid)));
    out
}

/// What the current privileges cannot see, in one sentence for the user.
pub fn visibility_note(hidden: u32, as_root: bool) -> String {
    let base = "per-process bytes from /proc/PID/io (taskstats not used: no per-process delay accounting, and it misses io_uring)";
    if hidden > 0 {
        let s = if hidden == 1 { "process" } else { "processes" };
        if as_root {
            format!("{hidden} {s} not readable even as root (ptrace restrictions or another namespace); {base}")
        } else {
            format!("{hidden} {s} not visible without root/CAP_SYS_PTRACE; {base}")
        }
    } else {
        base.to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn pc(pid: i32, start: u64, rb: u64, wb: u64, cancelled: u64) -> ProcCounters {
        ProcCounters {
            pid,
            comm: format!("p{pid}"),
            start,
            rchar: rb,
            wchar: wb,
            read_bytes: rb,
            write_bytes: wb,
            cancelled_write_bytes: cancelled,
        }
    }

    #[test]
    fn rates_sort_and_skip_reused_pids() {
        let prev = ProcSnapshot {
            procs: vec![pc(1, 10, 0, 0, 0), pc(2, 10, 0, 0, 0), pc(3, 10, 0, 0, 0)],
            hidden: 0,
            as_root: false,
        };
        let cur = ProcSnapshot {
            procs: vec![pc(1, 10, 1000, 0, 0), pc(2, 10, 0, 5000, 1000), pc(3, 99, 9999, 0, 0)],
            hidden: 2,
            as_root: false,
        };
        let r = rates(&prev, &cur, 2.0, ProcSort::Total);
        assert_eq!(r.iter().map(|r| r.pid).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(r[0].write_bytes_s, 2000.0);
        assert_eq!(r[1].read_bytes_s, 500.0);
        assert!(visibility_note(cur.hidden, false).starts_with("2 processes not visible without root"));
        assert!(visibility_note(1, true).starts_with("1 process not readable even as root"));
        assert!(!visibility_note(0, false).contains("not visible"));
    }
}
