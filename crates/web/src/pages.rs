//! The pages: askama templates (`templates/`, escaping on) and the view rows they show.
//! Markup from the service (reports, charts, tables) is trusted and inserted as is.

use askama::Template;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::events::Snapshot;
use crate::service::{DeviceView, RunFilter, RunSummary};

/// The mark profiles `diskmeter mark --profile` takes, the default first.
pub(crate) const PROFILES: [&str; 4] = ["default", "real", "peak", "nvme"];

/// What every page's frame needs.
#[derive(Clone)]
pub(crate) struct Chrome {
    pub read_only: bool,
    pub csrf: String,
}

#[derive(Template)]
#[template(path = "message.html")]
pub(crate) struct MessagePage {
    pub chrome: Chrome,
    pub title: String,
    pub message: String,
    pub links: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "runs.html")]
pub(crate) struct RunsPage {
    pub chrome: Chrome,
    pub f_device: String,
    pub f_command: String,
    pub f_since: String,
    pub f_search: String,
    pub filtered: bool,
    pub rows: Vec<RunRowView>,
    pub first: usize,
    pub last: usize,
    pub prev: Option<String>,
    pub next: Option<String>,
}

pub(crate) struct RunRowView {
    pub id: i64,
    pub started: String,
    pub command: String,
    pub partial: bool,
    pub device: String,
    pub device_href: String,
    /// The path measured; empty when the result does not say.
    pub target: String,
    /// The model; empty when unknown (the page says "unknown").
    pub model: String,
    pub key: String,
    pub figures: Vec<String>,
}

#[derive(Template)]
#[template(path = "report.html")]
pub(crate) struct ReportPage {
    pub chrome: Chrome,
    pub title: String,
    pub json_href: Option<String>,
    pub head_style: String,
    pub body: String,
}

#[derive(Template)]
#[template(path = "device.html")]
pub(crate) struct DevicePage {
    pub chrome: Chrome,
    pub view: DeviceView,
    pub device_q: String,
}

#[derive(Template)]
#[template(path = "compare.html")]
pub(crate) struct ComparePage {
    pub chrome: Chrome,
    pub runs: Vec<Choice>,
    pub devices: Vec<Choice>,
    pub sel_a: String,
    pub sel_b: String,
    pub sel_da: String,
    pub sel_db: String,
    pub refusal: Option<String>,
    pub head_style: String,
    pub body: String,
}

pub(crate) struct Choice {
    pub value: String,
    pub label: String,
}

#[derive(Template)]
#[template(path = "new.html")]
pub(crate) struct NewPage {
    pub chrome: Chrome,
    pub profiles: [&'static str; 4],
    pub snap: Snapshot,
    /// "Running on …" while a mark runs.
    pub status: String,
    /// How the last mark ended, when none runs now.
    pub last: Option<LastMark>,
    pub rows: Vec<CardRow>,
}

/// The line about the last mark: "Last mark, on /mnt/x: Stopped: the part that ran is kept as
/// run 7." (the run linked).
pub(crate) struct LastMark {
    pub on: String,
    pub ending: crate::events::Ending,
}

pub(crate) struct CardRow {
    pub test: String,
    pub cells: Vec<CardCell>,
}

pub(crate) struct CardCell {
    pub dir: &'static str,
    pub filled: bool,
    pub text: String,
    pub title: String,
}

#[derive(Template)]
#[template(path = "import.html")]
pub(crate) struct ImportPage {
    pub chrome: Chrome,
}

/// Render a page as a response; a template failure is a 500 with its message.
pub(crate) fn html<T: Template>(status: StatusCode, page: &T) -> Response {
    match page.render() {
        Ok(s) => (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], s).into_response(),
        Err(e) => {
            crate::security::refuse(StatusCode::INTERNAL_SERVER_ERROR, &format!("page could not be rendered: {e}"))
        }
    }
}

