//! The history database from the commands' side: where it is (`--history FILE`,
//! `--no-history`, `DISKMETER_HISTORY`), recording each measuring command's result with the
//! change since the last comparable run of the same device, and the `history` subcommands.
//!
//! Recording never costs the measurement: every failure (no place for the database, a
//! read-only or full disk, a newer schema, a corrupt file) becomes the warning
//! `history-not-recorded` in the result, which still prints and is still written by `-o`.

use crate::{Error, Result};
pub use history::{Filter, RunRow};
use stats::trend;
use stats::verdict::{self, Change};
use stats::{codes, HistoryNote, JobResult, ResultDoc, VsCell, VsLast};
use std::path::{Path, PathBuf};

/// The commands whose results are kept.
pub const RECORDED: [&str; 8] = ["mark", "run", "sla", "compare", "steady", "surface", "replay", "merge"];

/// The value of `DISKMETER_HISTORY` that keeps no history, as `--no-history` does (also the
/// empty value).
pub const OFF: &str = "off";

/// Where results go, as the user chose it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choice {
    /// `--history FILE`.
    pub file: Option<PathBuf>,
    /// `--no-history`.
    pub off: bool,
}

impl Choice {
    /// No history (an output that is not the run's result: another rank's own document).
    pub fn none() -> Choice {
        Choice { file: None, off: true }
    }

    /// The database to use: `None` when no history is kept (`--no-history`,
    /// `DISKMETER_HISTORY=off` or empty); else `--history`, `DISKMETER_HISTORY`, the XDG data
    /// folder (`%LOCALAPPDATA%` on Windows).
    pub fn path(&self) -> Option<std::result::Result<PathBuf, history::HistoryError>> {
        self.path_with(|k| std::env::var_os(k))
    }

