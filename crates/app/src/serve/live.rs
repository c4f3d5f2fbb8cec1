//! The mark started from the browser: checked with `mark`'s own rules, one at a time, run on a
//! thread of its own whose progress (phases, live rates, each card cell as it is measured)
//! goes to the browsers watching, then kept in the history like a `mark` on the command line.

use crate::history::{self as hist, Choice};
use crate::mark;
use crate::session::{Observer, TargetFlags, DEFAULT_ENGINE};
use engine::measure::Tick;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};
use web::{Cell, EventSink, MarkEvent, MarkRequest, Refusal};

/// Live rates and fill progress are sent at most this often.
const EVERY: Duration = Duration::from_millis(250);

/// The mark running now, if any.
#[derive(Default)]
pub(crate) struct Marks {
    current: Arc<Mutex<Option<Running>>>,
}

struct Running {
    stop: Arc<AtomicBool>,
    target: String,
    /// When it started, `HH:MM` UTC.
    since: String,
}

fn lock(m: &Mutex<Option<Running>>) -> MutexGuard<'_, Option<Running>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `mark`'s options for a request from the browser: what the form has, nothing more. A file
/// diskmeter did not create is never overwritten and nothing is kept (`overwrite` and `keep`
/// stay off); a device is written only with `destroy_data` as typed.
pub(crate) fn options(req: &MarkRequest) -> mark::Options {
    let profile = req.profile.trim();
    mark::Options {
        target: Some(PathBuf::from(req.target.trim())),
        profile: if profile.is_empty() { mark::PROFILE.to_string() } else { profile.to_string() },
        mix: false,
        size: req.size.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string),
        passes: None,
        time: None,
        interval: None,
        no_warmup: false,
        quick: req.quick,
        engine: DEFAULT_ENGINE.to_string(),
        seed: None,
        flags: TargetFlags { destroy_data: req.destroy_data.as_ref().map(PathBuf::from), ..TargetFlags::default() },
        start_at: None,
        rank: Default::default(),
        sustained: false,
        recovery: None,
    }
}

/// A block device is written only when the browser typed its exact name, as `--destroy-data`
/// on the command line; the engine's guard then still checks mounts and signatures.
fn device_guard(target: &str, destroy_data: Option<&str>) -> Result<(), Refusal> {
    let is_device = engine::measure::probe(Path::new(target))
        .map(|p| p.kind == engine::measure::TargetKind::Block)
        .unwrap_or(false);
    if is_device && destroy_data != Some(target) {
        return Err(Refusal::unprocessable(format!(
            "{target} is a block device: a mark writes it and destroys its data; type its exact name {target} in \
             “Destroy data” to allow that"
        )));
    }
    Ok(())
}

/// The form's field for each option a mark from the page can set.
const FIELDS: [(&str, &str); 4] =
    [("--size", "Size"), ("--profile", "Profile"), ("--target", "Target"), ("--destroy-data", "Destroy data")];

/// An option's error in the page's own words: the field, not the command line's flag.
fn web_words(e: &spec::SpecError) -> String {
    let text = match e {
        spec::SpecError::Value { option, message } => {
            let field = FIELDS.iter().find(|(o, _)| o == option).map_or(option.as_str(), |(_, f)| *f);
            format!("{field}: {message}")
        }
        other => other.to_string(),
    };
    FIELDS.iter().fold(text, |t, (flag, field)| t.replace(flag, &format!("“{field}”")))
}

