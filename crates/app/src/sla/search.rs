//! The `sla` search, independent of any device: which points to measure, in what order,
//! and what the measured points mean (best feasible point, knee, thrashing). The sentence
//! that states the answer is made by `report` (`report::sla_verdict`).
//!
//! Closed loop: points are (queue depth per worker, workers) on a half-octave depth grid
//! (1, 2, 3, 4, 6, 8, 12, 16, …). The search climbs the grid geometrically (×4 steps while
//! throughput scales, then ×2) until the bound breaks or throughput stops rising, bisects
//! the last step, then tries more workers
//! at the same total depth and climbs again while that pays. `--exhaustive` measures the
//! whole grid. Open loop: points are offered rates on a half-octave grid from the QD-1
//! rate, at a fixed depth cap.

use stats::{Percentile, SlaPoint, Thrash};

/// A point to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridPoint {
    pub qd: u32,
    pub threads: u32,
    pub rate_iops: Option<u64>,
}

/// How a point may be measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasureMode {
    /// Stop early once the point is clearly far over the bound.
    pub allow_early_reject: bool,
}

/// Something that measures points (the engine, or a model in tests).
pub trait Prober {
    /// Why a measurement failed (interrupted, an I/O error, …): the search stops at the first.
    type Halt;
    fn measure(&mut self, p: GridPoint, mode: MeasureMode) -> Result<SlaPoint, Self::Halt>;
    /// Progress hint: points measured so far and an estimate of the total.
    fn plan(&mut self, _done: usize, _estimate: usize) {}
}

/// Search limits and the bound.
#[derive(Debug, Clone)]
pub struct SearchConfig {
    pub bound_ns: f64,
    pub percentile: Percentile,
    pub max_qd: u32,
    pub max_threads: u32,
    pub exhaustive: bool,
    /// Open loop: search the offered rate at `max_qd` per worker and one worker count.
    pub open_loop: bool,
    /// Throughput must rise by at least this fraction per doubling to keep climbing.
    pub min_gain: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            bound_ns: 1e6,
            percentile: Percentile::Mean,
            max_qd: 256,
            max_threads: 1,
            exhaustive: false,
            open_loop: false,
            min_gain: 0.05,
        }
    }
}

/// What the search found.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    pub points: Vec<SlaPoint>,
    pub best: Option<SlaPoint>,
    pub knee: Option<SlaPoint>,
    pub thrashing: Vec<Thrash>,
    pub qd1_misses: bool,
    /// The search ended before it was finished: a measurement failed (see [`search`]).
    pub stopped: bool,
    /// Why the climb ended on the best worker count: `bound`, `plateau`, `max-qd`.
    pub limit: Option<&'static str>,
}

/// Half-octave depth grid up to `max` (always ending at `max`).
pub fn qd_grid(max: u32) -> Vec<u32> {
    let mut g = Vec::new();
    let mut p = 1u32;
    while p <= max {
        g.push(p);
        let mid = p + p / 2;
        if p >= 2 && mid <= max {
            g.push(mid);
        }
        p = match p.checked_mul(2) {
            Some(v) => v,
            None => break,
        };
    }
    g.sort_unstable();
    g.dedup();
    if g.last() != Some(&max) && max > 0 {
        g.push(max);
    }
    g
}

/// Worker counts: 1, 2, 4, … up to `max` (always ending at `max`).
pub fn thread_grid(max: u32) -> Vec<u32> {
    let mut g = Vec::new();
    let mut t = 1u32;
    while t <= max {
        g.push(t);
        t = match t.checked_mul(2) {
            Some(v) => v,
            None => break,
        };
    }
    if g.last() != Some(&max) && max > 0 {
        g.push(max);
    }
    g
}

/// Offered rate `k` half-octaves above `base`.
fn rate_at(base: f64, k: usize) -> u64 {
    (base * 2f64.powf(k as f64 / 2.0)).round().max(1.0) as u64
}

struct Run<'a, P: Prober> {
    cfg: &'a SearchConfig,
    prober: &'a mut P,
    points: Vec<SlaPoint>,
    /// The failure that stopped the search.
    halt: Option<P::Halt>,
    estimate: usize,
}

