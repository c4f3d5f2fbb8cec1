//! Raw samples and where they come from: the live system, or a recording (replay). Both feed
//! the same delta and metrics code, so a replay prints what the live run printed.

use crate::devices::{DeviceInfo, Sysfs};
use crate::procs::{DelaySource, ProcSnapshot};
use crate::psi::PsiTotals;
use crate::MonitorError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::BufRead;
use std::path::Path;

/// Schema of the first line of a recording.
pub const RECORD_SCHEMA: &str = "diskmeter.top-record.v1";

/// Everything read at one instant, unprocessed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Wall-clock time, seconds since the Unix epoch (for the report's timestamp only).
    pub t: f64,
    /// `/proc/uptime` in 1/100 s: the interval clock, as iostat uses it.
    pub uptime_cs: u64,
    /// The `/proc/diskstats` lines as read (in-flight counts are column 12).
    pub diskstats: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi: Option<PsiTotals>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub procs: Option<ProcSnapshot>,
    /// Devices classified for the first time at this sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<DeviceInfo>,
}

/// First line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordHeader {
    pub schema: String,
    pub tool_version: String,
    pub host: String,
    pub kernel: String,
    pub interval_s: f64,
    pub processes: bool,
}

/// A source of samples.
pub trait SampleSource {
    /// The next sample; `None` when the source is exhausted (end of a recording).
    fn next_sample(&mut self) -> Result<Option<Sample>, MonitorError>;
    /// True for live sources, which the driver paces; a replay runs as fast as it is read.
    fn is_live(&self) -> bool;
}

/// `/proc/uptime` as sysstat reads it (`%lu.%lu` → seconds·100 + hundredths).
pub fn parse_uptime_cs(text: &str) -> Option<u64> {
    let first = text.split_whitespace().next()?;
    let (s, c) = first.split_once('.')?;
    Some(s.parse::<u64>().ok()? * 100 + c.parse::<u64>().ok()?)
}

fn wall_clock() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// The kernel's disk counters as text, through platform's one reader.
fn read_diskstats() -> Result<String, MonitorError> {
    let roots = platform::block::Roots::default();
    platform::diskstats::read_text(&roots).map_err(|e| {
        MonitorError::Runtime(format!("cannot read {}: {e}", platform::diskstats::source(&roots).display()))
    })
}

/// Reads /proc (and /sys for classification).
pub struct LiveSource {
    sysfs: Sysfs,
    known: BTreeSet<String>,
    processes: bool,
    /// The taskstats socket, opened with the first process sample and reused.
    delays: Option<DelaySource>,
}

impl LiveSource {
    pub fn new(processes: bool) -> Self {
        LiveSource { sysfs: Sysfs::default(), known: BTreeSet::new(), processes, delays: None }
    }

    /// Check once that /proc/diskstats is readable, for a clear error before any output.
    pub fn probe() -> Result<(), MonitorError> {
        read_diskstats().map(|_| ())
    }

    /// Refuse `--devices` names that no device has now (a typo would otherwise show an empty
    /// table forever).
    pub fn check_names(names: &[String]) -> Result<(), MonitorError> {
        if names.is_empty() {
            return Ok(());
        }
        let ds = read_diskstats()?;
        let (lines, _) = crate::diskstats::parse(&ds);
        unknown_names(names, &lines, &Sysfs::default())
    }
}

/// The usage error for the `names` that match neither a kernel name in `lines` nor the
/// device-mapper name of one.
pub fn unknown_names(
    names: &[String],
    lines: &[crate::diskstats::DiskLine],
    sysfs: &Sysfs,
) -> Result<(), MonitorError> {
    let mut known: Vec<String> = Vec::new();
    for l in lines {
        known.push(l.name.clone());
        if l.name.starts_with("dm-") {
            known.extend(sysfs.classify(&l.name).mapper);
        }
    }
    let missing: Vec<&str> = names.iter().filter(|n| !known.contains(n)).map(String::as_str).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut disks: Vec<&str> =
        lines.iter().map(|l| l.name.as_str()).filter(|n| sysfs.classify(n).parent.is_none()).collect();
    disks.truncate(12);
    Err(MonitorError::Usage(format!(
        "invalid value for --devices: no device named {}; devices here include {} (kernel names as in \
         /proc/diskstats, or device-mapper names)",
        missing.join(", "),
        if disks.is_empty() { "none".to_string() } else { disks.join(", ") }
    )))
}

impl SampleSource for LiveSource {
    fn next_sample(&mut self) -> Result<Option<Sample>, MonitorError> {
        let t = wall_clock();
        let up = platform::host::uptime_text()
            .map_err(|e| MonitorError::Runtime(format!("cannot read /proc/uptime: {e}")))?;
        let uptime_cs =
            parse_uptime_cs(&up).ok_or_else(|| MonitorError::Runtime(format!("cannot parse /proc/uptime: {up:?}")))?;
        let ds = read_diskstats()?;
        let diskstats: Vec<String> = ds.lines().filter(|l| !l.trim().is_empty()).map(str::to_string).collect();
        let psi = crate::psi::read();
        let procs = if self.processes {
            let d = self.delays.get_or_insert_with(DelaySource::open);
            Some(crate::procs::read_all_with(Some(d)))
        } else {
            None
        };
        let mut devices = Vec::new();
        for line in &diskstats {
            if let Some(name) = line.split_whitespace().nth(2) {
                if !self.known.contains(name) {
                    self.known.insert(name.to_string());
                    devices.push(self.sysfs.classify(name));
                }
            }
        }
        Ok(Some(Sample { t, uptime_cs, diskstats, psi, procs, devices }))
    }

