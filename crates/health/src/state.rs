//! The history diskmeter keeps between runs, to measure write rate and wear slope:
//! `$XDG_STATE_HOME/diskmeter/health.json` (else `~/.local/state/diskmeter/health.json`),
//! one entry per disk keyed by serial number (else kernel name), each a list of samples
//! of (time, SMART bytes written, diskstats sectors written, wear). Written atomically
//! (temporary file + rename); the schema is versioned.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const STATE_SCHEMA: &str = "diskmeter.health-state.v1";
/// Largest state file read (years of daily samples for many disks are well under 1 MiB).
const STATE_CAP: u64 = 16 << 20;
/// Samples kept per disk: the oldest (the baseline) and the most recent ones.
pub const MAX_SAMPLES: usize = 64;
/// Runs closer together than this replace the latest sample instead of adding one.
pub const MIN_SAMPLE_GAP_S: u64 = 60;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Unix time, seconds.
    pub t: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smart_written: Option<u64>,
    /// `/sys/block/X/stat` sectors written (512 B); only comparable within one boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sectors_written: Option<u64>,
    /// Boot time (unix seconds, now − uptime) of the sample, to tell boots apart (within a minute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boot: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wear_used_percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power_on_hours: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskHistory {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    pub samples: Vec<Sample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateFile {
    pub schema: String,
    #[serde(default)]
    pub disks: BTreeMap<String, DiskHistory>,
}

impl Default for StateFile {
    fn default() -> Self {
        Self { schema: STATE_SCHEMA.into(), disks: BTreeMap::new() }
    }
}

/// The default state file, from XDG_STATE_HOME (absolute paths only, as the XDG spec
/// says) or HOME.
pub fn default_path(xdg_state_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    if let Some(x) = xdg_state_home.filter(|x| x.starts_with('/')) {
        return Some(Path::new(x).join("diskmeter/health.json"));
    }
    home.filter(|h| !h.is_empty()).map(|h| Path::new(h).join(".local/state/diskmeter/health.json"))
}

/// The key a disk's history was kept under before disks had one identity: its SMART serial
/// (`serial:S3YZ…`). Found only by that serial ([`StateFile::adopt`]); the form `name:sda` of a
/// disk without one is never found again (the next device takes the name).
pub fn legacy_key(serial: Option<&str>) -> Option<String> {
    serial.map(str::trim).filter(|s| !s.is_empty()).map(|s| format!("serial:{s}"))
}

