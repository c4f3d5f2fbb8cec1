//! The `cache` result: an SSD cache simulated in front of HDDs on an I/O trace — hits and
//! misses per policy, warm-up, predicted hybrid performance, miss-ratio curves.

use serde::{Deserialize, Serialize};

/// The whole `cache` answer (one of simulate / mrc / warmup / synth / convert).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CacheResult {
    /// `simulate`, `mrc`, `warmup`, `synth` or `convert`.
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<CacheSetup>,
    /// One entry per simulated policy (the QSAN model first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<PolicyResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mrc: Option<MrcResult>,
    /// Closed-form warm-up time T = C·P / (I·S·D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_estimate: Option<WarmupEstimate>,
}

/// What the trace held (after filters).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceSummary {
    pub path: String,
    pub format: String,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    /// Discards and flushes.
    pub other: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// From the first to the last request, seconds.
    pub span_s: f64,
    /// Distinct bytes touched (in cache-block units of the first policy), when known.
    #[serde(default)]
    pub footprint_bytes: u64,
    pub devices: Vec<String>,
    /// Malformed lines skipped (`--skip-bad`).
    #[serde(default)]
    pub skipped_lines: u64,
}

/// The cache under test.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CacheSetup {
    /// `database`, `filesystem`, `web` or `custom`.
    pub preset: String,
    pub capacity_bytes: u64,
    pub block_bytes: u64,
    pub sub_block_bytes: u64,
    pub por: u32,
    pub pow: u32,
    /// `write-through`, `write-back`, `write-around`, `read-only`.
    pub mode: String,
    pub seq_cutoff_bytes: Option<u64>,
    /// SSD size used for DWPD (defaults to the cache capacity).
    pub ssd_bytes: u64,
}

/// Counts by request.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestCounts {
    pub read_hits: u64,
    pub partial_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub write_misses: u64,
    pub bypasses: u64,
    pub discards: u64,
    pub flushes: u64,
}

/// Counts by byte.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ByteCounts {
    pub read_from_ssd: u64,
    pub read_from_hdd: u64,
    pub written_to_ssd: u64,
    pub written_to_hdd: u64,
    /// Part of `written_to_ssd` that filled the cache on a miss.
    pub fill: u64,
    /// Part of `written_to_hdd` that flushed dirty data of evicted blocks (write-back).
    pub dirty_evicted: u64,
}

/// Counts by cache block.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct BlockCounts {
    pub fills: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
}

/// One point of the warm-up series.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CachePoint {
    pub t_s: f64,
    /// Read hit ratio (by request) since the start.
    pub hit_ratio: f64,
    /// Read hit ratio within this interval.
    pub interval_hit_ratio: f64,
    /// Cache blocks in use / capacity.
    pub occupancy: f64,
}

/// Predicted hybrid (SSD cache + HDD) performance by operational laws.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PerfPrediction {
    /// Throughput limit of the bottleneck device, requests/s.
    pub max_iops: f64,
    /// `hdd` or `ssd`.
    pub bottleneck: String,
    /// Mean latency at low load, ns.
    pub mean_latency_ns: f64,
    /// The same trace on the HDDs alone.
    pub hdd_only_iops: f64,
    pub hdd_only_latency_ns: f64,
    /// max_iops / hdd_only_iops − 1, percent.
    pub gain_pct: f64,
}

/// One policy's simulation.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PolicyResult {
    /// `qsan` (the modelled controller cache), `lru`, `nhit`, `s3fifo`, `opt`.
    pub name: String,
    pub requests: RequestCounts,
    pub bytes: ByteCounts,
    pub blocks: BlockCounts,
    pub hdd_ops: u64,
    pub ssd_ops: u64,
    /// Read hits / reads (partial hits count as misses here).
    pub read_hit_ratio: f64,
    /// Bytes read from SSD / bytes read.
    pub read_byte_hit_ratio: f64,
    pub capacity_blocks: u64,
    pub occupied_blocks: u64,
    /// SSD bytes written per day / SSD size, over the trace span.
    pub dwpd: Option<f64>,
    /// Trace time until the interval hit ratio first reaches 90 % of its final value.
    pub warmup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<CachePoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf: Option<PerfPrediction>,
    /// Simulation time — the CPU time of the policy's own thread — and speed (requests per
    /// second).
    pub sim_seconds: f64,
    pub sim_requests_per_s: f64,
}

/// A miss-ratio curve over cache sizes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MrcResult {
    /// `mattson` (exact LRU), `shards` (sampled LRU) or `simulation` (one run per size).
    pub method: String,
    pub policy: String,
    pub unit_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_rate: Option<f64>,
    pub points: Vec<MrcPoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommended: Option<MrcPoint>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MrcPoint {
    pub cache_bytes: u64,
    pub miss_ratio: f64,
}

/// Inputs and answer of T = C·P / (I·S·D) (binary units).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct WarmupEstimate {
    pub capacity_bytes: u64,
    pub threshold: u32,
    pub hdd_iops: f64,
    pub io_size_bytes: u64,
    pub hdds: u32,
    pub seconds: f64,
}
