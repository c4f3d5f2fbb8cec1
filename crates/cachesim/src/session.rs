//! Whole `cache` commands: read a trace, run the policies, build the result document
//! (`stats::CacheResult`). No command-line parsing here; the binary hands in typed settings.

use std::path::{Path, PathBuf};
use std::time::Instant;

use stats::{
    BlockCounts, ByteCounts, CachePoint, CacheResult, CacheSetup, MrcPoint, MrcResult, PerfPrediction, PolicyResult,
    RequestCounts, TraceSummary, WarmupEstimate,
};
use trace::{Op, ReadOptions, Request, TraceFormat};

use crate::mrc::{self, OpFilter, ShardsConfig};
use crate::{CacheConfig, DeviceProfile, Lru, Nhit, Opt, Policy, QsanCache, S3Fifo, Stats};

/// Errors of a `cache` command: bad input (exit 2) or a runtime fault reading files (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Runtime(String),
}

impl From<trace::TraceError> for SessionError {
    fn from(e: trace::TraceError) -> Self {
        match e {
            trace::TraceError::Io { .. } => SessionError::Runtime(e.to_string()),
            other => SessionError::Usage(other.to_string()),
        }
    }
}

impl From<crate::ConfigError> for SessionError {
    fn from(e: crate::ConfigError) -> Self {
        SessionError::Usage(e.to_string())
    }
}

/// Which trace and how to read it.
#[derive(Debug, Clone)]
pub struct TraceInput {
    pub path: PathBuf,
    /// `None`: detect from the file.
    pub format: Option<TraceFormat>,
    pub opts: ReadOptions,
}

/// A loaded trace.
pub struct Loaded {
    pub requests: Vec<Request>,
    pub summary: TraceSummary,
}

/// Read the whole trace into memory (policies such as OPT need it twice, and every policy
/// replays the same requests).
pub fn load(input: &TraceInput) -> Result<Loaded, SessionError> {
    if !input.path.exists() {
        return Err(SessionError::Usage(format!("trace file {} does not exist", input.path.display())));
    }
    let format = match &input.format {
        Some(f) => f.clone(),
        None => trace::detect_file(&input.path)?.ok_or_else(|| {
            SessionError::Usage(format!(
                "cannot tell the format of {}; give --format blkparse|fio|msr|alibaba|tencent|csv:MAPPING|binary",
                input.path.display()
            ))
        })?,
    };
    let mut reader = trace::open(&input.path, &format, &input.opts)?;
    let mut requests = Vec::new();
    for r in reader.by_ref() {
        requests.push(r?);
    }
    let mut s = TraceSummary {
        path: input.path.display().to_string(),
        format: format_name(&format),
        devices: reader.devices().to_vec(),
        skipped_lines: reader.skipped(),
        ..TraceSummary::default()
    };
    for r in &requests {
        s.requests += 1;
        match r.op {
            Op::Read => {
                s.reads += 1;
                s.read_bytes += u64::from(r.len);
            }
            Op::Write => {
                s.writes += 1;
                s.write_bytes += u64::from(r.len);
            }
            Op::Discard | Op::Flush => s.other += 1,
        }
    }
    let first = requests.iter().map(|r| r.t_ns).min().unwrap_or(0);
    let last = requests.iter().map(|r| r.t_ns).max().unwrap_or(0);
    s.span_s = (last - first) as f64 / 1e9;
    if requests.is_empty() {
        return Err(SessionError::Usage(format!(
            "{} holds no requests{}; check --format, --device and the time window",
            input.path.display(),
            if s.skipped_lines > 0 { format!(" ({} malformed lines skipped)", s.skipped_lines) } else { String::new() }
        )));
    }
    Ok(Loaded { requests, summary: s })
}

