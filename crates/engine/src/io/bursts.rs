//! Whole bursts: a device that completes its I/Os in bursts, one per fixed period (Linux's
//! blk-throttle releases a 100 ms slice of its budget at a time), is measured over whole
//! periods.
//!
//! A window of fixed length opened and closed at arbitrary moments cuts a burst at each edge:
//! it counts up to one burst too many or too few, ±2.5 % of a 4 s window at a 100 ms slice, and
//! a throttle's slice carried over from the job before adds a larger first burst. Each worker
//! keeps the times of its first and its last [`EDGE_STAMPS`] completions (two fixed arrays
//! filled in the hot path, no allocation); at the end, when both edges show bursts at one
//! steady period, the headline counts the completions from the start of the first whole burst
//! to the start of the last one, over the time between those two starts — whole periods, so
//! the rate is the device's to within the period's timer jitter. A first burst larger than
//! the rest (carried-over credit) is left out. Anything else — a smooth device, stalls at
//! irregular moments, too few bursts — keeps the whole window.

/// Completions each worker keeps at each edge of its measured window (16 bytes each).
pub const EDGE_STAMPS: usize = 16 * 1024;
/// A gap between completions that starts a burst: at least this long…
const MIN_GAP_NS: u64 = 2_000_000;
/// …and this many times the median gap.
const GAP_FACTOR: u64 = 20;
/// Consecutive burst starts must be this close to their median period (share).
const PERIOD_SPREAD: f64 = 0.15;
/// Periods this short or long are not a limiter's slices.
const MIN_PERIOD_NS: u64 = 10_000_000;
const MAX_PERIOD_NS: u64 = 2_000_000_000;
/// Burst starts each edge must show (two whole periods).
const MIN_STARTS: usize = 3;
/// The whole periods must span this many periods and this share of the window.
const MIN_PERIODS: u64 = 5;
const MIN_SHARE: f64 = 0.5;
/// A leading burst this much larger than the median burst is carried-over credit.
const LEAD_EXCESS: f64 = 0.05;
/// Leading bursts that may be left out.
const MAX_DROPPED: usize = 3;

/// One completion: when (ns on the group's clock), its length, its direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    pub t_ns: u64,
    pub bytes: u32,
    pub write: bool,
}

/// A worker's first and last [`EDGE_STAMPS`] measured completions, and its totals.
pub struct EdgeLog {
    head: Box<[Stamp]>,
    head_n: usize,
    ring: Box<[Stamp]>,
    /// Stamps written to the ring so far (the next goes to `ring_total % EDGE_STAMPS`).
    ring_total: u64,
    /// Every recorded completion, per direction (`[read, write]`).
    ops: [u64; 2],
    bytes: [u64; 2],
}

impl Default for EdgeLog {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for EdgeLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EdgeLog").field("head_n", &self.head_n).field("ring_total", &self.ring_total).finish()
    }
}

impl EdgeLog {
    pub fn new() -> Self {
        Self {
            head: vec![Stamp::default(); EDGE_STAMPS].into_boxed_slice(),
            head_n: 0,
            ring: vec![Stamp::default(); EDGE_STAMPS].into_boxed_slice(),
            ring_total: 0,
            ops: [0; 2],
            bytes: [0; 2],
        }
    }

    /// One measured completion (per I/O: two stores, no allocation).
    #[inline(always)]
    pub fn record(&mut self, t_ns: u64, bytes: u32, write: bool) {
        let s = Stamp { t_ns, bytes, write };
        if self.head_n < EDGE_STAMPS {
            self.head[self.head_n] = s;
            self.head_n += 1;
        } else {
            self.ring[(self.ring_total % EDGE_STAMPS as u64) as usize] = s;
            self.ring_total += 1;
        }
        let d = usize::from(write);
        self.ops[d] += 1;
        self.bytes[d] += u64::from(bytes);
    }

    fn head(&self) -> &[Stamp] {
        &self.head[..self.head_n]
    }

    /// The ring's stamps, oldest first.
    fn ring(&self) -> impl Iterator<Item = &Stamp> {
        let n = EDGE_STAMPS as u64;
        let (from, len) = if self.ring_total > n { (self.ring_total % n, n) } else { (0, self.ring_total) };
        (0..len).map(move |i| &self.ring[((from + i) % n) as usize])
    }

    fn stamps(&self) -> impl Iterator<Item = &Stamp> {
        self.head().iter().chain(self.ring())
    }

