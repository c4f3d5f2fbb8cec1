//! The one streaming pass of `profile`: every figure is accumulated request by request, in
//! memory bounded by the trace's footprint (one counter per 4 KiB block touched), its
//! distinct block sizes (at most [`MAX_DISTINCT_SIZES`] per operation), the requests in flight
//! at a time and a fixed number of depth intervals — never by the trace's length. Pure.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use stats::profile::{
    Arrivals, DepthPoint, DepthProfile, HotPoint, HotSet, OpProfile, ProfileResult, ProfileTrace, SizeCount,
    MAX_SIZES_SHOWN,
};
use stats::LatHist;
use trace::{Op, Request};

/// Unit of the hot-set footprint.
pub const BLOCK: u64 = 4096;
/// Points of the hot-set curve, in percent of the footprint.
pub const HOT_POINTS: [f64; 6] = [1.0, 5.0, 10.0, 20.0, 50.0, 100.0];
/// Distinct sizes counted per operation; requests of further sizes count as "other".
pub const MAX_DISTINCT_SIZES: usize = 4096;
/// Depth intervals kept: the interval doubles (merging pairs) to stay within this.
pub const MAX_DEPTH_POINTS: usize = 256;
/// The first depth interval.
pub const FIRST_INTERVAL_NS: u64 = 100_000_000;
/// Depth is reported when at least this share of the requests carries a latency.
pub const DEPTH_MIN_COVERAGE: f64 = 0.9;
/// Depths at arrival counted exactly up to this; deeper ones count here.
const MAX_DEPTH_COUNTED: usize = 1 << 16;

const OPS: [Op; 4] = [Op::Read, Op::Write, Op::Discard, Op::Flush];

fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Discard => 2,
        Op::Flush => 3,
    }
}

fn op_name(op: Op) -> &'static str {
    match op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Discard => "discard",
        Op::Flush => "flush",
    }
}

/// A fast hasher for the integer keys of the pass (MurmurHash3's 64-bit finaliser).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        let mut z = self.0 ^ v;
        z ^= z >> 33;
        z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
        z ^= z >> 33;
        z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^= z >> 33;
        self.0 = z;
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type Fast = BuildHasherDefault<KeyHasher>;

#[derive(Default)]
struct OpAcc {
    requests: u64,
    bytes: u64,
    sequential: u64,
    sizes: HashMap<u32, u64, Fast>,
    other_sizes: u64,
}

/// Requests in flight over time, from issue times and recorded latencies.
struct DepthAcc {
    /// Completion times of the requests in flight.
    inflight: BinaryHeap<Reverse<u64>>,
    max: u64,
    at_arrival: Vec<u64>,
    /// Σ latency: the time-weighted mean depth is this over the span (Little's law).
    busy_ns: u128,
    /// ns × requests in flight per interval of `interval_ns`.
    bins: Vec<u128>,
    interval_ns: u64,
}

impl DepthAcc {
    fn new() -> Self {
        DepthAcc {
            inflight: BinaryHeap::new(),
            max: 0,
            at_arrival: Vec::new(),
            busy_ns: 0,
            bins: Vec::new(),
            interval_ns: FIRST_INTERVAL_NS,
        }
    }

    fn add(&mut self, t: u64, lat: u64) {
        while self.inflight.peek().is_some_and(|Reverse(done)| *done <= t) {
            self.inflight.pop();
        }
        let depth = self.inflight.len();
        let i = depth.min(MAX_DEPTH_COUNTED);
        if self.at_arrival.len() <= i {
            self.at_arrival.resize(i + 1, 0);
        }
        if let Some(c) = self.at_arrival.get_mut(i) {
            *c += 1;
        }
        let end = t.saturating_add(lat);
        self.inflight.push(Reverse(end));
        self.max = self.max.max(self.inflight.len() as u64);
        self.busy_ns += u128::from(lat);
        // Widen the intervals until the request's end fits.
        while end / self.interval_ns >= MAX_DEPTH_POINTS as u64 {
            self.widen();
        }
        let mut at = t;
        while at < end {
            let bin = (at / self.interval_ns) as usize;
            let bin_end = (bin as u64 + 1) * self.interval_ns;
            let upto = bin_end.min(end);
            if self.bins.len() <= bin {
                self.bins.resize(bin + 1, 0);
            }
            if let Some(b) = self.bins.get_mut(bin) {
                *b += u128::from(upto - at);
            }
            at = upto;
        }
    }

    fn widen(&mut self) {
        self.bins = self.bins.chunks(2).map(|c| c.iter().sum()).collect();
        self.interval_ns *= 2;
    }