fn format_name(f: &TraceFormat) -> String {
    match f {
        TraceFormat::Blkparse { action } => format!("blkparse:{action}"),
        TraceFormat::FioLog => "fio".into(),
        TraceFormat::Msr => "msr".into(),
        TraceFormat::Alibaba => "alibaba".into(),
        TraceFormat::Tencent => "tencent".into(),
        TraceFormat::Csv(_) => "csv".into(),
        TraceFormat::Binary => "binary".into(),
    }
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

/// `cache simulate`: every policy over the same trace.
pub fn simulate(input: &TraceInput, cfg: &SimulateConfig) -> Result<CacheResult, SessionError> {
    cfg.cache.validate()?;
    let loaded = load(input)?;
    let reqs = &loaded.requests;
    let ssd_bytes = cfg.ssd_bytes.unwrap_or(cfg.cache.capacity_bytes);
    let mut out = CacheResult {
        action: "simulate".into(),
        trace: Some(loaded.summary.clone()),
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
    for &k in &cfg.policies {
        let t0 = Instant::now();
        let mut p: Box<dyn Policy> = match k {
            PolicyKind::Qsan => match cfg.counter_limit {
                Some(n) => Box::new(QsanCache::with_counter_limit(cfg.cache, n)?),
                None => Box::new(QsanCache::new(cfg.cache)?),
            },
            PolicyKind::Lru => Box::new(Lru::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
            PolicyKind::Nhit => Box::new(Nhit::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
            PolicyKind::S3Fifo => Box::new(S3Fifo::new(cfg.cache.capacity_bytes, cfg.unit_bytes)?),
            PolicyKind::Opt => Box::new(Opt::new(reqs, cfg.cache.capacity_bytes, cfg.unit_bytes)?),
        };
        let series = crate::simulate(p.as_mut(), reqs, cfg.interval_ns);
        let secs = t0.elapsed().as_secs_f64();
        let mut r = policy_result(p.name(), p.stats(), &series, ssd_bytes, &cfg.profile);
        r.sim_seconds = secs;
        r.sim_requests_per_s = if secs > 0.0 { reqs.len() as f64 / secs } else { 0.0 };
        out.policies.push(r);
    }
    if let Some(t) = out.trace.as_mut() {
        let unit = cfg.cache.block_bytes.max(1);
        let mut keys: Vec<u64> = reqs.iter().flat_map(|r| mrc::keys(r, unit)).collect();
        keys.sort_unstable();
        keys.dedup();
        t.footprint_bytes = keys.len() as u64 * unit;
    }
    Ok(out)
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

/// `cache mrc`: a miss-ratio curve and the recommended size.
pub fn mrc(input: &TraceInput, cfg: &MrcConfig) -> Result<CacheResult, SessionError> {
    let loaded = load(input)?;
    let reqs = &loaded.requests;
    let filter = if cfg.reads_only { OpFilter::ReadsOnly } else { OpFilter::ReadsAndWrites };
    let result = if let Some(base) = cfg.qsan {
        if cfg.sizes.is_empty() {
            return Err(SessionError::Usage(
                "--policy qsan needs --sizes (cache sizes to simulate, e.g. --sizes 1G,2G,4G,8G)".into(),
            ));
        }
        let runs = mrc::sweep(
            &cfg.sizes,
            |size, rs: &[Request]| -> Result<f64, String> {
                let mut c = base;
                c.capacity_bytes = size;
                let mut q = QsanCache::new(c).map_err(|e| e.to_string())?;
                for r in rs {
                    q.access(r);
                }
                Ok(1.0 - q.stats().read_hit_ratio())
            },
            reqs,
        );
        let mut points = Vec::new();
        for (size, r) in runs {
            let miss = r.map_err(SessionError::Usage)?;
            points.push(MrcPoint { cache_bytes: size, miss_ratio: miss });
        }
        let rec = recommend_points(&points);
        MrcResult {
            method: "simulation".into(),
            policy: "qsan".into(),
            unit_bytes: base.block_bytes,
            sampling_rate: None,
            points,
            recommended: rec,
        }
    } else {
        let refs: usize = reqs.iter().map(|r| mrc::keys(r, cfg.unit_bytes).count()).sum();
        let rate = cfg.shards_rate.or((refs > AUTO_SHARDS_REFS).then_some(0.01));
        let curve = match rate {
            Some(r) => mrc::shards(reqs, cfg.unit_bytes, filter, &ShardsConfig::fixed_rate(r))
                .map_err(|e| SessionError::Usage(e.to_string()))?,
            None => mrc::mattson(reqs, cfg.unit_bytes, filter),
        };
        let u = cfg.unit_bytes;
        let mut points: Vec<MrcPoint> = if cfg.sizes.is_empty() {
            curve.points.iter().map(|&(b, m)| MrcPoint { cache_bytes: b * u, miss_ratio: m }).collect()
        } else {
            cfg.sizes.iter().map(|&s| MrcPoint { cache_bytes: s, miss_ratio: curve.miss_ratio_at(s / u) }).collect()
        };
        thin(&mut points, 400);
        MrcResult {
            method: if rate.is_some() { "shards" } else { "mattson" }.into(),
            policy: "lru".into(),
            unit_bytes: u,
            sampling_rate: rate,
            points,
            recommended: mrc::recommend(&curve).map(|(b, m)| MrcPoint { cache_bytes: b * u, miss_ratio: m }),
        }
    };
    Ok(CacheResult { action: "mrc".into(), trace: Some(loaded.summary), mrc: Some(result), ..CacheResult::default() })
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

/// `cache synth`: write a synthetic trace (binary format, or CSV for `.csv` outputs).
pub fn synth(spec: &trace::SynthSpec, output: &Path) -> Result<CacheResult, SessionError> {
    let iter = spec.iter()?;
    let csv = output.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut s = TraceSummary {
        path: output.display().to_string(),
        format: if csv { "csv" } else { "binary" }.into(),
        devices: vec!["synth".into()],
        ..TraceSummary::default()
    };
    let mut last = 0u64;
    let mut add = |r: &Request, s: &mut TraceSummary| {
        s.requests += 1;
        if r.op == Op::Read {
            s.reads += 1;
            s.read_bytes += u64::from(r.len);
        } else {
            s.writes += 1;
            s.write_bytes += u64::from(r.len);
        }
        last = last.max(r.t_ns);
    };
    let res: Result<(), SessionError> = (|| {
        if csv {
            use std::io::Write;
            let f = std::fs::File::create(output)
                .map_err(|e| SessionError::Runtime(format!("cannot create {}: {e}", output.display())))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            let io = |e: std::io::Error| SessionError::Runtime(format!("cannot write {}: {e}", output.display()));
            writeln!(w, "time_us,op,offset,size").map_err(io)?;
            for r in iter {
                let op = if r.op == Op::Read { 'R' } else { 'W' };
                writeln!(w, "{},{op},{},{}", r.t_ns / 1000, r.offset, r.len).map_err(io)?;
                add(&r, &mut s);
            }
            w.flush().map_err(io)?;
        } else {
            let mut w = trace::BinaryWriter::create(output)?;
            w.define_device("synth")?;
            for r in iter {
                w.push(r)?;
                add(&r, &mut s);
            }
            w.finish()?;
        }
        Ok(())
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(output);
        return Err(e);
    }
    s.span_s = last as f64 / 1e9;
    Ok(CacheResult { action: "synth".into(), trace: Some(s), ..CacheResult::default() })
}

/// `cache convert`: any format to the binary format.
pub fn convert(input: &TraceInput, output: &Path) -> Result<CacheResult, SessionError> {
    if !input.path.exists() {
        return Err(SessionError::Usage(format!("trace file {} does not exist", input.path.display())));
    }
    let format = match &input.format {
        Some(f) => f.clone(),
        None => trace::detect_file(&input.path)?.ok_or_else(|| {
            SessionError::Usage(format!("cannot tell the format of {}; give --format", input.path.display()))
        })?,
    };
    let st = trace::convert(&input.path, &format, &input.opts, output)?;
    Ok(CacheResult {
        action: "convert".into(),
        trace: Some(TraceSummary {
            path: output.display().to_string(),
            format: "binary".into(),
            requests: st.requests,
            span_s: st.duration_ns as f64 / 1e9,
            skipped_lines: st.skipped,
            ..TraceSummary::default()
        }),
        ..CacheResult::default()
    })
}
