//! [`web::Service`] over the history database: the runs as `history list --json` prints them,
//! the stored documents, the existing HTML report, a device's trends, `history diff`, the live
//! mark and import.

use super::device;
use super::device::esc;
use super::live::Marks;
use crate::history as hist;
use crate::{Error, Result};
use history::{HistoryError, Store};
use serde_json::Value;
use stats::ResultDoc;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use web::{DeviceView, EventSink, Html, MarkRequest, Refusal, RunFilter, RunSummary};

/// The service of `serve`: one connection to the database for the pages (SQLite serialises
/// them anyway), the database's path for what opens its own (a mark's recording, trends).
pub struct StoreService {
    path: PathBuf,
    store: Mutex<Store>,
    marks: Marks,
}

impl StoreService {
    /// Opens the database at `path`, creating an empty one when there is none (a new user's
    /// page says there are no runs yet). With `read_only` an existing database is opened
    /// read-only.
    pub fn open(path: &Path, read_only: bool) -> Result<StoreService> {
        let store = match read_only && path.exists() {
            true => match Store::open_read_only(path) {
                Err(HistoryError::NeedsMigration { .. }) => Store::open(path),
                r => r,
            },
            false => Store::open(path),
        }
        .map_err(|e| Error::runtime(e.to_string()))?;
        Ok(StoreService { path: path.to_path_buf(), store: Mutex::new(store), marks: Marks::default() })
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves the connection usable (SQLite rolls back).
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A row of `history list --json` as the web layer's run: the same object once serialised.
pub fn summary(row: &history::RunRow) -> std::result::Result<RunSummary, String> {
    serde_json::to_value(row)
        .and_then(serde_json::from_value)
        .map_err(|e| format!("run {}: cannot list it: {e}", row.id))
}

/// The stylesheet and the body of a full HTML page (the report's), for embedding: the
/// stylesheet nested under `.report` (where the server's layout puts the body), so that the
/// report's rules for `body`, `main` and `header` leave the server's own frame alone.
pub fn split_page(page: &str) -> Html {
    let between = |open: &str, close: &str| -> Option<String> {
        let start = page.find(open)?;
        let from = start + page[start..].find('>')? + 1;
        let end = from + page[from..].rfind(close).or_else(|| page[from..].find(close))?;
        Some(page[from..end].to_string())
    };
    let style = between("<style", "</style>").unwrap_or_default();
    let body = between("<body", "</body>").unwrap_or_else(|| page.to_string());
    Html { head_style: format!(".report {{\n{}\n}}\n", style.replace(":root", "&")), body }
}

/// A stored document as report HTML: the report of a result, else its JSON shown as text.
fn report_html(id: i64, doc: Value) -> Html {
    match hist::as_result(id, doc.clone()) {
        Ok(r) => split_page(&report::html::render_html(&r)),
        Err(e) => Html {
            head_style: String::new(),
            body: format!(
                "<p class=\"message\">{}</p><pre>{}</pre>",
                esc(e.message()),
                esc(&serde_json::to_string_pretty(&doc).unwrap_or_default())
            ),
        },
    }
}

fn refusal(e: &Error) -> Refusal {
    match e {
        Error::Usage(m) if m.starts_with("no run ") => Refusal::new(404, m.clone()),
        Error::Usage(m) => Refusal::unprocessable(m.clone()),
        Error::Runtime(m) | Error::Interrupted(m) => Refusal::new(500, m.clone()),
    }
}

/// What is not a result document nor fio's output.
const NOT_A_RESULT: &str = "not a diskmeter result: upload a JSON result diskmeter wrote (--json or -o FILE.json), \
                            or fio's --output-format=json output";

impl StoreService {
    /// Store one uploaded document; an identical one stored before keeps its id.
    fn keep(&self, doc: &Value) -> std::result::Result<i64, Refusal> {
        let mut store = self.store();
        if let Some(id) = store.find_same(doc).map_err(|e| Refusal::new(500, e.to_string()))? {
            return Ok(id);
        }
        store.insert(doc).map_err(|e| match e {
            HistoryError::InvalidDocument { .. } => Refusal::unprocessable(e.to_string()),
            HistoryError::ReadOnly { .. } => Refusal::new(403, e.to_string()),
            _ => Refusal::new(500, e.to_string()),
        })
    }
}

impl web::Service for StoreService {
    fn runs(&self, f: &RunFilter) -> std::result::Result<Vec<RunSummary>, Refusal> {
        let filter = hist::Filter {
            device: f.device.clone(),
            command: f.command.clone(),
            since: f.since.clone(),
            limit: f.limit,
            search: f.search.clone(),
            offset: Some(f.offset),
        };
        let rows = self.store().list(&filter).map_err(|e| match e {
            HistoryError::BadDate { .. } => Refusal::new(400, format!("since: {e}")),
            _ => Refusal::new(500, e.to_string()),
        })?;
        rows.iter().map(|r| summary(r).map_err(|m| Refusal::new(500, m))).collect()
    }

    fn run_doc(&self, id: i64) -> std::result::Result<Option<String>, String> {
        let doc = self.store().get(id).map_err(|e| e.to_string())?;
        doc.map(|d| serde_json::to_string(&d).map_err(|e| format!("run {id}: {e}"))).transpose()
    }

    fn run_html(&self, id: i64) -> std::result::Result<Option<Html>, String> {
        let doc = self.store().get(id).map_err(|e| e.to_string())?;
        Ok(doc.map(|d| report_html(id, d)))
    }

    fn device(&self, key: &str) -> std::result::Result<Option<DeviceView>, String> {
        device::view(&self.store(), &self.path, key)
    }

    fn compare(&self, a: i64, b: i64) -> std::result::Result<Html, Refusal> {
        let doc = hist::diff(&self.path, a, b).map_err(|e| refusal(&e))?;
        Ok(split_page(&report::html::render_html(&doc)))
    }

    fn start_mark(&self, req: MarkRequest, sink: EventSink) -> std::result::Result<(), Refusal> {
        self.marks.start(&self.path, req, sink)
    }

    fn stop_mark(&self) -> bool {
        self.marks.stop()
    }

    fn import(&self, name: &str, bytes: &[u8]) -> std::result::Result<Vec<i64>, Refusal> {
        let shown = crate::input::sanitize(name);
        let not_result = || Refusal::unprocessable(format!("{shown}: {NOT_A_RESULT}"));
        let text = std::str::from_utf8(bytes).map_err(|_| not_result())?;
        let value: Option<Value> = serde_json::from_str(text).ok();
        let schema = value.as_ref().and_then(|v| v.get("schema")).and_then(Value::as_str);
        if let (Some(v), Some(s)) = (&value, schema) {
            if s.starts_with("diskmeter.") {
                ResultDoc::from_json(text).map_err(|e| Refusal::unprocessable(format!("{shown}: {e}")))?;
                return Ok(vec![self.keep(v)?]);
            }
        }
        // fio's own JSON output (notes before the JSON are allowed, so not parsed above).
        if text.contains("\"fio version\"") {
            let doc = crate::fio_import::from_fio_json(text, name).map_err(|e| Refusal::unprocessable(e.message()))?;
            let v = serde_json::to_value(&doc).map_err(|e| Refusal::new(500, e.to_string()))?;
            return Ok(vec![self.keep(&v)?]);
        }
        Err(not_result())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use web::Service;

    #[test]
    fn the_report_is_split_and_scoped() {
        let page = "<!DOCTYPE html><html><head><style>\n:root { --a: 1; }\nbody { margin: 0; }\n</style></head>\
                    <body class=\"x\">\n<main><h1>R</h1></main>\n</body></html>\n";
        let h = split_page(page);
        assert_eq!(h.body, "\n<main><h1>R</h1></main>\n");
        assert!(h.head_style.starts_with(".report {"), "{}", h.head_style);
        assert!(h.head_style.contains("& { --a: 1; }"), "{}", h.head_style);
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }

    #[test]
    fn an_empty_database_lists_nothing_and_refuses_what_it_cannot_read() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("new").join("h.db");
        let s = StoreService::open(&db, false).unwrap();
        assert!(db.exists(), "a fresh user gets an empty database");
        assert!(s.runs(&RunFilter::default()).unwrap().is_empty());
        assert_eq!(s.run_doc(1).unwrap(), None);
        assert_eq!(s.run_html(1).unwrap(), None);
        assert_eq!(s.device("sda").unwrap(), None);
        let bad = s.runs(&RunFilter { since: Some("yesterday".into()), ..RunFilter::default() }).unwrap_err();
        assert_eq!(bad.status, 400, "{bad:?}");
        let r = s.import("x.json", b"{\"hello\": 1}").unwrap_err();
        assert_eq!(r.status, 422);
        assert!(r.message.contains("not a diskmeter result"), "{r:?}");
        let r = s.import("x.bin", &[0xff, 0xfe]).unwrap_err();
        assert_eq!(r.status, 422);
        assert_eq!(s.compare(1, 2).unwrap_err().status, 404);
    }

    #[test]
    fn imports_diskmeter_results_and_fio_output_once() {
        let dir = tempfile::tempdir().unwrap();
        let s = StoreService::open(&dir.path().join("h.db"), false).unwrap();
        let doc = ResultDoc::new("run", "2026-03-02T10:00:00Z", stats::HostInfo::default());
        let text = doc.to_json_pretty().unwrap();
        assert_eq!(s.import("r.json", text.as_bytes()).unwrap(), vec![1]);
        assert_eq!(s.import("again.json", text.as_bytes()).unwrap(), vec![1], "the same document is kept once");
        let runs = s.runs(&RunFilter::default()).unwrap();
        assert_eq!((runs.len(), runs[0].command.as_str()), (1, "run"));
        let stored: Value = serde_json::from_str(&s.run_doc(1).unwrap().unwrap()).unwrap();
        assert_eq!(stored, serde_json::to_value(&doc).unwrap());
        let page = s.run_html(1).unwrap().unwrap();
        assert!(page.body.contains("<main>") && page.head_style.starts_with(".report {"), "{}", page.body);
        let fio = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fio/randread.json")).unwrap();
        assert_eq!(s.import("randread.json", &fio).unwrap(), vec![2]);
        let runs = s.runs(&RunFilter { command: Some("fio".into()), ..RunFilter::default() }).unwrap();
        assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![2]);
        // Paging: the newest first, `offset` skipped.
        let page = s.runs(&RunFilter { limit: Some(1), offset: 1, ..RunFilter::default() }).unwrap();
        assert_eq!(page.len(), 1);
        let all = s.runs(&RunFilter::default()).unwrap();
        assert_eq!(page[0], all[1]);
        let bad = s.import("bad.json", b"{\"fio version\": \"fio-3.33\"}").unwrap_err();
        assert_eq!(bad.status, 422, "{bad:?}");
    }
}
