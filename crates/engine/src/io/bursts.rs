//! Whole bursts: a device that completes its I/Os in bursts, one per fixed period (Linux's
//! blk-throttle releases a 100 ms slice of its budget at a time), is measured over whole
//! periods.
//!
//! A window of fixed length opened and closed at arbitrary moments cuts a burst at each edge:
//! it counts up to one burst too many or too few, ±2.5 % of a 4 s window at a 100 ms slice, and
//! a throttle catching up right after the job before adds more at the start. Each worker notes
//! every completion that follows a gap of [`MIN_GAP_NS`] or more, with its counts so far (one
//! comparison per I/O; the notes go into two small arrays allocated up front: the first
//! [`MARKS`] and a ring of the last [`MARKS`]). At the end, when both edges show bursts at one
//! steady period, the headline counts the completions from the first burst start that two
//! regular periods follow to the last that two regular periods precede, over the time between
//! those starts: whole periods, so the rate is the limiter's to within its timer's jitter. A
//! first burst larger than the rest (carried-over credit) is left out. Anything else — a smooth
//! device, stalls at irregular moments, too few bursts — keeps the whole window.

/// Gap notes each worker keeps at each edge of its measured window (48 bytes each).
pub const MARKS: usize = 512;
/// A gap between completions that may start a burst: at least this long…
const MIN_GAP_NS: u64 = 2_000_000;
/// …and this many times the worker's mean time between completions.
const GAP_FACTOR: u64 = 10;
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

/// A completion after a gap: when (ns on the group's clock), how long the gap was, and the
/// worker's completions and bytes before it (`[read, write]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    pub t_ns: u64,
    pub gap_ns: u64,
    pub ops: [u64; 2],
    pub bytes: [u64; 2],
}

/// A worker's gap notes: the first [`MARKS`] and the last [`MARKS`], and its totals.
#[derive(Debug, Default)]
pub struct EdgeLog {
    head: Vec<Mark>,
    ring: Vec<Mark>,
    /// Where the next note goes once the ring is full.
    ring_next: usize,
    wrapped: bool,
    last_ns: u64,
    /// Every recorded completion, per direction (`[read, write]`).
    ops: [u64; 2],
    bytes: [u64; 2],
}

impl EdgeLog {
    pub fn new() -> Self {
        Self { head: Vec::with_capacity(MARKS), ring: Vec::with_capacity(MARKS), ..Self::default() }
    }

    /// One measured completion: a comparison, two additions, and a note after a gap (into
    /// room reserved up front: no allocation).
    #[inline(always)]
    pub fn record(&mut self, t_ns: u64, bytes: u32, write: bool) {
        let gap = t_ns.saturating_sub(self.last_ns);
        if gap >= MIN_GAP_NS && self.ops[0] + self.ops[1] > 0 {
            self.note(Mark { t_ns, gap_ns: gap, ops: self.ops, bytes: self.bytes });
        }
        self.last_ns = t_ns;
        let d = usize::from(write);
        self.ops[d] += 1;
        self.bytes[d] += u64::from(bytes);
    }

    #[cold]
    fn note(&mut self, m: Mark) {
        if self.head.len() < MARKS {
            self.head.push(m);
        } else if self.ring.len() < MARKS {
            self.ring.push(m);
        } else {
            self.ring[self.ring_next] = m;
            self.ring_next = (self.ring_next + 1) % MARKS;
            self.wrapped = true;
        }
    }

    /// The notes from the start of the window on, in order, as far as they run unbroken.
    fn head_view(&self) -> Vec<Mark> {
        let mut v = self.head.clone();
        if !self.wrapped {
            v.extend_from_slice(&self.ring);
        }
        v
    }

    /// The notes up to the end of the window, in order, as far back as they run unbroken.
    fn tail_view(&self) -> Vec<Mark> {
        if !self.wrapped {
            return self.head_view();
        }
        let mut v = self.ring[self.ring_next..].to_vec();
        v.extend_from_slice(&self.ring[..self.ring_next]);
        v
    }
}

