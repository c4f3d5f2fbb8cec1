//! The `verify` section of a result document (`run --verify`): what was checked and every
//! failure with its diagnosis.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Failures listed one by one; beyond this many only their counts by kind are kept.
pub const MAX_LISTED_FAILURES: usize = 1000;

/// Data verification over a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VerifyResult {
    /// The checksum (`crc32c`, `md5`, `sha256`, `xxhash`, `meta`, `pattern`).
    pub kind: String,
    /// Bytes per checked chunk (each chunk has its own header).
    pub interval: u64,
    /// This run's id, in every header it wrote (hex).
    pub run_id: String,
    /// The state file saved or loaded (`--verify-state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// True when the expectations came from the state file (a verify-only run after a power cut).
    #[serde(default)]
    pub state_loaded: bool,
    /// Chunks written by acknowledged writes.
    pub chunks_written: u64,
    /// Chunks checked by the job's own reads as they completed.
    pub checked_inline: u64,
    /// Chunks checked by the read-back after the writes (or by a verify-only run).
    pub checked_after: u64,
    /// Seconds and MB/s of the read-back.
    #[serde(default)]
    pub after_seconds: f64,
    #[serde(default)]
    pub after_mb_s: f64,
    /// False when the read-back was cut short (Ctrl-C, a fault, `--verify-fatal`).
    pub complete: bool,
    /// Chunks found newer than the state file says (written after its last save): not failures.
    #[serde(default)]
    pub newer: u64,
    /// Failures in all, and by diagnosis (`torn`, `stale`, `misdirected`, `zeroed`, `unwritten`,
    /// `corrupt`).
    pub failures_total: u64,
    pub by_kind: BTreeMap<String, u64>,
    /// The first [`MAX_LISTED_FAILURES`] failures in offset order.
    pub failures: Vec<VerifyFailure>,
}

/// One chunk that failed, diagnosed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct VerifyFailure {
    /// The job whose chunk it is.
    pub job: String,
    /// Byte offset of the chunk on the target, and its length.
    pub offset: u64,
    pub len: u64,
    /// `torn`, `stale`, `misdirected`, `zeroed`, `unwritten` or `corrupt`.
    pub kind: String,
    /// How it was found: `read` (the job's own read) or `after` (the read-back).
    pub found_by: String,
    /// The generation the chunk should hold (the number of acknowledged writes to it).
    pub expected_generation: u32,
    /// What the chunk's header says, when it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_generation: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_offset: Option<u64>,
    /// One line for people: what is wrong, e.g. which sectors hold which generation.
    pub detail: String,
    /// The first differing byte, counted from the chunk's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_difference: Option<u64>,
    /// The first differing 64 bytes, expected and found, as hex-dump lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hexdump: Vec<String>,
}

impl VerifyResult {
    /// Count a failure, listing it while there is room.
    pub fn add_failure(&mut self, f: VerifyFailure) {
        self.failures_total += 1;
        *self.by_kind.entry(f.kind.clone()).or_default() += 1;
        if self.failures.len() < MAX_LISTED_FAILURES {
            self.failures.push(f);
        }
    }

    /// Sort the listed failures by offset (reads and the read-back find them out of order).
    pub fn sort(&mut self) {
        self.failures.sort_by(|a, b| a.offset.cmp(&b.offset).then(a.found_by.cmp(&b.found_by)));
    }
}
