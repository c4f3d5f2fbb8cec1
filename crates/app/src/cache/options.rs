//! The `cache` commands' options → typed settings, each error attributed to its option.

use crate::trace_options::TraceOptions;
use cachesim::session::{MrcConfig, SimulateConfig};
use spec::units::{self, TimeUnit};
use spec::SpecError;
use std::path::PathBuf;

/// `cache simulate`: the values of its options (sizes, durations and counts as typed).
#[derive(Debug, Clone)]
pub struct SimulateOptions {
    pub input: TraceOptions,
    pub preset: String,
    pub cache_size: String,
    pub block: Option<String>,
    pub sub_block: Option<String>,
    pub por: Option<u32>,
    pub pow: Option<u32>,
    pub mode: String,
    pub seq_cutoff: Option<String>,
    pub policy: String,
    pub unit: String,
    pub counter_limit: Option<String>,
    pub interval: Option<String>,
    pub ssd_size: Option<String>,
    pub hdd_iops: String,
    pub hdd_latency: String,
    pub hdds: u32,
    pub raid_penalty: f64,
    pub ssd_iops: String,
    pub ssd_latency: String,
    pub ssds: u32,
}

/// `cache mrc`.
#[derive(Debug, Clone)]
pub struct MrcOptions {
    pub input: TraceOptions,
    pub unit: String,
    pub sizes: Option<String>,
    pub shards: Option<String>,
    pub reads_only: bool,
    pub policy: String,
    pub preset: String,
}

/// `cache warmup`.
#[derive(Debug, Clone)]
pub struct WarmupOptions {
    pub capacity: String,
    pub threshold: u32,
    pub hdd_iops: String,
    pub io_size: String,
    pub hdds: u32,
}

/// `cache synth`.
#[derive(Debug, Clone)]
pub struct SynthOptions {
    pub dist: String,
    pub blocks: String,
    pub requests: String,
    pub block_size: String,
    pub read_pct: String,
    pub iops: String,
    pub contiguous: bool,
    pub seed: u64,
    pub output: PathBuf,
    pub force: bool,
}

/// `cache convert`.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    pub input: TraceOptions,
    pub output: PathBuf,
    pub force: bool,
}

/// One `cache` command's options.
#[derive(Debug, Clone)]
pub enum Options {
    Simulate(Box<SimulateOptions>),
    Mrc(MrcOptions),
    Warmup(WarmupOptions),
    Synth(SynthOptions),
    Convert(ConvertOptions),
}

/// The closed-form warm-up estimate's inputs, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Warmup {
    pub capacity_bytes: u64,
    pub threshold: u32,
    pub hdd_iops: f64,
    pub io_size_bytes: u64,
    pub hdds: u32,
}

/// A cache-configuration error, attributed to the option that sets the offending value.
fn config_error(e: cachesim::ConfigError) -> SpecError {
    use cachesim::ConfigError as E;
    let option = match &e {
        E::Zero { what } | E::BadSize { what, .. } | E::OutOfRange { what, .. } => match *what {
            w if w.starts_with("sub_block") => "--sub-block",
            w if w.starts_with("block") => "--block",
            w if w.contains("unit") => "--unit",
            w if w.contains("seq") => "--seq-cutoff",
            _ => "--cache-size",
        },
        E::SubBlockNotDivisor { .. } | E::TooManySubBlocks { .. } => "--sub-block",
        E::UnknownName { what, .. } if *what == "mode" => "--mode",
        E::UnknownName { .. } => "--preset",
        _ => "--cache-size",
    };
    SpecError::value(option, e.to_string())
}

fn size_opt(option: &str, v: &Option<String>) -> Result<Option<u64>, SpecError> {
    v.as_ref().map(|s| units::parse_size(option, s)).transpose()
}

fn float_count(option: &str, s: &str) -> Result<f64, SpecError> {
    let v: f64 = s.trim().parse().map_err(|_| SpecError::value(option, format!("{s:?} is not a number")))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(SpecError::value(option, format!("{s} must be a number above 0")));
    }
    Ok(v)
}

fn ns_of(option: &str, s: &str) -> Result<f64, SpecError> {
    Ok(units::parse_duration(option, s, TimeUnit::Millis)?.as_nanos() as f64)
}

fn preset(s: &str) -> Result<cachesim::Preset, SpecError> {
    s.parse().map_err(|e: cachesim::ConfigError| SpecError::value("--preset", e.to_string()))
}

