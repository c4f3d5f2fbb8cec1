//! Whole `cache` commands: read a trace, run the policies, build the result document
//! (`stats::CacheResult`). No command-line parsing here; the binary hands in typed settings.
//!
//! The trace is streamed ([`crate::stream`]), never held: memory is the caches', their counter
//! tables' and the per-block state of the models, whatever the trace's length. `simulate`
//! reads it once, each policy fed batch by batch on a thread of its own while the reader
//! decodes the next requests — or twice when the result needs to know the whole trace first:
//! the default series interval is 1/100 of the trace's span, and `opt` needs every unit's
//! next use. The first read then only counts (and builds `opt`'s next-use table); the second
//! replays, and is checked to have read the same requests. `mrc` reads once: the exact curve
//! and the 1 % SHARDS sample are built side by side until the trace proves larger than
//! [`AUTO_SHARDS_REFS`] references, and `--policy qsan` feeds one cache per size, the sizes
//! shared out over the available cores.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use files::output::OutputFile;

use stats::{
    BlockCounts, ByteCounts, CachePoint, CacheResult, CacheSetup, MrcPoint, MrcResult, PerfPrediction, PolicyResult,
    RequestCounts, TraceSummary, WarmupEstimate,
};
use trace::{trace_format, Op, Request, TraceInput};

pub use crate::outcome::{Cut, Outcome, SessionError};

use crate::mrc::{self, Mattson, OpFilter, Shards, ShardsConfig};
use crate::opt::OptPlan;
use crate::series::{default_interval, SeriesBuilder};
use crate::stream::{self, Consumer, Pass};
use crate::{CacheConfig, DeviceProfile, Lru, Nhit, Policy, QsanCache, S3Fifo, Stats};

/// The error of a trace without a request to simulate.
fn no_requests(input: &TraceInput, s: &TraceSummary) -> SessionError {
    SessionError::Usage(format!(
        "{} holds no requests{}; check --format, --device and the time window",
        input.path.display(),
        if s.skipped_lines > 0 { format!(" ({} malformed lines skipped)", s.skipped_lines) } else { String::new() }
    ))
}

/// The second read of a trace must see what the first saw.
fn same_trace(input: &TraceInput, first: &Pass, second: &Pass) -> Result<(), SessionError> {
    if second.cut == Some(Cut::Interrupted)
        || (first.summary.requests == second.summary.requests
            && first.fingerprint == second.fingerprint
            && first.cut == second.cut)
    {
        return Ok(());
    }
    Err(SessionError::Runtime(format!(
        "{} changed while it was read: {} requests the first time, {} the second; run again on a trace that is \
         not being written",
        input.path.display(),
        first.summary.requests,
        second.summary.requests
    )))
}

/// A policy to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// The QSAN block / sub-block cache with populate thresholds (the modelled controller).
    Qsan,
    Lru,
    Nhit,
    S3Fifo,
    Opt,
}

impl PolicyKind {
    pub const NAMES: &'static str = "qsan, lru, nhit, s3fifo, opt or all";

    /// Parse a comma-separated list (`all` = every policy).
    pub fn parse_list(s: &str) -> Result<Vec<PolicyKind>, String> {
        let mut out = Vec::new();
        for p in s.split(',').map(str::trim) {
            let k = match p {
                "qsan" => PolicyKind::Qsan,
                "lru" => PolicyKind::Lru,
                "nhit" => PolicyKind::Nhit,
                "s3fifo" | "s3-fifo" => PolicyKind::S3Fifo,
                "opt" | "belady" => PolicyKind::Opt,
                "all" => {
                    out.extend([
                        PolicyKind::Qsan,
                        PolicyKind::Lru,
                        PolicyKind::Nhit,
                        PolicyKind::S3Fifo,
                        PolicyKind::Opt,
                    ]);
                    continue;
                }
                other => return Err(format!("unknown policy {other:?}; use {}", Self::NAMES)),
            };
            if !out.contains(&k) {
                out.push(k);
            }
        }
        if out.is_empty() {
            return Err(format!("no policy given; use {}", Self::NAMES));
        }
        Ok(out)
    }
}

