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

/// One step of a running mark, sent to the browser as a server-sent event whose name is `type`
/// and whose data is this object as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MarkEvent {
    /// Everything so far: the first event every client gets, and again after a gap.
    Snapshot(Snapshot),
    /// The tests this mark will run, in card order (the card's rows).
    Plan {
        target: String,
        tests: Vec<String>,
    },
    /// What is happening now ("RND4K Q32T1 read, pass 2 of 3").
    Phase {
        label: String,
    },
    /// Live throughput of the current phase.
    Tick {
        mb_s: f64,
        iops: f64,
    },
    /// A card cell's figures (its running aggregate: a cell can be sent again as passes add up).
    Cell(Cell),
    Notice {
        text: String,
    },
    /// The mark finished and was stored as run `run_id` (`None`: not recorded).
    Done {
        run_id: Option<i64>,
    },
    Error {
        message: String,
    },
}

/// One card cell: a test in one direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub test: String,
    /// `read`, `write` or `mix`.
    pub direction: String,
    pub mb_s: f64,
    pub iops: f64,
    pub lat_us: f64,
}

/// The accumulated state of the current (or last) mark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    pub running: bool,
    pub target: Option<String>,
    pub tests: Vec<String>,
    pub phase: Option<String>,
    pub cells: Vec<Cell>,
    pub notices: Vec<String>,
    /// Set once the mark ended: `Some(None)` finished unrecorded.
    pub done: Option<Option<i64>>,
    pub error: Option<String>,
}

impl Snapshot {
    /// Fold one event into the state.
    pub(crate) fn apply(&mut self, ev: &MarkEvent) {
        match ev {
            MarkEvent::Snapshot(s) => *self = s.clone(),
            MarkEvent::Plan { target, tests } => {
                self.target = Some(target.clone());
                self.tests = tests.clone();
            }
            MarkEvent::Phase { label } => self.phase = Some(label.clone()),
            MarkEvent::Tick { .. } => {}
            MarkEvent::Cell(c) => {
                match self.cells.iter_mut().find(|x| x.test == c.test && x.direction == c.direction) {
                    Some(x) => *x = c.clone(),
                    None => self.cells.push(c.clone()),
                }
                if !self.tests.contains(&c.test) {
                    self.tests.push(c.test.clone());
                }
            }
            MarkEvent::Notice { text } => self.notices.push(text.clone()),
            MarkEvent::Done { run_id } => {
                self.running = false;
                self.phase = Some("finished".into());
                self.done = Some(*run_id);
            }
            MarkEvent::Error { message } => {
                self.running = false;
                self.phase = Some("failed".into());
                self.error = Some(message.clone());
            }
        }
    }

    /// The cell of `test` in `direction`, if it has figures yet.
    pub fn cell(&self, test: &str, direction: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| c.test == test && c.direction == direction)
    }
}

impl MarkEvent {
    /// The server-sent event's name.
    pub fn name(&self) -> &'static str {
        match self {
            MarkEvent::Snapshot(_) => "snapshot",
            MarkEvent::Plan { .. } => "plan",
            MarkEvent::Phase { .. } => "phase",
            MarkEvent::Tick { .. } => "tick",
            MarkEvent::Cell(_) => "cell",
            MarkEvent::Notice { .. } => "notice",
            MarkEvent::Done { .. } => "done",
            MarkEvent::Error { .. } => "error",
        }
    }
}
