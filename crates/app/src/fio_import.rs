//! fio's own JSON output (`--output-format=json`, or `json+`) as a diskmeter result document,
//! so that `diskmeter history import` can keep a user's old fio results beside diskmeter's.
//!
//! The document is of its own kind (`command` `fio`): fio's figures as fio measured them, one
//! [`JobResult`] per job entry of fio's output. What fio does not give is left at 0 or empty,
//! never estimated:
//!
//! - `qd_mean` (fio gives only a histogram of depths, `iodepth_level`) and the device's view
//!   (`disk_util` holds whole-run counters, not per-job ones);
//! - `series` (fio keeps time series in its log files, not in its JSON), `passes` (one pass),
//!   `histograms` (`json+`'s `bins` are fio's own buckets, not HDR histograms);
//! - the host, beyond the `hostname` of fio's client/server output: kernel, CPUs and memory are
//!   0 or absent;
//! - the target's size and block sizes (0): fio does not write them.
//!
//! Latency: `min`, `mean`, `stddev` and `max` are fio's `lat_ns` (submission + completion, the
//! closest to diskmeter's issue-to-reap latency). The percentiles (`p50` … `p99_99`) and the CDF
//! points are the ones fio printed: `lat_ns`'s when fio ran with `lat_percentiles=1`, otherwise
//! `clat_ns`'s, which leave out the submission time (`slat`). A percentile fio did not print
//! (`percentile_list`) is 0. fio 2.x output (latencies in µs under `lat`/`clat`, `io_bytes` in
//! KiB) is read too, with its coarser units.
//!
//! `started_at` is fio's `timestamp`: the moment fio wrote its output, at the end of the run.