    fn path_with(
        &self,
        get: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Option<std::result::Result<PathBuf, history::HistoryError>> {
        if self.off {
            return None;
        }
        if let Some(f) = &self.file {
            return Some(Ok(f.clone()));
        }
        match get(history::ENV_VAR) {
            Some(v) if v.is_empty() || v.eq_ignore_ascii_case(OFF) => None,
            Some(v) => Some(Ok(PathBuf::from(v))),
            None => Some(history::path_from_env(get, cfg!(windows)).ok_or(history::HistoryError::NoLocation)),
        }
    }

    /// The database for a `history` command: one must exist to be read.
    pub fn required(&self) -> Result<PathBuf> {
        match self.path() {
            None => Err(Error::usage(
                "no history database: DISKMETER_HISTORY is off and no --history FILE is given; name one with --history",
            )),
            Some(Ok(p)) => Ok(p),
            Some(Err(e)) => Err(Error::usage(e.to_string())),
        }
    }
}

/// Keeps `doc` in the history (a command of [`RECORDED`]), and notes in it its id and the
/// change since the last comparable run of the same device. Never fails: a database that
/// cannot be used becomes the warning `history-not-recorded`.
pub fn record(choice: &Choice, doc: &mut ResultDoc) {
    if !RECORDED.contains(&doc.command.as_str()) {
        return;
    }
    let Some(path) = choice.path() else { return };
    // SMART is read only for a result that has somewhere to go.
    if path.is_ok() && doc.smart.is_none() {
        doc.smart = smart_of_target(doc);
    }
    match path.map_err(|e| e.to_string()).and_then(|p| keep(&p, doc)) {
        Ok(note) => doc.history = Some(note),
        Err(why) => doc.warn(
            codes::HISTORY_NOT_RECORDED,
            format!("history: {why}; this result is complete but was not kept in the history"),
        ),
    }
}

/// How long the SMART read after a run may take.
const SMART_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The SMART figures of the physical disk under the result's target, read with smartctl
/// (`DISKMETER_SMARTCTL`, else the one `health` finds) after the run: `None` for a target that
/// is not on a physical disk (virtual disks never run smartctl), without smartctl, or when it
/// cannot read the disk (rights, a USB bridge that needs `-d`).
fn smart_of_target(doc: &ResultDoc) -> Option<stats::SmartSnapshot> {
    let t = doc.target.as_ref()?;
    if t.kind == stats::TargetKind::Null || t.disk.serial.is_none() && t.disk.wwn.is_none() {
        // Without a serial or WWN the disk is virtual or does not say who it is: nothing to follow.
        return None;
    }
    let explicit = std::env::var_os("DISKMETER_SMARTCTL").map(PathBuf::from);
    let mut cache = health::report::SourceCache::new(move || {
        health::smartctl::Smartctl::locate(explicit.as_deref())
            .map(|s| Box::new(s.with_timeout(SMART_TIMEOUT)) as Box<dyn health::smartctl::SmartSource>)
    });
    smart_snapshot(&t.path, &mut cache, &health::topology::SysPaths::default())
}

/// The SMART figures of the first disk under `device` (a device, partition or file) that
/// smartctl reads.
pub fn smart_snapshot(
    device: &str,
    cache: &mut health::report::SourceCache<'_>,
    sys: &health::topology::SysPaths,
) -> Option<stats::SmartSnapshot> {
    let cfg = health::report::HealthConfig { device: Some(device.to_string()), ..Default::default() };
    let doc = health::report::run(&cfg, cache, sys).ok()?;
    doc.disks.iter().find_map(|d| {
        let s = d.smart.as_ref()?;
        Some(stats::SmartSnapshot {
            device: d.path.clone(),
            percentage_used: s.wear.as_ref().map(|w| w.used_percent),
            temperature_c: s.temperature_c,
            data_written_bytes: s.written.as_ref().map(|w| w.bytes),
            media_errors: s.media_errors,
            power_on_hours: s.power_on_hours,
        })
    })
}

/// Keeps a `health` report in the history when it read SMART from at least one disk (a report
/// of virtual disks only has nothing to follow): the SMART figures of each disk join its device's
/// record. Never fails: a database that cannot be used becomes a warning of the report.
pub fn record_health(choice: &Choice, doc: &mut crate::health::HealthDoc) {
    if !doc.disks.iter().any(|d| d.smart.is_some()) {
        return;
    }
    let Some(path) = choice.path() else { return };
    let kept = path.map_err(|e| e.to_string()).and_then(|p| {
        let value = serde_json::to_value(&*doc).map_err(|e| format!("cannot serialise the report: {e}"))?;
        let mut store = history::Store::open(&p).map_err(|e| e.to_string())?;
        store.insert(&value).map_err(|e| e.to_string())
    });
    if let Err(why) = kept {
        doc.warnings.push(format!("history: {why}; this report is complete but was not kept in the history"));
    }
}

fn keep(path: &std::path::Path, doc: &mut ResultDoc) -> std::result::Result<HistoryNote, String> {
    let mut value = serde_json::to_value(&*doc).map_err(|e| format!("cannot serialise the result: {e}"))?;
    let mut store = history::Store::open(path).map_err(|e| e.to_string())?;
    // Hysteresis: a figure inside a warning's margin band keeps the verdict of the last
    // comparable run of this device (`stats::margin`). Reading that run is a courtesy: when it
    // fails, the band gives no warning, as a first run's would.
    if !doc.borderline.is_empty() {
        if let Ok(Some((row, old))) = store.last_like(&value) {
            doc.hold(Some((row.id, &stats::margin::given_codes(&old))));
            value = serde_json::to_value(&*doc).map_err(|e| format!("cannot serialise the result: {e}"))?;
        }
    }
    let id = store.insert(&value).map_err(|e| e.to_string())?;
    // The comparison is a courtesy: a failure to read the earlier run leaves it out.
    let vs = store
        .run(id)
        .ok()
        .flatten()
        .and_then(|row| store.last_comparable(&row.device_key, &row.key, Some(id)).ok().flatten())
        .and_then(|prev| {
            let old = store.get(prev.id).ok().flatten()?;
            let old: ResultDoc = serde_json::from_value(old).ok()?;
            Some(vs_last(prev.id, &prev.started_at, &old, doc))
        });
    Ok(HistoryNote { id, vs })
}

/// The MB/s samples of one direction of a job, as `compare` takes them: its passes, else the
/// seconds of its one run, else its one figure ([`stats::compare_docs::mb_s_samples`]).
pub fn samples(job: &JobResult, write: bool) -> (Vec<f64>, &'static str) {
    stats::compare_docs::mb_s_samples(job, write)
}

/// The samples of one direction as the verdict reads them.
fn sample<'a>(s: &'a (Vec<f64>, &'static str)) -> verdict::Sample<'a> {
    match s.1 {
        stats::compare_docs::UNIT_SECONDS => verdict::Sample::seconds(&s.0),
        _ => verdict::Sample::passes(&s.0),
    }
}

/// A trend point's values: the passes, or a run's seconds as the one pass they are (their
/// mean, as the verdict counts them).
fn trend_samples(s: (Vec<f64>, &'static str)) -> Vec<f64> {
    match s.1 {
        stats::compare_docs::UNIT_SECONDS if !s.0.is_empty() => vec![s.0.iter().sum::<f64>() / s.0.len() as f64],
        _ => s.0,
    }
}

/// The change of each job and direction of `new` against the same job of `old` (matched by
/// name), per-pass MB/s, judged by the one rule (`stats::verdict`).
pub fn vs_last(id: i64, started_at: &str, old: &ResultDoc, new: &ResultDoc) -> VsLast {
    let mut cells = Vec::new();
    for job in &new.results {
        let Some(before) = old.results.iter().find(|j| j.name == job.name) else { continue };
        for (write, direction) in [(false, "read"), (true, "write")] {
            let (a, b) = (samples(before, write), samples(job, write));
            if a.0.is_empty() || b.0.is_empty() || a.0.iter().chain(&b.0).all(|v| *v == 0.0) {
                continue;
            }
            let c: Change = verdict::judge(sample(&a), sample(&b), true);
            cells.push(VsCell {
                job: job.name.clone(),
                direction: direction.into(),
                pct: c.pct,
                ci_low_pct: c.ci_low_pct,
                ci_high_pct: c.ci_high_pct,
                verdict: c.verdict,
                basis: c.basis,
                n_a: c.n_a,
                n_b: c.n_b,
            });
        }
    }
    VsLast {
        id,
        started_at: started_at.to_string(),
        metric: "mb_s".into(),
        threshold_pct: verdict::NOISE_THRESHOLD_PCT,
        cells,
    }
}

// ---------------------------------------------------------------------------------------
// The `history` subcommands.

/// `history list`: the runs a filter selects, newest first.
pub fn list(path: &Path, filter: &history::Filter) -> Result<Vec<history::RunRow>> {
    let store = open_existing(path)?;
    store.list(filter).map_err(|e| Error::runtime(e.to_string()))
}

/// The runs as a table: id, start, command, device, target, then the model and the jobs. An
/// unknown model says so.
pub fn list_text(rows: &[history::RunRow]) -> String {
    if rows.is_empty() {
        return "no runs stored (a measuring command keeps each result; --no-history skips it)\n".into();
    }
    let clean = |s: &str| crate::input::sanitize(s);
    let target_width = rows.iter().map(|r| r.target.as_deref().map_or(7, |t| clean(t).chars().count())).max();
    let tw = target_width.unwrap_or(6).clamp(6, 48);
    let mut out = format!(
        "{:>6}  {:<20}  {:<8}  {:<16}  {:<tw$}  {}\n",
        "ID", "STARTED", "COMMAND", "DEVICE", "TARGET", "MODEL: WORKLOAD"
    );
    for r in rows {
        let started = r.started_at.get(..19).unwrap_or(&r.started_at).replace('T', " ");
        let model = r.model.as_deref().filter(|m| !m.is_empty()).unwrap_or("model unknown");
        let jobs: Vec<&str> = r.summary.iter().map(|j| j.name.as_str()).take(3).collect();
        let more = if r.summary.len() > 3 { ", …" } else { "" };
        let partial = if r.partial { " (partial)" } else { "" };
        let target = r.target.as_deref().map(clean).unwrap_or_else(|| "unknown".into());
        out.push_str(&format!(
            "{:>6}  {:<20}  {:<8}  {:<16}  {:<tw$}  {}{}{}{partial}\n",
            r.id,
            started,
            clean(&r.command),
            clean(&r.device),
            target,
            clean(model),
            if jobs.is_empty() { "" } else { ": " },
            clean(&format!("{}{more}", jobs.join(", "))),
        ));
    }
    out
}

/// Pretty JSON of `v` with a trailing newline (`list --json`, `show --json`).
pub fn json_text(v: &impl serde::Serialize) -> Result<String> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| Error::runtime(format!("cannot write JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// `history show ID`: the stored document, whole.
pub fn get(path: &Path, id: i64) -> Result<serde_json::Value> {
    let store = open_existing(path)?;
    store
        .get(id)
        .map_err(|e| Error::runtime(e.to_string()))?
        .ok_or_else(|| Error::usage(format!("no run {id} in the history database {}", path.display())))
}

/// A stored document as a result document (`show` renders it in any format).
pub fn as_result(id: i64, doc: serde_json::Value) -> Result<ResultDoc> {
    serde_json::from_value(doc)
        .map_err(|e| Error::usage(format!("run {id} is not a diskmeter result document ({e}); show it with --json")))
}

/// `history export`: every stored document, oldest first, one JSON object per line.
pub fn export(path: &Path, w: &mut dyn std::io::Write) -> Result<usize> {
    let store = open_existing(path)?;
    store.export(w).map_err(|e| Error::runtime(e.to_string()))
}

/// `history forget`: the runs `ids` (each must exist: nothing is forgotten otherwise), or every
/// run started before `before`. How many were forgotten.
pub fn forget(path: &Path, ids: &[i64], before: Option<&str>) -> Result<usize> {
    let mut store = open_existing(path)?;
    if let Some(date) = before {
        return store.forget_before(date).map_err(|e| Error::usage(e.to_string()));
    }
    for &id in ids {
        if store.run(id).map_err(|e| Error::runtime(e.to_string()))?.is_none() {
            return Err(Error::usage(format!(
                "no run {id} in the history database {}; nothing was forgotten",
                path.display()
            )));
        }
    }
    let mut n = 0;
    for &id in ids {
        n += usize::from(store.forget(id).map_err(|e| Error::runtime(e.to_string()))?);
    }
    Ok(n)
}

/// A trend's cell: the comparability key, the job's name and the direction.
type CellId = (String, String, &'static str);

/// `history trend DEVICE`: per job (card cell) and direction, the runs of the device with the
/// same workload, oldest first, and the change since the first and since the previous run.
/// Partial runs and results that are not diskmeter's own measurements are left out.
pub fn trend(path: &Path, device: &str) -> Result<trend::DeviceTrend> {
    let store = open_existing(path)?;
    let mut runs = store.runs_of_device(device).map_err(|e| Error::runtime(e.to_string()))?;
    if runs.is_empty() {
        return Err(Error::usage(format!(
            "no run of {device:?} in the history database {}; `history list` shows the devices it holds",
            path.display()
        )));
    }
    // A name can have meant several devices over time (a new loop0 is not the old one): the
    // trend follows one identity, the newest run's, matched whole.
    if let Some(newest) = runs.last().map(|(r, _)| r.device_key.clone()) {
        runs.retain(|(r, _)| r.device_key == newest);
    }
    // In the order first seen: (key, job, direction), command, ids, runs.
    let mut cells: Vec<(CellId, String, Vec<i64>, Vec<trend::Run>)> = Vec::new();
    for (row, doc) in runs {
        if row.partial {
            continue;
        }
        let Ok(doc) = serde_json::from_value::<ResultDoc>(doc) else { continue };
        for job in &doc.results {
            for (write, direction) in [(false, "read"), (true, "write")] {
                let samples = trend_samples(samples(job, write));
                if samples.is_empty() || samples.iter().all(|v| *v == 0.0) {
                    continue;
                }
                let id = (row.key.clone(), job.name.clone(), direction);
                let run = trend::Run { started_at: row.started_at.clone(), samples };
                match cells.iter_mut().find(|c| c.0 == id) {
                    Some(c) => {
                        c.2.push(row.id);
                        c.3.push(run);
                    }
                    None => cells.push((id, row.command.clone(), vec![row.id], vec![run])),
                }
            }
        }
    }
    let cells = cells
        .into_iter()
        .map(|((key, job, direction), command, run_ids, runs)| trend::CellTrend {
            job,
            direction: direction.into(),
            command,
            key,
            run_ids,
            trend: trend::trend(&trend::Series { higher_is_better: true, runs }),
        })
        .collect();
    Ok(trend::DeviceTrend {
        device: device.to_string(),
        metric: "mb_s".into(),
        threshold_pct: trend::NOISE_THRESHOLD_PCT,
        cells,
    })
}

/// `history diff A B`: `compare`'s statistics over two stored runs (B against A). Runs of
/// different workloads are refused, as `compare --results` refuses them.
pub fn diff(path: &Path, a: i64, b: i64) -> Result<ResultDoc> {
    let store = open_existing(path)?;
    let mut docs = Vec::new();
    for id in [a, b] {
        let doc = store
            .get(id)
            .map_err(|e| Error::runtime(e.to_string()))?
            .ok_or_else(|| Error::usage(format!("no run {id} in the history database {}", path.display())))?;
        let doc = as_result(id, doc)?;
        let day = doc.started_at.get(..10).unwrap_or(&doc.started_at).to_string();
        let subject = stats::compare::Subject {
            label: format!("run {id}"),
            source: format!("history run {id} of {day}"),
            device: doc.target.as_ref().and_then(|t| t.model.clone().or_else(|| t.device.clone())),
            folder: None,
        };
        docs.push((subject, doc));
    }
    crate::compare::compare_results(&docs, stats::compare::TestKind::Welch)
}

/// What `history import` made of one file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Imported {
    pub file: String,
    /// `result` (a diskmeter result), `export` (JSON Lines from `history export`) or `fio`.
    pub kind: &'static str,
    /// The new runs' ids.
    pub ids: Vec<i64>,
    /// Documents already stored (the same document imported before), not stored again.
    pub already: Vec<i64>,
}

/// `history import FILE…`: diskmeter result documents, `history export` files (JSON Lines) and
/// fio's own `--output-format=json` output (as runs of command `fio`). Every file is read and
/// checked first: one that is none of these is a usage error and nothing is imported. A document
/// stored before is not stored twice. The database is created when absent.
pub fn import(path: &Path, files: &[PathBuf]) -> Result<Vec<Imported>> {
    let mut parsed = Vec::new();
    for f in files {
        let shown = files::path::shown(f);
        let bytes = files::input::read_capped(f, "the file to import", files::input::RESULT_CAP)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::usage(format!("cannot import {shown}: it is not UTF-8 text")))?;
        let (kind, mut docs) = parse_import(f, &text)?;
        // The note of where another database kept it means nothing here.
        for d in &mut docs {
            if let Some(o) = d.as_object_mut() {
                o.remove("history");
            }
        }
        parsed.push((shown, (kind, docs)));
    }
    let mut store = history::Store::open(path).map_err(|e| Error::runtime(e.to_string()))?;
    let mut out = Vec::new();
    for (file, (kind, docs)) in parsed {
        let mut done = Imported { file, kind, ids: Vec::new(), already: Vec::new() };
        for d in docs {
            match store.find_same(&d).map_err(|e| Error::runtime(e.to_string()))? {
                Some(id) => done.already.push(id),
                None => done.ids.push(store.insert(&d).map_err(|e| Error::runtime(e.to_string()))?),
            }
        }
        out.push(done);
    }
    Ok(out)
}

/// One file to import as documents: a result, JSON Lines of results, or fio's JSON.
fn parse_import(f: &Path, text: &str) -> Result<(&'static str, Vec<serde_json::Value>)> {
    let shown = files::path::shown(f);
    let is_result = |v: &serde_json::Value| {
        matches!(
            v.get("schema").and_then(serde_json::Value::as_str),
            Some(stats::SCHEMA) | Some(history::HEALTH_SCHEMA)
        )
    };
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
        if is_result(&v) {
            if v.get("schema").and_then(serde_json::Value::as_str) == Some(stats::SCHEMA) {
                ResultDoc::from_json(text).map_err(|e| Error::usage(format!("cannot import {shown}: {e}")))?;
            }
            return Ok(("result", vec![v]));
        }
        if v.get("fio version").is_none() {
            return Err(Error::usage(format!(
                "cannot import {shown}: it is JSON but neither a diskmeter result (schema {}) nor fio's JSON output",
                stats::SCHEMA
            )));
        }
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() > 1 && lines.iter().all(|l| l.trim_start().starts_with('{')) {
        let mut docs = Vec::new();
        for (n, l) in lines.iter().enumerate() {
            let v: serde_json::Value = serde_json::from_str(l)
                .map_err(|e| Error::usage(format!("cannot import {shown}: line {} is not JSON ({e})", n + 1)))?;
            if !is_result(&v) {
                return Err(Error::usage(format!(
                    "cannot import {shown}: line {} is not a diskmeter result document",
                    n + 1
                )));
            }
            docs.push(v);
        }
        return Ok(("export", docs));
    }
    let doc = crate::fio_import::from_fio_json(text, &shown)?;
    let v = serde_json::to_value(&doc).map_err(|e| Error::runtime(format!("cannot convert {shown}: {e}")))?;
    Ok(("fio", vec![v]))
}

/// The store at `path`, which must exist (a history command never creates an empty one).
fn open_existing(path: &Path) -> Result<history::Store> {
    if !path.exists() {
        return Err(Error::usage(format!(
            "no history database at {}: nothing has been recorded there yet (give --history FILE to read another)",
            path.display()
        )));
    }
    history::Store::open(path).map_err(|e| Error::runtime(e.to_string()))
}

/// An id as typed (`42`), or a usage error naming it.
pub fn parse_id(s: &str) -> Result<i64> {
    s.trim()
        .parse::<i64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| Error::usage(format!("invalid run id {s:?}: give the number `history list` shows, such as 42")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_choice_follows_the_options_then_the_environment() {
        let off = Choice { file: Some("/x.db".into()), off: true };
        assert!(off.path_with(env(&[])).is_none(), "--no-history wins");
        let file = Choice { file: Some("/x.db".into()), off: false };
        let p = file.path_with(env(&[("DISKMETER_HISTORY", "/y.db")])).unwrap().unwrap();
        assert_eq!(p, PathBuf::from("/x.db"), "--history before the variable");
        let none = Choice::default();
        let p = none.path_with(env(&[("DISKMETER_HISTORY", "/y.db")])).unwrap().unwrap();
        assert_eq!(p, PathBuf::from("/y.db"));
        assert!(none.path_with(env(&[("DISKMETER_HISTORY", "off")])).is_none());
        assert!(none.path_with(env(&[("DISKMETER_HISTORY", "OFF")])).is_none());
        assert!(none.path_with(env(&[("DISKMETER_HISTORY", "")])).is_none());
        if !cfg!(windows) {
            let p = none.path_with(env(&[("XDG_DATA_HOME", "/d")])).unwrap().unwrap();
            assert_eq!(p, PathBuf::from("/d/diskmeter/history.db"));
        }
        assert!(matches!(none.path_with(env(&[])), Some(Err(_))), "nowhere to put it is an error, not a panic");
    }

    /// A fake sysfs with one SATA disk `sda` and a virtio disk `vda`.
    #[cfg(unix)]
    fn fake_sys() -> (tempfile::TempDir, health::topology::SysPaths) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        for dir in ["class/block", "block", "proc"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        for (name, path) in [
            ("sda", "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block"),
            ("vda", "pci0000:00/virtio1/block"),
        ] {
            let d = root.join("devices").join(path).join(name);
            std::fs::create_dir_all(d.join("slaves")).unwrap();
            std::fs::write(d.join("size"), "976773168\n").unwrap();
            std::fs::write(d.join("stat"), "100 0 800 10 50 0 1000 20 0 30 30\n").unwrap();
            std::os::unix::fs::symlink(&d, root.join("class/block").join(name)).unwrap();
            std::os::unix::fs::symlink(&d, root.join("block").join(name)).unwrap();
        }
        std::fs::write(root.join("proc/uptime"), "172800.00 300000.00\n").unwrap();
        let sys = health::topology::SysPaths {
            sys: root.to_path_buf(),
            proc_dir: root.join("proc"),
            dev: PathBuf::from("/dev"),
        };
        (t, sys)
    }

    #[cfg(unix)]
    #[test]
    fn a_run_on_a_physical_disk_carries_its_smart_figures() {
        let (_t, sys) = fake_sys();
        let fixtures = || {
            health::smartctl::FixtureSource::new((7, 3))
                .with("/dev/sda", include_str!("../../health/tests/data/sata-ssd.json"))
                .unwrap()
        };
        let mut cache =
            health::report::SourceCache::new(
                move || Ok(Box::new(fixtures()) as Box<dyn health::smartctl::SmartSource>),
            );
        let s = smart_snapshot("sda", &mut cache, &sys).expect("the SSD's figures");
        assert_eq!(s.device, "/dev/sda");
        assert_eq!(s.temperature_c, Some(36));
        assert_eq!(s.percentage_used, Some(19.0));
        assert_eq!(s.data_written_bytes, Some(64_777_770_148 * 512));
        assert_eq!(s.power_on_hours, Some(14551));
        // A virtual disk has no SMART of its own: smartctl is not even asked.
        let mut never = health::report::SourceCache::new(|| -> std::result::Result<_, health::HealthError> {
            panic!("smartctl run for a virtual disk")
        });
        assert!(smart_snapshot("vda", &mut never, &sys).is_none());
    }

    /// Hysteresis through the history: a figure inside a warning's margin band is given only
    /// when the last comparable run of the device gave the warning, and then every time.
    #[test]
    fn a_borderline_figure_keeps_the_last_comparable_runs_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let doc = |cpu: f64, started: &str| {
            let mut d =
                ResultDoc::new("run", started, stats::HostInfo { hostname: Some("h".into()), ..Default::default() });
            let spec = spec::JobSpec { name: "j".into(), ..spec::JobSpec::default() };
            let mut r = stats::JobResult::new(spec);
            r.read = Some(stats::DirStats::new(1000, 1000 * 4096, 1.0, &stats::LatHist::new(), 1.0));
            d.results.push(r);
            d.judge(&stats::margin::WORKER_CPU, cpu, format!("j: a worker thread ran at {cpu:.0}% CPU"));
            d
        };
        let codes = |d: &ResultDoc| d.warnings.iter().map(|w| w.code.clone()).collect::<Vec<_>>();
        // A first run inside the band: nothing earlier to hold, so no warning; named as borderline.
        let mut first = doc(90.0, "2026-11-29T10:00:00Z");
        keep(&db, &mut first).unwrap();
        assert!(codes(&first).is_empty(), "{:?}", first.warnings);
        assert_eq!(first.borderline.len(), 1);
        // Past the threshold: given.
        let mut given = doc(96.0, "2026-11-29T10:01:00Z");
        let note = keep(&db, &mut given).unwrap();
        assert_eq!(codes(&given), ["tool-bottleneck"]);
        // Back inside the band, twice: held both times, naming the run that gave it.
        for (i, at) in ["2026-11-29T10:02:00Z", "2026-11-29T10:03:00Z"].into_iter().enumerate() {
            let mut again = doc(88.0, at);
            let n = keep(&db, &mut again).unwrap();
            assert_eq!(codes(&again), ["tool-bottleneck"], "run {i}");
            let w = &again.warnings[0].message;
            assert!(w.contains("[held: 88 is inside this warning's margin band (85 to 95)"), "{w}");
            assert_eq!(again.borderline[0].held_by, Some(note.id + i as i64), "{w}");
            let _ = n;
        }
        // Short of the band: clear, and the next run in the band is not held.
        let mut clear = doc(50.0, "2026-11-29T10:04:00Z");
        keep(&db, &mut clear).unwrap();
        assert!(codes(&clear).is_empty() && clear.borderline.is_empty());
        let mut after = doc(90.0, "2026-11-29T10:05:00Z");
        keep(&db, &mut after).unwrap();
        assert!(codes(&after).is_empty(), "{:?}", after.warnings);
    }
}
