//! Per-process I/O. Bytes per second come from `/proc/PID/io` and are the primary figure; IO%
//! and SWAPIN% (iotop's figures: the share of the interval a process waited for block I/O or
//! swap-in) come from [`crate::taskstats`] delay accounting where the privileges allow it
//! (CAP_NET_ADMIN) and `kernel.task_delayacct=1`. IO% does not see io_uring I/O, which does not
//! block the submitting task.

use crate::taskstats::{self, Taskstats, TsError};
use platform::block::Roots;
use platform::process::{self, ProcessError};
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
    /// taskstats (thread-group aggregate): total ns waited for synchronous block I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blkio_delay_ns: Option<u64>,
    /// taskstats: total ns waited for swap-in page faults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swapin_delay_ns: Option<u64>,
    /// taskstats: number of synchronous block-I/O waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blkio_count: Option<u64>,
}

/// How the delay counters of a snapshot were (not) read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskstatsState {
    /// Queried for every listed process (those that exited meanwhile have none).
    Ok,
    /// EPERM: taskstats needs root or CAP_NET_ADMIN.
    NoPermission,
    /// The kernel has no TASKSTATS family (CONFIG_TASKSTATS off).
    NoKernelSupport,
    /// Another error; queries stopped at it for this sample.
    Failed(String),
    /// This OS has no taskstats (it is Linux's).
    Unsupported,
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
    /// taskstats outcome; `None` when not tried (recordings made before taskstats support).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taskstats: Option<TaskstatsState>,
    /// `kernel.task_delayacct` at this sample; `None` when the sysctl is absent (before Linux
    /// 5.14 delay accounting is on by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayacct: Option<bool>,
}

/// The taskstats side of sampling: one socket, opened once and reused.
#[derive(Debug)]
pub struct DelaySource {
    client: Result<Taskstats, TsError>,
}

impl DelaySource {
    pub fn open() -> DelaySource {
        DelaySource { client: Taskstats::open() }
    }
}

impl Default for DelaySource {
    fn default() -> Self {
        DelaySource::open()
    }
}

fn state_of(e: &TsError) -> TaskstatsState {
    match e {
        TsError::Permission => TaskstatsState::NoPermission,
        TsError::NoFamily => TaskstatsState::NoKernelSupport,
        TsError::Unsupported => TaskstatsState::Unsupported,
        e => TaskstatsState::Failed(e.to_string()),
    }
}

/// Read every process's counters. Processes that exit while being read are skipped.
pub fn read_all() -> ProcSnapshot {
    read_all_with(None)
}

