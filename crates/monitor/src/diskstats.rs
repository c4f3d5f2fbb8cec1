//! `/proc/diskstats` counters (read by platform's one reader) and modular deltas between two samples.
//!
//! Counts and sectors are `unsigned long` in the kernel (64 bits on 64-bit kernels, 32 on
//! 32-bit ones); the millisecond fields are `unsigned int` and wrap at 2^32 (~49.7 days of
//! busy time). A delta is therefore taken modulo the width the value fits in, exactly as
//! sysstat does with its C unsigned types. A device that was removed and added again
//! starts from zero: that is a reset, detected as iostat detects it, and reported as such.

/// The counters and lines are platform's (one reader); this module adds the deltas.
pub use platform::diskstats::{parse, parse_line, Counters, DiskLine, ParseError};
use serde::{Deserialize, Serialize};

/// Difference of two readings of a counter that is `bits` wide in the kernel. A value past
/// 32 bits proves a 64-bit counter; below that, a smaller current value is a 32-bit wrap.
fn wrap_delta(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else if prev <= u64::from(u32::MAX) {
        (u64::from(u32::MAX) - prev) + cur + 1
    } else {
        cur.wrapping_sub(prev)
    }
}

/// Millisecond fields are `unsigned int`: always modulo 2^32.
fn ms_delta(prev: u64, cur: u64) -> u64 {
    (cur as u32).wrapping_sub(prev as u32) as u64
}

/// Interval differences of the cumulative counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delta {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
    pub dc_ios: u64,
    pub dc_merges: u64,
    pub dc_sectors: u64,
    pub dc_ticks: u64,
    pub fl_ios: u64,
    pub fl_ticks: u64,
    /// In flight at the end of the interval.
    pub inflight: u64,
}

/// iostat's test for a device removed and added again: fewer I/Os than before, and every
/// sector counter that had counted something went backwards too.
pub fn is_reset(prev: &Counters, cur: &Counters) -> bool {
    // Wrapping, as sysstat's unsigned long sum.
    let ios = |c: &Counters| c.rd_ios.wrapping_add(c.wr_ios).wrapping_add(c.dc_ios).wrapping_add(c.fl_ios);
    let back = |p: u64, c: u64| p == 0 || c < p;
    ios(cur) < ios(prev)
        && back(prev.rd_sectors, cur.rd_sectors)
        && back(prev.wr_sectors, cur.wr_sectors)
        && back(prev.dc_sectors, cur.dc_sectors)
}

/// The outcome of differencing two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Normal interval (wraps handled).
    Delta(Delta),
    /// The counters restarted (device re-added): no rates for this interval.
    Reset,
}

pub fn delta(prev: &Counters, cur: &Counters) -> Change {
    if is_reset(prev, cur) {
        return Change::Reset;
    }
    Change::Delta(Delta {
        rd_ios: wrap_delta(prev.rd_ios, cur.rd_ios),
        rd_merges: wrap_delta(prev.rd_merges, cur.rd_merges),
        rd_sectors: wrap_delta(prev.rd_sectors, cur.rd_sectors),
        rd_ticks: ms_delta(prev.rd_ticks, cur.rd_ticks),
        wr_ios: wrap_delta(prev.wr_ios, cur.wr_ios),
        wr_merges: wrap_delta(prev.wr_merges, cur.wr_merges),
        wr_sectors: wrap_delta(prev.wr_sectors, cur.wr_sectors),
        wr_ticks: ms_delta(prev.wr_ticks, cur.wr_ticks),
        io_ticks: ms_delta(prev.io_ticks, cur.io_ticks),
        time_in_queue: ms_delta(prev.time_in_queue, cur.time_in_queue),
        dc_ios: wrap_delta(prev.dc_ios, cur.dc_ios),
        dc_merges: wrap_delta(prev.dc_merges, cur.dc_merges),
        dc_sectors: wrap_delta(prev.dc_sectors, cur.dc_sectors),
        dc_ticks: ms_delta(prev.dc_ticks, cur.dc_ticks),
        fl_ios: wrap_delta(prev.fl_ios, cur.fl_ios),
        fl_ticks: ms_delta(prev.fl_ticks, cur.fl_ticks),
        inflight: cur.inflight,
    })
}

/// Counters since boot, as a delta from zero (`--since-boot`).
pub fn since_boot(cur: &Counters) -> Delta {
    match delta(&Counters::default(), cur) {
        Change::Delta(d) => d,
        Change::Reset => Delta::default(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn wraps_are_modular() {
        let prev = Counters {
            rd_ios: u64::from(u32::MAX) - 1,
            rd_ticks: u64::from(u32::MAX),
            rd_sectors: 5,
            ..Default::default()
        };
        let cur = Counters { rd_ios: 3, rd_ticks: 4, rd_sectors: 10, ..Default::default() };
        // Total I/Os went down but sectors went up: a wrap, not a reset.
        let Change::Delta(d) = delta(&prev, &cur) else { panic!("expected a delta") };
        assert_eq!(d.rd_ios, 5);
        assert_eq!(d.rd_ticks, 5);
    }

    #[test]
    fn backwards_is_reset() {
        let prev = Counters { rd_ios: 1000, rd_sectors: 8000, wr_ios: 10, wr_sectors: 80, ..Default::default() };
        let cur = Counters { rd_ios: 5, rd_sectors: 40, ..Default::default() };
        assert_eq!(delta(&prev, &cur), Change::Reset);
    }
}
