//! The events of a running mark, as the browser receives them (server-sent events), and the
//! state they add up to.

use serde::{Deserialize, Serialize};

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