/// Settings of `cache simulate`.
#[derive(Debug, Clone)]
pub struct SimulateConfig {
    pub preset: String,
    pub cache: CacheConfig,
    pub policies: Vec<PolicyKind>,
    /// Cache unit of the comparison policies (request unit).
    pub unit_bytes: u64,
    /// Series interval; `None` = 1/100 of the span.
    pub interval_ns: Option<u64>,
    /// SSD size for DWPD (default: the cache capacity).
    pub ssd_bytes: Option<u64>,
    pub profile: DeviceProfile,
    /// Most backing blocks whose read/write counters the QSAN model keeps (CLOCK replacement,
    /// preallocated); `None` = unbounded (one entry per block ever missed).
    pub counter_limit: Option<usize>,
}

fn policy_result(name: &str, st: &Stats, series: &crate::Series, ssd_bytes: u64, prof: &DeviceProfile) -> PolicyResult {
    let span_ns = series.span_ns;
    let warm = crate::warmup(series);
    PolicyResult {
        name: name.to_string(),
        requests: RequestCounts {
            read_hits: st.read_hits,
            partial_hits: st.read_partial_hits,
            read_misses: st.read_misses,
            write_hits: st.write_hits,
            write_misses: st.write_misses,
            bypasses: st.bypasses,
            discards: st.discards,
            flushes: st.flushes,
        },
        bytes: ByteCounts {
            read_from_ssd: st.read_bytes_ssd,
            read_from_hdd: st.read_bytes_hdd,
            written_to_ssd: st.ssd_write_bytes,
            written_to_hdd: st.hdd_write_bytes,
            fill: st.fill_bytes,
            dirty_evicted: st.dirty_eviction_bytes,
        },
        blocks: BlockCounts { fills: st.fills, evictions: st.evictions, dirty_evictions: st.dirty_evictions },
        hdd_ops: st.hdd_read_ops + st.hdd_write_ops,
        ssd_ops: st.ssd_read_ops + st.ssd_write_ops,
        read_hit_ratio: st.read_hit_ratio(),
        read_byte_hit_ratio: st.read_byte_hit_ratio(),
        capacity_blocks: st.capacity_blocks,
        occupied_blocks: st.blocks_used,
        dwpd: (span_ns > 0 && ssd_bytes > 0).then(|| crate::dwpd(st.ssd_write_bytes, ssd_bytes, span_ns)),
        warmup_s: warm.map(|w| w.warmup_ns as f64 / 1e9),
        series: series
            .points
            .iter()
            .map(|p| CachePoint {
                t_s: (p.t_ns - series.start_ns) as f64 / 1e9,
                hit_ratio: p.cum_hit_ratio,
                interval_hit_ratio: p.interval_hit_ratio.unwrap_or(f64::NAN).max(0.0),
                occupancy: p.occupancy,
            })
            .map(|mut p| {
                if !p.interval_hit_ratio.is_finite() {
                    p.interval_hit_ratio = 0.0;
                }
                p
            })
            .collect(),
        perf: crate::predict(st, prof).map(|p| PerfPrediction {
            max_iops: p.max_iops,
            bottleneck: p.bottleneck.name().to_string(),
            mean_latency_ns: p.mean_latency_ns,
            hdd_only_iops: p.baseline_iops,
            hdd_only_latency_ns: p.baseline_latency_ns,
            gain_pct: p.gain_pct,
        }),
        sim_seconds: 0.0,
        sim_requests_per_s: 0.0,
    }
}

/// A policy being fed the trace, its series and the time it took. Each policy is fed on a
/// thread of its own: its state stays in that core's caches, and the policies share the cores.
struct Run {
    policy: Box<dyn Policy + Send>,
    series: SeriesBuilder,
    busy: Duration,
}

