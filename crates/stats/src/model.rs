//! The versioned result model: the JSON envelope every measuring command emits
//! (`docs/result-schema.md`). Field names are a contract — do not rename.

use serde::{Deserialize, Serialize};
use spec::JobSpec;

pub use crate::cache::*;
pub use crate::compare::*;
use crate::hist::LatHist;
use crate::lat::{CdfPoint, LatSummary};
pub use crate::sla::*;

/// Schema identifier written into (and required from) every result document.
pub const SCHEMA: &str = "diskmeter.result.v1";

/// Errors from reading a result document.
#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("result document is not valid JSON for {SCHEMA}: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "unsupported result schema {found:?}: this diskmeter reads {SCHEMA:?} \
         (written by a different diskmeter version?)"
    )]
    Schema { found: String },
    #[error("not a diskmeter result document: no \"schema\" field (expected {SCHEMA:?})")]
    NoSchema,
}

/// The whole result document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    pub schema: String,
    pub tool: ToolInfo,
    /// Subcommand that produced the document: `run`, `mark`, `sla`, `compare`, `surface`,
    /// `cache`.
    pub command: String,
    /// RFC 3339 UTC timestamp of the start, supplied by the caller.
    pub started_at: String,
    pub host: HostInfo,
    pub target: Option<TargetInfo>,
    pub results: Vec<JobResult>,
    pub warnings: Vec<Warning>,
    /// True when the run was interrupted or failed and `results` covers only part of it.
    pub partial: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// `sla` only: the search, its points, the best feasible point and the knee.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<SlaResult>,
    /// `compare` only: per-test statistics and verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareResult>,
    /// `cache` only: the simulated SSD cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheResult>,
    /// `surface` only: the surface scan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<crate::surface::SurfaceResult>,
    /// Several ranks or merged documents: per-rank figures, start skew, stonewall, timeline.
    /// `results` then holds the merged figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::cluster::ClusterResult>,
    /// `replay` only: the trace, its mapping and timing, per-pass figures and fidelity.
    /// `results` then holds one job per pass (reads and writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::replay::ReplayResult>,
    /// `profile` only: a trace's mix, sizes, sequentiality, hot set, arrivals and depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::ProfileResult>,
    /// `steady` only: purge, preconditioning, rounds, the steady-state window and the
    /// PTS table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<crate::steady::SteadyResult>,
    /// `--sustained` (`mark`, `run`): MB/s against bytes written, the cliff, recovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sustained: Option<crate::steady::SustainedResult>,
    /// `run --verify`: what was checked, and every failure with its diagnosis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::verify::VerifyResult>,
    /// Where the history database keeps this result, and how it compares with the last
    /// comparable run of the same device (absent with `--no-history`, or when it could not be
    /// recorded: the warning `history-not-recorded` then says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryNote>,
    /// The SMART figures that explain a trend, read from the target's disk after the run when
    /// smartctl can read them (a physical disk, smartctl installed, enough rights); absent
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smart: Option<SmartSnapshot>,
    /// Figures inside a warning's margin band ([`crate::margin`]): the warning is given only
    /// when the last comparable run in the history gave it (`held_by`); otherwise it is named
    /// here and not given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub borderline: Vec<crate::margin::Borderline>,
}

/// Margins ([`crate::margin`]): the judging of a figure near a warning's threshold.
impl ResultDoc {
    /// Judge `value` against `m`: the warning `message` is given beyond `on`, noted as
    /// borderline inside the band, left out short of `off`. Returns the zone.
    pub fn judge(&mut self, m: &crate::margin::Margin, value: f64, message: impl Into<String>) -> crate::margin::Zone {
        let z = m.zone(value);
        self.place(z, m, value, message);
        z
    }

