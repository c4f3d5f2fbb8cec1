//! From successive samples to interval reports (schema `diskmeter.top.v1`).

use crate::devices::{Class, DeviceInfo, Filter, Kind};
use crate::diskstats::{self, Change, Counters};
use crate::metrics::{Iostat, Perfmon};
use crate::procs::{self, ProcRate, ProcSnapshot, ProcSort};
use crate::psi::{self, Psi, PsiTotals};
use crate::sample::Sample;
use crate::verdict::{self, State, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Schema of each `--json` line.
pub const SCHEMA: &str = "diskmeter.top.v1";

/// Device (and process) ordering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    /// Kernel order (as /proc/diskstats lists them).
    #[default]
    Name,
    Iops,
    Read,
    Write,
    Await,
    Queue,
    Util,
    /// Processes by IO% (taskstats block-I/O delay); devices by %util, the nearest device figure.
    IoDelay,
}

impl SortKey {
    pub const ALL: [SortKey; 8] = [
        SortKey::Name,
        SortKey::Iops,
        SortKey::Read,
        SortKey::Write,
        SortKey::Await,
        SortKey::Queue,
        SortKey::Util,
        SortKey::IoDelay,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Name => "name",
            SortKey::Iops => "iops",
            SortKey::Read => "read",
            SortKey::Write => "write",
            SortKey::Await => "await",
            SortKey::Queue => "queue",
            SortKey::Util => "util",
            SortKey::IoDelay => "iodelay",
        }
    }

    pub fn parse(s: &str) -> Option<SortKey> {
        SortKey::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn proc_sort(self) -> ProcSort {
        match self {
            SortKey::Read => ProcSort::Read,
            SortKey::Write => ProcSort::Write,
            SortKey::IoDelay => ProcSort::IoDelay,
            _ => ProcSort::Total,
        }
    }

    pub(crate) fn value(self, d: &DeviceReport) -> f64 {
        match self {
            SortKey::Name => 0.0,
            SortKey::Iops => d.iostat.iops(),
            SortKey::Read => d.iostat.rkb_s,
            SortKey::Write => d.iostat.wkb_s,
            SortKey::Await => d.iostat.await_ms,
            SortKey::Queue => d.iostat.aqu_sz,
            SortKey::Util | SortKey::IoDelay => d.iostat.util,
        }
    }
}

/// What the monitor reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    pub filter: Filter,
    pub processes: bool,
    pub sort: SortKey,
    /// The first report covers the time since boot (otherwise the first sample is the baseline).
    pub since_boot: bool,
    /// At most this many processes per report (0 = all).
    pub max_processes: usize,
}

/// One device over one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapper: Option<String>,
    pub kind: Kind,
    pub class: Class,
    /// The counters restarted (device re-added): the figures of this interval are zero, not garbage.
    #[serde(default)]
    pub reset: bool,
    #[serde(flatten)]
    pub iostat: Iostat,
    pub perfmon: Perfmon,
    pub inflight: u64,
    pub verdict: Verdict,
}

impl DeviceReport {
    pub fn display_name(&self) -> &str {
        self.mapper.as_deref().unwrap_or(&self.name)
    }
}

/// One interval: one `--json` line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    /// End of the interval, RFC 3339 UTC.
    pub t: String,
    pub interval_s: f64,
    pub devices: Vec<DeviceReport>,
    /// I/O pressure; null when the kernel has no PSI.
    pub psi: Option<Psi>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<ProcRate>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes_note: Option<String>,
    /// /proc/diskstats lines that could not be parsed in this sample.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_lines: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn r4(v: f64) -> f64 {
    if v.is_finite() {
        (v * 10_000.0).round() / 10_000.0
    } else {
        0.0
    }
}

fn round_iostat(m: Iostat) -> Iostat {
    Iostat {
        r_s: r4(m.r_s),
        w_s: r4(m.w_s),
        d_s: r4(m.d_s),
        f_s: r4(m.f_s),
        rkb_s: r4(m.rkb_s),
        wkb_s: r4(m.wkb_s),
        dkb_s: r4(m.dkb_s),
        rrqm_s: r4(m.rrqm_s),
        wrqm_s: r4(m.wrqm_s),
        drqm_s: r4(m.drqm_s),
        rrqm_pct: r4(m.rrqm_pct),
        wrqm_pct: r4(m.wrqm_pct),
        drqm_pct: r4(m.drqm_pct),
        r_await: r4(m.r_await),
        w_await: r4(m.w_await),
        d_await: r4(m.d_await),
        f_await: r4(m.f_await),
        rareq_sz: r4(m.rareq_sz),
        wareq_sz: r4(m.wareq_sz),
        dareq_sz: r4(m.dareq_sz),
        aqu_sz: r4(m.aqu_sz),
        util: r4(m.util),
        await_ms: r4(m.await_ms),
    }
}

fn round_perfmon(p: Perfmon) -> Perfmon {
    Perfmon {
        reads_sec: r4(p.reads_sec),
        writes_sec: r4(p.writes_sec),
        transfers_sec: r4(p.transfers_sec),
        bytes_sec: r4(p.bytes_sec),
        bytes_per_transfer: r4(p.bytes_per_transfer),
        sec_per_read: (p.sec_per_read * 1e7).round() / 1e7,
        sec_per_write: (p.sec_per_write * 1e7).round() / 1e7,
        sec_per_transfer: (p.sec_per_transfer * 1e7).round() / 1e7,
        avg_queue: r4(p.avg_queue),
        current_queue: p.current_queue,
        idle_pct: r4(p.idle_pct),
    }
}