impl<P: Prober> Run<'_, P> {
    /// Measures `p` (once: a point measured before is taken as it was); `None` once a
    /// measurement has failed, which stops the search.
    fn measure(&mut self, p: GridPoint) -> Option<SlaPoint> {
        if self.halt.is_some() {
            return None;
        }
        // Never measure a point twice.
        if let Some(m) =
            self.points.iter().find(|m| m.qd == p.qd && m.threads == p.threads && m.rate_iops == p.rate_iops)
        {
            return Some(m.clone());
        }
        self.prober.plan(self.points.len(), self.estimate.max(self.points.len() + 1));
        let mode = MeasureMode { allow_early_reject: !self.cfg.exhaustive };
        let mut m = self.attempt(p, mode)?;
        if !m.feasible && !self.cfg.exhaustive && self.implausible(&m) {
            // Latency jumped far more than the added depth can explain: most likely a
            // disturbance (another tenant, a flush), not the device's curve. Measure again,
            // in full, and keep the second figures.
            self.prober.plan(self.points.len(), self.estimate.max(self.points.len() + 1));
            let full = MeasureMode { allow_early_reject: false };
            let again = self.attempt(p, full)?;
            m = SlaPoint { remeasured: true, ..again };
        }
        self.points.push(m.clone());
        Some(m)
    }

    /// One measurement; a failure is kept and ends the search.
    fn attempt(&mut self, p: GridPoint, mode: MeasureMode) -> Option<SlaPoint> {
        match self.prober.measure(p, mode) {
            Ok(m) => Some(m),
            Err(h) => {
                self.halt = Some(h);
                None
            }
        }
    }

    /// At saturation the queue only adds waiting: by Little's law the mean latency grows at
    /// most in proportion to the outstanding I/O, and tail percentiles roughly so. A point
    /// whose bounded statistic exceeds twice that, relative to the deepest feasible point
    /// with less outstanding I/O, is suspect.
    fn implausible(&self, m: &SlaPoint) -> bool {
        if m.rate_iops.is_some() {
            return false;
        }
        self.points
            .iter()
            .filter(|f| f.feasible && f.rate_iops.is_none() && f.outstanding < m.outstanding && f.metric_ns > 0.0)
            .max_by_key(|f| f.outstanding)
            .is_some_and(|f| m.metric_ns > 2.0 * f.metric_ns * f64::from(m.outstanding) / f64::from(f.outstanding))
    }

    /// The grid index between `l` and `h` (exclusive) just below where the bounded
    /// statistic is predicted to cross the bound, from a power law through both ends.
    fn interpolate(&self, grid: &[u32], threads: u32, l: usize, h: usize) -> Option<usize> {
        let find =
            |i: usize| self.points.iter().find(|p| p.qd == grid[i] && p.threads == threads && p.rate_iops.is_none());
        let (a, b) = (find(l)?, find(h)?);
        if a.metric_ns <= 0.0 || b.metric_ns <= a.metric_ns {
            return None;
        }
        let k = (b.metric_ns / a.metric_ns).ln() / (f64::from(b.qd) / f64::from(a.qd)).ln();
        let d = f64::from(a.qd) * (self.cfg.bound_ns / a.metric_ns).powf(1.0 / k);
        if !d.is_finite() {
            return None;
        }
        let i = grid.iter().rposition(|&q| f64::from(q) <= d).unwrap_or(l);
        Some(i.clamp(l + 1, h - 1))
    }

    /// Climb the depth grid for `threads` workers from index `start`; returns the index of
    /// the best feasible depth and why the climb ended.
    fn climb(&mut self, grid: &[u32], threads: u32, start: usize) -> (Option<usize>, &'static str) {
        let at = |i: usize| GridPoint { qd: grid[i], threads, rate_iops: None };
        let mut i = start;
        let mut lo: Option<usize>; // highest feasible index seen
        let mut hi: Option<usize> = None; // lowest infeasible index above lo
        let mut reason = "max-qd";
        // Going down first when the start point already misses the bound.
        let Some(first) = self.measure(at(i)) else { return (None, "stopped") };
        if !first.feasible {
            hi = Some(i);
            // Step down in doublings until feasible.
            loop {
                if i == 0 {
                    return (None, "bound");
                }
                i = i.saturating_sub(2);
                let Some(m) = self.measure(at(i)) else { return (None, "stopped") };
                if m.feasible {
                    lo = Some(i);
                    break;
                }
                hi = Some(i);
            }
            reason = "bound";
        } else {
            lo = Some(i);
            let mut prev = first.iops;
            // Quadruple the depth while throughput still scales strongly (the linear part of
            // the curve), then double; the last step is bisected below.
            let mut stride = 4;
            while i + 1 < grid.len() {
                let next = (i + stride).min(grid.len() - 1);
                let Some(m) = self.measure(at(next)) else { return (lo, "stopped") };
                if !m.feasible {
                    hi = Some(next);
                    reason = "bound";
                    break;
                }
                lo = Some(next);
                let from = std::mem::replace(&mut i, next);
                if m.iops < prev * (1.0 + self.cfg.min_gain) {
                    reason = "plateau";
                    let _ = from;
                    break;
                }
                if stride == 4 && m.iops < 2.0 * prev {
                    stride = 2;
                }
                prev = m.iops;
            }
        }
        // Narrow the last step between feasible and infeasible: interpolate where the
        // statistic crosses the bound (log-log between the two ends), else bisect.
        while let (Some(l), Some(h)) = (lo, hi) {
            if h <= l + 1 {
                break;
            }
            let mid = self.interpolate(grid, threads, l, h).unwrap_or((l + h) / 2);
            let Some(m) = self.measure(at(mid)) else { return (lo, "stopped") };
            if m.feasible {
                lo = Some(mid);
            } else {
                hi = Some(mid);
            }
        }
        if reason == "plateau" {
            // Throughput peaked somewhere in the last steps (it may even fall past the peak:
            // thrashing): hill-climb on the grid around the best point seen.
            let mut tried = std::collections::BTreeSet::new();
            loop {
                let on: Vec<SlaPoint> = self.points.iter().filter(|p| p.threads == threads).cloned().collect();
                let Some(b) = best_point(&on) else { break };
                let Some(bi) = grid.iter().position(|&q| q == b.qd) else { break };
                if !tried.insert(bi) {
                    break;
                }
                let mut improved = false;
                for ni in [bi.checked_sub(1), Some(bi + 1)].into_iter().flatten() {
                    if ni >= grid.len() || on.iter().any(|p| p.qd == grid[ni]) {
                        continue;
                    }
                    let Some(m) = self.measure(at(ni)) else { return (lo, "stopped") };
                    improved |= m.feasible && m.iops > b.iops * (1.0 + self.cfg.min_gain / 2.0);
                }
                if !improved {
                    break;
                }
            }
        }
        (lo, reason)
    }
}