pub(super) fn simulate(o: &SimulateOptions) -> Result<SimulateConfig, SpecError> {
    use cachesim::session::PolicyKind;
    let capacity = units::parse_size("--cache-size", &o.cache_size)?;
    let preset = preset(&o.preset)?;
    let mut cache = preset.config(capacity);
    let custom = o.block.is_some() || o.sub_block.is_some() || o.por.is_some() || o.pow.is_some();
    if let Some(b) = size_opt("--block", &o.block)? {
        cache.block_bytes = b;
    }
    if let Some(b) = size_opt("--sub-block", &o.sub_block)? {
        cache.sub_block_bytes = b;
    }
    if let Some(p) = o.por {
        cache.por = p;
    }
    if let Some(p) = o.pow {
        cache.pow = p;
    }
    cache.mode = o.mode.parse().map_err(|e: cachesim::ConfigError| SpecError::value("--mode", e.to_string()))?;
    cache.seq_cutoff = size_opt("--seq-cutoff", &o.seq_cutoff)?;
    cache.validate().map_err(config_error)?;
    let policies = PolicyKind::parse_list(&o.policy).map_err(|m| SpecError::value("--policy", m))?;
    let unit = units::parse_size("--unit", &o.unit)?;
    if unit == 0 {
        return Err(SpecError::value("--unit", "must be at least 1 byte"));
    }
    let interval_ns = match &o.interval {
        Some(s) => {
            let d = units::parse_duration("--interval", s, TimeUnit::Seconds)?;
            if d.is_zero() {
                return Err(SpecError::value("--interval", "must be longer than 0"));
            }
            Some(d.as_nanos().min(u128::from(u64::MAX)) as u64)
        }
        None => None,
    };
    if o.hdds == 0 {
        return Err(SpecError::value("--hdds", "must be at least 1"));
    }
    if o.ssds == 0 {
        return Err(SpecError::value("--ssds", "must be at least 1"));
    }
    if !(o.raid_penalty.is_finite() && o.raid_penalty >= 1.0) {
        return Err(SpecError::value("--raid-penalty", "must be 1 or more (RAID10 2, RAID5 4, RAID6 6)"));
    }
    let profile = cachesim::DeviceProfile {
        hdd_iops: float_count("--hdd-iops", &o.hdd_iops)?,
        hdd_latency_ns: ns_of("--hdd-latency", &o.hdd_latency)?,
        hdds: o.hdds,
        raid_write_penalty: o.raid_penalty,
        ssd_iops: float_count("--ssd-iops", &o.ssd_iops)?,
        ssd_latency_ns: ns_of("--ssd-latency", &o.ssd_latency)?,
        ssds: o.ssds,
        ssd_write_penalty: 1.0,
    };
    Ok(SimulateConfig {
        preset: if custom { format!("{} (custom)", preset.name()) } else { preset.name().to_string() },
        cache,
        policies,
        unit_bytes: unit,
        interval_ns,
        ssd_bytes: size_opt("--ssd-size", &o.ssd_size)?,
        profile,
        counter_limit: match &o.counter_limit {
            Some(v) => {
                let n = units::parse_count("--counter-limit", v)?;
                if n == 0 || n > (1 << 32) {
                    return Err(SpecError::value("--counter-limit", "must be between 1 and 4294967296 blocks"));
                }
                Some(n as usize)
            }
            None => None,
        },
    })
}

pub(super) fn mrc(o: &MrcOptions) -> Result<MrcConfig, SpecError> {
    let unit = units::parse_size("--unit", &o.unit)?;
    if unit == 0 {
        return Err(SpecError::value("--unit", "must be at least 1 byte"));
    }
    let sizes = match &o.sizes {
        Some(list) => {
            let mut v = Vec::new();
            for s in list.split(',') {
                let b = units::parse_size("--sizes", s.trim())?;
                if b == 0 {
                    return Err(SpecError::value("--sizes", "sizes must be above 0"));
                }
                v.push(b);
            }
            v.sort_unstable();
            v.dedup();
            v
        }
        None => Vec::new(),
    };
    let shards_rate = match &o.shards {
        Some(s) => {
            let p = units::parse_percent("--shards", s)?;
            if p <= 0.0 {
                return Err(SpecError::value("--shards", "the sampling rate must be above 0%"));
            }
            Some(p / 100.0)
        }
        None => None,
    };
    let qsan = match o.policy.as_str() {
        "lru" => None,
        "qsan" => {
            let first = sizes.first().copied().unwrap_or(1 << 30);
            Some(preset(&o.preset)?.config(first))
        }
        other => return Err(SpecError::value("--policy", format!("unknown policy {other:?}; use lru or qsan"))),
    };
    Ok(MrcConfig { unit_bytes: unit, shards_rate, reads_only: o.reads_only, qsan, sizes })
}

pub(super) fn warmup(o: &WarmupOptions) -> Result<Warmup, SpecError> {
    let capacity_bytes = units::parse_size("--capacity", &o.capacity)?;
    if capacity_bytes == 0 {
        return Err(SpecError::value("--capacity", "must be above 0"));
    }
    if o.threshold == 0 {
        return Err(SpecError::value("--threshold", "must be at least 1 (a threshold of 0 never fills)"));
    }
    let io_size_bytes = units::parse_size("--io-size", &o.io_size)?;
    if io_size_bytes == 0 {
        return Err(SpecError::value("--io-size", "must be above 0"));
    }
    if o.hdds == 0 {
        return Err(SpecError::value("--hdds", "must be at least 1"));
    }
    Ok(Warmup {
        capacity_bytes,
        threshold: o.threshold,
        hdd_iops: float_count("--hdd-iops", &o.hdd_iops)?,
        io_size_bytes,
        hdds: o.hdds,
    })
}

pub(super) fn synth(o: &SynthOptions) -> Result<trace::SynthSpec, SpecError> {
    let dist = trace::parse_dist(&o.dist).map_err(|e| SpecError::value("--dist", e.to_string()))?;
    let block_size = units::parse_size("--block-size", &o.block_size)?;
    let spec = trace::SynthSpec {
        dist,
        blocks: units::parse_count("--blocks", &o.blocks)?,
        block_size: u32::try_from(block_size).map_err(|_| SpecError::value("--block-size", "must be below 4 GiB"))?,
        requests: units::parse_count("--requests", &o.requests)?,
        read_pct: units::parse_percent("--read-pct", &o.read_pct)?.round() as u8,
        iops: float_count("--iops", &o.iops)?,
        seed: o.seed,
        scatter: !o.contiguous,
    };
    spec.check().map_err(|(param, e)| {
        let option = match param {
            trace::SynthParam::Dist => "--dist",
            trace::SynthParam::Blocks => "--blocks",
            trace::SynthParam::BlockSize => "--block-size",
            trace::SynthParam::ReadPct => "--read-pct",
            trace::SynthParam::Iops => "--iops",
        };
        SpecError::value(option, e.to_string())
    })?;
    Ok(spec)
}