    /// [`ResultDoc::judge`] for a zone already found (`m.zone(value)`, or [`crate::margin::Zone::Given`] for a
    /// finding that is no figure near a threshold).
    pub fn place(&mut self, z: crate::margin::Zone, m: &crate::margin::Margin, value: f64, message: impl Into<String>) {
        match z {
            crate::margin::Zone::Given => self.warn(m.code, message),
            crate::margin::Zone::Band => {
                let b = crate::margin::Borderline {
                    code: m.code.to_string(),
                    message: message.into(),
                    value,
                    on: m.on,
                    off: m.off,
                    held_by: None,
                };
                if !self.borderline.iter().any(|o| o.code == b.code && o.message == b.message) {
                    self.borderline.push(b);
                }
            }
            crate::margin::Zone::Clear => {}
        }
    }

    /// Hysteresis: every borderline figure whose warning the last comparable run (`previous`:
    /// its id in the history and the codes it gave) gave is held, given again with a note of why;
    /// the others stay borderline. Without a previous run nothing changes.
    pub fn hold(&mut self, previous: Option<(i64, &[String])>) {
        let Some((id, codes)) = previous else { return };
        for b in self.borderline.iter_mut() {
            if b.held_by.is_none() && codes.contains(&b.code) {
                b.held_by = Some(id);
                let w = Warning::new(
                    &b.code,
                    format!(
                        "{} [held: {} is inside this warning's margin band ({} to {}), and the last comparable run, \
                         #{id}, gave it]",
                        b.message,
                        crate::margin::short(b.value),
                        crate::margin::short(b.off),
                        crate::margin::short(b.on)
                    ),
                );
                if !self.warnings.iter().any(|o| o.code == w.code && o.message.starts_with(&b.message)) {
                    self.warnings.push(w);
                }
            }
        }
    }
}

/// A disk's SMART figures at the end of a run (`smart`): the ones a trend is explained by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmartSnapshot {
    /// The disk smartctl read (`/dev/nvme0n1`).
    pub device: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_used: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_c: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_written_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u64>,
}

/// This result in the history database (`history`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryNote {
    /// Its id there (`diskmeter history show ID`).
    pub id: i64,
    /// The last complete run of the same device with the same workload, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs: Option<VsLast>,
}

/// The change since the last comparable run, per job (card cell) and direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VsLast {
    pub id: i64,
    pub started_at: String,
    /// The figure compared (`mb_s`: per-pass MB/s).
    pub metric: String,
    /// The verdict threshold: a change whose 95 % interval lies within ±this is noise.
    pub threshold_pct: f64,
    pub cells: Vec<VsCell>,
}

/// One job's change in one direction (`pct` of the earlier run's figure; positive is faster).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VsCell {
    pub job: String,
    pub direction: String,
    pub pct: f64,
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    /// `faster`, `slower`, `within-noise` or `inconclusive`.
    pub verdict: TrendVerdict,
    /// What the verdict rests on (`interval`, `single-pass`, `undefined`) and the passes of
    /// each side, so that the line says "no interval" the way every surface says it.
    #[serde(default = "crate::verdict::Basis::legacy")]
    pub basis: crate::verdict::Basis,
    #[serde(default)]
    pub n_a: u32,
    #[serde(default)]
    pub n_b: u32,
}

impl VsCell {
    /// The change this cell states ([`crate::verdict::Change`]).
    pub fn change(&self) -> crate::verdict::Change {
        crate::verdict::Change {
            pct: self.pct,
            ci_low_pct: self.ci_low_pct,
            ci_high_pct: self.ci_high_pct,
            verdict: self.verdict,
            basis: self.basis,
            n_a: self.n_a,
            n_b: self.n_b,
        }
    }
}

/// What a change between two results means for the user: the one verdict (`crate::verdict`).
pub use crate::verdict::Verdict as TrendVerdict;

impl ResultDoc {
    /// An empty document for `command` with this tool's name and version.
    pub fn new(command: impl Into<String>, started_at: impl Into<String>, host: HostInfo) -> Self {
        let warnings = match &host.wine {
            Some(v) => vec![Warning::new(
                crate::codes::WINE,
                format!(
                    "ran under Wine {v}, whose file I/O is synchronous and goes through the page cache: \
                     these figures are not those of a Windows disk (only a real Windows machine measures one)"
                ),
            )],
            None => Vec::new(),
        };
        Self {
            schema: SCHEMA.to_string(),
            tool: ToolInfo::default(),
            command: command.into(),
            started_at: started_at.into(),
            host,
            target: None,
            results: Vec::new(),
            warnings,
            partial: false,
            error: None,
            sla: None,
            compare: None,
            cache: None,
            surface: None,
            cluster: None,
            replay: None,
            profile: None,
            steady: None,
            sustained: None,
            verify: None,
            history: None,
            smart: None,
            borderline: Vec::new(),
        }
    }