/// The measured window cut to whole bursts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aligned {
    /// The first and the last burst start counted from, ns on the group's clock.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The mean period of the whole bursts counted.
    pub period_ns: u64,
    /// Whole bursts counted (start to start).
    pub bursts: u64,
    /// Leading bursts left out as larger than the rest (carried-over credit).
    pub dropped: u32,
    /// Completions and bytes from `start_ns` (included) to `end_ns` (excluded), `[read, write]`.
    pub ops: [u64; 2],
    pub bytes: [u64; 2],
}

/// A burst start of the whole job: when, and every worker's completions and bytes before it.
#[derive(Debug, Clone, Copy)]
struct Start {
    t: u64,
    ops: [u64; 2],
    bytes: [u64; 2],
}

/// The job's burst starts in one view (`views[w]`: worker w's notes): a moment at which every
/// worker had a gap of its threshold or more. Worker 0's gaps are the anchors; each other worker
/// must have a gap overlapping the anchor's, and the start is the earliest of their first
/// completions after it (no worker completed anything between the common gap and that moment,
/// so the counts before it are exact).
fn job_starts(views: &[Vec<Mark>], thresholds: &[u64]) -> Vec<Start> {
    let big = |w: usize| -> Vec<&Mark> { views[w].iter().filter(|m| m.gap_ns >= thresholds[w]).collect() };
    let per: Vec<Vec<&Mark>> = (0..views.len()).map(big).collect();
    let mut out = Vec::new();
    'anchors: for a in &per[0] {
        let (mut lo, mut hi) = (a.t_ns - a.gap_ns, a.t_ns);
        let (mut ops, mut bytes) = (a.ops, a.bytes);
        let mut t = a.t_ns;
        for marks in &per[1..] {
            // The other worker's first gap that ends after the anchor's began.
            let i = marks.partition_point(|m| m.t_ns <= lo);
            let Some(m) = marks.get(i) else { continue 'anchors };
            lo = lo.max(m.t_ns - m.gap_ns);
            hi = hi.min(m.t_ns);
            if lo >= hi || hi - lo < MIN_GAP_NS {
                continue 'anchors;
            }
            t = t.min(m.t_ns);
            for d in 0..2 {
                ops[d] += m.ops[d];
                bytes[d] += m.bytes[d];
            }
        }
        out.push(Start { t, ops, bytes });
    }
    out
}

/// The period of burst starts in both edges' views: the median distance between consecutive
/// starts, when at least half of them are within [`PERIOD_SPREAD`] of it (a burst split by a
/// stall, or the catch-up at the start, adds a start between two) and it is within the limiter
/// range; `None` otherwise.
fn steady_period(views: &[&[Start]]) -> Option<u64> {
    if views.iter().any(|s| s.len() < MIN_STARTS) {
        return None;
    }
    let mut d: Vec<u64> = views.iter().flat_map(|s| s.windows(2).map(|w| w[1].t - w[0].t)).collect();
    d.sort_unstable();
    let p = *d.get(d.len() / 2)?;
    let regular = d.iter().filter(|&&x| near(x, p)).count();
    ((MIN_PERIOD_NS..=MAX_PERIOD_NS).contains(&p) && 2 * regular >= d.len()).then_some(p)
}

/// `x` is within [`PERIOD_SPREAD`] of period `p`.
fn near(x: u64, p: u64) -> bool {
    (x as f64 - p as f64).abs() <= PERIOD_SPREAD * p as f64
}

/// The first start in `s` that two regular periods follow, and the last that two precede.
fn regular_edges(s: &[Start], p: u64) -> (Option<usize>, Option<usize>) {
    let ok = |i: usize| near(s[i + 1].t - s[i].t, p);
    let n = s.len();
    let first = (0..n.saturating_sub(2)).find(|&i| ok(i) && ok(i + 1));
    let last = (2..n).rev().find(|&j| ok(j - 1) && ok(j - 2));
    (first, last)
}

