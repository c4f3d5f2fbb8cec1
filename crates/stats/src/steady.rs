//! Steady state (SNIA PTS) and the sustained-write cliff: the `steady` and `sustained`
//! sections of a result document, and the two pure rules behind them — the PTS
//! steady-state window test and the cliff detector (`docs/steady-state.md`).

use serde::{Deserialize, Serialize};

/// Rounds in a measurement window (PTS).
pub const WINDOW_ROUNDS: usize = 5;
/// Most rounds before a run is declared "not steady" (PTS).
pub const MAX_ROUNDS: u32 = 25;
/// Data excursion: max − min of the window at most this share of the window's mean.
pub const RANGE_LIMIT: f64 = 0.20;
/// Slope excursion: the least-squares line's rise across the window at most this share of
/// the window's mean.
pub const SLOPE_LIMIT: f64 = 0.10;

/// One tracking variable over one window, against the PTS limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowCheck {
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// max − min.
    pub range: f64,
    /// `RANGE_LIMIT` × mean.
    pub range_limit: f64,
    /// Least-squares slope, per round.
    pub slope: f64,
    /// The fitted line's value at the window's first round.
    pub intercept: f64,
    /// |slope| × (rounds − 1): how far the fitted line moves across the window.
    pub excursion: f64,
    /// `SLOPE_LIMIT` × mean.
    pub excursion_limit: f64,
    pub range_ok: bool,
    pub slope_ok: bool,
}

impl WindowCheck {
    /// The PTS test of `values` (consecutive rounds). An empty window, or one whose mean
    /// is not above zero, passes nothing.
    pub fn of(values: &[f64]) -> WindowCheck {
        let n = values.len();
        if n == 0 || values.iter().any(|v| !v.is_finite()) {
            return WindowCheck::default();
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (slope, intercept) = least_squares(values);
        let excursion = slope.abs() * (n.saturating_sub(1)) as f64;
        let positive = mean > 0.0;
        WindowCheck {
            mean,
            min,
            max,
            range: max - min,
            range_limit: RANGE_LIMIT * mean,
            slope,
            intercept,
            excursion,
            excursion_limit: SLOPE_LIMIT * mean,
            range_ok: positive && max - min <= RANGE_LIMIT * mean * (1.0 + 1e-12),
            slope_ok: positive && excursion <= SLOPE_LIMIT * mean * (1.0 + 1e-12),
        }
    }

    pub fn ok(&self) -> bool {
        self.range_ok && self.slope_ok
    }
}

/// The least-squares line through `(i, ys[i])`, i = 0, 1, …: (slope, value at i = 0).
pub fn least_squares(ys: &[f64]) -> (f64, f64) {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return (0.0, ys.first().copied().unwrap_or(0.0));
    }
    let xm = (n - 1.0) / 2.0;
    let ym = ys.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - ym);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    (slope, ym - slope * xm)
}

/// The first window of `window` consecutive rounds in which every tracking variable passes
/// the PTS test: its first round's index. `vars` holds one series per variable, all as
/// long as the rounds run so far. This is the rule applied round by round: the run stops
/// at the first window that qualifies, so later windows never matter.
pub fn first_steady_window(vars: &[Vec<f64>], window: usize) -> Option<usize> {
    let rounds = vars.iter().map(Vec::len).min()?;
    if window == 0 || rounds < window || vars.is_empty() {
        return None;
    }
    (0..=rounds - window).find(|&s| vars.iter().all(|v| WindowCheck::of(&v[s..s + window]).ok()))
}

/// `steady` only: the PTS run — purge, preconditioning, rounds and the steady-state window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyResult {
    /// `enterprise` or `client`.
    pub profile: String,
    /// `pts` or `quick`.
    pub matrix: String,
    /// Outstanding I/Os per worker, and workers.
    pub qd: u32,
    pub threads: u32,
    /// The share of the test range the rounds address (PTS "active range"), percent.
    pub active_range_pct: u8,
    /// Test range and the active part of it, bytes.
    pub range_bytes: u64,
    pub active_bytes: u64,
    pub round_time_s: f64,
    pub max_rounds: u32,
    pub purge: Purge,
    pub precondition: Precondition,
    /// The test points, in the order each round runs them.
    pub points: Vec<SteadyPoint>,
    /// Points of the matrix left out, with the reason (a block size below the target's
    /// direct-I/O unit).
    #[serde(default)]
    pub skipped: Vec<String>,
    pub rounds: Vec<Round>,
    /// The tracking variables, one value per round.
    pub tracking: Vec<Tracking>,
    /// The first window in which every tracking variable passed; when none did, the last
    /// `WINDOW_ROUNDS` rounds, marked not steady.
    pub window: Option<SteadyWindow>,
    pub steady: bool,
    /// p99 latency is tracked too (`--latency`).
    pub latency: bool,
    /// IOPS per block size (rows) and read/write mix (columns), averaged over the window.
    pub table: SteadyTable,
    /// Whole command, seconds (purge, preconditioning and rounds).
    pub seconds: f64,
    pub verdict: String,
}