    /// Completions up to this time are all in the head (`u64::MAX`: the head holds them all).
    fn head_limit(&self) -> u64 {
        if self.head_n < EDGE_STAMPS || self.ring_total == 0 {
            u64::MAX
        } else {
            self.head[EDGE_STAMPS - 1].t_ns
        }
    }

    /// Completions after this time are all kept (0: every completion is).
    fn tail_limit(&self) -> u64 {
        if self.ring_total > EDGE_STAMPS as u64 {
            self.ring().next().map_or(0, |s| s.t_ns)
        } else {
            0
        }
    }
}

/// The measured window cut to whole bursts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aligned {
    /// The first and the last burst start counted from, ns on the group's clock.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The bursts' median period.
    pub period_ns: u64,
    /// Whole bursts counted (start to start).
    pub bursts: u64,
    /// Leading bursts left out as larger than the rest (carried-over credit).
    pub dropped: u32,
    /// Completions and bytes from `start_ns` (included) to `end_ns` (excluded), `[read, write]`.
    pub ops: [u64; 2],
    pub bytes: [u64; 2],
}

/// Indices of the burst starts in sorted times `t`: a completion after a gap at least
/// [`MIN_GAP_NS`] and [`GAP_FACTOR`] times the median gap.
fn burst_starts(t: &[u64]) -> Vec<usize> {
    if t.len() < 2 {
        return Vec::new();
    }
    let mut gaps: Vec<u64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let mid = gaps.len() / 2;
    let median = *gaps.select_nth_unstable(mid).1;
    let big = MIN_GAP_NS.max(median.saturating_mul(GAP_FACTOR));
    (1..t.len()).filter(|&i| t[i] - t[i - 1] >= big).collect()
}

/// The period of burst starts at times `s` (in both edges' views): the median distance between
/// consecutive starts, when at least half of them are within [`PERIOD_SPREAD`] of it (a burst
/// split by a stall, or the catch-up at the start, adds a start between two) and it is within
/// the limiter range; `None` otherwise.
fn steady_period(views: &[&[u64]]) -> Option<u64> {
    let mut d: Vec<u64> = views.iter().flat_map(|s| s.windows(2).map(|w| w[1] - w[0])).collect();
    if views.iter().any(|s| s.len() < MIN_STARTS) || d.is_empty() {
        return None;
    }
    d.sort_unstable();
    let p = d[d.len() / 2];
    let regular = d.iter().filter(|&&x| near(x, p)).count();
    ((MIN_PERIOD_NS..=MAX_PERIOD_NS).contains(&p) && 2 * regular >= d.len()).then_some(p)
}

/// `x` is within [`PERIOD_SPREAD`] of period `p`.
fn near(x: u64, p: u64) -> bool {
    (x as f64 - p as f64).abs() <= PERIOD_SPREAD * p as f64
}

/// The first start in `s` that two regular periods follow, and the last that two precede.
fn regular_edges(s: &[u64], p: u64) -> (Option<usize>, Option<usize>) {
    let ok = |i: usize| near(s[i + 1] - s[i], p);
    let n = s.len();
    let first = (0..n.saturating_sub(2)).find(|&i| ok(i) && ok(i + 1));
    let last = (2..n).rev().find(|&j| ok(j - 1) && ok(j - 2));
    (first, last)
}

