//! Slow-block detection: a block is slow when its latency exceeds `factor` × the rolling
//! median of the previous `window` blocks AND an absolute floor.
//!
//! Why a median: one slow block must not raise the reference the next block is judged by
//! (a mean would). Why slow blocks are kept out of the window: a slow region longer than
//! half the window would otherwise become the new normal halfway through — unless the
//! device really changed speed, which is assumed after `window` slow blocks in a row.
//! Why a floor: on RAM-backed and fast flash devices a 1 MiB block takes 50–300 µs, and a
//! single preemption, page fault or interrupt on a busy machine adds milliseconds — a
//! 10–50× "slow block" that says nothing about the medium. Scheduler time slices are a
//! few ms (EEVDF's base slice is 3 ms; a loaded 2-CPU box stalls a thread for 5–15 ms),
//! so the default floor is 20 ms: above that noise, yet far below what a weak sector
//! costs (a drive retrying a marginal sector spends hundreds of ms to seconds; Victoria
//! and MHDD colour blocks above 200 ms as bad-ish). A genuinely slow zone of a healthy
//! HDD changes speed gradually and never by 5× between neighbours, so it is not flagged.

use std::collections::VecDeque;

/// Fewest earlier blocks needed before a block can be judged.
pub const MIN_HISTORY: usize = 4;

#[derive(Debug, Clone)]
pub struct SlowDetector {
    factor: f64,
    floor_ns: u64,
    window: usize,
    recent: VecDeque<u64>,
    sorted: Vec<u64>,
    slow_run: usize,
}

impl SlowDetector {
    pub fn new(factor: f64, window: usize, floor_ns: u64) -> Self {
        let window = window.max(1);
        Self {
            factor,
            floor_ns,
            window,
            recent: VecDeque::with_capacity(window),
            sorted: Vec::with_capacity(window),
            slow_run: 0,
        }
    }

    /// The rolling median (lower middle), once there is enough history.
    pub fn median(&self) -> Option<u64> {
        (self.sorted.len() >= MIN_HISTORY.min(self.window)).then(|| stats::surface::median_sorted(&self.sorted))
    }

    /// Is `ns` slow compared with `median`?
    pub fn slow_vs(&self, ns: u64, median: u64) -> bool {
        ns > self.floor_ns && ns as f64 > self.factor * median as f64
    }

    /// `Some(median)` when `ns` is slow against the current window.
    pub fn check(&self, ns: u64) -> Option<u64> {
        let m = self.median()?;
        self.slow_vs(ns, m).then_some(m)
    }

    /// Record a block's latency (`slow`: it was flagged).
    pub fn push(&mut self, ns: u64, slow: bool) {
        self.slow_run = if slow { self.slow_run + 1 } else { 0 };
        if slow && self.slow_run < self.window {
            return;
        }
        if self.recent.len() == self.window {
            if let Some(old) = self.recent.pop_front() {
                if let Ok(i) = self.sorted.binary_search(&old) {
                    self.sorted.remove(i);
                }
            }
        }
        self.recent.push_back(ns);
        let i = self.sorted.partition_point(|&x| x < ns);
        self.sorted.insert(i, ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flags_a_spike_but_not_jitter_below_the_floor() {
        let mut d = SlowDetector::new(5.0, 64, 20_000_000);
        for _ in 0..10 {
            assert_eq!(d.check(200_000), None);
            d.push(200_000, false);
        }
        // 50× the median but under the floor: jitter on a fast device.
        assert_eq!(d.check(10_000_000), None);
        // Above the floor and above 5× the median.
        assert_eq!(d.check(30_000_000), Some(200_000));
    }

    #[test]
    fn needs_history() {
        let d = SlowDetector::new(5.0, 64, 0);
        assert_eq!(d.check(u64::MAX), None);
    }

    #[test]
    fn a_long_slow_region_stays_slow_until_the_window_is_full() {
        let mut d = SlowDetector::new(5.0, 8, 0);
        for _ in 0..8 {
            d.push(100, false);
        }
        let mut flagged = 0;
        for _ in 0..20 {
            let slow = d.check(1_000).is_some();
            flagged += usize::from(slow);
            d.push(1_000, slow);
        }
        // 7 blocks are flagged; then the device is taken to have changed speed and the
        // window fills with the new level.
        assert!((7..=12).contains(&flagged), "{flagged}");
        assert_eq!(d.check(1_000), None);
    }

    proptest! {
        #[test]
        fn median_matches_a_sort(v in proptest::collection::vec(0u64..1000, 1..200), w in 1usize..70) {
            let mut d = SlowDetector::new(5.0, w, 0);
            for &x in &v {
                d.push(x, false);
            }
            let mut last: Vec<u64> = v[v.len().saturating_sub(w)..].to_vec();
            last.sort_unstable();
            if last.len() >= MIN_HISTORY.min(w) {
                prop_assert_eq!(d.median(), Some(last[(last.len() - 1) / 2]));
            }
        }

        #[test]
        fn never_slow_at_or_below_the_floor(v in proptest::collection::vec(1u64..1000, 4..100), x in 0u64..5000) {
            let mut d = SlowDetector::new(2.0, 64, 5000);
            for &y in &v {
                d.push(y, false);
            }
            prop_assert_eq!(d.check(x), None);
        }
    }
}