/// Read every process's counters, and with `delays` their taskstats delay totals: one request
/// per process; the first error other than a vanished process stops the queries for this
/// sample (EPERM would repeat for every process).
pub fn read_all_with(delays: Option<&mut DelaySource>) -> ProcSnapshot {
    let as_root = platform::host::is_root();
    let mut snap = ProcSnapshot { as_root, ..ProcSnapshot::default() };
    let mut client = match delays {
        None => None,
        Some(DelaySource { client: Ok(c) }) => {
            snap.taskstats = Some(TaskstatsState::Ok);
            snap.delayacct = taskstats::delayacct_enabled();
            Some(c)
        }
        Some(DelaySource { client: Err(e) }) => {
            snap.taskstats = Some(state_of(e));
            snap.delayacct = taskstats::delayacct_enabled();
            None
        }
    };
    let roots = Roots::default();
    let Ok(pids) = process::list(&roots) else {
        return snap;
    };
    for pid in pids {
        let io = match process::io(&roots, pid) {
            Ok(io) => io,
            Err(ProcessError::Permission) => {
                snap.hidden += 1;
                continue;
            }
            Err(_) => continue,
        };
        let Ok(stat) = process::stat(&roots, pid) else { continue };
        let Ok(pid) = i32::try_from(pid) else { continue };
        let mut d = None;
        if let Some(c) = client.as_deref_mut() {
            match c.tgid(pid) {
                Ok(t) => d = Some(t),
                Err(TsError::NoProcess) => {}
                Err(e) => {
                    snap.taskstats = Some(state_of(&e));
                    client = None;
                }
            }
        }
        snap.procs.push(ProcCounters {
            pid,
            comm: stat.comm,
            start: stat.start_ticks,
            rchar: io.rchar,
            wchar: io.wchar,
            read_bytes: io.read_bytes,
            write_bytes: io.write_bytes,
            cancelled_write_bytes: io.cancelled_write_bytes,
            blkio_delay_ns: d.map(|t| t.blkio_delay_total),
            swapin_delay_ns: d.map(|t| t.swapin_delay_total),
            blkio_count: d.map(|t| t.blkio_count),
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
    /// IO%: share of the interval spent waiting for synchronous block I/O (taskstats delay
    /// accounting, summed over the threads, so above 100 when several threads wait); null
    /// when unavailable.
    pub io_delay_pct: Option<f64>,
    /// SWAPIN%: share of the interval spent waiting for swap-in; null when unavailable.
    pub swapin_delay_pct: Option<f64>,
}

/// Sort keys of the process list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcSort {
    #[default]
    Total,
    Read,
    Write,
    /// IO% (then total bytes/s).
    IoDelay,
    Pid,
}

/// True when the delay counters of `cur` are meaningful: read, and delay accounting not off.
pub fn delays_usable(cur: &ProcSnapshot) -> bool {
    cur.taskstats.is_some() && cur.delayacct != Some(false)
}

/// Rates of the processes present in both snapshots (same PID and start time), busiest first.
/// Processes that did no I/O are left out.
pub fn rates(prev: &ProcSnapshot, cur: &ProcSnapshot, interval_s: f64, sort: ProcSort) -> Vec<ProcRate> {
    let before: HashMap<(i32, u64), &ProcCounters> = prev.procs.iter().map(|p| ((p.pid, p.start), p)).collect();
    let per_s = |d: u64| if interval_s > 0.0 { d as f64 / interval_s } else { 0.0 };
    let usable = delays_usable(cur);
    let pct = |a: Option<u64>, b: Option<u64>| match (usable, a, b) {
        (true, Some(a), Some(b)) if interval_s > 0.0 => Some(b.saturating_sub(a) as f64 / (interval_s * 1e7)),
        _ => None,
    };
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
                io_delay_pct: pct(p.blkio_delay_ns, c.blkio_delay_ns),
                swapin_delay_pct: pct(p.swapin_delay_ns, c.swapin_delay_ns),
            })
        })
        // A process that waited for I/O counts even if no byte was charged to it in the interval.
        .filter(|r| {
            r.read_bytes_s
                + r.write_bytes_s
                + r.rchar_s
                + r.wchar_s
                + r.io_delay_pct.unwrap_or(0.0)
                + r.swapin_delay_pct.unwrap_or(0.0)
                > 0.0
        })
        .collect();
    let total = |r: &ProcRate| r.read_bytes_s + r.write_bytes_s;
    let key = |r: &ProcRate| match sort {
        ProcSort::Total | ProcSort::IoDelay => total(r),
        ProcSort::Read => r.read_bytes_s,
        ProcSort::Write => r.write_bytes_s,
        ProcSort::Pid => -(r.pid as f64),
    };
    let first = |r: &ProcRate| if sort == ProcSort::IoDelay { r.io_delay_pct.unwrap_or(-1.0) } else { 0.0 };
    out.sort_by(|a, b| first(b).total_cmp(&first(a)).then(key(b).total_cmp(&key(a))).then(a.pid.cmp(&b.pid)));
    out
}

/// What the current privileges cannot see, in one sentence for the user; empty when nothing
/// is hidden.
pub fn visibility_note(hidden: u32, as_root: bool) -> String {
    let s = if hidden == 1 { "process" } else { "processes" };
    match (hidden, as_root) {
        (0, _) => String::new(),
        (_, true) => format!("{hidden} {s} not readable even as root (ptrace restrictions or another namespace)"),
        (_, false) => format!("{hidden} {s} not visible without root/CAP_SYS_PTRACE"),
    }
}

