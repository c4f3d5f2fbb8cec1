//! A [`Service`] held in memory, for the server's tests and for trying pages out: a few runs,
//! a compare that refuses different keys, and a mark that fills a card from a thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::events::{Cell, MarkEvent};
use crate::live::EventSink;
use crate::service::{DeviceView, Html, MarkRequest, Refusal, RunFilter, RunSummary, Service};

/// The card tests of the default profile.
pub const CARD: [&str; 4] = ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"];

pub struct FakeService {
    runs: Mutex<Vec<RunSummary>>,
    /// Pause between two events of the fake mark.
    step: Duration,
    running: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    /// Every request `start_mark` accepted.
    pub started: Mutex<Vec<MarkRequest>>,
}

impl FakeService {
    /// Runs 1 and 2: marks of device `nvme0n1` with the same key; run 3: a `run` of `sda`.
    pub fn new(step: Duration) -> Self {
        let runs = vec![
            run(1, "mark", "2026-03-02T10:00:00Z", "nvme0n1", "mark:aaaa", 3400.0),
            run(2, "mark", "2026-04-02T10:00:00Z", "nvme0n1", "mark:aaaa", 3100.0),
            run(3, "run", "2026-04-03T10:00:00Z", "sda", "run:bbbb", 510.0),
        ];
        FakeService {
            runs: Mutex::new(runs),
            step,
            running: Arc::new(AtomicBool::new(false)),
            stop: Arc::new(AtomicBool::new(false)),
            started: Mutex::new(Vec::new()),
        }
    }