    /// Parse a result document, refusing documents of another schema with a clear message.
    pub fn from_json(text: &str) -> Result<ResultDoc, StatsError> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        match value.get("schema") {
            Some(serde_json::Value::String(s)) if s == SCHEMA => {}
            Some(serde_json::Value::String(s)) => return Err(StatsError::Schema { found: s.clone() }),
            Some(other) => return Err(StatsError::Schema { found: other.to_string() }),
            None => return Err(StatsError::NoSchema),
        }
        Ok(serde_json::from_value(value)?)
    }

    /// Pretty JSON of the document (no trailing newline).
    pub fn to_json_pretty(&self) -> Result<String, StatsError> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// Add a warning unless one with the same code and message is already present.
    pub fn warn(&mut self, code: &str, message: impl Into<String>) {
        let w = Warning::new(code, message);
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// What the document holds, and so how it is rendered: the command section that is
    /// filled (`cache`, `surface`, `sla`, `compare`, in that order of precedence), else
    /// `mark` by the command name, else a plain job run. Every command fills at most one
    /// section; the order only decides for documents made by hand.
    pub fn kind(&self) -> DocKind {
        if self.cache.is_some() {
            DocKind::Cache
        } else if self.surface.is_some() {
            DocKind::Surface
        } else if self.command == "mark" {
            DocKind::Mark
        } else if self.sla.is_some() {
            DocKind::Sla
        } else if self.compare.is_some() {
            DocKind::Compare
        } else {
            DocKind::Run
        }
    }
}

/// The kind of a [`ResultDoc`] ([`ResultDoc::kind`]): which command's figures it holds.
/// `top` and `health` write documents of their own, not result documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// Jobs and their figures (`run`, and any document with no section it knows).
    Run,
    /// The CrystalDiskMark-style card (`mark`).
    Mark,
    /// Capacity under a latency bound (`sla`): the search, then the best point's jobs.
    Sla,
    /// Statistics and verdicts of a comparison (`compare`).
    Compare,
    /// A surface scan (`surface`).
    Surface,
    /// A simulated SSD cache (`cache`).
    Cache,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

impl Default for ToolInfo {
    fn default() -> Self {
        Self { name: "diskmeter".to_string(), version: env!("CARGO_PKG_VERSION").to_string() }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostInfo {
    /// The kernel's release (Linux); on Windows the OS's version ("Windows 10.0.19045").
    pub kernel: String,
    pub cpus: u32,
    pub memory_bytes: u64,
    pub cpu_model: Option<String>,
    pub hostname: Option<String>,
    /// The OS: `linux` or `windows` (absent in documents of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The OS's version: the kernel release on Linux, `10.0.19045` on Windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_version: Option<String>,
    /// Wine's version when the Windows build ran under Wine, whose file I/O is neither
    /// unbuffered nor asynchronous (every such result carries the warning `wine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wine: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    File,
    Block,
    Null,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Block => "block",
            Self::Null => "null",
        }
    }
}

/// What was measured. `Option`s serialize as `null` (keys are always present).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: String,
    pub kind: TargetKind,
    pub size_bytes: u64,
    pub device: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub logical_block: u32,
    pub physical_block: u32,
    pub filesystem: Option<String>,
    pub dio_mem_align: Option<u32>,
    pub dio_offset_align: Option<u32>,
    pub created_by_diskmeter: bool,
    /// The path is not valid UTF-8: `path` shows it with U+FFFD in place of the invalid bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub path_not_utf8: bool,
    pub device_cache_bytes: Option<u64>,
    /// The folder the user named as the target: `path` is the test file diskmeter made in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// Opened with writes through to the medium (`--write-through`: Windows
    /// FILE_FLAG_WRITE_THROUGH, Linux O_DSYNC); absent when not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write_through: bool,
    /// The whole disk under the target as it names itself (serial, WWN, firmware, link, size),
    /// where the OS tells: the history's device identity.
    #[serde(flatten)]
    pub disk: DiskIdentity,
    /// The state the target was in: mount options, the device stack, how full the file system
    /// was (the history keeps it beside each run).
    #[serde(flatten)]
    pub state: TargetState,
}