pub(crate) fn message(chrome: &Chrome, status: StatusCode, title: &str, message: &str) -> Response {
    let page = MessagePage {
        chrome: chrome.clone(),
        title: title.to_string(),
        message: message.to_string(),
        links: vec![("/".into(), "All runs".into())],
    };
    html(status, &page)
}

impl RunRowView {
    pub(crate) fn new(r: &RunSummary) -> Self {
        RunRowView {
            id: r.id,
            started: short_time(&r.started_at),
            command: r.command.clone(),
            partial: r.partial,
            device: r.device.clone(),
            device_href: pct(&r.device_key),
            target: r.target.clone().unwrap_or_default(),
            model: r.model.clone().unwrap_or_default(),
            key: r.key.clone(),
            figures: headline(&r.summary),
        }
    }
}

/// `2026-03-02T10:04:05.123Z` → `2026-03-02 10:04:05`.
fn short_time(t: &str) -> String {
    let t = t.replacen('T', " ", 1);
    t.get(..19).map(str::to_string).unwrap_or(t)
}

/// The figures the list shows per job or cell: "SEQ1M Q8T1 R 3512 W 2980".
pub(crate) fn headline(summary: &Value) -> Vec<String> {
    const MAX_JOBS: usize = 4;
    let Some(jobs) = summary.as_array() else { return Vec::new() };
    jobs.iter()
        .take(MAX_JOBS)
        .map(|j| {
            let mut s = j.get("name").and_then(Value::as_str).unwrap_or("job").to_string();
            for (dir, tag) in [("read", "R"), ("write", "W")] {
                if let Some(mb) = j.get(dir).and_then(|d| d.get("mb_s")).and_then(Value::as_f64) {
                    s.push_str(&format!(" {tag} {}", mb_s(mb)));
                }
            }
            s
        })
        .collect()
}

/// MB/s as the card shows it: whole numbers from 100 up, two decimals below.
pub(crate) fn mb_s(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The card rows for a snapshot: every planned test, read and write.
pub(crate) fn card_rows(s: &Snapshot) -> Vec<CardRow> {
    s.tests
        .iter()
        .map(|t| CardRow {
            test: t.clone(),
            cells: ["read", "write"]
                .into_iter()
                .map(|dir| match s.cell(t, dir) {
                    Some(c) => CardCell {
                        dir,
                        filled: true,
                        text: mb_s(c.mb_s),
                        title: format!("{:.0} IOPS, {:.1} µs mean latency", c.iops, c.lat_us),
                    },
                    None => CardCell { dir, filled: false, text: "–".into(), title: String::new() },
                })
                .collect(),
        })
        .collect()
}

/// Percent-encode everything but the unreserved characters (a path segment or query value).
pub(crate) fn pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The query string of a runs page for `f` starting at `offset`.
pub(crate) fn runs_query(f: &RunFilter, offset: usize) -> String {
    let mut parts = Vec::new();
    for (k, v) in [("device", &f.device), ("command", &f.command), ("since", &f.since), ("search", &f.search)] {
        if let Some(v) = v {
            parts.push(format!("{k}={}", pct(v)));
        }
    }
    if offset > 0 {
        parts.push(format!("offset={offset}"));
    }
    if parts.is_empty() {
        "/".into()
    } else {
        format!("/?{}", parts.join("&"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_reads_summary() {
        let v = serde_json::json!([{"name": "SEQ1M Q8T1", "read": {"mb_s": 3512.4}, "write": {"mb_s": 42.123}}]);
        assert_eq!(headline(&v), vec!["SEQ1M Q8T1 R 3512 W 42.12"]);
        assert!(headline(&Value::Null).is_empty());
    }

    #[test]
    fn pct_encodes_separators() {
        assert_eq!(pct("/dev/sd a"), "%2Fdev%2Fsd%20a");
        assert_eq!(runs_query(&RunFilter::default(), 0), "/");
        let f = RunFilter { device: Some("a&b".into()), ..RunFilter::default() };
        assert_eq!(runs_query(&f, 200), "/?device=a%26b&offset=200");
    }
}