/// What the purge did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Purge {
    /// `secure-discard`, `discard`, `punch-hole` or `none`.
    pub method: String,
    pub done: bool,
    pub bytes: u64,
    /// One sentence: what was done, or why nothing could be.
    pub message: String,
}

/// Workload-independent preconditioning: sequential writes over the test range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Precondition {
    pub passes_planned: u32,
    pub passes_done: u32,
    pub bs: u64,
    pub qd: u32,
    pub bytes: u64,
    pub seconds: f64,
    pub mb_s: f64,
    /// MB/s over time, one point per second.
    pub series: Vec<ProgressPoint>,
    /// Every planned pass wrote the whole range.
    pub complete: bool,
}

/// Progress of a long write: time, bytes written so far, MB/s over the last second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProgressPoint {
    pub t_s: f64,
    pub bytes: u64,
    pub mb_s: f64,
}

/// One test point of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyPoint {
    /// e.g. `4K 65/35` (block size, read/write percent).
    pub name: String,
    pub bs: u64,
    pub read_pct: u8,
}

/// One round: every point once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based.
    pub round: u32,
    /// Start of the round, seconds since the rounds began.
    pub t_s: f64,
    pub points: Vec<RoundPoint>,
}

/// One point's figures in one round (reads and writes together).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundPoint {
    pub name: String,
    pub iops: f64,
    pub mb_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: f64,
}

/// A tracking variable: a point's IOPS (or p99 latency, ns) per round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tracking {
    /// e.g. `4K 0/100 IOPS`, `4K 0/100 p99`.
    pub name: String,
    pub point: String,
    /// `iops` or `p99`.
    pub metric: String,
    pub values: Vec<f64>,
}

/// The window the result rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyWindow {
    /// 1-based, inclusive.
    pub first_round: u32,
    pub last_round: u32,
    pub steady: bool,
    /// Per tracking variable, in the order of `tracking`.
    pub checks: Vec<TrackedCheck>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackedCheck {
    pub name: String,
    #[serde(flatten)]
    pub check: WindowCheck,
}

/// The PTS-style IOPS table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyTable {
    /// Column heads, e.g. `65/35` (read/write percent), in matrix order.
    pub mixes: Vec<String>,
    pub rows: Vec<TableRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    pub bs: u64,
    /// IOPS per column of `mixes`; `None` where the matrix has no such point.
    pub iops: Vec<Option<f64>>,
}

/// `--sustained`: the whole test range written once, MB/s against bytes written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SustainedResult {
    pub bs: u64,
    pub qd: u32,
    pub range_bytes: u64,
    pub bytes_written: u64,
    pub seconds: f64,
    /// A drop below this share of the starting MB/s that lasts is a cliff.
    pub fraction: f64,
    /// One point per second.
    pub series: Vec<ProgressPoint>,
    /// MB/s before the cliff (the whole write when there is none).
    pub start_mb_s: f64,
    pub cliff: Option<Cliff>,
    /// Re-tests of the first region after idle pauses (`--recovery`).
    #[serde(default)]
    pub recovery: Vec<Recovery>,
    /// The first pause after which the re-test wrote at least 90 % of the cliff's bytes at
    /// the fast rate, seconds.
    pub recovered_after_s: Option<f64>,
    pub verdict: String,
}

/// Where sustained writes fell off.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cliff {
    /// Bytes written before the drop: the write cache this implies.
    pub offset_bytes: u64,
    pub t_s: f64,
    pub mb_s_before: f64,
    pub mb_s_after: f64,
}

/// One re-test after an idle pause.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    pub idle_s: f64,
    pub bytes: u64,
    pub seconds: f64,
    pub mb_s: f64,
    /// Bytes written at the fast rate before the cliff came back (all of them when it did
    /// not).
    pub fast_bytes: u64,
    /// `fast_bytes` against the cliff's offset, percent.
    pub recovered_pct: f64,
    pub series: Vec<ProgressPoint>,
}