/// Where IO% and SWAPIN% come from, or why they are missing.
pub fn delay_note(cur: &ProcSnapshot) -> String {
    match (&cur.taskstats, cur.delayacct) {
        (None, _) => "IO% not recorded (recording made before taskstats support)".to_string(),
        (Some(TaskstatsState::NoPermission), _) => "IO% unavailable: taskstats needs root or CAP_NET_ADMIN".to_string(),
        (Some(TaskstatsState::NoKernelSupport), _) => {
            "IO% unavailable: kernel without taskstats (CONFIG_TASKSTATS)".to_string()
        }
        (Some(TaskstatsState::Unsupported), _) => "IO% unavailable: taskstats is Linux's".to_string(),
        (Some(_), Some(false)) => {
            "IO% unavailable: delay accounting is off (sysctl kernel.task_delayacct=1)".to_string()
        }
        (Some(TaskstatsState::Failed(e)), _) => format!("IO% incomplete: {e}"),
        (Some(TaskstatsState::Ok), _) => {
            "IO% from taskstats delay accounting; io_uring I/O is not counted in IO%".to_string()
        }
    }
}

/// The whole note line: the sources (bytes/s, IO%), then what cannot be seen.
pub fn note(cur: &ProcSnapshot) -> String {
    let mut n = format!("bytes/s from /proc/PID/io; {}", delay_note(cur));
    let v = visibility_note(cur.hidden, cur.as_root);
    if !v.is_empty() {
        n.push_str("; ");
        n.push_str(&v);
    }
    n
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
            blkio_delay_ns: None,
            swapin_delay_ns: None,
            blkio_count: None,
        }
    }

    fn with_delay(mut p: ProcCounters, blkio_ns: u64, swapin_ns: u64) -> ProcCounters {
        p.blkio_delay_ns = Some(blkio_ns);
        p.swapin_delay_ns = Some(swapin_ns);
        p.blkio_count = Some(blkio_ns / 1_000_000);
        p
    }

    fn snap(procs: Vec<ProcCounters>, ts: Option<TaskstatsState>, delayacct: Option<bool>) -> ProcSnapshot {
        ProcSnapshot { procs, hidden: 0, as_root: true, taskstats: ts, delayacct }
    }

    #[test]
    fn rates_sort_and_skip_reused_pids() {
        let prev = ProcSnapshot {
            procs: vec![pc(1, 10, 0, 0, 0), pc(2, 10, 0, 0, 0), pc(3, 10, 0, 0, 0)],
            hidden: 0,
            as_root: false,
            taskstats: None,
            delayacct: None,
        };
        let cur = ProcSnapshot {
            procs: vec![pc(1, 10, 1000, 0, 0), pc(2, 10, 0, 5000, 1000), pc(3, 99, 9999, 0, 0)],
            hidden: 2,
            as_root: false,
            taskstats: None,
            delayacct: None,
        };
        let r = rates(&prev, &cur, 2.0, ProcSort::Total);
        assert_eq!(r.iter().map(|r| r.pid).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(r[0].write_bytes_s, 2000.0);
        assert_eq!(r[1].read_bytes_s, 500.0);
        assert!(visibility_note(cur.hidden, false).starts_with("2 processes not visible without root"));
        assert!(visibility_note(1, true).starts_with("1 process not readable even as root"));
        assert!(visibility_note(0, false).is_empty());
        assert!(note(&cur).ends_with("IO% not recorded (recording made before taskstats support); 2 processes not visible without root/CAP_SYS_PTRACE"));
    }

    #[test]
    fn io_delay_percent_and_sort() {
        // 2 s interval: 500 ms of block-I/O wait is 25 %, 20 ms of swap-in 1 %.
        let prev = snap(
            vec![
                with_delay(pc(1, 10, 0, 0, 0), 1_000_000, 0),
                with_delay(pc(2, 10, 0, 0, 0), 0, 0),
                pc(3, 10, 0, 0, 0),
            ],
            Some(TaskstatsState::Ok),
            Some(true),
        );
        let cur = snap(
            vec![
                with_delay(pc(1, 10, 4096, 0, 0), 501_000_000, 20_000_000),
                with_delay(pc(2, 10, 0, 1 << 20, 0), 0, 0),
                pc(3, 10, 100, 0, 0),
            ],
            Some(TaskstatsState::Ok),
            Some(true),
        );
        let r = rates(&prev, &cur, 2.0, ProcSort::IoDelay);
        assert_eq!(r.iter().map(|r| r.pid).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(r[0].io_delay_pct, Some(25.0));
        assert_eq!(r[0].swapin_delay_pct, Some(1.0));
        assert_eq!(r[1].io_delay_pct, Some(0.0));
        assert_eq!(r[2].io_delay_pct, None, "no counters: no figure, not 0");
        // By bytes, pid 2 leads.
        assert_eq!(rates(&prev, &cur, 2.0, ProcSort::Total)[0].pid, 2);
        assert_eq!(
            note(&cur),
            "bytes/s from /proc/PID/io; IO% from taskstats delay accounting; io_uring I/O is not counted in IO%"
        );
        // A process that only waited is listed.
        let waited = snap(vec![with_delay(pc(1, 10, 0, 0, 0), 9_000_000, 0)], Some(TaskstatsState::Ok), None);
        let before = snap(vec![with_delay(pc(1, 10, 0, 0, 0), 0, 0)], Some(TaskstatsState::Ok), None);
        assert_eq!(rates(&before, &waited, 1.0, ProcSort::Total)[0].io_delay_pct, Some(0.9));
    }

    #[test]
    fn no_fake_zero_when_delay_accounting_is_off() {
        let prev = snap(vec![with_delay(pc(1, 10, 0, 0, 0), 5, 0)], Some(TaskstatsState::Ok), Some(false));
        let cur = snap(vec![with_delay(pc(1, 10, 4096, 0, 0), 5, 0)], Some(TaskstatsState::Ok), Some(false));
        let r = rates(&prev, &cur, 1.0, ProcSort::IoDelay);
        assert_eq!((r[0].io_delay_pct, r[0].swapin_delay_pct), (None, None));
        assert_eq!(delay_note(&cur), "IO% unavailable: delay accounting is off (sysctl kernel.task_delayacct=1)");
        let denied = snap(vec![pc(1, 10, 4096, 0, 0)], Some(TaskstatsState::NoPermission), Some(true));
        assert_eq!(delay_note(&denied), "IO% unavailable: taskstats needs root or CAP_NET_ADMIN");
        let old = snap(vec![], None, None);
        assert!(delay_note(&old).starts_with("IO% not recorded"));
        let none = snap(vec![], Some(TaskstatsState::NoKernelSupport), None);
        assert!(delay_note(&none).contains("CONFIG_TASKSTATS"));
        let elsewhere = snap(vec![], Some(TaskstatsState::Unsupported), None);
        assert_eq!(delay_note(&elsewhere), "IO% unavailable: taskstats is Linux's");
        assert_eq!(state_of(&TsError::Unsupported), TaskstatsState::Unsupported);
    }

    #[test]
    fn old_recordings_without_delay_fields_still_parse() {
        let j = r#"{"procs":[{"pid":1,"comm":"a","start":1,"rchar":0,"wchar":0,"read_bytes":0,"write_bytes":0,"cancelled_write_bytes":0}],"hidden":0}"#;
        let s: ProcSnapshot = serde_json::from_str(j).unwrap();
        assert_eq!((s.taskstats.clone(), s.delayacct, s.procs[0].blkio_delay_ns), (None, None, None));
        let back = serde_json::to_string(&s).unwrap();
        assert!(!back.contains("blkio") && !back.contains("taskstats"), "{back}");
        let failed = snap(vec![], Some(TaskstatsState::Failed("x".into())), Some(true));
        let t: ProcSnapshot = serde_json::from_str(&serde_json::to_string(&failed).unwrap()).unwrap();
        assert_eq!(t, failed);
    }
}