use crate::Error;
use serde_json::Value;
use spec::units::{self, TimeUnit};
use spec::{BlockSizes, DirSizes, EngineKind, JobSpec, RwMode, SizeChoice};
use stats::{
    CdfPoint, CpuUsage, DirStats, ErrorInfo, HostInfo, JobResult, LatSummary, ResultDoc, TargetInfo, TargetKind,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The warning code every imported fio document carries, with the caveats of the import.
const IMPORTED: &str = stats::codes::IMPORTED_FIO;

/// How to make what this module reads, for error messages.
const HOW: &str = "make one with `fio --output-format=json --output=FILE job.fio`";

/// Line-start `{` tried as the start of the JSON before giving up (fio's notes come first).
const MAX_STARTS: usize = 8;

/// Convert fio's JSON output `text`, read from `source` (a file name, for messages), into a
/// result document of the command `fio`.
///
/// Text before the JSON (fio's `note: …` lines) and after it is skipped. Errors are usage
/// errors of one line: not fio JSON output (no `"fio version"` and `"jobs"`), truncated or
/// malformed JSON, no job, or no timestamp.
pub fn from_fio_json(text: &str, source: &str) -> Result<ResultDoc, Error> {
    let shown = files::path::shown(Path::new(source));
    let not_fio = |why: &str| Error::usage(format!("{shown} is not fio JSON output: {why}; {HOW}"));
    let root = find_json(text).map_err(|why| not_fio(&why))?;
    let jobs = match (root.get("fio version"), jobs_of(&root)) {
        (Some(_), Some(jobs)) => jobs,
        _ => return Err(not_fio("it has no \"fio version\" and \"jobs\"")),
    };
    if jobs.is_empty() {
        return Err(not_fio("it holds no job"));
    }
    let started_at = started_at(&root)
        .ok_or_else(|| Error::usage(format!("{shown} has no usable \"timestamp\": cannot tell when fio ran; {HOW}")))?;
    let host = HostInfo {
        hostname: root
            .get("hostname")
            .or_else(|| jobs.first().and_then(|j| j.get("hostname")))
            .and_then(Value::as_str)
            .filter(|h| !h.is_empty())
            .map(clean),
        ..HostInfo::default()
    };
    let mut doc = ResultDoc::new("fio", started_at, host);
    doc.warn(
        IMPORTED,
        format!("imported from fio's JSON output ({shown}): fio's own figures; no device view, no histogram, one pass"),
    );
    let global = options(root.get("global options"));
    let mut notes = Notes::default();
    let mut first_opts: Option<BTreeMap<String, String>> = None;
    let ids: Vec<(String, u64)> = jobs.iter().enumerate().map(|(i, j)| job_id(j, i)).collect();
    let mut entries: BTreeMap<&(String, u64), usize> = BTreeMap::new();
    for id in &ids {
        *entries.entry(id).or_insert(0) += 1;
    }
    let mut seen: BTreeMap<&(String, u64), usize> = BTreeMap::new();
    for (job, id) in jobs.iter().zip(&ids) {
        let clones = entries.get(id).copied().unwrap_or(1);
        let k = seen.entry(id).or_insert(0);
        *k += 1;
        let mut opts = global.clone();
        opts.extend(options(job.get("job options")));
        if first_opts.is_none() && (opts.contains_key("filename") || opts.contains_key("directory")) {
            first_opts = Some(opts.clone());
        }
        doc.results.push(job_result(job, &id.0, &opts, (*k, clones), &mut notes));
    }
    doc.target = first_opts.and_then(|o| target(&o, &root));
    notes.into_warnings(&mut doc);
    Ok(doc)
}

/// The first JSON object of `text` that starts a line (after fio's notes), else at its first `{`.
fn find_json(text: &str) -> Result<Value, String> {
    let mut starts: Vec<usize> = Vec::new();
    let mut line_start = true;
    for (i, c) in text.char_indices() {
        if c == '{' && line_start {
            starts.push(i);
            if starts.len() == MAX_STARTS {
                break;
            }
        }
        if c == '\n' {
            line_start = true;
        } else if !c.is_whitespace() {
            line_start = false;
        }
    }
    let first = text.find('{').ok_or("it holds no JSON object")?;
    if !starts.contains(&first) {
        starts.insert(0, first);
    }
    let mut first_error = None;
    for at in starts {
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(v)) if v.get("fio version").is_some() => return Ok(v),
            Some(Ok(v)) => {
                first_error.get_or_insert_with(|| match v {
                    Value::Object(_) => "it has no \"fio version\" and \"jobs\"".to_string(),
                    _ => "it holds no JSON object".to_string(),
                });
            }
            Some(Err(e)) => {
                let why = if e.is_eof() {
                    format!("its JSON ends early (truncated?): {e}")
                } else {
                    format!("its JSON is malformed: {e}")
                };
                first_error.get_or_insert(why);
            }
            None => {}
        }
    }
    Err(first_error.unwrap_or_else(|| "it holds no JSON object".to_string()))
}

/// fio's job entries: `jobs`, or in client/server output `client_stats` without the
/// "All clients" sums.
fn jobs_of(root: &Value) -> Option<Vec<&Value>> {
    if let Some(jobs) = root.get("jobs").and_then(Value::as_array) {
        return Some(jobs.iter().filter(|j| j.is_object()).collect());
    }
    let stats = root.get("client_stats").and_then(Value::as_array)?;
    Some(
        stats
            .iter()
            .filter(|j| j.is_object() && j.get("jobname").and_then(Value::as_str) != Some("All clients"))
            .collect(),
    )
}

/// `timestamp` (Unix seconds), else `timestamp_ms`, as RFC 3339 UTC.
fn started_at(root: &Value) -> Option<String> {
    // humantime formats years up to 9999 only.
    const LAST: u64 = 253_402_300_799;
    let secs = match root.get("timestamp").and_then(Value::as_u64) {
        Some(s) => s,
        None => root.get("timestamp_ms").and_then(Value::as_u64)? / 1000,
    };
    if secs == 0 || secs > LAST {
        return None;
    }
    let t = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs))?;
    Some(humantime::format_rfc3339_seconds(t).to_string())
}

