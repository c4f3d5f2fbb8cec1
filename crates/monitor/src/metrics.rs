//! `iostat -x` figures, computed exactly as sysstat 12.6 computes them (iostat.c
//! `write_ext_stat` / `write_json_ext_stat`, rd_stats.c `compute_ext_disk_stats`), and the
//! Windows perfmon counters derived from the same deltas.
//!
//! The interval is sysstat's: the difference of two `/proc/uptime` readings in 1/100 s, and
//! a rate is `S_VALUE(Δ, itv) = Δ / itv · 100`. Using the same clock as iostat is what makes
//! the two tools agree on the same seconds. `%util` is not capped (iostat 12.6 does not cap
//! it either; a value a little over 100 is sampling jitter).

use crate::diskstats::Delta;
use serde::{Deserialize, Serialize};

/// sysstat's `S_VALUE(m, n, p)`: a per-second rate from a delta over `itv` centiseconds.
fn s_value(delta: u64, itv_cs: u64) -> f64 {
    delta as f64 / itv_cs as f64 * 100.0
}

/// Ratio that is 0 when the divisor is 0 (iostat: "await 0 when no I/Os").
fn per(num: u64, den: u64) -> f64 {
    if den > 0 {
        num as f64 / den as f64
    } else {
        0.0
    }
}

/// The `iostat -x -o JSON` keys, same names, same units (kB = 1024 bytes, ms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Iostat {
    #[serde(rename = "r/s")]
    pub r_s: f64,
    #[serde(rename = "w/s")]
    pub w_s: f64,
    #[serde(rename = "d/s")]
    pub d_s: f64,
    #[serde(rename = "f/s")]
    pub f_s: f64,
    #[serde(rename = "rkB/s")]
    pub rkb_s: f64,
    #[serde(rename = "wkB/s")]
    pub wkb_s: f64,
    #[serde(rename = "dkB/s")]
    pub dkb_s: f64,
    #[serde(rename = "rrqm/s")]
    pub rrqm_s: f64,
    #[serde(rename = "wrqm/s")]
    pub wrqm_s: f64,
    #[serde(rename = "drqm/s")]
    pub drqm_s: f64,
    /// %rrqm: merged share of read requests.
    #[serde(rename = "rrqm")]
    pub rrqm_pct: f64,
    #[serde(rename = "wrqm")]
    pub wrqm_pct: f64,
    #[serde(rename = "drqm")]
    pub drqm_pct: f64,
    pub r_await: f64,
    pub w_await: f64,
    pub d_await: f64,
    pub f_await: f64,
    #[serde(rename = "rareq-sz")]
    pub rareq_sz: f64,
    #[serde(rename = "wareq-sz")]
    pub wareq_sz: f64,
    #[serde(rename = "dareq-sz")]
    pub dareq_sz: f64,
    #[serde(rename = "aqu-sz")]
    pub aqu_sz: f64,
    /// %util.
    pub util: f64,
    /// iostat's combined `await` (reads, writes and discards; flushes excluded), used by the verdict.
    #[serde(rename = "await")]
    pub await_ms: f64,
}

fn merged_pct(merges: u64, ios: u64) -> f64 {
    let total = merges.wrapping_add(ios);
    if total > 0 {
        merges as f64 / total as f64 * 100.0
    } else {
        0.0
    }
}

impl Iostat {
    /// The figures for one interval of `itv_cs` centiseconds (0 is treated as 1, as sysstat does).
    pub fn compute(d: &Delta, itv_cs: u64) -> Iostat {
        let itv = itv_cs.max(1);
        // Sums wrap like sysstat's C unsigned arithmetic (only absurd deltas get there).
        let nr_ios = d.rd_ios.wrapping_add(d.wr_ios).wrapping_add(d.dc_ios);
        Iostat {
            r_s: s_value(d.rd_ios, itv),
            w_s: s_value(d.wr_ios, itv),
            d_s: s_value(d.dc_ios, itv),
            f_s: s_value(d.fl_ios, itv),
            rkb_s: s_value(d.rd_sectors, itv) / 2.0,
            wkb_s: s_value(d.wr_sectors, itv) / 2.0,
            dkb_s: s_value(d.dc_sectors, itv) / 2.0,
            rrqm_s: s_value(d.rd_merges, itv),
            wrqm_s: s_value(d.wr_merges, itv),
            drqm_s: s_value(d.dc_merges, itv),
            rrqm_pct: merged_pct(d.rd_merges, d.rd_ios),
            wrqm_pct: merged_pct(d.wr_merges, d.wr_ios),
            drqm_pct: merged_pct(d.dc_merges, d.dc_ios),
            r_await: per(d.rd_ticks, d.rd_ios),
            w_await: per(d.wr_ticks, d.wr_ios),
            d_await: per(d.dc_ticks, d.dc_ios),
            f_await: per(d.fl_ticks, d.fl_ios),
            rareq_sz: per(d.rd_sectors, d.rd_ios) / 2.0,
            wareq_sz: per(d.wr_sectors, d.wr_ios) / 2.0,
            dareq_sz: per(d.dc_sectors, d.dc_ios) / 2.0,
            aqu_sz: s_value(d.time_in_queue, itv) / 1000.0,
            util: s_value(d.io_ticks, itv) / 10.0,
            await_ms: per(d.rd_ticks.wrapping_add(d.wr_ticks).wrapping_add(d.dc_ticks), nr_ios),
        }
    }