/// RFC 3339 (UTC, milliseconds) from seconds since the epoch.
pub fn rfc3339(t: f64) -> String {
    let ms = (t.max(0.0) * 1000.0).round() as u64;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(at).to_string()
}

struct Prev {
    uptime_cs: u64,
    counters: HashMap<String, Counters>,
    psi: Option<PsiTotals>,
    procs: Option<ProcSnapshot>,
}

/// Turns samples into reports; the same code serves live runs, replays and tests.
pub struct Monitor {
    pub opts: Options,
    devices: BTreeMap<String, DeviceInfo>,
    prev: Option<Prev>,
}

impl Monitor {
    pub fn new(opts: Options) -> Self {
        Monitor { opts, devices: BTreeMap::new(), prev: None }
    }

    /// What is known about a device (classification from the sample source, or a guess).
    pub fn device_info(&self, name: &str) -> DeviceInfo {
        self.devices.get(name).cloned().unwrap_or_else(|| DeviceInfo::guess(name))
    }

    /// Feed one sample; returns the report of the interval it closes (none for the baseline).
    pub fn push(&mut self, s: &Sample) -> Option<Report> {
        for d in &s.devices {
            self.devices.insert(d.name.clone(), d.clone());
        }
        let text = s.diskstats.join("\n");
        let (lines, bad) = diskstats::parse(&text);
        let cur = Prev {
            uptime_cs: s.uptime_cs,
            counters: lines.iter().map(|l| (l.name.clone(), l.counters)).collect(),
            psi: s.psi,
            procs: s.procs.clone(),
        };
        let prev = match self.prev.take() {
            Some(p) => p,
            None if self.opts.since_boot => Prev { uptime_cs: 0, counters: HashMap::new(), psi: None, procs: None },
            None => {
                self.prev = Some(cur);
                return None;
            }
        };
        let itv_cs = s.uptime_cs.wrapping_sub(prev.uptime_cs).max(1);
        let interval_s = itv_cs as f64 / 100.0;
        let mut devices = Vec::new();
        for l in &lines {
            let info = self.device_info(&l.name);
            if !self.opts.filter.accepts(&info) {
                continue;
            }
            // Like iostat: a device that never did any I/O is not listed unless asked for by name.
            let c = &l.counters;
            if self.opts.filter.names.is_empty() && [c.rd_ios, c.wr_ios, c.dc_ios, c.fl_ios].iter().all(|x| *x == 0) {
                continue;
            }
            let change = match prev.counters.get(&l.name) {
                Some(p) => diskstats::delta(p, c),
                None if self.opts.since_boot && prev.uptime_cs == 0 => Change::Delta(diskstats::since_boot(c)),
                // Appeared since the last sample: it has no baseline yet.
                None => continue,
            };
            devices.push(device_report(&info, change, c.inflight, itv_cs, interval_s));
        }
        if self.opts.sort != SortKey::Name {
            let k = self.opts.sort;
            devices.sort_by(|a, b| k.value(b).total_cmp(&k.value(a)).then_with(|| a.name.cmp(&b.name)));
        }
        let psi = match (&prev.psi, &cur.psi) {
            (Some(p), Some(c)) => {
                let mut x = psi::interval(p, c, interval_s);
                x.some_pct = r4(x.some_pct);
                x.full_pct = x.full_pct.map(r4);
                Some(x)
            }
            _ => None,
        };
        let (processes, processes_note) = if self.opts.processes {
            match (&prev.procs, &cur.procs) {
                (Some(p), Some(c)) => {
                    let mut r = procs::rates(p, c, interval_s, self.opts.sort.proc_sort());
                    if self.opts.max_processes > 0 {
                        r.truncate(self.opts.max_processes);
                    }
                    for p in &mut r {
                        p.read_bytes_s = r4(p.read_bytes_s);
                        p.write_bytes_s = r4(p.write_bytes_s);
                        p.rchar_s = r4(p.rchar_s);
                        p.wchar_s = r4(p.wchar_s);
                        p.io_delay_pct = p.io_delay_pct.map(r4);
                        p.swapin_delay_pct = p.swapin_delay_pct.map(r4);
                    }
                    (Some(r), Some(procs::note(c)))
                }
                _ => (Some(Vec::new()), Some("no per-process counters in this sample".to_string())),
            }
        } else {
            (None, None)
        };
        self.prev = Some(cur);
        Some(Report {
            schema: SCHEMA.to_string(),
            t: rfc3339(s.t),
            interval_s,
            devices,
            psi,
            processes,
            processes_note,
            skipped_lines: bad,
        })
    }
}

fn device_report(info: &DeviceInfo, change: Change, inflight: u64, itv_cs: u64, interval_s: f64) -> DeviceReport {
    let (reset, d) = match change {
        Change::Delta(d) => (false, d),
        Change::Reset => (true, diskstats::Delta { inflight, ..Default::default() }),
    };
    let iostat = Iostat::compute(&d, itv_cs);
    let perfmon = Perfmon::compute(&d, itv_cs);
    let verdict = if reset {
        Verdict {
            state: State::Reset,
            reason: "counters restarted (device removed and added again): no figures for this interval".into(),
        }
    } else {
        verdict::judge(info.class, &iostat, inflight, interval_s)
    };
    DeviceReport {
        name: info.name.clone(),
        mapper: info.mapper.clone(),
        kind: info.kind,
        class: info.class,
        reset,
        iostat: round_iostat(iostat),
        perfmon: round_perfmon(perfmon),
        inflight,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn rfc3339_known_dates() {
        assert_eq!(rfc3339(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400.5), "2000-02-29T00:00:00.500Z");
        assert_eq!(rfc3339(1_795_334_400.0), "2026-11-22T08:00:00.000Z");
    }
}