impl StateFile {
    /// Load; a missing file is an empty history. A file that is not ours (bad JSON,
    /// another schema) is an error: the caller warns and leaves it untouched.
    pub fn load(path: &Path) -> Result<Self, String> {
        if !path.exists() && std::fs::symlink_metadata(path).is_err() {
            return Ok(Self::default());
        }
        // A regular file of sane size only: `--state /dev/zero` must not read forever.
        let bytes = files::input::read_capped(path, "the state file", STATE_CAP).map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&bytes);
        let s: StateFile = serde_json::from_str(&text).map_err(|e| {
            format!("state file {} is not a diskmeter health state ({e}); it is left as it is", path.display())
        })?;
        if s.schema != STATE_SCHEMA {
            return Err(format!(
                "state file {} has schema \"{}\", this diskmeter reads \"{STATE_SCHEMA}\"; it is left as it is",
                path.display(),
                s.schema
            ));
        }
        Ok(s)
    }

    /// Write atomically (a temporary file in the same directory, renamed into place); a path
    /// that is not a regular file, or a file that is not a diskmeter state, is left alone.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let mut text = serde_json::to_string_pretty(self).map_err(|e| format!("cannot encode the state: {e}"))?;
        text.push('\n');
        let out = files::output::plan(path, "the state file", false).map_err(|e| e.to_string())?;
        out.write(text.as_bytes()).map_err(|e| e.to_string())
    }

    /// Add a sample to a disk's history (replacing the latest one if it is very recent;
    /// forgetting the history if SMART's byte counter went backwards: another disk, or
    /// a reset).
    pub fn record(&mut self, key: &str, name: &str, model: Option<&str>, s: Sample) {
        let h = self.disks.entry(key.to_string()).or_default();
        h.name = name.to_string();
        h.model = model.map(str::to_string);
        if let (Some(last), Some(now)) = (h.samples.last().and_then(|l| l.smart_written), s.smart_written) {
            if now < last {
                h.samples.clear();
            }
        }
        let len = h.samples.len();
        match h.samples.last_mut() {
            Some(last) if s.t.saturating_sub(last.t) < MIN_SAMPLE_GAP_S && len > 1 => *last = s,
            _ => h.samples.push(s),
        }
        while h.samples.len() > MAX_SAMPLES {
            h.samples.remove(1);
        }
    }

    /// Move the history kept under `legacy` (an older key of the same disk) to `key`, unless
    /// `key` already has one.
    pub fn adopt(&mut self, key: &str, legacy: Option<&str>) {
        let Some(old) = legacy.filter(|l| *l != key) else { return };
        if self.disks.contains_key(key) {
            return;
        }
        if let Some(h) = self.disks.remove(old) {
            self.disks.insert(key.to_string(), h);
        }
    }

    pub fn history(&self, key: &str) -> &[Sample] {
        self.disks.get(key).map(|h| h.samples.as_slice()).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample(t: u64, w: u64) -> Sample {
        Sample {
            t,
            smart_written: Some(w),
            sectors_written: None,
            boot: None,
            wear_used_percent: None,
            power_on_hours: None,
        }
    }

    #[test]
    fn paths() {
        assert_eq!(
            default_path(Some("/x/state"), Some("/home/u")),
            Some(PathBuf::from("/x/state/diskmeter/health.json"))
        );
        assert_eq!(
            default_path(Some("relative"), Some("/home/u")),
            Some(PathBuf::from("/home/u/.local/state/diskmeter/health.json"))
        );
        assert_eq!(default_path(None, None), None);
    }

    #[test]
    fn keys() {
        assert_eq!(legacy_key(Some("S3YZ ")).as_deref(), Some("serial:S3YZ"));
        assert_eq!(legacy_key(Some("")), None);
        let mut st = StateFile::default();
        let sample = Sample {
            t: 1,
            smart_written: None,
            sectors_written: None,
            boot: None,
            wear_used_percent: None,
            power_on_hours: None,
        };
        st.record("serial:S3YZ", "sda", None, sample);
        st.adopt("wwn:naa.5", legacy_key(Some("S3YZ")).as_deref());
        assert_eq!((st.history("wwn:naa.5").len(), st.history("serial:S3YZ").len()), (1, 0));
    }

    #[test]
    fn save_load_round_trip_and_no_temp_left() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("deep/dir/health.json");
        let mut s = StateFile::default();
        s.record("serial:A", "sda", Some("M"), sample(1000, 5));
        s.save(&p).unwrap();
        assert_eq!(StateFile::load(&p).unwrap(), s);
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn corrupt_and_foreign_files_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("health.json");
        std::fs::write(&p, "not json").unwrap();
        assert!(StateFile::load(&p).unwrap_err().contains("left as it is"));
        std::fs::write(&p, r#"{"schema":"other.v9","disks":{}}"#).unwrap();
        assert!(StateFile::load(&p).unwrap_err().contains("other.v9"));
        assert_eq!(StateFile::load(&t.path().join("missing.json")).unwrap(), StateFile::default());
    }

    #[test]
    fn counter_going_back_resets_history() {
        let mut s = StateFile::default();
        s.record("k", "sda", None, sample(0, 100));
        s.record("k", "sda", None, sample(10_000, 200));
        s.record("k", "sda", None, sample(20_000, 50));
        assert_eq!(s.history("k"), &[sample(20_000, 50)]);
    }

    #[test]
    fn close_runs_replace_the_latest() {
        let mut s = StateFile::default();
        s.record("k", "sda", None, sample(0, 1));
        s.record("k", "sda", None, sample(10_000, 2));
        s.record("k", "sda", None, sample(10_030, 3));
        assert_eq!(s.history("k"), &[sample(0, 1), sample(10_030, 3)]);
    }

    proptest! {
        #[test]
        fn bounded_and_baseline_kept(n in 1usize..200) {
            let mut s = StateFile::default();
            for i in 0..n {
                s.record("k", "sda", None, sample(i as u64 * 3600, i as u64));
            }
            let h = s.history("k");
            prop_assert!(h.len() <= MAX_SAMPLES);
            prop_assert_eq!(h[0].t, 0);
            prop_assert_eq!(h.last().map(|x| x.t), Some((n as u64 - 1) * 3600));
        }

        #[test]
        fn load_never_panics(text in "\\PC{0,64}") {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().join("h.json");
            std::fs::write(&p, text).unwrap();
            let _ = StateFile::load(&p);
        }
    }
}