    /// Add `n` more marks (the runs page at scale).
    pub fn with_many(self, n: usize) -> Self {
        {
            let mut runs = lock(&self.runs);
            let first = runs.len() as i64 + 1;
            for i in 0..n as i64 {
                runs.push(run(first + i, "mark", "2026-05-01T00:00:00Z", "nvme1n1", "mark:cccc", 2000.0 + i as f64));
            }
        }
        self
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    fn get(&self, id: i64) -> Option<RunSummary> {
        lock(&self.runs).iter().find(|r| r.id == id).cloned()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(id: i64, command: &str, started_at: &str, device: &str, key: &str, mb_s: f64) -> RunSummary {
    let summary: Vec<Value> =
        CARD.iter().map(|t| json!({"name": t, "read": {"mb_s": mb_s}, "write": {"mb_s": mb_s / 2.0}})).collect();
    let mut extra = Map::new();
    extra.insert("host".into(), json!("testhost"));
    RunSummary {
        id,
        command: command.into(),
        started_at: started_at.into(),
        device: device.into(),
        key: key.into(),
        device_key: format!("wwn-{device}"),
        model: Some("Fake SSD <1TB>".into()),
        target: Some(format!("/mnt/{device}/diskmeter.test")),
        partial: false,
        summary: Value::Array(summary),
        extra,
    }
}

impl Service for FakeService {
    fn runs(&self, f: &RunFilter) -> Result<Vec<RunSummary>, Refusal> {
        if f.since.as_deref().is_some_and(|s| !s.starts_with("20")) {
            return Err(Refusal::new(400, format!("--since {}: not a date", f.since.as_deref().unwrap_or(""))));
        }
        let runs = lock(&self.runs);
        let hit = |r: &&RunSummary| {
            f.device.as_ref().is_none_or(|d| *d == r.device || *d == r.device_key)
                && f.command.as_ref().is_none_or(|c| *c == r.command)
                && f.since.as_ref().is_none_or(|s| r.started_at.as_str() >= s.as_str())
                && f.search.as_ref().is_none_or(|s| r.device.contains(s.as_str()) || r.command.contains(s.as_str()))
        };
        let out = runs.iter().rev().filter(hit).skip(f.offset).take(f.limit.unwrap_or(usize::MAX)).cloned().collect();
        Ok(out)
    }

    fn run_doc(&self, id: i64) -> Result<Option<String>, String> {
        Ok(self.get(id).map(|r| json!({"schema": "diskmeter.result.v1", "command": r.command, "id": r.id}).to_string()))
    }

    fn run_html(&self, id: i64) -> Result<Option<Html>, String> {
        Ok(self.get(id).map(|r| Html {
            head_style: ".fake-report { color: #123; }".into(),
            body: format!(
                "<section class=\"fake-report\" id=\"report\">{} report of run {}</section>",
                r.command, r.id
            ),
        }))
    }

    fn device(&self, key: &str) -> Result<Option<DeviceView>, String> {
        let runs = lock(&self.runs);
        let Some(r) = runs.iter().find(|r| r.device_key == key || r.device == key) else { return Ok(None) };
        Ok(Some(DeviceView {
            key: r.device_key.clone(),
            title: format!("{} ({})", r.device, r.model.as_deref().unwrap_or("?")),
            charts_svg: vec![
                "<svg data-chart=\"trend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>"
                    .into(),
            ],
            table_html: "<table id=\"card-history\"><tr><td>1</td></tr></table>".into(),
        }))
    }

    fn compare(&self, a: i64, b: i64) -> Result<Html, Refusal> {
        let (Some(ra), Some(rb)) = (self.get(a), self.get(b)) else {
            return Err(Refusal::new(404, format!("no run {a} or {b}")));
        };
        if ra.key != rb.key {
            return Err(Refusal::unprocessable(format!(
                "runs {a} and {b} measured different workloads ({} vs {})",
                ra.key, rb.key
            )));
        }
        Ok(Html {
            head_style: String::new(),
            body: "<table class=\"verdict\"><tr><td>RND4K Q1T1 read −8.8 %: slower</td></tr></table>".into(),
        })
    }

    fn start_mark(&self, req: MarkRequest, sink: EventSink) -> Result<(), Refusal> {
        if req.target.starts_with("/dev/") && req.destroy_data.as_deref() != Some(req.target.as_str()) {
            return Err(Refusal::unprocessable(format!(
                "{} is a device: type its exact name in destroy-data to allow writing it",
                req.target
            )));
        }
        if self.running.swap(true, Ordering::SeqCst) {
            return Err(Refusal::busy("a mark is running; stop it or wait"));
        }
        self.stop.store(false, Ordering::SeqCst);
        lock(&self.started).push(req.clone());
        let (running, stop, step) = (Arc::clone(&self.running), Arc::clone(&self.stop), self.step);
        let tests: Vec<String> = CARD.iter().map(|t| t.to_string()).collect();
        thread::spawn(move || {
            sink.send(MarkEvent::Plan { target: req.target.clone(), tests: tests.clone() });
            for (i, t) in tests.iter().enumerate() {
                for dir in ["read", "write"] {
                    if stop.load(Ordering::SeqCst) {
                        running.store(false, Ordering::SeqCst);
                        sink.send(MarkEvent::Stopped { run_id: Some(98) });
                        return;
                    }
                    sink.send(MarkEvent::Phase { label: format!("{t} {dir}") });
                    sink.send(MarkEvent::Tick { mb_s: 100.0, iops: 25_000.0 });
                    thread::sleep(step);
                    let mb_s = 1000.0 / (i + 1) as f64;
                    sink.send(MarkEvent::Cell(Cell {
                        test: t.clone(),
                        direction: dir.into(),
                        mb_s,
                        iops: mb_s * 256.0,
                        lat_us: 50.0,
                    }));
                }
            }
            running.store(false, Ordering::SeqCst);
            sink.send(MarkEvent::Done { run_id: Some(99) });
        });
        Ok(())
    }

    fn stop_mark(&self) -> bool {
        let was = self.running.load(Ordering::SeqCst);
        self.stop.store(true, Ordering::SeqCst);
        was
    }

    fn import(&self, name: &str, bytes: &[u8]) -> Result<Vec<i64>, Refusal> {
        let v: Value =
            serde_json::from_slice(bytes).map_err(|e| Refusal::unprocessable(format!("{name}: not JSON: {e}")))?;
        let mut runs = lock(&self.runs);
        let id = runs.iter().map(|r| r.id).max().unwrap_or(0) + 1;
        let command = v.get("command").and_then(Value::as_str).unwrap_or("fio").to_string();
        runs.push(run(id, &command, "2026-06-01T00:00:00Z", "imported", "fio:dddd", 1.0));
        Ok(vec![id])
    }
}