/// The state of a target's file system and device stack when it was measured; each field absent
/// where it does not apply or is unknown. Serialised into the target object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetState {
    /// The file system's mount options (mount and super block, as in /proc/self/mountinfo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// The block devices under the target, top first (`dm-0`, `nvme0n1p2`, `nvme0n1`): dm and md
    /// layers, partitions, the disk.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// The file system's size and its free bytes before the run (a file target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_free_bytes: Option<u64>,
}

/// The whole disk under a target, as it names itself; each field absent where unknown (a
/// virtual disk often has none). Serialised into the target object: `serial`, `wwn`,
/// `firmware`, `link`, `device_size_bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskIdentity {
    /// The device's one identity (`platform::identity`): the key the history, the device state,
    /// `health` and `doctor` all remember it by (`wwn:…`, `serial:…`, `loop:…`, `fs:…`, …).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "device_key")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// World Wide Name / WWID (`naa.…`, `eui.…`, `t10.…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wwn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// The link the disk is attached by, as the OS reports it ("8.0 GT/s PCIe x4").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The whole disk's size (a file target's `size_bytes` is the file's).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "device_size_bytes")]
    pub size_bytes: Option<u64>,
}

impl TargetInfo {
    /// A target with only path, kind and size known.
    pub fn new(path: impl Into<String>, kind: TargetKind, size_bytes: u64) -> Self {
        Self {
            path: path.into(),
            kind,
            size_bytes,
            device: None,
            model: None,
            rotational: None,
            scheduler: None,
            logical_block: 512,
            physical_block: 512,
            filesystem: None,
            dio_mem_align: None,
            dio_offset_align: None,
            created_by_diskmeter: false,
            path_not_utf8: false,
            device_cache_bytes: None,
            folder: None,
            write_through: false,
            disk: DiskIdentity::default(),
            state: TargetState::default(),
        }
    }
}

/// How per-pass figures were combined into the headline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregate {
    /// Best pass by MB/s, with the lowest mean latency over passes (CrystalDiskMark 9).
    Max,
    /// Arithmetic mean of every figure over passes (KDiskMark).
    Mean,
    /// One pass only.
    Single,
}

impl Aggregate {
    pub fn name(self) -> &'static str {
        match self {
            Self::Max => "max",
            Self::Mean => "mean",
            Self::Single => "single",
        }
    }
}

/// The result of one job (or one `mark` test).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    pub spec: JobSpec,
    pub read: Option<DirStats>,
    pub write: Option<DirStats>,
    #[serde(default)]
    pub series: Vec<SeriesPoint>,
    #[serde(default)]
    pub cpu: CpuUsage,
    #[serde(default)]
    pub fsyncs: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PassResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate: Option<Aggregate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// What the device under the target saw in the measured window (/proc/diskstats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_view: Option<crate::device::DeviceView>,
    /// When the measured window ran (`--histograms` and multi-host runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<crate::cluster::MeasuredWindow>,
    /// Lossless latency histograms (`--histograms` and multi-host runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<crate::cluster::Histograms>,
    /// Completed I/Os of the measured window by block size, smallest first, when the job's
    /// I/Os have more than one size (fio `bs=R,W`, `bssplit`, `bsrange`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_sizes: Vec<BsCount>,
    /// I/O errors the job counted and went on after (fio `continue_on_error`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors: u64,
    /// The first of those errors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<ErrorInfo>,
    /// fio's steady-state check (`steadystate`/`ss_dur`): whether and when it held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyStateCheck>,
    /// When the job's measured window began, seconds after its group started (set for jobs
    /// that start late: fio `startdelay`, `wait_for`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    /// fio log files the job wrote (`write_bw_log`, …), as paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_files: Vec<String>,
    /// What the job ran when no job spec says it: a replayed trace (`trace: 100 % reads,
    /// 4 KiB`). Reports show it in place of the spec's mode and block size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// io_uring handed the job's requests to its kernel worker threads (the target could not
    /// take them without blocking): how much, and where diskmeter let those threads run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Handoff>,
    /// The first interval ran well above the rest (warning `startup-burst`): per direction,
    /// both rates. The direction's headline IOPS and MB/s are then the rest's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_burst: Vec<StartupBurst>,
    /// The completions came in bursts at one steady period (a limiter's slices, such as
    /// blk-throttle's 100 ms): the headline IOPS and MB/s count whole bursts, from the start of
    /// the first to the start of the last, so that no window edge cuts one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_bursts: Option<WholeBursts>,
}