fn total(c: [u64; 2]) -> u64 {
    c[0] + c[1]
}

/// The whole-burst window of a job's workers: each worker's edge log and its measured window
/// `[t0, t0 + len)` on the group's clock. `None` when the completions do not come in steady
/// bursts at both edges (the whole window stands).
pub fn align(workers: &[(&EdgeLog, u64, u64)]) -> Option<Aligned> {
    if workers.is_empty() || workers.iter().any(|w| total(w.0.ops) == 0) {
        return None;
    }
    let window_ns = workers.iter().map(|w| w.2).max().unwrap_or(0);
    let thresholds: Vec<u64> =
        workers.iter().map(|(log, _, len)| MIN_GAP_NS.max(GAP_FACTOR.saturating_mul(len / total(log.ops)))).collect();
    let heads: Vec<Vec<Mark>> = workers.iter().map(|w| w.0.head_view()).collect();
    let tails: Vec<Vec<Mark>> = workers.iter().map(|w| w.0.tail_view()).collect();
    let (hs, ts) = (job_starts(&heads, &thresholds), job_starts(&tails, &thresholds));
    let period = steady_period(&[&hs, &ts])?;
    let (first, _) = regular_edges(&hs, period);
    let (_, last) = regular_edges(&ts, period);
    let (mut first, last) = (first?, last?);
    // Burst sizes (completions from one start to the next a period later) at both edges.
    let sizes = |s: &[Start]| -> Vec<u64> {
        s.windows(2).filter(|w| near(w[1].t - w[0].t, period)).map(|w| total(w[1].ops) - total(w[0].ops)).collect()
    };
    let mut all: Vec<u64> = sizes(&hs).into_iter().chain(sizes(&ts)).collect();
    all.sort_unstable();
    let median = *all.get(all.len() / 2)? as f64;
    // A leading burst larger than the rest is credit carried over from before the window.
    let mut dropped = 0;
    while dropped < MAX_DROPPED
        && first + 1 < hs.len()
        && near(hs[first + 1].t - hs[first].t, period)
        && (total(hs[first + 1].ops) - total(hs[first].ops)) as f64 > median * (1.0 + LEAD_EXCESS)
    {
        first += 1;
        dropped += 1;
    }
    let (start, end) = (hs[first], ts[last]);
    if end.t <= start.t || total(end.ops) < total(start.ops) {
        return None;
    }
    // Both edges are burst starts in phase: whole periods between them.
    let span = end.t - start.t;
    let periods = span as f64 / period as f64;
    let whole = periods.round();
    if (periods - whole).abs() > PERIOD_SPREAD
        || (whole as u64) < MIN_PERIODS
        || (span as f64) < MIN_SHARE * window_ns as f64
    {
        return None;
    }
    Some(Aligned {
        start_ns: start.t,
        end_ns: end.t,
        period_ns: span / whole as u64,
        bursts: whole as u64,
        dropped: dropped as u32,
        ops: [end.ops[0] - start.ops[0], end.ops[1] - start.ops[1]],
        bytes: [end.bytes[0] - start.bytes[0], end.bytes[1] - start.bytes[1]],
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

    /// A smooth device leaves no notes at all: the log stays at what it reserved up front.
    #[test]
    fn a_smooth_run_notes_nothing() {
        let log = smooth(1000, 2000 * MS);
        assert_eq!((log.head.len(), log.ring.len()), (0, 0));
        assert!(log.head.capacity() + log.ring.capacity() <= 2 * MARKS);
        assert_eq!(log.ops[1], 2_000_000 - 1);
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
            per in 20u64..3000,
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
                prop_assert!(len < (MIN_PERIODS + 4) * period, "no bursts found");
            }
        }
    }
}
