//! The seam between HTTP and everything else: the server asks a [`Service`] for runs, documents,
//! rendered reports and marks, and knows nothing of SQLite or the engine. The types here are
//! plain data, so that the history crate and the app stay free to change behind them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::live::EventSink;

/// What `serve` needs from the rest of diskmeter. Every method is synchronous and may block
/// (SQLite, rendering): the server calls them on tokio's blocking pool.
pub trait Service: Send + Sync + 'static {
    /// Stored runs, newest first, as the filter says. A bad filter (an unreadable `since`) is a
    /// [`Refusal`] with status 400; a database failure one with status 500.
    fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, Refusal>;
    /// The stored result document of run `id`, as JSON text; `None` when there is no such run.
    fn run_doc(&self, id: i64) -> Result<Option<String>, String>;
    /// Run `id` rendered as the existing HTML report, split for embedding.
    fn run_html(&self, id: i64) -> Result<Option<Html>, String>;
    /// One device's page: its timeline charts and card history. `key` is a device key or name.
    fn device(&self, key: &str) -> Result<Option<DeviceView>, String>;
    /// Run `a` against run `b` (the `compare` statistics). Different workloads: 422.
    fn compare(&self, a: i64, b: i64) -> Result<Html, Refusal>;
    /// Start a mark in the background and return at once; its progress goes to `sink`.
    /// One mark at a time: a second is a 409; an invalid request (a device target without the
    /// matching `destroy_data`, a bad size) is a 422.
    fn start_mark(&self, req: MarkRequest, sink: EventSink) -> Result<(), Refusal>;
    /// Ask the running mark to stop. False when none is running.
    fn stop_mark(&self) -> bool;
    /// Store an uploaded diskmeter result or fio JSON output; the ids of the new runs.
    fn import(&self, name: &str, bytes: &[u8]) -> Result<Vec<i64>, Refusal>;
}

/// One stored run. `id`, `command`, `started_at`, `device` and `key` are the contract of
/// `history list --json` and `/api/runs`; `extra` carries whatever else that list prints, so
/// that both give the same objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: i64,
    pub command: String,
    pub started_at: String,
    /// A display name (`nvme0n1`, or the target path).
    pub device: String,
    /// The comparability key.
    pub key: String,
    /// The device's stable identity: what `/devices/{key}` takes.
    pub device_key: String,
    pub model: Option<String>,
    /// The path measured (a test file, a device): what tells runs on one disk apart.
    #[serde(default)]
    pub target: Option<String>,
    pub partial: bool,
    /// Per job or card cell: `[{name, read: {mb_s, iops, …}, write: {…}}]`.
    pub summary: Value,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which runs to list. `None` matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFilter {
    pub device: Option<String>,
    pub command: Option<String>,
    /// A date (`2026-03-02`) or an RFC 3339 time: the service parses it.
    pub since: Option<String>,
    /// Free text matched against command, device, model, target, key and job names.
    pub search: Option<String>,
    pub limit: Option<usize>,
    /// Skip this many of the newest matches (paging).
    pub offset: usize,
}

/// What the "new mark" form asks for. The service validates it with the command line's rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkRequest {
    /// A folder, a file or a block device.
    pub target: String,
    /// `default`, `nvme`, `peak` or `real`.
    pub profile: String,
    /// A size such as `1G`; empty: the command's default.
    pub size: Option<String>,
    pub quick: bool,
    /// What the user typed in the destroy-data field: a device target is written only when
    /// this is exactly its name. The web layer passes it on untouched.
    pub destroy_data: Option<String>,
}

/// A request the service declines, with the HTTP status to answer and one line for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

impl Refusal {
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Refusal { status, message: message.into() }
    }
    /// A mark is already running.
    pub fn busy(message: impl Into<String>) -> Self {
        Refusal::new(409, message)
    }
    /// The request is understood but not allowed or not valid.
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Refusal::new(422, message)
    }
}

/// A device page: trend charts (SVG markup made by the report crate) and the card history.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceView {
    pub key: String,
    pub title: String,
    pub charts_svg: Vec<String>,
    pub table_html: String,
}

/// A rendered report split for embedding in the server's layout: its stylesheet goes into the
/// page head, its body inside the main element. Both are trusted markup from the report crate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Html {
    pub head_style: String,
    pub body: String,
}
