//! `diskmeter cache`: options → app::cache, then the results (simulate, mrc, warmup) or a
//! one-line summary of the trace written (synth, convert).

use super::common::{OutputArgs, TraceReadArgs};
use crate::output::{self, Outcome};
use crate::signals;
use app::cache;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Replay a trace through the SSD cache model (and comparison policies).
    Simulate(Box<SimulateArgs>),
    /// Miss-ratio curve over cache sizes and a recommended size.
    Mrc(Box<MrcArgs>),
    /// Closed-form warm-up time T = C·P / (I·S·D) (binary units).
    Warmup(Box<WarmupArgs>),
    /// Write a synthetic trace (uniform, zipf, hotset) in the binary format (or .csv).
    Synth(Box<SynthArgs>),
    /// Convert a text trace to the compact binary format (text parsing dominates replay time).
    Convert(Box<ConvertArgs>),
}

/// Which trace and how to read it.
#[derive(Debug, Args, Clone)]
pub struct TraceArgs {
    /// The trace file (.gz is decompressed on the fly).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    #[command(flatten)]
    pub read: TraceReadArgs,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Cache preset: database (1M/8K/PoR 2/PoW 0), filesystem (2M/16K/2/2), web (4M/64K/2/0).
    #[arg(long, default_value = app::cache::PRESET, value_name = "PRESET")]
    pub preset: String,
    /// SSD cache capacity.
    #[arg(long, value_name = "SIZE", required = true)]
    pub cache_size: String,
    /// Cache block size (overrides the preset).
    #[arg(long, value_name = "SIZE")]
    pub block: Option<String>,
    /// Sub-block size (overrides the preset).
    #[arg(long, value_name = "SIZE")]
    pub sub_block: Option<String>,
    /// Populate-on-read threshold (0 = never fill on reads).
    #[arg(long, value_name = "N")]
    pub por: Option<u32>,
    /// Populate-on-write threshold (0 = never fill on writes).
    #[arg(long, value_name = "N")]
    pub pow: Option<u32>,
    /// Write mode: wt (write-through), wb (write-back), wa (write-around), ro (read-only).
    #[arg(long, default_value = app::cache::MODE, value_name = "MODE")]
    pub mode: String,
    /// Bypass sequential streams longer than this.
    #[arg(long, value_name = "SIZE")]
    pub seq_cutoff: Option<String>,
    /// Policies: qsan (the model), lru, nhit, s3fifo, opt, or all; comma-separated.
    #[arg(long, default_value = app::cache::POLICY, value_name = "LIST")]
    pub policy: String,
    /// Cache unit of the comparison policies (lru, nhit, s3fifo, opt).
    #[arg(long, default_value = app::cache::UNIT, value_name = "SIZE")]
    pub unit: String,
    /// Bound the QSAN read/write counter table to N backing blocks (CLOCK replacement; memory is
    /// preallocated) [default: unbounded, one entry per block ever missed].
    #[arg(long, value_name = "N")]
    pub counter_limit: Option<String>,
    /// Interval of the hit-ratio series [default: 1/100 of the trace span].
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// SSD size for DWPD [default: the cache capacity].
    #[arg(long, value_name = "SIZE")]
    pub ssd_size: Option<String>,
    /// Random IOPS of one HDD (performance prediction).
    #[arg(long, default_value = app::cache::HDD_IOPS, value_name = "N")]
    pub hdd_iops: String,
    /// Mean latency of one HDD I/O.
    #[arg(long, default_value = app::cache::HDD_LATENCY, value_name = "DURATION")]
    pub hdd_latency: String,
    /// Number of HDDs.
    #[arg(long, default_value_t = app::cache::HDDS, value_name = "N")]
    pub hdds: u32,
    /// Back-end writes per host write on the HDDs (RAID10 2, RAID5 4, RAID6 6).
    #[arg(long, default_value_t = app::cache::RAID_PENALTY, value_name = "N")]
    pub raid_penalty: f64,
    /// Random IOPS of one SSD.
    #[arg(long, default_value = app::cache::SSD_IOPS, value_name = "N")]
    pub ssd_iops: String,
    /// Mean latency of one SSD I/O.
    #[arg(long, default_value = app::cache::SSD_LATENCY, value_name = "DURATION")]
    pub ssd_latency: String,
    /// Number of SSDs.
    #[arg(long, default_value_t = app::cache::SSDS, value_name = "N")]
    pub ssds: u32,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct MrcArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Cache unit (block) size of the curve.
    #[arg(long, default_value = app::cache::UNIT, value_name = "SIZE")]
    pub unit: String,
    /// Cache sizes to report, comma-separated (e.g. 1G,2G,4G) [default: the whole curve].
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    #[arg(long, value_name = "PCT", help = shards_help())]
    pub shards: Option<String>,
    /// Count only reads (a read cache) instead of reads and writes.
    #[arg(long)]
    pub reads_only: bool,
    /// lru (exact stack distances) or qsan (one simulation per size of --sizes, in parallel).
    #[arg(long, default_value = app::cache::MRC_POLICY, value_name = "POLICY")]
    pub policy: String,
    /// Preset for --policy qsan.
    #[arg(long, default_value = app::cache::PRESET, value_name = "PRESET")]
    pub preset: String,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct WarmupArgs {
    /// Total SSD cache capacity C.
    #[arg(long, value_name = "SIZE")]
    pub capacity: String,
    /// Populate threshold P.
    #[arg(long, value_name = "N")]
    pub threshold: u32,
    /// Random IOPS I of one HDD.
    #[arg(long, value_name = "N")]
    pub hdd_iops: String,
    /// I/O size S.
    #[arg(long, value_name = "SIZE")]
    pub io_size: String,
    /// Number of HDDs D.
    #[arg(long, value_name = "N")]
    pub hdds: u32,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct SynthArgs {
    /// uniform, zipf:THETA or hotset:OPS%/AREA% (e.g. hotset:90/10).
    #[arg(long, value_name = "DIST")]
    pub dist: String,
    /// Distinct blocks (the working area is blocks × block size).
    #[arg(long, value_name = "N")]
    pub blocks: String,
    /// Requests to write.
    #[arg(long, value_name = "N")]
    pub requests: String,
    /// Request (and block) size.
    #[arg(long, default_value = app::cache::SYNTH_BLOCK_SIZE, value_name = "SIZE")]
    pub block_size: String,
    /// Share of reads, percent.
    #[arg(long, default_value = app::cache::SYNTH_READ_PCT, value_name = "PCT")]
    pub read_pct: String,
    /// Request rate for the timestamps.
    #[arg(long, default_value = app::cache::SYNTH_IOPS, value_name = "N")]
    pub iops: String,
    /// Keep zipf's hottest blocks contiguous at the start (default: scattered).
    #[arg(long)]
    pub contiguous: bool,
    /// Random seed.
    #[arg(long, default_value_t = app::cache::SYNTH_SEED, value_name = "N")]
    pub seed: u64,
    /// Output trace: binary format, or CSV for a .csv name.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Output binary trace.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

impl TraceArgs {
    fn options(&self) -> cache::TraceOptions {
        self.read.options(&self.trace)
    }
}

impl CacheAction {
    fn options(&self) -> cache::Options {
        match self {
            CacheAction::Simulate(s) => cache::Options::Simulate(Box::new(cache::SimulateOptions {
                input: s.input.options(),
                preset: s.preset.clone(),
                cache_size: s.cache_size.clone(),
                block: s.block.clone(),
                sub_block: s.sub_block.clone(),
                por: s.por,
                pow: s.pow,
                mode: s.mode.clone(),
                seq_cutoff: s.seq_cutoff.clone(),
                policy: s.policy.clone(),
                unit: s.unit.clone(),
                counter_limit: s.counter_limit.clone(),
                interval: s.interval.clone(),
                ssd_size: s.ssd_size.clone(),
                hdd_iops: s.hdd_iops.clone(),
                hdd_latency: s.hdd_latency.clone(),
                hdds: s.hdds,
                raid_penalty: s.raid_penalty,
                ssd_iops: s.ssd_iops.clone(),
                ssd_latency: s.ssd_latency.clone(),
                ssds: s.ssds,
            })),
            CacheAction::Mrc(m) => cache::Options::Mrc(cache::MrcOptions {
                input: m.input.options(),
                unit: m.unit.clone(),
                sizes: m.sizes.clone(),
                shards: m.shards.clone(),
                reads_only: m.reads_only,
                policy: m.policy.clone(),
                preset: m.preset.clone(),
            }),
            CacheAction::Warmup(w) => cache::Options::Warmup(cache::WarmupOptions {
                capacity: w.capacity.clone(),
                threshold: w.threshold,
                hdd_iops: w.hdd_iops.clone(),
                io_size: w.io_size.clone(),
                hdds: w.hdds,
            }),
            CacheAction::Synth(y) => cache::Options::Synth(cache::SynthOptions {
                dist: y.dist.clone(),
                blocks: y.blocks.clone(),
                requests: y.requests.clone(),
                block_size: y.block_size.clone(),
                read_pct: y.read_pct.clone(),
                iops: y.iops.clone(),
                contiguous: y.contiguous,
                seed: y.seed,
                output: y.output.clone(),
                force: y.force,
            }),
            CacheAction::Convert(c) => cache::Options::Convert(cache::ConvertOptions {
                input: c.input.options(),
                output: c.output.clone(),
                force: c.force,
            }),
        }
    }
}

pub fn run(a: &CacheArgs) -> Outcome {
    let opts = a.action.options();
    // simulate, mrc and warmup give a result document (output files checked first); synth and
    // convert write a trace and print a summary of it.
    let (out, json) = match &a.action {
        CacheAction::Simulate(s) => (Some(&s.out), false),
        CacheAction::Mrc(m) => (Some(&m.out), false),
        CacheAction::Warmup(w) => (Some(&w.out), false),
        CacheAction::Synth(y) => (None, y.json),
        CacheAction::Convert(c) => (None, c.json),
    };
    if let Some(out) = out {
        return output::measure("cache", &out.into(), |stop, _| cache::run(&cache::Config::new(&opts)?, &stop));
    }
    let cfg = cache::Config::new(&opts)?;
    let stop = signals::install();
    output::trace_summary(cache::run(&cfg, &stop)?, json)
}

/// `mrc --shards`'s help, its threshold read from the constant that sets it.
fn shards_help() -> String {
    format!(
        "Sample with SHARDS at this rate (e.g. 1%) [default: exact unless > {} M references]",
        app::cache::AUTO_SHARDS_REFS / 1_000_000
    )
}