impl Consumer for Run {
    fn batch(&mut self, requests: &[Request]) {
        let t0 = thread_cpu();
        self.series.feed(self.policy.as_mut(), requests);
        self.busy += thread_cpu().saturating_sub(t0);
    }
}

/// CPU time of the calling thread: what a policy's simulation costs, whether or not it had a
/// core to itself.
fn thread_cpu() -> Duration {
    // Zero where the OS keeps no per-thread CPU time.
    platform::mem::thread_cpu_time().unwrap_or_default()
}

/// `opt`'s first read, and the time it took.
struct Plan(OptPlan, Duration);

impl Consumer for Plan {
    fn batch(&mut self, requests: &[Request]) {
        let t0 = thread_cpu();
        for r in requests {
            self.0.push(r);
        }
        self.1 += thread_cpu().saturating_sub(t0);
    }
}

/// A policy ready to be fed, and the time it took to build.
type Built = (Box<dyn Policy + Send>, Duration);

/// A policy other than `opt` (which needs the trace first); `None` for `opt`.
fn build(k: PolicyKind, cfg: &SimulateConfig) -> Result<Option<Built>, SessionError> {
    let t0 = thread_cpu();
    let p: Box<dyn Policy + Send> = match k {
        PolicyKind::Qsan => match cfg.counter_limit {
            Some(n) => Box::new(QsanCache::with_counter_limit(cfg.cache, n)?),
            None => Box::new(QsanCache::new(cfg.cache)?),
        },
        PolicyKind::Lru => Box::new(Lru::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
        PolicyKind::Nhit => Box::new(Nhit::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
        PolicyKind::S3Fifo => Box::new(S3Fifo::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
        PolicyKind::Opt => return Ok(None),
    };
    Ok(Some((p, thread_cpu().saturating_sub(t0))))
}

/// `cache simulate`: every policy over the same trace, streamed (see the module's notes).
pub fn simulate(input: &TraceInput, cfg: &SimulateConfig, stop: &AtomicBool) -> Result<Outcome, SessionError> {
    cfg.cache.validate()?;
    let format = trace_format(input)?;
    let ssd_bytes = cfg.ssd_bytes.unwrap_or(cfg.cache.capacity_bytes);
    // Every policy is checked before the trace is read.
    let mut plan = match cfg.policies.contains(&PolicyKind::Opt) {
        true => Some(OptPlan::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
        false => None,
    };
    let mut built = Vec::with_capacity(cfg.policies.len());
    for &k in &cfg.policies {
        built.push(build(k, cfg)?);
    }
    let result = |summary: TraceSummary| CacheResult {
        action: "simulate".into(),
        trace: Some(summary),
        config: Some(CacheSetup {
            preset: cfg.preset.clone(),
            capacity_bytes: cfg.cache.capacity_bytes,
            block_bytes: cfg.cache.block_bytes,
            sub_block_bytes: cfg.cache.sub_block_bytes,
            por: cfg.cache.por,
            pow: cfg.cache.pow,
            mode: cfg.cache.mode.name().to_string(),
            seq_cutoff_bytes: cfg.cache.seq_cutoff,
            ssd_bytes,
        }),
        ..CacheResult::default()
    };
    // The first read, when the replay needs the whole trace first.
    let mut opt_secs = Duration::ZERO;
    let first = if cfg.interval_ns.is_none() || plan.is_some() {
        let mut consumers: Vec<Plan> = plan.take().map(|p| Plan(p, Duration::ZERO)).into_iter().collect();
        let pass = stream::read(input, &format, stop, None, &mut consumers)?;
        plan = consumers.pop().map(|Plan(p, secs)| {
            opt_secs = secs;
            p
        });
        if pass.summary.requests == 0 && pass.cut.is_none() {
            return Err(no_requests(input, &pass.summary));
        }
        if pass.cut == Some(Cut::Interrupted) {
            return Ok(Outcome { result: result(pass.summary), cut: pass.cut });
        }
        Some(pass)
    } else {
        None
    };
    let interval =
        cfg.interval_ns.unwrap_or_else(|| first.as_ref().map_or(0, |p| default_interval(p.max_ns - p.first_ns)));
    let mut runs = Vec::with_capacity(cfg.policies.len());
    for slot in built {
        let (policy, busy) = match (slot, plan.take()) {
            (Some(built), p) => {
                plan = p;
                built
            }
            // `opt`: the plan is there (it is built when `opt` is asked for).
            (None, Some(p)) => (Box::new(p.into_opt()) as Box<dyn Policy + Send>, opt_secs),
            (None, None) => continue,
        };
        let series = SeriesBuilder::new(interval, policy.stats());
        runs.push(Run { policy, series, busy });
    }
    let unit = cfg.cache.block_bytes.max(1);
    let pass = stream::read(input, &format, stop, Some(unit), &mut runs)?;
    if let Some(first) = &first {
        same_trace(input, first, &pass)?;
    } else if pass.summary.requests == 0 && pass.cut.is_none() {
        return Err(no_requests(input, &pass.summary));
    }
    let requests = pass.summary.requests;
    let mut out = result(pass.summary);
    if pass.cut == Some(Cut::Interrupted) {
        // Policies that saw part of the trace are not reported.
        return Ok(Outcome { result: out, cut: pass.cut });
    }
    for run in runs {
        let series = run.series.finish(run.policy.stats());
        let mut r = policy_result(run.policy.name(), run.policy.stats(), &series, ssd_bytes, &cfg.profile);
        let secs = run.busy.as_secs_f64();
        r.sim_seconds = secs;
        r.sim_requests_per_s = if secs > 0.0 { requests as f64 / secs } else { 0.0 };
        out.policies.push(r);
    }
    Ok(Outcome { result: out, cut: pass.cut })
}

/// Settings of `cache mrc`.
#[derive(Debug, Clone)]
pub struct MrcConfig {
    pub unit_bytes: u64,
    /// `None` = exact Mattson unless the trace is very large; `Some(r)` = SHARDS at rate r.
    pub shards_rate: Option<f64>,
    pub reads_only: bool,
    /// Threshold policy: simulate the QSAN model at these sizes instead of LRU stack distances.
    pub qsan: Option<CacheConfig>,
    /// Cache sizes (bytes) to report for the simulated curve (and to sample an LRU curve at).
    pub sizes: Vec<u64>,
}

/// References above which `cache mrc` samples with SHARDS (1 %) unless told otherwise.
pub const AUTO_SHARDS_REFS: usize = 50_000_000;

/// The LRU curve of `cache mrc`, built as the trace streams by.
struct Curve {
    unit: u64,
    /// References above which the sampled curve is the answer ([`AUTO_SHARDS_REFS`]).
    limit: u64,
    /// Exact, until the references exceed `limit` (none when SHARDS was asked for).
    exact: Option<Mattson>,
    /// Sampled: at the rate asked for, or at 1 % in case the trace proves too large.
    sampled: Option<Shards>,
    /// Every block reference of every request, whatever its op (the automatic choice's count).
    refs: u64,
}

impl Consumer for Curve {
    fn batch(&mut self, requests: &[Request]) {
        for r in requests {
            self.refs += mrc::key_count(r, self.unit);
            if let Some(m) = self.exact.as_mut() {
                m.push(r);
            }
            if let Some(s) = self.sampled.as_mut() {
                s.push(r);
            }
        }
        if self.refs > self.limit && self.sampled.is_some() {
            // Too large for the exact curve: the sampled one is the answer.
            self.exact = None;
        }
    }
}

impl Curve {
    /// The curve, and the sampling rate when it is the sampled one (`rate` is its rate).
    fn finish(&self, rate: Option<f64>) -> (mrc::Mrc, Option<f64>) {
        match (&self.exact, &self.sampled) {
            (Some(m), _) => (m.finish(), None),
            (None, Some(s)) => (s.finish(), rate),
            (None, None) => (Mattson::new(self.unit, OpFilter::ReadsAndWrites).finish(), None),
        }
    }
}

/// `cache mrc --policy qsan`: some of the sizes' caches, fed on one thread.
struct Sizes(Vec<QsanCache>);

impl Consumer for Sizes {
    fn batch(&mut self, requests: &[Request]) {
        for q in &mut self.0 {
            for r in requests {
                q.access(r);
            }
        }
    }
}

/// `cache mrc`: a miss-ratio curve and the recommended size, from the trace streamed once.
pub fn mrc(input: &TraceInput, cfg: &MrcConfig, stop: &AtomicBool) -> Result<Outcome, SessionError> {
    let format = trace_format(input)?;
    let filter = if cfg.reads_only { OpFilter::ReadsOnly } else { OpFilter::ReadsAndWrites };
    let interrupted = |pass: Pass| {
        let result = CacheResult { action: "mrc".into(), trace: Some(pass.summary), ..CacheResult::default() };
        Outcome { result, cut: pass.cut }
    };
    let (pass, result) = if let Some(base) = cfg.qsan {
        if cfg.sizes.is_empty() {
            return Err(SessionError::Usage(
                "--policy qsan needs --sizes (cache sizes to simulate, e.g. --sizes 1G,2G,4G,8G)".into(),
            ));
        }
        // One cache per size, all fed in the same read, the sizes dealt out over the cores.
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let mut groups: Vec<Sizes> = (0..threads.clamp(1, cfg.sizes.len())).map(|_| Sizes(Vec::new())).collect();
        let groups_n = groups.len();
        for (i, &size) in cfg.sizes.iter().enumerate() {
            let mut c = base;
            c.capacity_bytes = size;
            let q = QsanCache::new(c).map_err(|e| SessionError::Usage(e.to_string()))?;
            if let Some(g) = groups.get_mut(i % groups_n) {
                g.0.push(q);
            }
        }
        let pass = stream::read(input, &format, stop, None, &mut groups)?;
        if pass.summary.requests == 0 && pass.cut.is_none() {
            return Err(no_requests(input, &pass.summary));
        }
        if pass.cut == Some(Cut::Interrupted) {
            return Ok(interrupted(pass));
        }
        let mut caches: Vec<std::vec::IntoIter<QsanCache>> = groups.into_iter().map(|g| g.0.into_iter()).collect();
        let mut points = Vec::with_capacity(cfg.sizes.len());
        for (i, &size) in cfg.sizes.iter().enumerate() {
            if let Some(q) = caches.get_mut(i % groups_n).and_then(Iterator::next) {
                points.push(MrcPoint { cache_bytes: size, miss_ratio: 1.0 - q.stats().read_hit_ratio() });
            }
        }
        let rec = recommend_points(&points);
        let result = MrcResult {
            method: "simulation".into(),
            policy: "qsan".into(),
            unit_bytes: base.block_bytes,
            sampling_rate: None,
            points,
            recommended: rec,
        };
        (pass, result)
    } else {
        let u = cfg.unit_bytes;
        let rate = cfg.shards_rate.unwrap_or(0.01);
        let mut curve = Curve {
            unit: u,
            limit: AUTO_SHARDS_REFS as u64,
            exact: cfg.shards_rate.is_none().then(|| Mattson::new(u, filter)),
            sampled: Some(
                Shards::new(u, filter, &ShardsConfig::fixed_rate(rate))
                    .map_err(|e| SessionError::Usage(e.to_string()))?,
            ),
            refs: 0,
        };
        let pass = stream::read(input, &format, stop, None, std::slice::from_mut(&mut curve))?;
        if pass.summary.requests == 0 && pass.cut.is_none() {
            return Err(no_requests(input, &pass.summary));
        }
        if pass.cut == Some(Cut::Interrupted) {
            return Ok(interrupted(pass));
        }
        let (curve, rate) = curve.finish(Some(rate));
        let mut points: Vec<MrcPoint> = if cfg.sizes.is_empty() {
            curve.points.iter().map(|&(b, m)| MrcPoint { cache_bytes: b * u, miss_ratio: m }).collect()
        } else {
            cfg.sizes.iter().map(|&s| MrcPoint { cache_bytes: s, miss_ratio: curve.miss_ratio_at(s / u) }).collect()
        };
        thin(&mut points, 400);
        let result = MrcResult {
            method: if rate.is_some() { "shards" } else { "mattson" }.into(),
            policy: "lru".into(),
            unit_bytes: u,
            sampling_rate: rate,
            points,
            recommended: mrc::recommend(&curve).map(|(b, m)| MrcPoint { cache_bytes: b * u, miss_ratio: m }),
        };
        (pass, result)
    };
    let result =
        CacheResult { action: "mrc".into(), trace: Some(pass.summary), mrc: Some(result), ..CacheResult::default() };
    Ok(Outcome { result, cut: pass.cut })
}

/// Keep at most `max` points of a step curve, evenly on a log-size axis (first and last kept).
fn thin(points: &mut Vec<MrcPoint>, max: usize) {
    if points.len() <= max || max < 2 {
        return;
    }
    let lo = (points[0].cache_bytes.max(1) as f64).ln();
    let hi = (points[points.len() - 1].cache_bytes.max(1) as f64).ln();
    let mut out: Vec<MrcPoint> = Vec::with_capacity(max);
    let mut next = lo;
    let step = (hi - lo) / (max - 1) as f64;
    let last = points.len() - 1;
    for (i, p) in points.iter().enumerate() {
        let x = (p.cache_bytes.max(1) as f64).ln();
        if i == 0 || i == last || x >= next {
            out.push(*p);
            next = x + step;
        }
    }
    *points = out;
}

/// The same rule as [`mrc::recommend`] on an explicit list of sizes: the smallest size after
/// which doubling the cache lowers the miss ratio by less than 2 percentage points.
fn recommend_points(points: &[MrcPoint]) -> Option<MrcPoint> {
    let at =
        |size: u64| points.iter().filter(|p| p.cache_bytes <= size).max_by_key(|p| p.cache_bytes).map(|p| p.miss_ratio);
    points.iter().find(|p| at(p.cache_bytes.saturating_mul(2)).is_some_and(|m| p.miss_ratio - m < 0.02)).copied()
}

/// `cache warmup`: T = C·P / (I·S·D).
pub fn warmup(capacity_bytes: u64, threshold: u32, hdd_iops: f64, io_size_bytes: u64, hdds: u32) -> CacheResult {
    let seconds = crate::warmup_estimate(capacity_bytes, threshold, hdd_iops, io_size_bytes, hdds);
    CacheResult {
        action: "warmup".into(),
        warmup_estimate: Some(WarmupEstimate { capacity_bytes, threshold, hdd_iops, io_size_bytes, hdds, seconds }),
        ..CacheResult::default()
    }
}

fn file_error(e: files::FileError) -> SessionError {
    match e {
        files::FileError::Usage(m) => SessionError::Usage(m),
        files::FileError::Runtime(m) => SessionError::Runtime(m),
    }
}

/// `cache synth`: write a synthetic trace (binary format, or CSV for `.csv` outputs) to a
/// checked output ([`files::output::plan`]); nothing is left at the path unless it completes.
pub fn synth(spec: &trace::SynthSpec, output: &OutputFile, stop: &AtomicBool) -> Result<Outcome, SessionError> {
    let iter = spec.iter()?;
    let path = output.path();
    let csv = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut s = TraceSummary {
        path: path.display().to_string(),
        format: if csv { "csv" } else { "binary" }.into(),
        devices: vec!["synth".into()],
        ..TraceSummary::default()
    };
    let mut last = 0u64;
    let mut file = output.create().map_err(file_error)?;
    let io = |e: std::io::Error| {
        let full = if e.raw_os_error() == Some(28) { " (the file system is full)" } else { "" };
        SessionError::Runtime(format!("cannot write {}: {e}{full}; nothing was written there", path.display()))
    };
    let mut stopped = false;
    if csv {
        use std::io::Write;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut file);
        writeln!(w, "time_us,op,offset,size").map_err(io)?;
        for r in iter {
            if s.requests.is_multiple_of(1 << 16) && stop.load(Ordering::Relaxed) {
                stopped = true;
                break;
            }
            let op = if r.op == Op::Read { 'R' } else { 'W' };
            writeln!(w, "{},{op},{},{}", r.t_ns / 1000, r.offset, r.len).map_err(io)?;
            stream::count(&mut s, &r);
            last = last.max(r.t_ns);
        }
        w.flush().map_err(io)?;
    } else {
        let mut w = trace::BinaryWriter::buffered(&mut file, path)?;
        w.define_device("synth")?;
        for r in iter {
            if s.requests.is_multiple_of(1 << 16) && stop.load(Ordering::Relaxed) {
                stopped = true;
                break;
            }
            w.push(r)?;
            stream::count(&mut s, &r);
            last = last.max(r.t_ns);
        }
        w.finish()?;
    }
    s.span_s = last as f64 / 1e9;
    if stopped {
        // Dropping the unfinished file removes it: an interrupted synth leaves nothing behind.
        drop(file);
        return Ok(Outcome {
            result: CacheResult { action: "synth".into(), trace: Some(s), ..CacheResult::default() },
            cut: Some(Cut::Interrupted),
        });
    }
    file.commit().map_err(file_error)?;
    Ok(Outcome { result: CacheResult { action: "synth".into(), trace: Some(s), ..CacheResult::default() }, cut: None })
}

/// `cache convert`: any format to the binary format, written to a checked output. Only a
/// complete conversion is kept: an interrupted one, or one whose input is cut short, leaves
/// nothing at the output path and reports what it had read.
pub fn convert(input: &TraceInput, output: &OutputFile, stop: &AtomicBool) -> Result<Outcome, SessionError> {
    let format = trace_format(input)?;
    if let (Ok(a), Ok(b)) = (input.path.canonicalize(), output.destination().canonicalize()) {
        if a == b {
            return Err(SessionError::Usage(format!(
                "the output {} is the input trace; choose another output file",
                output.path().display()
            )));
        }
    }
    let file = output.create().map_err(file_error)?;
    let mut w = trace::BinaryWriter::buffered(file, output.path())?;
    let (st, end) = trace::convert(&input.path, &format, &input.opts, &mut w, stop)
        .map_err(|e| trace::from_the_start(&input.path, e))?;
    // Only a complete conversion is committed; dropping the writer removes the temporary file.
    let cut = match end {
        trace::ConvertEnd::Complete => {
            let file = w.finish()?.into_inner().map_err(|e| {
                SessionError::Runtime(format!("cannot write {}: {}", output.path().display(), e.error()))
            })?;
            file.commit().map_err(file_error)?;
            None
        }
        trace::ConvertEnd::Stopped => Some(Cut::Interrupted),
        trace::ConvertEnd::Cut(e) => Some(Cut::Trace(format!(
            "{} is cut short after {} requests: {e}; nothing was written to {}",
            input.path.display(),
            st.requests,
            output.path().display()
        ))),
    };
    let result = CacheResult {
        action: "convert".into(),
        trace: Some(TraceSummary {
            path: output.path().display().to_string(),
            format: "binary".into(),
            requests: st.requests,
            reads: st.reads,
            writes: st.writes,
            other: st.other,
            read_bytes: st.read_bytes,
            write_bytes: st.write_bytes,
            span_s: st.duration_ns as f64 / 1e9,
            skipped_lines: st.skipped,
            ..TraceSummary::default()
        }),
        ..CacheResult::default()
    };
    Ok(Outcome { result, cut })
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