/// The highest-IOPS feasible point; among points within 1 % of it, the one with the fewest
/// I/Os outstanding (more depth for no throughput only adds latency).
pub fn best_point(points: &[SlaPoint]) -> Option<SlaPoint> {
    let max = points.iter().filter(|p| p.feasible).map(|p| p.iops).fold(f64::NAN, f64::max);
    if max.is_nan() {
        return None;
    }
    points
        .iter()
        .filter(|p| p.feasible && p.iops >= 0.99 * max)
        .min_by(|a, b| a.outstanding.cmp(&b.outstanding).then(b.iops.total_cmp(&a.iops)))
        .cloned()
}

/// Run the search (or the exhaustive grid) with `prober`. The first failed measurement stops
/// it: the outcome then covers the points measured before, and the failure comes back beside it.
pub fn search<P: Prober>(cfg: &SearchConfig, prober: &mut P) -> (SearchOutcome, Option<P::Halt>) {
    let mut run = Run { cfg, prober, points: Vec::new(), halt: None, estimate: 0 };
    let grid = qd_grid(cfg.max_qd.max(1));
    let threads = thread_grid(cfg.max_threads.max(1));
    let mut limit = None;

    if cfg.open_loop {
        open_loop(&mut run, &grid);
    } else if cfg.exhaustive {
        run.estimate = grid.len() * threads.len();
        'grid: for &t in &threads {
            for &q in &grid {
                if run.measure(GridPoint { qd: q, threads: t, rate_iops: None }).is_none() {
                    break 'grid;
                }
            }
        }
    } else {
        // A rough guess for progress: a climb of half the grid, one bisection, and two
        // more points per extra worker count.
        run.estimate = grid.len() / 2 + 2 + 2 * (threads.len() - 1);
        let (best_idx, why) = run.climb(&grid, threads[0], 0);
        limit = Some(why);
        let best_on = |points: &[SlaPoint], t: u32| {
            let on: Vec<SlaPoint> = points.iter().filter(|p| p.threads == t).cloned().collect();
            best_point(&on)
        };
        if best_idx.is_some() {
            let Some(b0) = best_on(&run.points, threads[0]) else { return finish(cfg, run, &grid, limit) };
            let mut best = b0.iops;
            // Start more workers from the depth that gave the best point, not the deepest
            // feasible one: past a plateau extra depth only adds latency.
            let mut best_outstanding = b0.outstanding;
            for &t in &threads[1..] {
                if run.halt.is_some() {
                    break;
                }
                // Same total depth spread over more workers.
                let per = (best_outstanding / t).max(1);
                let start = grid.iter().rposition(|&q| q <= per).unwrap_or(0);
                let (idx, why) = run.climb(&grid, t, start);
                let got =
                    run.points.iter().filter(|p| p.feasible && p.threads == t).map(|p| p.iops).fold(0.0, f64::max);
                if idx.is_none() || got < best * (1.0 + cfg.min_gain) {
                    break; // more workers do not pay
                }
                best = got;
                limit = Some(why);
                if let Some(b) = best_on(&run.points, t) {
                    best_outstanding = b.outstanding;
                }
            }
        }
    }
    finish(cfg, run, &grid, limit)
}