/// The measured window cut to whole bursts (see [`JobResult::whole_bursts`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WholeBursts {
    /// The bursts' median period, ms.
    pub period_ms: f64,
    /// Whole periods counted.
    pub bursts: u64,
    /// Leading bursts left out as larger than the rest (credit carried over from before the
    /// window: a throttle's unspent slice).
    pub dropped: u32,
    /// Where the counted span starts and ends, s after the measured window began.
    pub start_s: f64,
    pub end_s: f64,
    /// The whole window's rates, which the headline replaces (`None`: no I/O that way).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_read_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_write_iops: Option<f64>,
    /// The whole window's completions, which the headline's `ops` leave out a part of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_read_ops: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_write_ops: Option<u64>,
}

/// A job's first interval against its rest (`startup-burst`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct StartupBurst {
    /// `read` or `write`.
    pub direction: String,
    /// The first interval's length (s) and rate.
    pub first_s: f64,
    pub first_iops: f64,
    /// The I/Os and bytes of the first interval, which the headline's `ops` and `bytes` leave
    /// out (the whole window's are these plus the headline's).
    #[serde(default)]
    pub first_ops: u64,
    #[serde(default)]
    pub first_bytes: u64,
    /// The rest's rate: the headline.
    pub sustained_iops: f64,
    pub sustained_mb_s: f64,
    /// The whole window's rate, burst included.
    pub whole_iops: f64,
    pub whole_mb_s: f64,
}

/// Requests io_uring could not issue in the submitting thread and handed to its kernel
/// workers (io-wq, "async punt"): the I/O then runs in those threads, and the figure depends
/// on where they run and how many there are.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Handoff {
    /// Share of the job's storage bytes the kernel workers moved, 0 to 1, from the OS's own
    /// per-thread I/O accounting; `None` where no storage I/O was accounted (a file in RAM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Kernel worker threads that acted for the job's workers (at the end of the run).
    pub kernel_workers: u32,
    /// Their CPU time over the run, percent of one CPU.
    pub kernel_cpu_pct: f64,
    /// Requests were submitted to be handed off at once (IOSQE_ASYNC), so that the kernel
    /// starts a worker per request in flight up to `max_kernel_workers`.
    pub forced: bool,
    /// The CPUs the kernel workers were allowed (IORING_REGISTER_IOWQ_AFF); empty: as inherited
    /// from the submitting thread.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_cpus: Vec<u32>,
    /// The cap on kernel workers per submitting thread (IORING_REGISTER_IOWQ_MAX_WORKERS); 0:
    /// the kernel's own.
    #[serde(default)]
    pub max_kernel_workers: u32,
    /// How diskmeter ran the job's requests once it knew they would be handed off.
    #[serde(default)]
    pub policy: HandoffPolicy,
    /// [`HandoffPolicy::Threads`]: the threads of synchronous I/O that served the queue depth.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub threads: u32,
}

/// Where a target hands io_uring's requests to kernel workers, how diskmeter runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HandoffPolicy {
    /// io_uring, every request handed off at once, its kernel workers placed on the allowed
    /// CPUs and capped at the queue depth.
    #[default]
    Ring,
    /// The queue depth served by as many threads of synchronous I/O (the psync engine): each
    /// request runs in the thread that issued it, as it would in a kernel worker, without
    /// the hand-over to that worker and back.
    Threads,
}