    fn quantile(&self, q: f64) -> u64 {
        let total: u64 = self.at_arrival.iter().sum();
        let want = ((total as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (d, c) in self.at_arrival.iter().enumerate() {
            seen += c;
            if seen >= want {
                return d as u64;
            }
        }
        0
    }

    fn result(&self, span_ns: u64) -> DepthProfile {
        let w = self.interval_ns as f64;
        DepthProfile {
            mean: if span_ns > 0 { self.busy_ns as f64 / span_ns as f64 } else { 0.0 },
            max: self.max,
            at_arrival_p50: self.quantile(0.5),
            at_arrival_p90: self.quantile(0.9),
            at_arrival_p99: self.quantile(0.99),
            series: self
                .bins
                .iter()
                .enumerate()
                .map(|(i, b)| DepthPoint { t_s: i as f64 * w / 1e9, interval_s: w / 1e9, mean: *b as f64 / w })
                .collect(),
        }
    }
}

/// The accumulator: feed it every request ([`add`](Profiler::add)), then
/// [`finish`](Profiler::finish).
pub struct Profiler {
    ops: [OpAcc; 4],
    /// Where the last request of each (device, operation) ended.
    last_end: HashMap<(u32, u8), u64, Fast>,
    /// Accesses per 4 KiB block, keyed by device (top 16 bits) and block number.
    blocks: HashMap<u64, u32, Fast>,
    accesses: u64,
    requests: u64,
    first_t: Option<u64>,
    last_t: u64,
    prev_t: Option<u64>,
    gaps: LatHist,
    out_of_order: u64,
    depth: DepthAcc,
    lat: LatHist,
    with_latency: u64,
}

impl Default for Profiler {
    fn default() -> Self {
        Self::new()
    }
}

impl Profiler {
    pub fn new() -> Self {
        Profiler {
            ops: Default::default(),
            last_end: HashMap::default(),
            blocks: HashMap::default(),
            accesses: 0,
            requests: 0,
            first_t: None,
            last_t: 0,
            prev_t: None,
            gaps: LatHist::new(),
            out_of_order: 0,
            depth: DepthAcc::new(),
            lat: LatHist::new(),
            with_latency: 0,
        }
    }

    /// Blocks in the footprint so far (the size of the pass's largest table).
    pub fn footprint_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// One request, with the latency the trace recorded for it, if any.
    pub fn add(&mut self, r: &Request, latency_ns: Option<u64>) {
        self.requests += 1;
        let t = r.t_ns;
        let first = *self.first_t.get_or_insert(t);
        self.last_t = self.last_t.max(t);
        if let Some(prev) = self.prev_t {
            if t < prev {
                self.out_of_order += 1;
                self.gaps.record(0);
            } else {
                self.gaps.record(t - prev);
            }
        }
        self.prev_t = Some(t);

        let i = op_index(r.op);
        let len = u64::from(r.len);
        if let Some(acc) = self.ops.get_mut(i) {
            acc.requests += 1;
            acc.bytes += len;
            let known = acc.sizes.len() < MAX_DISTINCT_SIZES || acc.sizes.contains_key(&r.len);
            if known {
                *acc.sizes.entry(r.len).or_insert(0) += 1;
            } else {
                acc.other_sizes += 1;
            }
            if r.op != Op::Flush {
                let end = r.offset.saturating_add(len);
                if let Some(prev) = self.last_end.insert((r.dev, i as u8), end) {
                    if prev == r.offset {
                        acc.sequential += 1;
                    }
                }
            }
        }
        if matches!(r.op, Op::Read | Op::Write) && len > 0 {
            let first_block = r.offset / BLOCK;
            let last_block = (r.offset + len - 1) / BLOCK;
            let dev = u64::from(r.dev) << 48;
            for b in first_block..=last_block {
                let c = self.blocks.entry(dev | (b & ((1 << 48) - 1))).or_insert(0);
                *c = c.saturating_add(1);
                self.accesses += 1;
            }
        }
        if let Some(lat) = latency_ns {
            self.with_latency += 1;
            self.lat.record(lat);
            self.depth.add(t.saturating_sub(first), lat);
        }
    }

    /// The figures. `trace` names the trace; its `span_s`, `requests_with_latency` are filled.
    pub fn finish(self, mut trace: ProfileTrace) -> ProfileResult {
        let span_ns = self.last_t.saturating_sub(self.first_t.unwrap_or(0));
        trace.span_s = span_ns as f64 / 1e9;
        trace.requests_with_latency = self.with_latency;
        let total_bytes: u64 = self.ops.iter().map(|o| o.bytes).sum();
        let frac = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        let [r, w, ..] = &self.ops;
        let mut ops = Vec::new();
        for (op, acc) in OPS.iter().zip(&self.ops) {
            if acc.requests == 0 {
                continue;
            }
            let mut sizes: Vec<SizeCount> =
                acc.sizes.iter().map(|(b, c)| SizeCount { bytes: u64::from(*b), count: *c }).collect();
            sizes.sort_by(|a, b| b.count.cmp(&a.count).then(a.bytes.cmp(&b.bytes)));
            let shown: Vec<SizeCount> = sizes.iter().take(MAX_SIZES_SHOWN).copied().collect();
            let other_sizes = acc.other_sizes + sizes.iter().skip(MAX_SIZES_SHOWN).map(|s| s.count).sum::<u64>();
            ops.push(OpProfile {
                op: op_name(*op).to_string(),
                requests: acc.requests,
                bytes: acc.bytes,
                fraction: frac(acc.requests, self.requests),
                byte_fraction: frac(acc.bytes, total_bytes),
                sequential: if *op == Op::Flush { 0.0 } else { frac(acc.sequential, acc.requests) },
                sizes: shown,
                other_sizes,
            });
        }
        let data: u64 = self.ops.iter().take(3).map(|o| o.requests).sum();
        let seq: u64 = self.ops.iter().take(3).map(|o| o.sequential).sum();
        let covered = frac(self.with_latency, self.requests) >= DEPTH_MIN_COVERAGE;
        ProfileResult {
            requests: self.requests,
            bytes: total_bytes,
            read_fraction: frac(r.requests, r.requests + w.requests),
            read_byte_fraction: frac(r.bytes, r.bytes + w.bytes),
            ops,
            sequential_fraction: frac(seq, data),
            hot_set: hot_set(&self.blocks, self.accesses),
            arrivals: Arrivals {
                mean_iops: if span_ns > 0 { (self.requests - 1) as f64 / (span_ns as f64 / 1e9) } else { 0.0 },
                gap_ns: (!self.gaps.is_empty()).then(|| self.gaps.summary()),
                out_of_order: self.out_of_order,
            },
            depth: (covered && self.with_latency > 0).then(|| self.depth.result(span_ns)),
            latency_ns: (!self.lat.is_empty()).then(|| self.lat.summary()),
            trace,
            job: None,
        }
    }
}

/// The hot-set curve: blocks sorted by accesses (hottest first), the share of accesses on
/// the first ⌈X % × footprint⌉ of them.
fn hot_set(blocks: &HashMap<u64, u32, Fast>, accesses: u64) -> HotSet {
    // Blocks per access count: as many entries as distinct counts, not blocks.
    let mut by_count: HashMap<u32, u64, Fast> = HashMap::default();
    for c in blocks.values() {
        *by_count.entry(*c).or_insert(0) += 1;
    }
    let mut groups: Vec<(u32, u64)> = by_count.into_iter().collect();
    groups.sort_unstable_by_key(|g| std::cmp::Reverse(g.0));
    let footprint = blocks.len() as u64;
    let points = HOT_POINTS
        .iter()
        .map(|&pct| {
            let want = ((pct / 100.0) * footprint as f64).ceil() as u64;
            let (mut taken, mut sum) = (0u64, 0u64);
            for &(count, n) in &groups {
                if taken >= want {
                    break;
                }
                let k = n.min(want - taken);
                taken += k;
                sum += k * u64::from(count);
            }
            HotPoint { footprint_pct: pct, share: if accesses > 0 { sum as f64 / accesses as f64 } else { 0.0 } }
        })
        .collect();
    HotSet { block_bytes: BLOCK, footprint_blocks: footprint, accesses, points }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn req(t_ns: u64, offset: u64, len: u32, op: Op) -> Request {
        Request { t_ns, offset, len, op, dev: 0 }
    }

    fn profile(reqs: &[(Request, Option<u64>)]) -> ProfileResult {
        let mut p = Profiler::new();
        for (r, l) in reqs {
            p.add(r, *l);
        }
        p.finish(ProfileTrace::default())
    }

    #[test]
    fn mix_sizes_and_sequential() {
        let p = profile(&[
            (req(0, 0, 4096, Op::Read), None),
            (req(10, 4096, 4096, Op::Read), None), // sequential after the first read
            (req(20, 4096, 8192, Op::Write), None),
            (req(30, 12288, 4096, Op::Write), None), // sequential after the first write
            (req(40, 0, 0, Op::Flush), None),
            (req(50, 1 << 20, 4096, Op::Read), None),
        ]);
        assert_eq!(p.requests, 6);
        assert!((p.read_fraction - 3.0 / 5.0).abs() < 1e-12);
        assert!((p.read_byte_fraction - 12288.0 / 24576.0).abs() < 1e-12);
        let read = &p.ops[0];
        assert_eq!((read.op.as_str(), read.requests, read.bytes), ("read", 3, 12288));
        assert_eq!(read.sizes, [SizeCount { bytes: 4096, count: 3 }]);
        assert!((read.sequential - 1.0 / 3.0).abs() < 1e-12);
        let write = &p.ops[1];
        assert_eq!(write.sizes, [SizeCount { bytes: 4096, count: 1 }, SizeCount { bytes: 8192, count: 1 }]);
        assert!((write.sequential - 0.5).abs() < 1e-12);
        assert_eq!(p.ops[2].op, "flush");
        assert!((p.sequential_fraction - 2.0 / 5.0).abs() < 1e-12);
        assert!((p.arrivals.mean_iops - 5.0 / 50e-9).abs() < 1e-3);
        assert!(p.depth.is_none());
    }

    #[test]
    fn hot_set_curve() {
        // 100 blocks: block 0 read 901 times, the other 99 once each → 1000 accesses.
        let mut reqs = Vec::new();
        for i in 0..901 {
            reqs.push((req(i, 0, 4096, Op::Read), None));
        }
        for b in 1..100u64 {
            reqs.push((req(1000 + b, b * 4096, 4096, Op::Write), None));
        }
        let p = profile(&reqs);
        assert_eq!((p.hot_set.footprint_blocks, p.hot_set.accesses), (100, 1000));
        let share = |pct: f64| p.hot_set.points.iter().find(|h| h.footprint_pct == pct).unwrap().share;
        assert!((share(1.0) - 0.901).abs() < 1e-12);
        assert!((share(5.0) - 0.905).abs() < 1e-12);
        assert!((share(50.0) - 0.950).abs() < 1e-12);
        assert!((share(100.0) - 1.0).abs() < 1e-12);
        // A 16 KiB request touches 4 blocks.
        let p = profile(&[(req(0, 2048, 16384, Op::Read), None)]);
        assert_eq!((p.hot_set.footprint_blocks, p.hot_set.accesses), (5, 5));
    }

    #[test]
    fn depth_from_latencies() {
        // Three requests: [0, 100), [50, 150), [200, 210) ns.
        let p = profile(&[
            (req(0, 0, 4096, Op::Read), Some(100)),
            (req(50, 4096, 4096, Op::Read), Some(100)),
            (req(200, 8192, 4096, Op::Read), Some(10)),
        ]);
        let d = p.depth.expect("depth with latencies");
        assert_eq!(d.max, 2);
        assert!((d.mean - 210.0 / 200.0).abs() < 1e-12);
        assert_eq!((d.at_arrival_p50, d.at_arrival_p99), (0, 1));
        assert_eq!(d.series.len(), 1);
        assert!((d.series[0].mean - 210.0 / FIRST_INTERVAL_NS as f64).abs() < 1e-15);
        assert_eq!(p.trace.requests_with_latency, 3);
        // Too few requests with a latency: no depth.
        let p = profile(&[(req(0, 0, 4096, Op::Read), Some(100)), (req(50, 0, 4096, Op::Read), None)]);
        assert!(p.depth.is_none());
    }

    #[test]
    fn depth_intervals_widen_and_keep_the_total() {
        let mut d = DepthAcc::new();
        for i in 0..1000u64 {
            d.add(i * 1_000_000_000, 500_000_000); // one request per second, 0.5 s each
        }
        assert!(d.bins.len() <= MAX_DEPTH_POINTS);
        let total: u128 = d.bins.iter().sum();
        assert_eq!(total, 1000 * 500_000_000);
        let r = d.result(999_000_000_000);
        // 6.4 s intervals hold 6 or 7 of the half-second requests.
        assert_eq!(r.series.first().map(|p| p.interval_s), Some(6.4));
        assert!(r.series.iter().take(150).all(|p| (p.mean - 0.5).abs() < 0.05), "{:?}", &r.series[..3]);
        assert!((r.mean - 500.0 / 999.0).abs() < 1e-9);
    }

    #[test]
    fn many_sizes_are_bounded() {
        let mut p = Profiler::new();
        for i in 0..(MAX_DISTINCT_SIZES as u32 + 10) {
            p.add(&req(u64::from(i), 0, 512 + i, Op::Write), None);
        }
        let r = p.finish(ProfileTrace::default());
        assert_eq!(r.ops[0].sizes.len(), MAX_SIZES_SHOWN);
        assert_eq!(r.ops[0].other_sizes, MAX_DISTINCT_SIZES as u64 + 10 - MAX_SIZES_SHOWN as u64);
    }
}