fn finish<P: Prober>(
    cfg: &SearchConfig,
    mut run: Run<P>,
    grid: &[u32],
    mut limit: Option<&'static str>,
) -> (SearchOutcome, Option<P::Halt>) {
    if !cfg.exhaustive && !cfg.open_loop {
        // Within a third of the grid's points: the search must stay far cheaper than it.
        let budget = grid.len() * thread_grid(cfg.max_threads.max(1)).len() / 3;
        refine_knee(&mut run, grid, budget);
    }
    let points = run.points;
    let stopped = run.halt.is_some();
    let best = best_point(&points);
    let qd1_misses =
        points.iter().find(|p| p.qd == 1 && p.threads == 1 && p.rate_iops.is_none()).is_some_and(|p| !p.feasible)
            && best.is_none();
    let knee = best.as_ref().and_then(|b| knee(&points, b.threads, b.rate_iops.is_some()));
    let thrashing = thrashing(&points);
    if cfg.exhaustive {
        limit = best.as_ref().map(|b| {
            if points.iter().any(|p| p.threads == b.threads && p.outstanding > b.outstanding && !p.feasible) {
                "bound"
            } else if b.qd == grid.last().copied().unwrap_or(1) {
                "max-qd"
            } else {
                "plateau"
            }
        });
    }
    (SearchOutcome { points, best, knee, thrashing, qd1_misses, stopped, limit }, run.halt)
}

/// The climb's big steps (×4) leave the knee coarse: when the next measured depth after
/// the knee is more than one grid step away, measure the step right after it (at most
/// twice, and only while the search has measured fewer than `budget` points), so the knee
/// is placed at the grid's resolution.
fn refine_knee<P: Prober>(run: &mut Run<P>, grid: &[u32], budget: usize) {
    let Some(b) = best_point(&run.points) else { return };
    for _ in 0..2 {
        if run.halt.is_some() || run.points.len() >= budget {
            return;
        }
        let Some(k) = knee(&run.points, b.threads, false) else { return };
        let Some(ki) = grid.iter().position(|&q| q == k.qd) else { return };
        let next = run
            .points
            .iter()
            .filter(|p| p.threads == b.threads && p.rate_iops.is_none() && p.qd > k.qd)
            .map(|p| p.qd)
            .min()
            .and_then(|q| grid.iter().position(|&g| g == q));
        match next {
            Some(ni) if ni > ki + 1 => {
                if run.measure(GridPoint { qd: grid[ki + 1], threads: b.threads, rate_iops: None }).is_none() {
                    return;
                }
            }
            _ => return,
        }
    }
}