impl HandoffPolicy {
    /// Its name in options and results.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ring => "ring",
            Self::Threads => "threads",
        }
    }
}

/// How many I/Os of one block size a job completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsCount {
    pub bs: u64,
    pub reads: u64,
    pub writes: u64,
}

/// A count left out of the JSON when it is 0.
fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// The outcome of fio's steady-state check for one job (or reporting group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateCheck {
    /// The criterion as fio writes it, e.g. `iops:10%`.
    pub criterion: String,
    pub attained: bool,
    /// When it was attained (the job then ended), seconds into the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attained_at_s: Option<f64>,
    /// The criterion's value over the last full window (percent of the mean, or absolute),
    /// and the window's mean (IOPS, or bytes/s for bw).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
}

impl JobResult {
    /// A result with no figures yet, named after the spec.
    pub fn new(spec: JobSpec) -> Self {
        Self {
            startup_burst: Vec::new(),
            whole_bursts: None,
            name: spec.name.clone(),
            spec,
            read: None,
            write: None,
            series: Vec::new(),
            cpu: CpuUsage::default(),
            fsyncs: 0,
            passes: Vec::new(),
            aggregate: None,
            spread: None,
            error: None,
            device_view: None,
            window: None,
            histograms: None,
            block_sizes: Vec::new(),
            errors: 0,
            first_error: None,
            steadystate: None,
            start_s: None,
            log_files: Vec::new(),
            workload: None,
            handoff: None,
        }
    }

    /// Fill `passes`, `aggregate`, `spread` and the headline `read`/`write` from passes.
    pub fn set_passes(&mut self, passes: Vec<PassResult>, how: Aggregate) {
        let (read, write, spread) = aggregate_passes(&passes, how);
        self.read = read;
        self.write = write;
        self.spread = Some(spread);
        self.aggregate = Some(how);
        self.passes = passes;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_pct: f64,
    pub sys_pct: f64,
    /// Busiest single worker thread (user + sys), percent of one CPU, without the time it
    /// polled an empty ring (`poll_us`): that is waiting, not work.
    #[serde(default)]
    pub max_worker_pct: f64,
    /// The io_uring workers polled for completions up to this many microseconds before
    /// sleeping (`--poll-us`), so their CPU time includes the polling; 0 (left out) = they
    /// slept at once.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub poll_us: u64,
}

/// Figures for one direction (reads or writes) of a job.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub iops: f64,
    pub mb_s: f64,
    pub mib_s: f64,
    pub lat_ns: LatSummary,
    pub qd_mean: f64,
    /// Latency CDF (fraction, ns) for charts; absent from older documents and from
    /// averaged (`mean`) aggregates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_cdf: Vec<CdfPoint>,
    /// What this figure is when it is not the device's: `cgroup limit (10 000 read IOPS)` for a
    /// figure within 2 % below a cgroup's limit (or above it) on the device (warning `cgroup-limit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
}

fn per_second(x: f64, seconds: f64) -> f64 {
    if seconds > 0.0 && seconds.is_finite() {
        x / seconds
    } else {
        0.0
    }
}

impl DirStats {
    /// Count `ops` and `bytes` over `seconds` (a part of the window the latencies cover), the
    /// rates by [`DirStats::new`]'s definition.
    pub fn rewindow(&mut self, ops: u64, bytes: u64, seconds: f64) {
        self.ops = ops;
        self.bytes = bytes;
        self.seconds = seconds;
        self.iops = per_second(ops as f64, seconds);
        self.mb_s = per_second(bytes as f64 / 1e6, seconds);
        self.mib_s = per_second(bytes as f64 / 1_048_576.0, seconds);
    }

    /// The one definition: iops = ops / seconds, mb_s = bytes / 10^6 / seconds,
    /// mib_s = bytes / 2^20 / seconds (all 0 when seconds is 0).
    pub fn new(ops: u64, bytes: u64, seconds: f64, lat: &LatHist, qd_mean: f64) -> DirStats {
        DirStats {
            bound: None,
            ops,
            bytes,
            seconds,
            iops: per_second(ops as f64, seconds),
            mb_s: per_second(bytes as f64 / 1e6, seconds),
            mib_s: per_second(bytes as f64 / 1_048_576.0, seconds),
            lat_ns: lat.summary(),
            qd_mean: if qd_mean.is_finite() { qd_mean } else { 0.0 },
            lat_cdf: lat.cdf(),
        }
    }
}

