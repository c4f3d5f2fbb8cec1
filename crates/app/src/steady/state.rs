//! What diskmeter remembers about a device between runs: when `steady` purged it, how often
//! it has been written whole since, and the write cache a `--sustained` run found. The
//! `not-preconditioned` and `inside-write-cache` warnings rest on it (`docs/steady-state.md`).
//!
//! One JSON file, `devices.json`, in `$DISKMETER_STATE_DIR`, else `$XDG_STATE_HOME/diskmeter`,
//! else `~/.local/state/diskmeter`. A device is known by its one identity
//! (`platform::identity`: WWN, serial, a loop device's backing file and inode, …), matched whole;
//! a file by its file system, inode and size. Records written before (keyed `block MAJ:MIN SIZE
//! IDENT`) are found only by the same serial, WWID or backing file and size, never by the device
//! number, and move to the identity's key when next written. Losing the file only loses these
//! warnings: nothing else depends on it.

use engine::measure::{OpenTarget, TargetKind};
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

/// The key of an open target (`None` when its metadata cannot be read): a device by its one
/// identity (`platform::identity`, as the history knows it), a file by its file system, inode and
/// size.
pub fn key(t: &OpenTarget) -> Option<String> {
    match t.probe.kind {
        TargetKind::Block => t.probe.identity.key.as_ref().map(|k| device_key(k)),
        TargetKind::File => {
            let (dev, ino) = platform::fs::file_id(&t.file.metadata().ok()?)?;
            Some(format!("file {dev}:{ino} {}", t.probe.size_bytes))
        }
    }
}

/// The state file's key of a device of identity `identity`.
pub fn device_key(identity: &str) -> String {
    format!("device {identity}")
}

fn load_all() -> BTreeMap<String, Record> {
    file().and_then(|f| std::fs::read_to_string(f).ok()).and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default()
}

/// The record of `t`, if any (see [`lookup`]).
pub fn load(t: &OpenTarget) -> Option<Record> {
    let k = key(t)?;
    let mut all = load_all();
    match t.probe.kind {
        TargetKind::Block => {
            let legacy = legacy_of(t);
            lookup(&mut all, &k, legacy.as_ref()).map(|(_, r)| r)
        }
        TargetKind::File => all.remove(&k),
    }
}

/// What a record written before devices had one identity was keyed by: `block MAJ:MIN SIZE
/// IDENT`, IDENT the serial, WWID or loop backing file (empty for a device that said nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legacy {
    pub size: u64,
    pub ident: String,
}

fn legacy_of(t: &OpenTarget) -> Option<Legacy> {
    let id = &t.probe.identity;
    let ident = id
        .serial
        .clone()
        .or_else(|| id.wwn.clone())
        .or_else(|| t.probe.model.as_deref().and_then(|m| m.strip_prefix("loop over ")).map(str::to_string))?;
    Some(Legacy { size: t.probe.size_bytes, ident })
}

/// The record of the device whose key is `k`, matched whole; else one written before devices had
/// one identity, when it names the same serial, WWID or backing file and the same size — never a
/// record found by its device number alone (a new loop0 is not the old loop0). The key the record
/// is kept under comes with it.
fn lookup(all: &mut BTreeMap<String, Record>, k: &str, legacy: Option<&Legacy>) -> Option<(String, Record)> {
    if let Some(r) = all.remove(k) {
        return Some((k.to_string(), r));
    }
    let l = legacy.filter(|l| !l.ident.trim().is_empty())?;
    let old = all.keys().find(|old| legacy_matches(old, l))?.clone();
    all.remove(&old).map(|r| (old, r))
}

fn legacy_matches(old: &str, l: &Legacy) -> bool {
    let Some(rest) = old.strip_prefix("block ") else { return false };
    let mut parts = rest.splitn(3, ' ');
    let (_number, size, ident) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
    size.and_then(|s| s.parse::<u64>().ok()) == Some(l.size) && ident.trim() == l.ident.trim()
}

/// The record of the device of identity `identity` (its size and what it says of itself for
/// records written before identities), and where it is kept.
pub fn for_device(identity: &str, legacy: Option<&Legacy>) -> Option<(Record, String)> {
    let path = file()?;
    let (_, rec) = lookup(&mut load_all(), &device_key(identity), legacy)?;
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
    // A record kept under its old key moves to the device's identity.
    let found = match t.probe.kind {
        TargetKind::Block => lookup(&mut all, &k, legacy_of(t).as_ref()).map(|(_, r)| r),
        TargetKind::File => all.remove(&k),
    };
    if !create && found.is_none() {
        return;
    }
    let r = all.entry(k).or_insert_with(|| found.unwrap_or_default());
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