    fn is_live(&self) -> bool {
        true
    }
}

/// Samples from a recording (or a test fixture).
pub struct ReplaySource {
    pub header: RecordHeader,
    samples: std::vec::IntoIter<Sample>,
    /// A last line cut short (recording killed mid-write) is dropped, not fatal.
    pub truncated_tail: bool,
}

impl ReplaySource {
    /// Read a whole recording. Errors name the file and line.
    pub fn open(path: &Path) -> Result<Self, MonitorError> {
        let f = std::fs::File::open(path)
            .map_err(|e| MonitorError::Usage(format!("cannot read --replay file {}: {e}", path.display())))?;
        Self::from_reader(std::io::BufReader::new(f), &path.display().to_string())
    }

    pub fn from_reader(r: impl BufRead, what: &str) -> Result<Self, MonitorError> {
        let lines: Vec<String> = r
            .lines()
            .collect::<Result<_, _>>()
            .map_err(|e| MonitorError::Usage(format!("cannot read --replay file {what}: {e}")))?;
        let mut it = lines.iter().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, first)) = it.next() else {
            return Err(MonitorError::Usage(format!("--replay file {what} is empty; record one with --record FILE")));
        };
        let not_ours = |e: String| {
            MonitorError::Usage(format!("--replay file {what} is not a diskmeter top recording (line 1: {e})"))
        };
        let v: serde_json::Value = serde_json::from_str(first).map_err(|e| not_ours(e.to_string()))?;
        match v.get("schema").and_then(|s| s.as_str()) {
            Some(RECORD_SCHEMA) => {}
            Some(other) => {
                return Err(MonitorError::Usage(format!(
                    "--replay file {what} has schema {other:?}; expected {RECORD_SCHEMA:?}"
                )))
            }
            None => return Err(not_ours("no \"schema\" key".into())),
        }
        let header: RecordHeader = serde_json::from_value(v).map_err(|e| not_ours(e.to_string()))?;
        let rest: Vec<(usize, &String)> = it.collect();
        let mut samples = Vec::new();
        let mut truncated_tail = false;
        for (k, (i, l)) in rest.iter().enumerate() {
            match serde_json::from_str::<Sample>(l) {
                Ok(s) => samples.push(s),
                Err(_) if k + 1 == rest.len() && !l.trim_end().ends_with('}') => truncated_tail = true,
                Err(e) => {
                    return Err(MonitorError::Usage(format!("--replay file {what}, line {}: bad sample: {e}", i + 1)))
                }
            }
        }
        Ok(ReplaySource { header, samples: samples.into_iter(), truncated_tail })
    }
}

impl SampleSource for ReplaySource {
    fn next_sample(&mut self) -> Result<Option<Sample>, MonitorError> {
        Ok(self.samples.next())
    }

    fn is_live(&self) -> bool {
        false
    }
}

/// Host name and kernel release for the recording header.
pub fn host_and_kernel() -> (String, String) {
    platform::host::hostname_and_release()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn uptime_like_sysstat() {
        assert_eq!(parse_uptime_cs("17533.70 12057.85\n"), Some(1753370));
        assert_eq!(parse_uptime_cs("5.05 1.00"), Some(505));
        assert_eq!(parse_uptime_cs("garbage"), None);
    }

    #[test]
    fn replay_rejects_other_files_and_tolerates_a_cut_tail() {
        let e = ReplaySource::from_reader("{\"a\":1}\n".as_bytes(), "x").err().unwrap();
        assert!(e.to_string().contains("not a diskmeter top recording"), "{e}");
        let h = RecordHeader {
            schema: RECORD_SCHEMA.into(),
            tool_version: "0".into(),
            host: "h".into(),
            kernel: "k".into(),
            interval_s: 1.0,
            processes: false,
        };
        let s = Sample { t: 1.0, uptime_cs: 100, diskstats: vec![], psi: None, procs: None, devices: vec![] };
        let text = format!(
            "{}\n{}\n{{\"t\": 2.0, \"upti",
            serde_json::to_string(&h).unwrap(),
            serde_json::to_string(&s).unwrap()
        );
        let mut r = ReplaySource::from_reader(text.as_bytes(), "x").unwrap();
        assert!(r.truncated_tail);
        assert_eq!(r.next_sample().unwrap(), Some(s));
        assert_eq!(r.next_sample().unwrap(), None);
    }
}

#[cfg(test)]
mod name_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn unknown_device_names_are_named_with_what_exists() {
        let (lines, _) = crate::diskstats::parse(
            "   8       0 sda 1 0 8 1 0 0 0 0 0 1 1\n   8       1 sda1 1 0 8 1 0 0 0 0 0 1 1\n",
        );
        let sysfs = Sysfs::new("/nonexistent-sysfs");
        assert!(unknown_names(&["sda".into(), "sda1".into()], &lines, &sysfs).is_ok());
        let e = unknown_names(&["sdb".into(), "sda".into()], &lines, &sysfs).unwrap_err().to_string();
        assert!(e.contains("no device named sdb;"), "{e}");
        assert!(e.contains("include sda,") || e.contains("include sda "), "{e}");
    }
}