    /// Completed requests per second of any kind.
    pub fn iops(&self) -> f64 {
        self.r_s + self.w_s + self.d_s + self.f_s
    }
}

/// The Windows Performance Monitor "PhysicalDisk" counters users know, from the same deltas.
/// Split IO/sec has no diskstats counter and is not given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Perfmon {
    #[serde(rename = "Disk Reads/sec")]
    pub reads_sec: f64,
    #[serde(rename = "Disk Writes/sec")]
    pub writes_sec: f64,
    #[serde(rename = "Disk Transfers/sec")]
    pub transfers_sec: f64,
    #[serde(rename = "Disk Bytes/sec")]
    pub bytes_sec: f64,
    #[serde(rename = "Avg. Disk Bytes/Transfer")]
    pub bytes_per_transfer: f64,
    #[serde(rename = "Avg. Disk sec/Read")]
    pub sec_per_read: f64,
    #[serde(rename = "Avg. Disk sec/Write")]
    pub sec_per_write: f64,
    #[serde(rename = "Avg. Disk sec/Transfer")]
    pub sec_per_transfer: f64,
    #[serde(rename = "Avg. Disk Queue Length")]
    pub avg_queue: f64,
    #[serde(rename = "Current Disk Queue Length")]
    pub current_queue: u64,
    /// The share of the interval with no request in flight: 100 − %util, within 0..100 (perfmon
    /// reads it from the disk's own idle time, which is the same span).
    #[serde(rename = "% Idle Time")]
    pub idle_pct: f64,
}

impl Perfmon {
    pub fn compute(d: &Delta, itv_cs: u64) -> Perfmon {
        let itv = itv_cs.max(1);
        let ios = d.rd_ios.wrapping_add(d.wr_ios);
        let sectors = d.rd_sectors as f64 + d.wr_sectors as f64;
        let fper = |num: f64, den: u64| if den > 0 { num / den as f64 } else { 0.0 };
        Perfmon {
            reads_sec: s_value(d.rd_ios, itv),
            writes_sec: s_value(d.wr_ios, itv),
            transfers_sec: s_value(ios, itv),
            bytes_sec: sectors * 512.0 / itv as f64 * 100.0,
            bytes_per_transfer: fper(sectors * 512.0, ios),
            sec_per_read: per(d.rd_ticks, d.rd_ios) / 1000.0,
            sec_per_write: per(d.wr_ticks, d.wr_ios) / 1000.0,
            sec_per_transfer: per(d.rd_ticks.wrapping_add(d.wr_ticks), ios) / 1000.0,
            avg_queue: s_value(d.time_in_queue, itv) / 1000.0,
            current_queue: d.inflight,
            idle_pct: (100.0 - s_value(d.io_ticks, itv) / 10.0).clamp(0.0, 100.0),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn zero_ios_give_zero_await_not_nan() {
        let m = Iostat::compute(&Delta::default(), 100);
        assert_eq!(m.r_await, 0.0);
        assert_eq!(m.rareq_sz, 0.0);
        assert_eq!(m.rrqm_pct, 0.0);
        let p = Perfmon::compute(&Delta::default(), 0);
        assert_eq!(p.sec_per_transfer, 0.0);
    }

    #[test]
    fn util_is_not_capped() {
        let d = Delta { io_ticks: 1010, ..Delta::default() };
        assert!((Iostat::compute(&d, 100).util - 101.0).abs() < 1e-9);
    }
}
