//! Hit ratio over time, measured warm-up, and the QSAN warm-up estimate.

use trace::Request;

use crate::policy::Policy;
use crate::stats::Stats;

/// Interval used when the trace spans no time.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;

/// One point of the time series: the state at the end of an interval that held requests.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesPoint {
    /// End of the interval, ns since the trace start (`t_ns` of the requests).
    pub t_ns: u64,
    /// Reads in the interval.
    pub reads: u64,
    /// Full read hits in the interval.
    pub read_hits: u64,
    /// Read hit ratio by request since the start.
    pub cum_hit_ratio: f64,
    /// Read hit ratio by request in the interval (`None` without reads).
    pub interval_hit_ratio: Option<f64>,
    /// Valid bytes / capacity at the end of the interval.
    pub occupancy: f64,
}

/// The result of [`simulate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Interval length used.
    pub interval_ns: u64,
    /// Time of the first request.
    pub start_ns: u64,
    /// Time of the last request minus that of the first.
    pub span_ns: u64,
    /// One point per interval that held at least one request, in time order.
    pub points: Vec<SeriesPoint>,
}

/// The default interval for a span: 1/100 of it, or [`DEFAULT_INTERVAL_NS`] when it is 0.
pub fn default_interval(span_ns: u64) -> u64 {
    if span_ns == 0 {
        DEFAULT_INTERVAL_NS
    } else {
        (span_ns / 100).max(1)
    }
}

/// Replays `requests` (in trace order) through `policy`, recording a point at the end of every
/// `interval_ns` interval (default: [`default_interval`]) that held requests. Intervals are
/// counted from the first request; requests whose time goes backwards stay in the current
/// interval.
pub fn simulate(policy: &mut dyn Policy, requests: &[Request], interval_ns: Option<u64>) -> Series {
    simulate_until(policy, requests, interval_ns, &std::sync::atomic::AtomicBool::new(false)).0
}

/// [`simulate`], checking `stop` every 64 Ki requests; the flag is true when the run stopped
/// early (the series then covers the requests simulated so far).
pub fn simulate_until(
    policy: &mut dyn Policy,
    requests: &[Request],
    interval_ns: Option<u64>,
    stop: &std::sync::atomic::AtomicBool,
) -> (Series, bool) {
    let start_ns = requests.first().map_or(0, |r| r.t_ns);
    let end_ns = requests.iter().map(|r| r.t_ns).max().unwrap_or(start_ns);
    let interval = interval_ns.unwrap_or_else(|| default_interval(end_ns - start_ns));
    let mut series = SeriesBuilder::new(interval, policy.stats());
    let mut stopped = false;
    for chunk in requests.chunks(1 << 16) {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            stopped = true;
            break;
        }
        series.feed(policy, chunk);
    }
    (series.finish(policy.stats()), stopped)
}

/// [`simulate`] one batch at a time, for requests that are streamed rather than held: the
/// interval must be known up front (the default one needs the trace's span, so a streamed
/// run with the default interval reads the trace once before, see [`crate::session`]).
/// Feeding the same requests in any split into batches gives the same [`Series`] as
/// [`simulate`] over all of them.
#[derive(Debug, Clone)]
pub struct SeriesBuilder {
    interval: u64,
    /// Time of the first request (`None` before it).
    start_ns: Option<u64>,
    end_ns: u64,
    bucket_end: u64,
    last: Stats,
    pending: bool,
    points: Vec<SeriesPoint>,
}

impl SeriesBuilder {
    /// A series of intervals of `interval_ns` (at least 1) for a policy whose counters are
    /// `stats` now.
    pub fn new(interval_ns: u64, stats: &Stats) -> Self {
        SeriesBuilder {
            interval: interval_ns.max(1),
            start_ns: None,
            end_ns: 0,
            bucket_end: 0,
            last: *stats,
            pending: false,
            points: Vec::new(),
        }
    }

    /// Replays the next requests of the trace through `policy`: the runs of requests inside
    /// one interval go to [`Policy::access_all`] in one call.
    pub fn feed(&mut self, policy: &mut dyn Policy, requests: &[Request]) {
        let Some(first) = requests.first() else { return };
        let start = *self.start_ns.get_or_insert_with(|| {
            self.end_ns = first.t_ns;
            self.bucket_end = first.t_ns.saturating_add(self.interval);
            first.t_ns
        });
        let mut rest = requests;
        // Whether `rest[0]` already opened its interval (it then belongs to the next run
        // whatever its time: a request is checked against the interval's end once).
        let mut opened = false;
        while !rest.is_empty() {
            // The requests before the first one that opens a later interval.
            let bucket_end = self.bucket_end;
            let skip = usize::from(opened);
            let cut = rest.iter().skip(skip).position(|r| r.t_ns >= bucket_end).map_or(rest.len(), |i| i + skip);
            let (run, next) = rest.split_at(cut);
            if !run.is_empty() {
                let max = run.iter().map(|r| r.t_ns).max().unwrap_or(0);
                self.end_ns = self.end_ns.max(max);
                policy.access_all(run);
                self.pending = true;
            }
            let Some(r) = next.first() else { break };
            if self.pending {
                self.points.push(point(self.bucket_end, policy.stats(), &self.last));
                self.last = *policy.stats();
            }
            let k = (r.t_ns - start) / self.interval;
            self.bucket_end = start.saturating_add(k.saturating_add(1).saturating_mul(self.interval));
            rest = next;
            opened = true;
        }
    }

