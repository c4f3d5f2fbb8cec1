//! `doctor --json` (schema `diskmeter.doctor.v1`): the ranked causes, every check with its
//! status, and the stack the checks walked.

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "diskmeter.doctor.v1";

/// How much a cause matters. Ordered: `Critical` first when ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Data is at risk, or the disk runs at a small fraction of what it can do.
    Critical,
    /// Costs a large share of the disk's speed (a halved link, the write cache off, a limit).
    High,
    /// Costs some workloads noticeably (misalignment, no NCQ, competing I/O).
    Medium,
    /// Costs little or only some shapes (read-ahead, a governor, a scheduler choice).
    Low,
    /// Worth knowing to read figures right; not a fault (a virtual disk, an encrypted layer).
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }
}

/// One value a finding rests on, and where it was read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// What the value is (`current_link_width`, `SMART 199 UDMA_CRC_Error_Count`).
    pub name: String,
    pub value: String,
    /// Where it was read: a file (`/sys/block/sda/queue/write_cache`), `smartctl -a /dev/sda`,
    /// `probe`, `load`.
    pub source: String,
}

impl Evidence {
    pub fn new(name: impl Into<String>, value: impl ToString, source: impl Into<String>) -> Evidence {
        Evidence { name: name.into(), value: value.to_string(), source: source.into() }
    }
}

/// A reason the disk is slower than it could be, or its figures mean less than they seem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    /// Stable identifier (`pcie-link-degraded`, `write-cache-off`, `cgroup-limit`, …).
    pub code: String,
    /// The check that found it (`pcie-link`, `write-cache`, …).
    pub check: String,
    pub severity: Severity,
    /// The layer it concerns (`sda`, `nvme0n1p2`, `dm-0`), when one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// One line: what is wrong.
    pub summary: String,
    pub evidence: Vec<Evidence>,
    /// What it costs, when known ("at most 1.97 GB/s instead of 3.94 GB/s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<String>,
    /// The way out: a command or a setting.
    pub fix: String,
    /// Within a severity, how strongly the evidence points at a performance loss (higher
    /// ranks first): measured beats configured beats possible.
    pub weight: u32,
}

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Passed,
    Found,
    NotRun,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Found => "found",
            Status::NotRun => "not-run",
        }
    }
}

/// One check of the list, whatever it found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Stable identifier (`pcie-link`, `sata-link`, …; `docs/doctor.md` lists them).
    pub code: String,
    /// What it looks at, in a few words.
    pub title: String,
    pub status: Status,
    /// Not run: why (not root, no smartctl, a virtual disk). Passed: what was seen, briefly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A layer of the stack as the document shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StackLayer {
    pub name: String,
    /// `file system`, `dm`, `md`, `loop`, `partition`, `disk`, `link`.
    pub role: String,
    /// What it is, in a few words (`ext4 on /`, `dm-crypt`, `Samsung SSD 980 over PCIe 3.0 x4`).
    pub detail: String,
}

/// `--load`: what the stack's devices did while doctor watched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadView {
    pub seconds: f64,
    /// Per device of the stack: its counters over the window (`top`'s columns).
    pub devices: Vec<LoadDevice>,
    /// PSI `io`: the share of the window some task waited on I/O (percent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_pressure_some_pct: Option<f64>,
    /// Processes that did I/O in the window, busiest first (pid, command, bytes).
    pub processes: Vec<LoadProcess>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadDevice {
    pub name: String,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub util_pct: f64,
    /// Mean time per request (ms), reads and writes together.
    pub await_ms: f64,
    pub aqu_sz: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadProcess {
    pub pid: u32,
    pub command: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// `--probe`: a short read-only test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeView {
    /// What was read (a device, or a test file).
    pub target: String,
    /// 4 KiB random reads at QD1: the latency floor.
    pub qd1_iops: f64,
    pub qd1_mean_us: f64,
    pub qd1_p99_us: f64,
    /// 4 KiB random reads at QD32.
    pub qd32_iops: f64,
    pub qd32_mean_us: f64,
    /// 1 MiB sequential reads at QD8: the throughput the link is held against.
    pub seq_mb_s: f64,
    /// The run's own warnings (their codes).
    pub warnings: Vec<String>,
}

/// The whole `doctor` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorDoc {
    pub schema: String,
    pub tool: stats::ToolInfo,
    pub started_at: String,
    /// The target as given (or the current directory).
    pub target: String,
    /// The device the target leads to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Top first: file system, dm/md/loop, partition, disk, link.
    pub stack: Vec<StackLayer>,
    /// Ranked: the first is the most likely cause.
    pub causes: Vec<Cause>,
    pub checks: Vec<Check>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<LoadView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeView>,
    /// Whether doctor ran as root (some checks need it).
    pub root: bool,
}

impl DoctorDoc {
    /// Rank causes: severity first, then weight, then the order found.
    pub fn rank(&mut self) {
        // A stable sort keeps the checks' order among equals.
        self.causes.sort_by(|a, b| a.severity.cmp(&b.severity).then(b.weight.cmp(&a.weight)));
    }

    /// Exit status: 1 when a cause of severity high or above was found, else 0.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.causes.iter().any(|c| c.severity <= Severity::High))
    }
}