/// A job's name and reporting group (clones of one job share both).
fn job_id(job: &Value, i: usize) -> (String, u64) {
    let name = job.get("jobname").and_then(Value::as_str).map(clean).unwrap_or_else(|| format!("job{}", i + 1));
    (name, job.get("groupid").and_then(Value::as_u64).unwrap_or(0))
}

/// fio's options as it printed them (`"bs" : "4k"`); numbers and booleans as their text.
fn options(v: Option<&Value>) -> BTreeMap<String, String> {
    let Some(Value::Object(map)) = v else { return BTreeMap::new() };
    map.iter()
        .filter_map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => u8::from(*b).to_string(),
                _ => return None,
            };
            Some((k.clone(), s))
        })
        .collect()
}

/// What the import could not place or had to adjust, turned into warnings once at the end
/// (at most [`Notes::MAX`] lines, then their count: a file may hold thousands of jobs).
#[derive(Default)]
struct Notes {
    lines: Vec<String>,
    more: usize,
    buffered: Vec<String>,
    /// fio's engine → diskmeter's stand-in and the jobs that ran it.
    substituted: BTreeMap<String, (EngineKind, Vec<String>)>,
}

impl Notes {
    const MAX: usize = 20;

    fn add(&mut self, s: String) {
        if self.lines.contains(&s) {
            return;
        }
        if self.lines.len() < Self::MAX {
            self.lines.push(s);
        } else {
            self.more += 1;
        }
    }

    fn into_warnings(self, doc: &mut ResultDoc) {
        for s in self.lines {
            doc.warn(IMPORTED, s);
        }
        if self.more > 0 {
            doc.warn(IMPORTED, format!("{} more notes on the import left out", self.more));
        }
        for (fio, (engine, jobs)) in self.substituted {
            doc.warn(
                stats::codes::ENGINE_SUBSTITUTED,
                format!(
                    "fio's ioengine={fio} of {} is recorded as {} (diskmeter has no {fio} engine)",
                    list(&jobs),
                    engine.name()
                ),
            );
        }
        if !self.buffered.is_empty() {
            doc.warn(
                stats::codes::BUFFERED_IO,
                format!(
                    "fio ran {} buffered (direct=0): the page cache (RAM) serves and absorbs I/O, so figures \
                     describe memory as much as the device",
                    list(&self.buffered)
                ),
            );
        }
    }
}