    /// The series, given the policy's counters after the last request.
    pub fn finish(mut self, stats: &Stats) -> Series {
        if self.pending {
            self.points.push(point(self.bucket_end, stats, &self.last));
        }
        let start_ns = self.start_ns.unwrap_or(0);
        Series { interval_ns: self.interval, start_ns, span_ns: self.end_ns - start_ns, points: self.points }
    }
}

fn point(t_ns: u64, now: &Stats, before: &Stats) -> SeriesPoint {
    let d = now.since(before);
    SeriesPoint {
        t_ns,
        reads: d.reads,
        read_hits: d.read_hits,
        cum_hit_ratio: now.read_hit_ratio(),
        interval_hit_ratio: (d.reads > 0).then(|| d.read_hits as f64 / d.reads as f64),
        occupancy: now.occupancy(),
    }
}

/// Measured warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Warmup {
    /// Read hit ratio over the intervals in the last 10 % of the trace's span.
    pub final_hit_ratio: f64,
    /// Time from the first request to the end of the first interval whose hit ratio reached
    /// 90 % of `final_hit_ratio`.
    pub warmup_ns: u64,
}

/// Warm-up time: when the interval read hit ratio first reaches 90 % of the final one (the
/// hit ratio over the intervals ending in the last 10 % of the span). `None` without reads
/// there or when the final hit ratio is 0.
pub fn warmup(series: &Series) -> Option<Warmup> {
    let tail_from = series.start_ns + series.span_ns - series.span_ns / 10;
    let (reads, hits) = series
        .points
        .iter()
        .filter(|p| p.t_ns > tail_from)
        .fold((0u64, 0u64), |(r, h), p| (r + p.reads, h + p.read_hits));
    if reads == 0 || hits == 0 {
        return None;
    }
    let final_hit_ratio = hits as f64 / reads as f64;
    let target = 0.9 * final_hit_ratio;
    let p = series.points.iter().find(|p| p.interval_hit_ratio.is_some_and(|h| h >= target))?;
    Some(Warmup { final_hit_ratio, warmup_ns: p.t_ns - series.start_ns })
}

/// The QSAN warm-up estimate T = C·P / (I·S·D) in seconds: `capacity_bytes` of SSD cache,
/// populate threshold `threshold`, `hdd_iops` random IOPS of one HDD, I/O size `io_size_bytes`,
/// `hdds` HDDs. Every S-byte unit of the cache needs P HDD reads before it is populated, and
/// the D HDDs deliver D·I of them per second. Infinite when the HDD side is 0.
pub fn warmup_estimate(capacity_bytes: u64, threshold: u32, hdd_iops: f64, io_size_bytes: u64, hdds: u32) -> f64 {
    let num = capacity_bytes as f64 * f64::from(threshold);
    let den = hdd_iops * io_size_bytes as f64 * f64::from(hdds);
    if den > 0.0 {
        num / den
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GIB, KIB};
    use crate::lru::Lru;
    use trace::Op;

    #[test]
    fn estimate_reproduces_the_source_examples() {
        let t1 = warmup_estimate(480 * GIB, 2, 250.0, 64 * KIB, 16);
        assert!((t1 - 3932.16).abs() < 0.01, "{t1}");
        assert!((t1 / 60.0 - 65.5).abs() < 0.1);
        let t2 = warmup_estimate(2048 * GIB, 2, 244.0, 8 * KIB, 8);
        assert!((t2 - 275_036.33).abs() < 0.01, "{t2}");
        assert!((t2 / 3600.0 - 76.4).abs() < 0.01);
        assert!(warmup_estimate(GIB, 2, 0.0, KIB, 1).is_infinite());
    }

    #[test]
    fn series_and_warmup_on_a_looping_trace() {
        // 100 distinct 4 KiB blocks read in a loop, one read per ms, for 10 s; the cache
        // holds them all: the first pass (100 ms) misses, everything after hits.
        let reqs: Vec<Request> = (0..10_000u64)
            .map(|i| Request { t_ns: i * 1_000_000, offset: (i % 100) * 4096, len: 4096, op: Op::Read, dev: 0 })
            .collect();
        let mut lru = Lru::new(1024 * 4096, 4096).expect("valid");
        let s = simulate(&mut lru, &reqs, None);
        assert_eq!(s.interval_ns, 99_990_000);
        assert!(s.points.len() >= 100 && s.points.len() <= 101, "{}", s.points.len());
        assert_eq!(s.points.iter().map(|p| p.reads).sum::<u64>(), 10_000);
        assert_eq!(s.points[0].interval_hit_ratio, Some(0.0));
        let w = warmup(&s).expect("warm-up");
        assert!((w.final_hit_ratio - 1.0).abs() < 1e-12);
        assert_eq!(w.warmup_ns, 2 * 99_990_000);
        let last = s.points.last().expect("points");
        assert!((last.cum_hit_ratio - 0.99).abs() < 1e-9);
        assert!((last.occupancy - 100.0 / 1024.0).abs() < 1e-12);
    }
}