/// One interval of the time series (per second by default).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// End of the interval, seconds since the measured phase started.
    pub t_s: f64,
    pub read_iops: f64,
    pub read_mb_s: f64,
    pub read_lat_mean_ns: f64,
    pub read_lat_p99_ns: u64,
    pub write_iops: f64,
    pub write_mb_s: f64,
    pub write_lat_mean_ns: f64,
    pub write_lat_p99_ns: u64,
    /// End of the interval, Unix time in seconds (`--histograms` and multi-host runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_s: Option<f64>,
}

impl SeriesPoint {
    /// Build a point from one interval's histograms and byte counts. The operation count
    /// is the histogram's count.
    pub fn from_interval(
        t_s: f64,
        interval_seconds: f64,
        read: (&LatHist, u64),
        write: (&LatHist, u64),
    ) -> SeriesPoint {
        let (rh, rb) = read;
        let (wh, wb) = write;
        SeriesPoint {
            t_s,
            read_iops: per_second(rh.count() as f64, interval_seconds),
            read_mb_s: per_second(rb as f64 / 1e6, interval_seconds),
            read_lat_mean_ns: rh.mean(),
            read_lat_p99_ns: rh.quantile(0.99),
            write_iops: per_second(wh.count() as f64, interval_seconds),
            write_mb_s: per_second(wb as f64 / 1e6, interval_seconds),
            write_lat_mean_ns: wh.mean(),
            write_lat_p99_ns: wh.quantile(0.99),
            unix_s: None,
        }
    }
}

/// Figures of one measured pass (`mark` runs several passes per test).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PassResult {
    pub pass: u32,
    pub read: Option<DirStats>,
    pub write: Option<DirStats>,
    /// The pass's lossless histograms (`--histograms` and multi-host runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histograms: Option<crate::cluster::Histograms>,
    /// The pass's runs that were counted over whole bursts (one per direction at most; see
    /// [`JobResult::whole_bursts`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub whole_bursts: Vec<WholeBursts>,
}

/// Pass-to-pass variation of a multi-pass result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Spread {
    pub read: Option<DirSpread>,
    pub write: Option<DirSpread>,
}

/// Mean and sample standard deviation (n − 1; 0 for one pass) over passes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DirSpread {
    pub mb_s_mean: f64,
    pub mb_s_stddev: f64,
    pub iops_mean: f64,
    pub iops_stddev: f64,
    pub lat_mean_ns_mean: f64,
    pub lat_mean_ns_stddev: f64,
}