/// Locate a write cliff in a series of one-second points (cumulative bytes at each point's
/// end). The series is split where a two-level step fits it best (least squares); that is a
/// cliff when the later level is below `fraction` of the earlier one and at least 90 % of the
/// later points (but the first, which may straddle the drop) stay below that threshold. The byte offset is where the line of the fast
/// part (from the origin) meets the line of the slow part (to the last point), so it is not
/// limited to whole seconds. Returns the MB/s before the cliff (the mean of the whole write
/// when none) and the cliff.
pub fn detect_cliff(series: &[ProgressPoint], fraction: f64) -> (f64, Option<Cliff>) {
    let n = series.len();
    let overall = match series.last() {
        Some(p) if p.t_s > 0.0 => p.bytes as f64 / 1e6 / p.t_s,
        _ => 0.0,
    };
    if n < 4 {
        return (overall, None);
    }
    let y: Vec<f64> = series.iter().map(|p| p.mb_s).collect();
    let mut prefix = vec![0.0; n + 1];
    let mut prefix2 = vec![0.0; n + 1];
    for i in 0..n {
        prefix[i + 1] = prefix[i] + y[i];
        prefix2[i + 1] = prefix2[i] + y[i] * y[i];
    }
    let sse = |a: usize, b: usize| {
        let m = (b - a) as f64;
        let s = prefix[b] - prefix[a];
        prefix2[b] - prefix2[a] - s * s / m
    };
    // Split at i: [0, i) before, [i, n) after; each side at least two points.
    let Some(split) = (2..=n - 2).min_by(|&a, &b| (sse(0, a) + sse(a, n)).total_cmp(&(sse(0, b) + sse(b, n)))) else {
        return (overall, None);
    };
    let before = (prefix[split] - prefix[0]) / split as f64;
    let after = (prefix[n] - prefix[split]) / (n - split) as f64;
    if before <= 0.0 || after >= fraction * before {
        return (overall, None);
    }
    let threshold = fraction * before;
    // The first point after the split may straddle the drop: it does not have to stay below.
    let tail = if n - split > 2 { &y[split + 1..] } else { &y[split..] };
    let below = tail.iter().filter(|&&v| v < threshold).count();
    if (below as f64) < 0.9 * tail.len() as f64 {
        return (overall, None);
    }
    // Rates of the clean parts: the point on each side of the split may be mixed.
    let pre_end = &series[split - 2];
    let fast = if pre_end.t_s > 0.0 { pre_end.bytes as f64 / pre_end.t_s } else { before * 1e6 };
    let last = &series[n - 1];
    let post_start = &series[(split + 1).min(n - 1)];
    let slow = if last.t_s > post_start.t_s {
        (last.bytes - post_start.bytes.min(last.bytes)) as f64 / (last.t_s - post_start.t_s)
    } else {
        after * 1e6
    };
    let (t_cross, offset) = if fast > slow {
        // fast·t = last.bytes − slow·(last.t − t)
        let t = (last.bytes as f64 - slow * last.t_s) / (fast - slow);
        let lo = if split >= 2 { series[split - 2].t_s } else { 0.0 };
        let t = t.clamp(lo, series[split].t_s);
        (t, fast * t)
    } else {
        (series[split - 1].t_s, series[split - 1].bytes as f64)
    };
    let cliff = Cliff {
        offset_bytes: offset.max(0.0).min(last.bytes as f64) as u64,
        t_s: t_cross,
        mb_s_before: fast / 1e6,
        mb_s_after: slow / 1e6,
    };
    (cliff.mb_s_before, Some(cliff))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn least_squares_of_a_line_is_the_line() {
        let (s, b) = least_squares(&[3.0, 5.0, 7.0, 9.0, 11.0]);
        assert!((s - 2.0).abs() < 1e-12 && (b - 3.0).abs() < 1e-12);
        assert_eq!(least_squares(&[4.0]), (0.0, 4.0));
    }

    /// A worked example, by hand: IOPS of eight rounds falling from a fresh drive's burst.
    /// Window 1–5: range 25 200 against a limit of 0.2 × 27 180 = 5 436: fails.
    /// Window 2–6: 30 000 … 20 500, range 10 200 > 0.2 × 22 280 = 4 456: fails.
    /// Window 3–7: 21 000, 20 100, 19 800, 20 500, 20 300: mean 20 340, range 1 200 ≤ 4 068;
    /// deviations from x̄ = −2 … 2 against y − ȳ = 660, −240, −540, 160, −40 give
    /// Σ dx·dy = −1 320 + 240 + 0 + 160 − 80 = −1 000 and Σ dx² = 10: slope −100 IOPS per
    /// round, excursion 4 × 100 = 400 ≤ 0.1 × 20 340 = 2 034: steady, rounds 3 to 7.
    #[test]
    fn pts_worked_example() {
        let iops = vec![45000.0, 30000.0, 21000.0, 20100.0, 19800.0, 20500.0, 20300.0, 19900.0];
        let w1 = WindowCheck::of(&iops[0..5]);
        assert!(!w1.range_ok);
        assert!((w1.mean - 27180.0).abs() < 1e-9 && (w1.range - 25200.0).abs() < 1e-9);
        let w2 = WindowCheck::of(&iops[1..6]);
        assert!(!w2.range_ok && (w2.range_limit - 4456.0).abs() < 1e-9);
        let w3 = WindowCheck::of(&iops[2..7]);
        assert!((w3.mean - 20340.0).abs() < 1e-9);
        assert!((w3.range - 1200.0).abs() < 1e-9 && (w3.range_limit - 4068.0).abs() < 1e-9);
        assert!((w3.slope + 100.0).abs() < 1e-9, "slope {}", w3.slope);
        assert!((w3.excursion - 400.0).abs() < 1e-9 && (w3.excursion_limit - 2034.0).abs() < 1e-9);
        assert!(w3.ok());
        assert_eq!(first_steady_window(std::slice::from_ref(&iops), WINDOW_ROUNDS), Some(2));
        // Rounds run one at a time: after round 6 no window had qualified yet.
        assert_eq!(first_steady_window(&[iops[..6].to_vec()], WINDOW_ROUNDS), None);
    }

    #[test]
    fn range_alone_fails() {
        // Mean 112, range 30 (26.8 %); flat fit (slope 0).
        let c = WindowCheck::of(&[100.0, 130.0, 100.0, 130.0, 100.0]);
        assert!(!c.range_ok && c.slope_ok, "{c:?}");
        assert!(c.slope.abs() < 1e-12);
    }

    #[test]
    fn slope_alone_fails() {
        // A steady climb: range 16 (14.8 % of 108) passes, the line rises 16 (> 10.8).
        let c = WindowCheck::of(&[100.0, 104.0, 108.0, 112.0, 116.0]);
        assert!(c.range_ok && !c.slope_ok, "{c:?}");
        assert!((c.excursion - 16.0).abs() < 1e-9);
    }

    #[test]
    fn both_fail_and_both_pass() {
        let c = WindowCheck::of(&[100.0, 115.0, 130.0, 145.0, 160.0]);
        assert!(!c.range_ok && !c.slope_ok);
        let c = WindowCheck::of(&[1000.0, 1010.0, 990.0, 1005.0, 995.0]);
        assert!(c.ok());
    }

    #[test]
    fn limits_are_inclusive() {
        // Range exactly 20 % of the mean (mean 100, values 90 … 110 symmetric, flat).
        let c = WindowCheck::of(&[90.0, 110.0, 100.0, 110.0, 90.0]);
        assert!((c.range - c.range_limit).abs() < 1e-9 && c.range_ok);
    }

    #[test]
    fn zero_or_empty_never_steady() {
        assert!(!WindowCheck::of(&[]).ok());
        assert!(!WindowCheck::of(&[0.0; 5]).ok());
        assert!(!WindowCheck::of(&[1.0, f64::NAN, 1.0, 1.0, 1.0]).ok());
    }

    #[test]
    fn every_variable_must_pass_in_the_same_window() {
        let a = vec![10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 10.0];
        let b = vec![50.0, 20.0, 10.0, 10.0, 10.0, 10.0, 10.0];
        assert_eq!(first_steady_window(std::slice::from_ref(&a), 5), Some(0));
        assert_eq!(first_steady_window(&[a, b], 5), Some(2));
    }

    #[test]
    fn no_window_after_25_rounds() {
        // Alternating ±30 % forever: no window of five ever passes the range test.
        let v: Vec<f64> = (0..MAX_ROUNDS).map(|i| if i % 2 == 0 { 70.0 } else { 130.0 }).collect();
        assert_eq!(first_steady_window(&[v], WINDOW_ROUNDS), None);
        // A steady decline of 5 % per round: range and slope fail in every window.
        let v: Vec<f64> = (0..MAX_ROUNDS).map(|i| 1e5 * 0.95f64.powi(i as i32)).collect();
        assert_eq!(first_steady_window(&[v], WINDOW_ROUNDS), None);
    }

    /// (seconds, MB/s) segments, sampled at the end of every whole second.
    fn series(rates: &[(f64, f64)]) -> Vec<ProgressPoint> {
        let total: f64 = rates.iter().map(|r| r.0).sum();
        let at = |x: f64| -> f64 {
            let (mut t, mut b) = (0.0, 0.0);
            for &(secs, rate) in rates {
                if x <= t + secs {
                    return b + rate * 1e6 * (x - t);
                }
                t += secs;
                b += rate * 1e6 * secs;
            }
            b
        };
        let mut out = Vec::new();
        let (mut s, mut prev) = (1.0, 0.0);
        while s <= total + 1e-9 {
            let b = at(s);
            out.push(ProgressPoint { t_s: s, bytes: b as u64, mb_s: (b - prev) / 1e6 });
            prev = b;
            s += 1.0;
        }
        out
    }

    #[test]
    fn a_cliff_mid_second_is_found_to_the_byte_rate() {
        // 500 MB/s for 12.4 s (6.2 GB), then 100 MB/s for 20 s.
        let s = series(&[(12.4, 500.0), (20.0, 100.0)]);
        let (start, c) = detect_cliff(&s, 0.7);
        let c = c.expect("cliff");
        assert!((c.offset_bytes as f64 / 6.2e9 - 1.0).abs() < 0.01, "{c:?}");
        assert!((c.mb_s_before - 500.0).abs() < 1.0 && (c.mb_s_after - 100.0).abs() < 1.0, "{c:?}");
        assert!((start - 500.0).abs() < 1.0);
    }

    #[test]
    fn no_cliff_on_a_flat_or_gently_sloping_write() {
        assert!(detect_cliff(&series(&[(30.0, 300.0)]), 0.7).1.is_none());
        assert!(detect_cliff(&series(&[(15.0, 300.0), (15.0, 250.0)]), 0.7).1.is_none());
        // A dip that recovers is not a cliff: most later points are fast again.
        assert!(detect_cliff(&series(&[(10.0, 300.0), (3.0, 50.0), (17.0, 300.0)]), 0.7).1.is_none());
        assert!(detect_cliff(&series(&[(3.0, 300.0)]), 0.7).1.is_none());
    }

    proptest! {
        /// The window test is scale-free: multiplying every value by a positive factor
        /// changes no verdict.
        #[test]
        fn window_verdict_is_scale_free(v in proptest::collection::vec(1.0f64..1e6, 5), k in 0.001f64..1000.0) {
            let a = WindowCheck::of(&v);
            let scaled: Vec<f64> = v.iter().map(|x| x * k).collect();
            let b = WindowCheck::of(&scaled);
            // Away from the limits (rounding may flip a value exactly on one).
            prop_assume!((a.range / a.range_limit - 1.0).abs() > 1e-9 && (a.excursion / a.excursion_limit - 1.0).abs() > 1e-9);
            prop_assert_eq!(a.range_ok, b.range_ok);
            prop_assert_eq!(a.slope_ok, b.slope_ok);
        }

        /// The line's excursion never exceeds the range for five points by more than the
        /// lever of the end points (|slope| × 4 ≤ 1.6 × range), and a constant window passes.
        #[test]
        fn excursion_is_bounded_by_the_range(v in proptest::collection::vec(0.0f64..1e6, 5)) {
            let c = WindowCheck::of(&v);
            prop_assert!(c.excursion <= 1.6 * c.range + 1e-6);
        }

        /// The first steady window found is one that passes, and none before it does.
        #[test]
        fn first_window_is_first(v in proptest::collection::vec(50.0f64..150.0, 5..30)) {
            match first_steady_window(std::slice::from_ref(&v), 5) {
                Some(s) => {
                    prop_assert!(WindowCheck::of(&v[s..s + 5]).ok());
                    for e in 0..s { prop_assert!(!WindowCheck::of(&v[e..e + 5]).ok()); }
                }
                None => for e in 0..=v.len() - 5 { prop_assert!(!WindowCheck::of(&v[e..e + 5]).ok()); },
            }
        }

        /// A step from fast to slow anywhere in the write is found within 2 % of its offset.
        #[test]
        fn cliff_offset_within_two_percent(fast in 200.0f64..2000.0, ratio in 0.1f64..0.5, before in 4.0f64..60.0, after in 4.0f64..60.0) {
            let s = series(&[(before, fast), (after, fast * ratio)]);
            let (_, c) = detect_cliff(&s, 0.7);
            let c = c.expect("cliff");
            let want = fast * 1e6 * before;
            prop_assert!((c.offset_bytes as f64 / want - 1.0).abs() < 0.02, "{:?} want {}", c, want);
        }
    }
}