fn list(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = names.iter().take(SHOWN).map(|n| format!("[{n}]")).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

/// One fio job entry. `clone` is (its number, how many entries share its name and group):
/// fio reports `numjobs` clones one by one unless `group_reporting` merges them.
fn job_result(
    job: &Value,
    name: &str,
    opts: &BTreeMap<String, String>,
    clone: (usize, usize),
    notes: &mut Notes,
) -> JobResult {
    let mut spec = job_spec(name, opts, notes);
    if clone.1 > 1 {
        spec.name = format!("{name} #{}", clone.0);
        spec.threads = 1;
        notes.add(format!(
            "fio reported the {} clones of [{name}] one by one (no group_reporting): imported as {} jobs of one \
             worker each",
            clone.1, clone.1
        ));
    }
    if spec.runtime.is_zero() {
        let ms = job.get("job_runtime").and_then(Value::as_u64).unwrap_or(0);
        spec.runtime = std::time::Duration::from_millis(ms);
    }
    if !spec.direct {
        notes.buffered.push(spec.name.clone());
    }
    let threads = spec.threads;
    let mut r = JobResult::new(spec);
    r.read = dir_stats(job.get("read"));
    r.write = dir_stats(job.get("write"));
    if r.read.is_none() && r.write.is_none() {
        if let Some(mixed) = dir_stats(job.get("mixed")) {
            match r.spec.rw.read_pct(50) {
                100 => r.read = Some(mixed),
                0 => r.write = Some(mixed),
                _ => notes.add(format!(
                    "[{}]: fio summed reads and writes into one figure (unified_rw_reporting), which has no place \
                     in diskmeter's read and write figures: left out",
                    r.name
                )),
            }
        }
    }
    let trims = job.pointer("/trim/total_ios").and_then(Value::as_u64).unwrap_or(0);
    if trims > 0 {
        notes.add(format!("[{}]: fio's {trims} trims have no place in diskmeter's figures: left out", r.name));
    }
    r.fsyncs = job.pointer("/sync/total_ios").and_then(Value::as_u64).unwrap_or(0);
    r.errors = job.get("total_err").and_then(Value::as_u64).unwrap_or(0);
    let errno = job.get("error").and_then(Value::as_i64).unwrap_or(0);
    if errno != 0 {
        let mut e = ErrorInfo::new("io", format!("fio ended the job with error {errno}"));
        e.job = Some(r.name.clone());
        r.error = Some(e);
    }
    // fio's usr_cpu/sys_cpu are per worker (summed times over summed run times): the whole job's
    // share, which diskmeter reports, only equals them for one worker.
    if threads == 1 {
        let pct = |k: &str| job.get(k).and_then(Value::as_f64).filter(|x| x.is_finite() && *x >= 0.0).unwrap_or(0.0);
        r.cpu = CpuUsage {
            user_pct: pct("usr_cpu"),
            sys_pct: pct("sys_cpu"),
            max_worker_pct: pct("usr_cpu") + pct("sys_cpu"),
            poll_us: 0,
        };
    }
    r
}

/// The job's workload from fio's options, with fio's defaults where it sets none (fio writes
/// only the options a job file or command line set, and none of the flags such as
/// `time_based`). A value the spec's parsers refuse keeps the default and is noted.
fn job_spec(name: &str, o: &BTreeMap<String, String>, notes: &mut Notes) -> JobSpec {
    let mut s = JobSpec {
        name: name.to_string(),
        rw: RwMode::Read,
        mix: 50,
        bs: JobSpec::DEFAULT_BS,
        qd: 1,
        threads: 1,
        size: None,
        offset: 0,
        runtime: std::time::Duration::ZERO,
        ramp: std::time::Duration::ZERO,
        time_based: false,
        direct: false,
        engine: EngineKind::Psync,
        ..JobSpec::default()
    };
    let get = |keys: &[&'static str]| opt(o, keys);
    let mut bad = |key: &str, value: &str, why: String| {
        notes.add(format!("[{name}]: fio's {key}={} not understood ({why}): left at fio's default", clean(value)));
    };
    if let Some((k, v)) = get(&["rw", "readwrite"]) {
        // `randrw:8` — the modifier does not change the mode.
        let mode = v.split(':').next().unwrap_or(v);
        match RwMode::parse(mode) {
            Some(m) => s.rw = m,
            None => bad(k, v, format!("diskmeter's modes are {}", RwMode::NAMES)),
        }
    }
    if let Some((k, v)) = get(&["rwmixread"]) {
        match units::parse_percent(k, v) {
            Ok(p) => s.mix = p.round() as u8,
            Err(e) => bad(k, v, e.to_string()),
        }
    } else if let Some((k, v)) = get(&["rwmixwrite"]) {
        match units::parse_percent(k, v) {
            Ok(p) => s.mix = 100 - p.round() as u8,
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    block_sizes(&mut s, o, &mut bad);
    if let Some((k, v)) = get(&["iodepth"]) {
        match units::parse_count(k, v).map(u32::try_from) {
            Ok(Ok(n)) if n > 0 => s.qd = n,
            Ok(_) => bad(k, v, "not a depth".into()),
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    if let Some((k, v)) = get(&["numjobs"]) {
        match units::parse_count(k, v).map(u32::try_from) {
            Ok(Ok(n)) if n > 0 => s.threads = n,
            Ok(_) => bad(k, v, "not a number of jobs".into()),
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    if let Some((k, v)) = get(&["size", "filesize"]) {
        match v.strip_suffix('%').map(|p| units::parse_percent(k, p)) {
            Some(Ok(p)) => s.size_pct = Some(p),
            Some(Err(e)) => bad(k, v, e.to_string()),
            None => match units::parse_size(k, v) {
                Ok(n) => s.size = Some(n),
                Err(e) => bad(k, v, e.to_string()),
            },
        }
    }
    if let Some((k, v)) = get(&["offset"]) {
        match units::parse_size(k, v) {
            Ok(n) => s.offset = n,
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    for (key, field) in [("runtime", &mut s.runtime), ("ramp_time", &mut s.ramp)] {
        if let Some((k, v)) = get(&[key]) {
            match units::parse_duration(k, v, TimeUnit::Seconds) {
                Ok(d) => *field = d,
                Err(e) => bad(k, v, e.to_string()),
            }
        }
    }
    s.time_based = o.contains_key("time_based");
    if let Some((k, v)) = get(&["direct"]) {
        match units::parse_count(k, v) {
            Ok(n) => s.direct = n != 0,
            Err(e) => bad(k, v, e.to_string()),
        }
    } else if let Some((k, v)) = get(&["buffered"]) {
        match units::parse_count(k, v) {
            Ok(n) => s.direct = n == 0,
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    if let Some((k, v)) = get(&["fsync"]) {
        match units::parse_count(k, v).map(u32::try_from) {
            Ok(Ok(n)) => s.fsync = n,
            Ok(Err(_)) => bad(k, v, "too large".into()),
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    if let Some((k, v)) = get(&["random_distribution"]) {
        match units::parse_distribution(k, v) {
            Ok(d) => s.dist = d,
            Err(e) => bad(k, v, e.to_string()),
        }
    }
    if let Some((_, v)) = get(&["ioengine"]) {
        let (engine, substituted) = engine(v);
        s.engine = engine;
        if substituted {
            let jobs = &mut notes.substituted.entry(clean(v)).or_insert_with(|| (engine, Vec::new())).1;
            if jobs.last().map(String::as_str) != Some(name) {
                jobs.push(name.to_string());
            }
        }
    }
    // fio caps a synchronous engine's depth at 1 ("note: both iodepth >= 1 and synchronous I/O
    // engine are selected, queue depth will be capped at 1"): the job ran at depth 1.
    if !s.engine.is_async() {
        s.qd = 1;
    }
    if let Some((_, v)) = get(&["filename"]) {
        s.target = first_file(v).map(PathBuf::from);
    } else if let Some((_, v)) = get(&["directory"]) {
        s.target = first_file(v).map(PathBuf::from);
    }
    s
}

/// `bs`/`blocksize` (`4k`, `4096`, `4k,64k`: reads, writes, trims), `bsrange` and `bssplit`, read
/// with the spec's own parsers. `bs` is the largest size; `block_sizes` is set when the sizes
/// vary.
fn block_sizes(s: &mut JobSpec, o: &BTreeMap<String, String>, bad: &mut impl FnMut(&str, &str, String)) {
    let get = |keys: &[&'static str]| opt(o, keys);
    let per_dir = |v: &str| -> [Option<String>; 2] {
        let mut parts = v.split(',').map(str::trim);
        let r = parts.next().filter(|p| !p.is_empty()).map(str::to_string);
        // One value sets both directions; an empty one keeps fio's default (4k).
        let w = match parts.next() {
            None => r.clone(),
            Some(p) => Some(p.to_string()).filter(|p| !p.is_empty()),
        };
        [r, w]
    };
    let mut dirs = [DirSizes::fixed(JobSpec::DEFAULT_BS), DirSizes::fixed(JobSpec::DEFAULT_BS)];
    let mut any = false;
    let mut apply = |key: &str, v: &str, f: &dyn Fn(&str, &str) -> Result<SizeChoice, spec::SpecError>| {
        let mut parsed = [None, None];
        for (i, p) in per_dir(v).into_iter().enumerate() {
            if let Some(p) = p {
                match f(key, &p) {
                    Ok(c) => parsed[i] = Some(c),
                    Err(e) => return bad(key, v, e.to_string()),
                }
            }
        }
        for (d, c) in dirs.iter_mut().zip(parsed) {
            if let Some(c) = c {
                d.sizes = c;
                any = true;
            }
        }
    };
    if let Some((k, v)) = get(&["bs", "blocksize"]) {
        apply(k, v, &|k, p| match units::parse_size(k, p) {
            Ok(0) => Err(spec::SpecError::value(k, "a block size cannot be 0")),
            Ok(bs) => Ok(SizeChoice::Fixed { bs }),
            Err(e) => Err(e),
        });
    }
    if let Some((k, v)) = get(&["bsrange", "blocksize_range"]) {
        apply(k, v, &|k, p| units::parse_bsrange(k, p).map(|(min, max)| SizeChoice::Range { min, max }));
    }
    if let Some((k, v)) = get(&["bssplit"]) {
        apply(k, v, &|k, p| units::parse_bssplit(k, p).map(|parts| SizeChoice::Split { parts }));
    }
    if !any {
        return;
    }
    let [read, write] = dirs;
    let sizes = BlockSizes { read, write, unaligned: false };
    s.bs = sizes.max().max(1);
    s.block_sizes = sizes.normalized();
}

/// The first of `keys` that fio's options set, with its value.
fn opt<'a>(o: &'a BTreeMap<String, String>, keys: &[&'static str]) -> Option<(&'static str, &'a str)> {
    keys.iter().find_map(|k| o.get(*k).map(|v| (*k, v.trim())))
}

/// diskmeter's engine for fio's `ioengine`, and whether it is a stand-in (as for job files:
/// libaio runs as io_uring, the sync family as psync; anything else is recorded as psync).
fn engine(v: &str) -> (EngineKind, bool) {
    match v {
        "io_uring" => (EngineKind::IoUring, false),
        "psync" => (EngineKind::Psync, false),
        "null" => (EngineKind::Null, false),
        "windowsaio" => (EngineKind::Iocp, false),
        "libaio" | "posixaio" | "io_uring_cmd" => (EngineKind::IoUring, true),
        _ => (EngineKind::Psync, true),
    }
}

/// The first file of fio's `filename=a:b` (`\:` is a colon inside a name).
fn first_file(v: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.push(':');
                chars.next();
            }
            ':' => break,
            c => out.push(c),
        }
    }
    let out = out.trim().to_string();
    (!out.is_empty()).then_some(out)
}

/// One direction's figures; `None` when it did no I/O.
fn dir_stats(d: Option<&Value>) -> Option<DirStats> {
    let d = d.filter(|d| d.is_object())?;
    // fio 3 writes latencies in ns (`lat_ns`) and io_bytes in bytes (beside io_kbytes); fio 2
    // wrote µs (`lat`) and io_bytes in KiB.
    let v2 = d.get("lat_ns").is_none() && d.get("clat_ns").is_none() && d.get("clat").is_some();
    let kib = d.get("io_kbytes").is_none() && d.get("bw_bytes").is_none();
    let seconds = d.get("runtime").map(count).unwrap_or(0) as f64 / 1000.0;
    let ops = match d.get("total_ios") {
        Some(n) => count(n),
        None => saturate(d.get("iops").and_then(Value::as_f64).unwrap_or(0.0) * seconds),
    };
    let io = d.get("io_bytes").map(count).unwrap_or(0);
    let bytes = if kib { io.saturating_mul(1024) } else { io };
    if ops == 0 && bytes == 0 {
        return None;
    }
    let (lat, clat, scale) =
        if v2 { (d.get("lat"), d.get("clat"), 1000.0) } else { (d.get("lat_ns"), d.get("clat_ns"), 1.0) };
    let samples = |x: Option<&Value>| x.and_then(|x| x.get("N")).map(count).unwrap_or(0);
    // `disable_lat` leaves lat empty: completion latency is then the figure fio has.
    let total = if samples(lat) == 0 && samples(clat) > 0 { clat } else { lat };
    let pct_src = [lat, clat].into_iter().flatten().find(|x| x.get("percentile").is_some_and(Value::is_object));
    let figure =
        |x: Option<&Value>, k: &str| finite(x.and_then(|x| x.get(k)).and_then(Value::as_f64).unwrap_or(0.0) * scale);
    let mut lat_ns = LatSummary {
        min: saturate(figure(total, "min")),
        mean: figure(total, "mean"),
        stddev: figure(total, "stddev"),
        max: saturate(figure(total, "max")),
        ..LatSummary::default()
    };
    let points = percentiles(pct_src, scale);
    for (p, ns) in &points {
        let slot = match p {
            p if (p - 50.0).abs() < 1e-6 => &mut lat_ns.p50,
            p if (p - 90.0).abs() < 1e-6 => &mut lat_ns.p90,
            p if (p - 99.0).abs() < 1e-6 => &mut lat_ns.p99,
            p if (p - 99.9).abs() < 1e-6 => &mut lat_ns.p99_9,
            p if (p - 99.99).abs() < 1e-6 => &mut lat_ns.p99_99,
            _ => continue,
        };
        *slot = *ns;
    }
    let mut lat_cdf = Vec::new();
    if !points.is_empty() {
        let ends = |k: &str| saturate(figure(pct_src, k));
        lat_cdf.push(CdfPoint { fraction: 0.0, ns: ends("min") });
        lat_cdf.extend(points.iter().map(|(p, ns)| CdfPoint { fraction: p / 100.0, ns: *ns }));
        lat_cdf.push(CdfPoint { fraction: 1.0, ns: ends("max") });
        lat_cdf.retain(|c| c.ns > 0);
    }
    let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    Some(DirStats {
        bound: None,
        ops,
        bytes,
        seconds,
        iops: per_s(ops as f64),
        mb_s: per_s(bytes as f64 / 1e6),
        mib_s: per_s(bytes as f64 / 1_048_576.0),
        lat_ns,
        qd_mean: 0.0,
        lat_cdf,
    })
}

/// fio's `"percentile" : {"99.000000" : 83456, …}` as (percent, ns), in order.
fn percentiles(src: Option<&Value>, scale: f64) -> Vec<(f64, u64)> {
    let Some(Value::Object(map)) = src.and_then(|s| s.get("percentile")) else { return Vec::new() };
    let mut out: Vec<(f64, u64)> = map
        .iter()
        .filter_map(|(k, v)| {
            let p: f64 = k.trim().parse().ok()?;
            let ns = v.as_f64()? * scale;
            (p > 0.0 && p < 100.0 && ns.is_finite()).then(|| (p, saturate(ns)))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The target: the first job's file (`filename`) or folder (`directory`), with the device from
/// fio's `disk_util`.
fn target(o: &BTreeMap<String, String>, root: &Value) -> Option<TargetInfo> {
    let device = root.pointer("/disk_util/0/name").and_then(Value::as_str).filter(|d| !d.is_empty()).map(clean);
    let (folder, path) = match (opt(o, &["filename"]), opt(o, &["directory"])) {
        (Some((_, f)), _) => (false, first_file(f)?),
        (None, Some((_, d))) => (true, first_file(d)?),
        (None, None) => return None,
    };
    let path = clean(&path);
    let block = (path.starts_with("/dev/") && !path.starts_with("/dev/shm/")) || path.starts_with(r"\\.\");
    let kind = if block { TargetKind::Block } else { TargetKind::File };
    let mut t = TargetInfo::new(path, kind, 0);
    // fio does not say: 0 is "unknown", not a claim.
    t.logical_block = 0;
    t.physical_block = 0;
    t.device = device;
    if folder {
        t.folder = Some(t.path.clone());
    }
    Some(t)
}

/// Text from the file for messages and names: control characters shown as `?`.
fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// A count from fio's JSON: a non-negative integer (a float is truncated, a negative is 0).
fn count(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| saturate(v.as_f64().unwrap_or(0.0)))
}

fn saturate(x: f64) -> u64 {
    // `as` saturates and maps NaN to 0.
    if x.is_finite() && x > 0.0 {
        x as u64
    } else {
        0
    }
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}