fn mean_sd(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

fn dir_spread(stats: &[&DirStats]) -> Option<DirSpread> {
    if stats.is_empty() {
        return None;
    }
    let col = |f: fn(&DirStats) -> f64| mean_sd(&stats.iter().map(|d| f(d)).collect::<Vec<_>>());
    let (mb_s_mean, mb_s_stddev) = col(|d| d.mb_s);
    let (iops_mean, iops_stddev) = col(|d| d.iops);
    let (lat_mean_ns_mean, lat_mean_ns_stddev) = col(|d| d.lat_ns.mean);
    Some(DirSpread { mb_s_mean, mb_s_stddev, iops_mean, iops_stddev, lat_mean_ns_mean, lat_mean_ns_stddev })
}

fn mean_u64(xs: impl Iterator<Item = u64>, n: usize) -> u64 {
    let sum: u128 = xs.map(u128::from).sum();
    ((sum + n as u128 / 2) / n.max(1) as u128) as u64
}

fn mean_f64(xs: impl Iterator<Item = f64>, n: usize) -> f64 {
    xs.sum::<f64>() / n.max(1) as f64
}

fn combine(stats: &[&DirStats], how: Aggregate) -> Option<DirStats> {
    let first = *stats.first()?;
    match how {
        Aggregate::Single => Some(first.clone()),
        Aggregate::Max => {
            let mut best = first;
            for d in stats {
                if d.mb_s > best.mb_s {
                    best = d;
                }
            }
            let min_mean = stats.iter().map(|d| d.lat_ns.mean).fold(f64::INFINITY, f64::min);
            let mut out = best.clone();
            out.lat_ns.mean = min_mean;
            Some(out)
        }
        Aggregate::Mean => {
            let n = stats.len();
            let u = |f: fn(&DirStats) -> u64| mean_u64(stats.iter().map(|d| f(d)), n);
            let f = |f: fn(&DirStats) -> f64| mean_f64(stats.iter().map(|d| f(d)), n);
            Some(DirStats {
                bound: None,
                ops: u(|d| d.ops),
                bytes: u(|d| d.bytes),
                seconds: f(|d| d.seconds),
                iops: f(|d| d.iops),
                mb_s: f(|d| d.mb_s),
                mib_s: f(|d| d.mib_s),
                lat_ns: LatSummary {
                    min: u(|d| d.lat_ns.min),
                    mean: f(|d| d.lat_ns.mean),
                    stddev: f(|d| d.lat_ns.stddev),
                    p50: u(|d| d.lat_ns.p50),
                    p90: u(|d| d.lat_ns.p90),
                    p99: u(|d| d.lat_ns.p99),
                    p99_9: u(|d| d.lat_ns.p99_9),
                    p99_99: u(|d| d.lat_ns.p99_99),
                    max: u(|d| d.lat_ns.max),
                },
                qd_mean: f(|d| d.qd_mean),
                lat_cdf: mean_cdf(stats),
            })
        }
    }
}

/// Average CDFs fraction by fraction (quantile averaging, "Vincentization": the mean
/// distribution's shape, not a blend of two shapes). Empty unless every pass has the same
/// fractions.
fn mean_cdf(stats: &[&DirStats]) -> Vec<CdfPoint> {
    let Some(first) = stats.first() else { return Vec::new() };
    let same = |d: &&DirStats| {
        d.lat_cdf.len() == first.lat_cdf.len()
            && d.lat_cdf.iter().zip(&first.lat_cdf).all(|(a, b)| a.fraction == b.fraction)
    };
    if first.lat_cdf.is_empty() || !stats.iter().all(same) {
        return Vec::new();
    }
    let n = stats.len() as u128;
    (0..first.lat_cdf.len())
        .map(|i| CdfPoint {
            fraction: first.lat_cdf[i].fraction,
            ns: (stats.iter().map(|d| u128::from(d.lat_cdf[i].ns)).sum::<u128>() / n) as u64,
        })
        .collect()
}

/// Combine per-pass figures into headline `(read, write)` figures and their spread.
///
/// * `Max` (CrystalDiskMark 9): per direction, the pass with the highest MB/s, with its
///   `lat_ns.mean` replaced by the lowest mean latency over all passes.
/// * `Mean` (KDiskMark): every numeric field averaged over the passes that have it.
/// * `Single`: the first pass that has the direction.
///
/// A direction absent from every pass is `None`.
pub fn aggregate_passes(passes: &[PassResult], how: Aggregate) -> (Option<DirStats>, Option<DirStats>, Spread) {
    let reads: Vec<&DirStats> = passes.iter().filter_map(|p| p.read.as_ref()).collect();
    let writes: Vec<&DirStats> = passes.iter().filter_map(|p| p.write.as_ref()).collect();
    let spread = Spread { read: dir_spread(&reads), write: dir_spread(&writes) };
    (combine(&reads, how), combine(&writes, how), spread)
}

/// A non-fatal finding about the measurement's honesty or validity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// One of [`codes`](crate::codes).
    pub code: String,
    pub message: String,
}

impl Warning {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self { code: code.to_string(), message: message.into() }
    }
}

/// A failure that ended (part of) a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorInfo {
    /// `io`, `enospc`, `eio`, `vanished` or `interrupted`.
    pub kind: String,
    pub message: String,
    pub offset: Option<u64>,
    pub job: Option<String>,
}

impl ErrorInfo {
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        Self { kind: kind.to_string(), message: message.into(), offset: None, job: None }
    }
}