/// What would make the mark fail once started, refused before it starts, in the page's words:
/// a folder that does not exist, and a file diskmeter did not create (a mark from the page
/// never overwrites one: the page has no such option, on purpose).
fn target_ready(cfg: &mark::Config) -> Result<(), Refusal> {
    let file = cfg.target();
    let shown = |p: &Path| crate::input::sanitize(&p.display().to_string());
    match std::fs::symlink_metadata(file) {
        Ok(m) if m.file_type().is_file() || m.file_type().is_symlink() => {
            if !engine::measure::created_by_diskmeter(file) {
                return Err(Refusal::unprocessable(match cfg.folder() {
                    Some(folder) => format!(
                        "the folder {} already holds a file {} that diskmeter did not create; a mark from this page \
                         never overwrites a file: move it away, or choose another folder",
                        shown(folder),
                        shown(Path::new(file.file_name().unwrap_or_default()))
                    ),
                    None => format!(
                        "{} is a file diskmeter did not create; a mark from this page never overwrites a file: \
                         choose a folder (diskmeter makes its own test file there and removes it afterwards)",
                        shown(file)
                    ),
                }));
            }
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(_) => {
            let parent = match file.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if parent.is_dir() {
                return Ok(());
            }
            Err(Refusal::unprocessable(format!(
                "{} does not exist, nor does the folder {}: choose a folder that exists (diskmeter makes its test \
                 file there), or create it first",
                shown(file),
                shown(parent)
            )))
        }
    }
}

/// The request checked as the command line checks `mark`, then what would fail once started:
/// the mark's configuration, or one line for the page.
pub(crate) fn check(req: &MarkRequest) -> Result<mark::Config, Refusal> {
    let target = req.target.trim();
    if target.is_empty() {
        return Err(Refusal::unprocessable("name a target: a folder, a file or a device"));
    }
    let opts = options(req);
    let cfg = mark::Config::checked(&opts).map_err(|e| Refusal::unprocessable(web_words(&e)))?;
    device_guard(target, req.destroy_data.as_deref())?;
    target_ready(&cfg)?;
    Ok(cfg)
}

impl Marks {
    /// Check `req` and start it on a thread; its events go to `sink`, its result into the
    /// database at `db`.
    pub(crate) fn start(&self, db: &Path, req: MarkRequest, sink: EventSink) -> Result<(), Refusal> {
        // Held until the mark is registered: two starts at once cannot both pass.
        let mut cur = lock(&self.current);
        if let Some(r) = cur.as_ref() {
            return Err(Refusal::busy(format!("a mark is running on {} since {}; stop it or wait", r.target, r.since)));
        }
        let target = req.target.trim().to_string();
        let opts = options(&req);
        let cfg = check(&req)?;
        let tests: Vec<String> = mark::Profile::parse(&opts.profile)
            .map(|p| p.tests().iter().map(|&(seq, bs, qd, th)| mark::mark_label(seq, bs, qd, th)).collect())
            .unwrap_or_default();
        let stop = Arc::new(AtomicBool::new(false));
        *cur = Some(Running { stop: Arc::clone(&stop), target: target.clone(), since: hh_mm(SystemTime::now()) });
        drop(cur);
        let current = Arc::clone(&self.current);
        let choice = Choice { file: Some(db.to_path_buf()), off: false };
        let spawned = std::thread::Builder::new().name("serve-mark".into()).spawn(move || {
            // However the mark ends (even by a panic), the next one may start.
            let _done = Release(Arc::clone(&current));
            sink.send(MarkEvent::Plan { target, tests });
            let mut obs = Live { sink: sink.clone(), last_tick: None, last_fill: None };
            let asked = Arc::clone(&stop);
            let result = mark::run(&cfg, stop, &mut obs);
            // Stop is the user's choice, not a failure: say "stopped", with the part kept.
            let stopped = asked.load(Ordering::SeqCst);
            let end = match result {
                Ok(mut doc) => {
                    hist::record(&choice, &mut doc);
                    for w in &doc.warnings {
                        sink.send(MarkEvent::Notice { text: w.message.clone() });
                    }
                    let run_id = doc.history.as_ref().map(|h| h.id);
                    match &doc.error {
                        None => MarkEvent::Done { run_id },
                        Some(e) if stopped || e.kind == "interrupted" => MarkEvent::Stopped { run_id },
                        Some(e) => MarkEvent::Error { message: e.message.clone(), run_id },
                    }
                }
                Err(_) if stopped => MarkEvent::Stopped { run_id: None },
                Err(e) => MarkEvent::Error { message: e.message().to_string(), run_id: None },
            };
            // Free the slot before saying so: a browser told "done" may start the next at once.
            *lock(&current) = None;
            sink.send(end);
        });
        if let Err(e) = spawned {
            *lock(&self.current) = None;
            return Err(Refusal::new(500, format!("cannot start the mark: {e}")));
        }
        Ok(())
    }

    /// Raise the running mark's stop flag; false when none runs.
    pub(crate) fn stop(&self) -> bool {
        match lock(&self.current).as_ref() {
            Some(r) => {
                r.stop.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }
}

/// Clears the running mark when its thread ends.
struct Release(Arc<Mutex<Option<Running>>>);

impl Drop for Release {
    fn drop(&mut self) {
        *lock(&self.0) = None;
    }
}

/// `HH:MM` (UTC) of `t`.
fn hh_mm(t: SystemTime) -> String {
    let s = humantime::format_rfc3339_seconds(t).to_string();
    format!("{} UTC", s.get(11..16).unwrap_or("?"))
}

/// The mark's observer: its progress as events for the browser.
struct Live {
    sink: EventSink,
    last_tick: Option<Instant>,
    last_fill: Option<Instant>,
}

/// True (and `last` moved to now) when `EVERY` has passed since `last`.
fn due(last: &mut Option<Instant>) -> bool {
    let now = Instant::now();
    if last.is_some_and(|l| now.duration_since(l) < EVERY) {
        return false;
    }
    *last = Some(now);
    true
}

impl Observer for Live {
    fn phase(&mut self, label: &str, _planned: Option<Duration>) {
        self.sink.send(MarkEvent::Phase { label: label.to_string() });
    }
    fn fill(&mut self, done: u64, total: u64) {
        if total > 0 && (done >= total || due(&mut self.last_fill)) {
            let pct = done as f64 * 100.0 / total as f64;
            self.sink.send(MarkEvent::Phase { label: format!("preparing the test area: {pct:.0} %") });
        }
    }
    fn tick(&mut self, t: &Tick) {
        if due(&mut self.last_tick) {
            self.sink.send(MarkEvent::Tick { mb_s: t.read_mb_s + t.write_mb_s, iops: t.read_iops + t.write_iops });
        }
    }
    fn notice(&mut self, message: &str) {
        self.sink.send(MarkEvent::Notice { text: message.to_string() });
    }
    fn cell(&mut self, job: &str, direction: &str, s: &stats::DirStats) {
        self.sink.send(MarkEvent::Cell(Cell {
            test: job.to_string(),
            direction: direction.to_string(),
            mb_s: s.mb_s,
            iops: s.iops,
            lat_us: s.lat_ns.mean / 1000.0,
        }));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn req(target: &str) -> MarkRequest {
        MarkRequest { target: target.into(), profile: "real".into(), quick: true, ..MarkRequest::default() }
    }

    #[test]
    fn the_form_gets_the_command_lines_rules_and_nothing_more() {
        let o =
            options(&MarkRequest { size: Some(" 16M ".into()), destroy_data: Some("/dev/sdz".into()), ..req("/x") });
        assert_eq!(o.size.as_deref(), Some("16M"));
        assert!(!o.flags.overwrite && !o.flags.keep, "never overwrite or keep from the web");
        assert_eq!(o.flags.destroy_data, Some(PathBuf::from("/dev/sdz")));
        let o = options(&MarkRequest { profile: String::new(), ..req("/x") });
        assert_eq!(o.profile, "default");
        let m = Marks::default();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        let bad = m.start(&db, MarkRequest { profile: "fast".into(), ..req("/tmp") }, EventSink::detached());
        let bad = bad.unwrap_err();
        assert_eq!(bad.status, 422);
        assert!(bad.message.starts_with("Profile: unknown profile"), "{bad:?}");
        let bad = m.start(&db, MarkRequest { size: Some("1k".into()), ..req("/tmp") }, EventSink::detached());
        let bad = bad.unwrap_err();
        assert_eq!(bad.status, 422);
        assert!(bad.message.starts_with("Size: "), "{bad:?}");
        for size in ["1k", "lots", "0", "-5G"] {
            let r = check(&MarkRequest { size: Some(size.into()), ..req("/tmp") }).unwrap_err();
            assert!(!r.message.contains("--"), "a page has no flags: {r:?}");
        }
        assert!(!m.stop(), "nothing runs");
    }

    #[test]
    fn targets_that_cannot_work_are_refused_before_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no").join("such");
        let r = check(&req(missing.to_str().unwrap())).unwrap_err();
        assert_eq!(r.status, 422);
        assert!(r.message.contains("does not exist") && r.message.contains("choose a folder"), "{r:?}");
        // A file diskmeter did not create, named or found in a folder as its test file.
        let foreign = dir.path().join("notes.txt");
        std::fs::write(&foreign, b"keep me").unwrap();
        let r = check(&req(foreign.to_str().unwrap())).unwrap_err();
        assert!(r.message.contains("did not create") && r.message.contains("never overwrites"), "{r:?}");
        let folder = dir.path().join("f");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join(crate::session::DEFAULT_TARGET), b"not ours").unwrap();
        let r = check(&req(folder.to_str().unwrap())).unwrap_err();
        assert!(r.message.contains("already holds a file") && r.message.contains("another folder"), "{r:?}");
        assert!(!r.message.contains("--"), "the page's own words: {r:?}");
        assert_eq!(std::fs::read(&foreign).unwrap(), b"keep me", "nothing written");
        // A folder that exists, and a new file in one: fine.
        check(&req(dir.path().to_str().unwrap())).unwrap();
        check(&req(dir.path().join("new.test").to_str().unwrap())).unwrap();
    }

    #[test]
    fn a_device_needs_its_exact_name() {
        // /dev/null is a character device, not a block device: the guard leaves it to the engine.
        assert!(device_guard("/dev/null", None).is_ok());
        for dev in ["/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"] {
            if engine::measure::probe(Path::new(dev)).is_some_and(|p| p.kind == engine::measure::TargetKind::Block) {
                let r = device_guard(dev, None).unwrap_err();
                assert_eq!(r.status, 422);
                assert!(r.message.contains("Destroy data"), "{r:?}");
                assert!(device_guard(dev, Some("/dev/other")).is_err());
                assert!(device_guard(dev, Some(dev)).is_ok());
            }
        }
    }
}
