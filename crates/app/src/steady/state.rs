//! What diskmeter remembers about a device between runs: when `steady` purged it, how often
//! it has been written whole since, and the write cache a `--sustained` run found. The
//! `not-preconditioned` and `inside-write-cache` warnings rest on it (`docs/steady-state.md`).
//!
//! One JSON file, `devices.json`, in `$DISKMETER_STATE_DIR`, else `$XDG_STATE_HOME/diskmeter`,
//! else `~/.local/state/diskmeter`. A device is known by its device number, size and serial
//! (or a loop device's backing file); a file by its file system, inode and size. Losing the
//! file only loses these warnings: nothing else depends on it.

use engine::target::probe::TargetKind;
use engine::target::OpenTarget;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What is known about one device or file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The path it was last seen at (for people reading the file).
    pub path: String,
    /// Unix seconds of the last purge by `steady`.
    #[serde(default)]
    pub purged_at: Option<f64>,
    #[serde(default)]
    pub purge_method: Option<String>,
    /// Bytes the purge covered (from 0).
    #[serde(default)]
    pub purged_bytes: u64,
    /// Complete writes of the purged range since the purge (preconditioning passes, fills).
    #[serde(default)]
    pub full_writes: u32,
    /// Bytes written before the write cliff of the last `--sustained` run, and when.
    #[serde(default)]
    pub cliff_bytes: Option<u64>,
    #[serde(default)]
    pub cliff_at: Option<f64>,
}

/// PTS preconditioning writes the range twice.
pub const FULL_WRITES_NEEDED: u32 = 2;

fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("DISKMETER_STATE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("diskmeter"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/state/diskmeter"))
}

fn file() -> Option<PathBuf> {
    dir().map(|d| d.join("devices.json"))
}

/// The key of an open target (`None` when its metadata cannot be read).
pub fn key(t: &OpenTarget) -> Option<String> {
    match t.probe.kind {
        TargetKind::Block => {
            let (maj, min) = platform::block::dev_numbers(&t.path)?;
            let topo = platform::block::Topology::default();
            let ident = topo
                .by_number(maj, min)
                .and_then(|d| {
                    ["device/serial", "device/wwid", "wwid", "loop/backing_file"]
                        .iter()
                        .find_map(|f| topo.attr(&d.name, f))
                })
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            Some(format!("block {maj}:{min} {} {ident}", t.probe.size_bytes))
        }
        TargetKind::File => {
            let (dev, ino) = platform::fs::file_id(&t.file.metadata().ok()?)?;
            Some(format!("file {dev}:{ino} {}", t.probe.size_bytes))
        }
    }
}

fn load_all() -> BTreeMap<String, Record> {
    file().and_then(|f| std::fs::read_to_string(f).ok()).and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
}

/// The record of `t`, if any.
pub fn load(t: &OpenTarget) -> Option<Record> {
    let k = key(t)?;
    load_all().remove(&k)
}

/// The record of the block device `major:minor` (any size or serial), and where it is kept.
pub fn for_device(major: u32, minor: u32) -> Option<(Record, String)> {
    let prefix = format!("block {major}:{minor} ");
    let path = file()?;
    let rec = load_all().into_iter().find(|(k, _)| k.starts_with(&prefix)).map(|(_, r)| r)?;
    Some((rec, path.display().to_string()))
}

/// Change the record of `t` (created when missing) and save it; the file is replaced
/// atomically. Failure to save is ignored: the state only feeds warnings.
pub fn update(t: &OpenTarget, f: impl FnOnce(&mut Record)) {
    change(t, true, |r| {
        f(r);
        true
    });
}

/// Read the file once, let `f` change `t`'s record (a new one only with `create`), and write
/// the file back when `f` says it changed something.
fn change(t: &OpenTarget, create: bool, f: impl FnOnce(&mut Record) -> bool) {
    let (Some(k), Some(path)) = (key(t), file()) else { return };
    let mut all = load_all();
    if !create && !all.contains_key(&k) {
        return;
    }
    let r = all.entry(k).or_default();
    r.path = t.path.display().to_string();
    if !f(r) {
        return;
    }
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let Ok(text) = serde_json::to_string_pretty(&all) else { return };
    let tmp = parent.join(format!(".devices.json.{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Unix seconds now.
pub fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// A run wrote `[0, end)` of `t` whole (a fill): counts as one complete write of the purged
/// range when it covers it.
pub fn record_full_write(t: &OpenTarget, end: u64) {
    change(t, false, |r| {
        let counts = r.purged_at.is_some() && end >= r.purged_bytes;
        if counts {
            r.full_writes = r.full_writes.saturating_add(1);
        }
        counts
    });
}