/// The whole-burst window of a job's workers: each worker's edge log and its measured window
/// `[t0, t0 + len)` on the group's clock. `None` when the completions do not come in steady
/// bursts at both edges (the whole window stands).
pub fn align(workers: &[(&EdgeLog, u64, u64)]) -> Option<Aligned> {
    if workers.is_empty() {
        return None;
    }
    let window_ns = workers.iter().map(|w| w.2).max().unwrap_or(0);
    // The views where every worker's completions are all kept.
    let head_lim = workers.iter().map(|w| w.0.head_limit()).min().unwrap_or(u64::MAX);
    let tail_lim = workers.iter().map(|w| w.0.tail_limit()).max().unwrap_or(0);
    let mut head: Vec<u64> =
        workers.iter().flat_map(|w| w.0.head().iter()).map(|s| s.t_ns).filter(|&t| t < head_lim).collect();
    let mut tail: Vec<u64> =
        workers.iter().flat_map(|w| w.0.stamps()).map(|s| s.t_ns).filter(|&t| t > tail_lim).collect();
    head.sort_unstable();
    tail.sort_unstable();
    let hs: Vec<u64> = burst_starts(&head).into_iter().map(|i| head[i]).collect();
    let ts: Vec<u64> = burst_starts(&tail).into_iter().map(|i| tail[i]).collect();
    let period = steady_period(&[&hs, &ts])?;
    let (first, _) = regular_edges(&hs, period);
    let (_, last) = regular_edges(&ts, period);
    let (mut first, last) = (first?, last?);
    // Burst sizes (completions from one start to the next a period later) at both edges.
    let sizes_of = |t: &[u64], s: &[u64]| -> Vec<usize> {
        s.windows(2)
            .filter(|w| near(w[1] - w[0], period))
            .map(|w| t.partition_point(|&x| x < w[1]) - t.partition_point(|&x| x < w[0]))
            .collect()
    };
    let mut all: Vec<usize> = sizes_of(&head, &hs).into_iter().chain(sizes_of(&tail, &ts)).collect();
    all.sort_unstable();
    let median = *all.get(all.len() / 2)? as f64;
    // A leading burst larger than the rest is credit carried over from before the window.
    let size_at = |i: usize| head.partition_point(|&x| x < hs[i + 1]) - head.partition_point(|&x| x < hs[i]);
    let mut dropped = 0;
    while dropped < MAX_DROPPED
        && first + 1 < hs.len()
        && near(hs[first + 1] - hs[first], period)
        && size_at(first) as f64 > median * (1.0 + LEAD_EXCESS)
    {
        first += 1;
        dropped += 1;
    }
    let (start, end) = (hs[first], ts[last]);
    if end <= start {
        return None;
    }
    // Both edges are slice starts in phase: whole periods between them.
    let periods = (end - start) as f64 / period as f64;
    let whole = periods.round();
    if (periods - whole).abs() > PERIOD_SPREAD
        || (whole as u64) < MIN_PERIODS
        || ((end - start) as f64) < MIN_SHARE * window_ns as f64
    {
        return None;
    }
    let (mut ops, mut bytes) = ([0u64; 2], [0u64; 2]);
    for (log, _, _) in workers {
        for d in 0..2 {
            ops[d] += log.ops[d];
            bytes[d] += log.bytes[d];
        }
        // Before the start: all in the head (start < head_lim); from the end on: all kept.
        let before = log.head().iter().filter(|s| s.t_ns < start);
        let after = log.stamps().filter(|s| s.t_ns >= end);
        for s in before.chain(after) {
            let d = usize::from(s.write);
            ops[d] -= 1;
            bytes[d] -= u64::from(s.bytes);
        }
    }
    Some(Aligned {
        start_ns: start,
        end_ns: end,
        period_ns: (end - start) / whole as u64,
        bursts: whole as u64,
        dropped: dropped as u32,
        ops,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A throttle: `per` completions at the start of every `period`, `spacing` apart, from
    /// `phase` on, until `len`; the second burst (the first after a gap) `extra` larger.
    fn throttled(period: u64, per: u64, spacing: u64, phase: u64, len: u64, extra: u64) -> EdgeLog {
        let mut log = EdgeLog::new();
        let mut k = 0;
        loop {
            let start = phase + k * period;
            let n = if k == 1 { per + extra } else { per };
            for i in 0..n {
                let t = start + i * spacing;
                if t >= len {
                    return log;
                }
                log.record(t, 4096, false);
            }
            k += 1;
        }
    }

    fn smooth(spacing: u64, len: u64) -> EdgeLog {
        let mut log = EdgeLog::new();
        let mut t = spacing;
        while t < len {
            log.record(t, 4096, true);
            t += spacing;
        }
        log
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_throttle_is_counted_over_whole_slices_at_any_phase() {
        // 2 000 IOPS: 200 per 100 ms slice, 0.3 ms apart; a 4 s window.
        for phase in [0, 7 * MS, 33 * MS, 61 * MS, 99 * MS] {
            let log = throttled(100 * MS, 200, 300_000, phase, 4000 * MS, 0);
            let a = align(&[(&log, 0, 4000 * MS)]).expect("bursts");
            let iops = a.ops[0] as f64 / ((a.end_ns - a.start_ns) as f64 / 1e9);
            assert!((iops - 2000.0).abs() < 0.01, "phase {phase}: {iops}");
            assert_eq!(a.period_ns, 100 * MS);
            assert_eq!(a.dropped, 0);
        }
    }

    #[test]
    fn a_carried_over_first_burst_is_left_out() {
        let log = throttled(100 * MS, 200, 300_000, 0, 4000 * MS, 100);
        let a = align(&[(&log, 0, 4000 * MS)]).expect("bursts");
        assert_eq!(a.dropped, 1);
        let iops = a.ops[0] as f64 / ((a.end_ns - a.start_ns) as f64 / 1e9);
        assert!((iops - 2000.0).abs() < 0.01, "{iops}");
    }

    /// As measured on a RAM loop device at 10 000 IOPS, 4 KiB QD 32 right after another job: the
    /// first 80 ms come in sub-bursts 2–5 ms apart (the throttle catching up), then a burst
    /// every 100 ms; near the end a stall splits one burst in two.
    #[test]
    fn catch_up_at_the_start_and_a_split_burst_do_not_move_the_edges() {
        let mut log = EdgeLog::new();
        let mut t = 0;
        for _ in 0..5 {
            for _ in 0..60 {
                log.record(t, 4096, false);
                t += 20_000;
            }
            t += 3 * MS;
        }
        let first = 80 * MS;
        for k in 0..30u64 {
            let start = first + k * 100 * MS;
            for i in 0..1000u64 {
                // Burst 25 stops for 12 ms half way.
                let stall = if k == 25 && i >= 500 { 12 * MS } else { 0 };
                log.record(start + i * 20_000 + stall, 4096, false);
            }
        }
        let a = align(&[(&log, 0, first + 3000 * MS)]).expect("bursts");
        assert_eq!((a.start_ns, a.bursts, a.dropped), (first, 29, 0));
        assert_eq!(a.ops[0], 29_000);
    }

    #[test]
    fn a_smooth_device_keeps_its_whole_window() {
        assert_eq!(align(&[(&smooth(100_000, 4000 * MS), 0, 4000 * MS)]), None);
        // A few stalls at irregular moments are not a throttle.
        let mut log = EdgeLog::new();
        let mut t = 0;
        for i in 0..40_000u64 {
            t += if i % 7919 == 0 { 50 * MS + i * 1000 } else { 100_000 };
            log.record(t, 4096, false);
        }
        assert_eq!(align(&[(&log, 0, t + 1)]), None);
    }

    #[test]
    fn a_long_fast_run_is_aligned_from_both_edges() {
        // 10 000 IOPS for 60 s: 600 000 completions, far more than the two edges keep.
        let log = throttled(100 * MS, 1000, 10_000, 41 * MS, 60_000 * MS, 0);
        let a = align(&[(&log, 0, 60_000 * MS)]).expect("bursts");
        let iops = a.ops[0] as f64 / ((a.end_ns - a.start_ns) as f64 / 1e9);
        assert!((iops - 10_000.0).abs() < 0.01, "{iops}");
        assert_eq!(a.bytes[0], a.ops[0] * 4096);
    }

    #[test]
    fn workers_are_merged_on_the_group_clock() {
        // Two workers sharing one 4 000 IOPS throttle, each taking every other I/O.
        let (mut a, mut b) = (EdgeLog::new(), EdgeLog::new());
        for k in 0..40u64 {
            for i in 0..400u64 {
                let t = 13 * MS + k * 100 * MS + i * 50_000;
                if i % 2 == 0 { &mut a } else { &mut b }.record(t, 8192, i % 4 == 1);
            }
        }
        let got = align(&[(&a, 0, 4000 * MS), (&b, 0, 4000 * MS)]).expect("bursts");
        let iops = (got.ops[0] + got.ops[1]) as f64 / ((got.end_ns - got.start_ns) as f64 / 1e9);
        assert!((iops - 4000.0).abs() < 0.01, "{iops}");
        assert_eq!(got.ops[1] * 3, got.ops[0]);
    }

    proptest! {
        /// Whatever the phase, slice and rate, whole bursts give the throttle's rate, and
        /// never more completions than were recorded.
        #[test]
        fn whole_bursts_give_the_rate(
            period_ms in 20u64..300,
            per in 10u64..3000,
            phase_ms in 0u64..300,
            len_s in 3u64..20,
        ) {
            let period = period_ms * MS;
            // Bursts take a quarter of the period: a gap of 3 × per spacings between them.
            let spacing = period / 4 / per;
            let len = len_s * 1000 * MS;
            let log = throttled(period, per, spacing, phase_ms * MS, len, 0);
            if let Some(a) = align(&[(&log, 0, len)]) {
                let rate = a.ops[0] as f64 / ((a.end_ns - a.start_ns) as f64 / 1e9);
                let want = per as f64 * 1e9 / period as f64;
                prop_assert!((rate / want - 1.0).abs() < 1e-9, "{} vs {}", rate, want);
                prop_assert!(a.ops[0] <= log.ops[0]);
            } else {
                // Too few periods in the window, or edges too short to show three bursts.
                prop_assert!(len < (MIN_PERIODS + 4) * period || per * 3 > EDGE_STAMPS as u64);
            }
        }
    }
}