/// Open loop: the QD-1 closed-loop rate is the base; offered rates climb in doublings,
/// then the last doubling is bisected on the half-octave rate grid.
fn open_loop<P: Prober>(run: &mut Run<P>, grid: &[u32]) {
    let cap = grid.last().copied().unwrap_or(1);
    let threads = 1;
    let Some(base) = run.measure(GridPoint { qd: 1, threads, rate_iops: None }) else { return };
    let base = base.iops.max(1.0);
    let at = |k: usize| GridPoint { qd: cap, threads, rate_iops: Some(rate_at(base, k)) };
    if run.cfg.exhaustive {
        // Every half-octave until two in a row miss (or the rate is 64x the base).
        let mut misses = 0;
        run.estimate = 14;
        for k in 0..=12 {
            let Some(m) = run.measure(at(k)) else { return };
            misses = if m.feasible { 0 } else { misses + 1 };
            if misses == 2 {
                return;
            }
        }
        return;
    }
    run.estimate = 8;
    let mut lo: Option<usize> = None;
    let mut hi: Option<usize> = None;
    let mut k = 0;
    while k <= 12 {
        let Some(m) = run.measure(at(k)) else { return };
        if m.feasible {
            lo = Some(k);
            k += 2;
        } else {
            hi = Some(k);
            break;
        }
    }
    while let (Some(l), Some(h)) = (lo, hi) {
        if h <= l + 1 {
            break;
        }
        let mid = (l + h) / 2;
        let Some(m) = run.measure(at(mid)) else { return };
        if m.feasible {
            lo = Some(mid);
        } else {
            hi = Some(mid);
        }
    }
}

/// The knee on one worker count: the last point before latency starts growing faster
/// than throughput (relative growth of the bounded statistic > relative growth of IOPS,
/// or IOPS falling). With doubling depth and Little's law this is where a doubling buys
/// less than ~41 % more IOPS.
pub fn knee(points: &[SlaPoint], threads: u32, open_loop: bool) -> Option<SlaPoint> {
    let mut curve: Vec<&SlaPoint> = points
        .iter()
        .filter(|p| p.threads == threads && p.rate_iops.is_some() == open_loop && p.iops > 0.0 && p.metric_ns > 0.0)
        .collect();
    if open_loop {
        curve.sort_by_key(|p| p.rate_iops);
    } else {
        curve.sort_by_key(|p| p.outstanding);
    }
    if curve.len() < 2 {
        return None;
    }
    for w in curve.windows(2) {
        let (a, b) = (w[0], w[1]);
        let d_iops = (b.iops - a.iops) / a.iops;
        let d_lat = (b.metric_ns - a.metric_ns) / a.metric_ns;
        if d_iops <= 0.0 || d_lat > d_iops {
            return Some(a.clone());
        }
    }
    None
}

/// Deeper queue, at least 5 % fewer IOPS (per worker count, closed loop).
pub fn thrashing(points: &[SlaPoint]) -> Vec<Thrash> {
    let mut out = Vec::new();
    let mut ts: Vec<u32> = points.iter().filter(|p| p.rate_iops.is_none()).map(|p| p.threads).collect();
    ts.sort_unstable();
    ts.dedup();
    for t in ts {
        let mut curve: Vec<&SlaPoint> = points.iter().filter(|p| p.threads == t && p.rate_iops.is_none()).collect();
        curve.sort_by_key(|p| p.qd);
        // Compare with the best IOPS at any shallower depth.
        let mut peak: Option<&SlaPoint> = None;
        for p in curve {
            if let Some(k) = peak {
                if p.iops < 0.95 * k.iops {
                    out.push(Thrash { threads: t, from_qd: k.qd, to_qd: p.qd, from_iops: k.iops, to_iops: p.iops });
                }
            }
            if peak.is_none_or(|k| p.iops > k.iops) {
                peak = Some(p);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
