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
    /// The user stopped the mark: the part that ran is kept as run `run_id` (`None`: nothing was
    /// measured yet, or the history could not keep it). Not a failure.
    Stopped {
        run_id: Option<i64>,
    },
    /// The mark failed; the part that ran, if any, is kept as run `run_id`.
    Error {
        message: String,
        #[serde(default)]
        run_id: Option<i64>,
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
    /// Set once the mark ended (finished, stopped or failed): the run that keeps it, `Some(None)`
    /// when nothing was kept.
    pub done: Option<Option<i64>>,
    /// It ended because the user stopped it.
    #[serde(default)]
    pub stopped: bool,
    /// It failed, with this message.
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
            MarkEvent::Stopped { run_id } => {
                self.running = false;
                self.phase = Some("stopped".into());
                self.stopped = true;
                self.done = Some(*run_id);
            }
            MarkEvent::Error { message, run_id } => {
                self.running = false;
                self.phase = Some("failed".into());
                self.error = Some(message.clone());
                self.done = Some(*run_id);
            }
        }
    }

    /// How the last mark ended, in the words the page and its script both use: the sentence
    /// before the run's link, the run kept (linked), and the sentence after it. `None` while a
    /// mark runs or before the first.
    pub fn ending(&self) -> Option<Ending> {
        if self.running {
            return None;
        }
        let run = self.done?;
        Some(match (&self.error, self.stopped, run) {
            (Some(e), _, Some(_)) => Ending::new("failed", format!("Failed: {e}. The part that ran is kept as "), run),
            (Some(e), _, None) => Ending::new("failed", format!("Failed: {e}."), None),
            (None, true, Some(_)) => Ending::new("stopped", "Stopped: the part that ran is kept as ".into(), run),
            (None, true, None) => {
                Ending::new("stopped", "Stopped before anything was measured: nothing kept.".into(), None)
            }
            (None, false, Some(_)) => Ending::new("done", "Done: stored as ".into(), run),
            (None, false, None) => Ending::new("done", "Done (not recorded).".into(), None),
        })
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
            MarkEvent::Stopped { .. } => "stopped",
            MarkEvent::Error { .. } => "error",
        }
    }
}

/// How a mark ended, as the page says it: `before` then a link to `run` (when one was kept),
/// then a full stop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// `done`, `stopped` or `failed`.
    pub kind: &'static str,
    pub before: String,
    pub run: Option<i64>,
}

impl Ending {
    fn new(kind: &'static str, before: String, run: Option<i64>) -> Ending {
        Ending { kind, before, run }
    }

    /// The sentence as plain text: "Stopped: the part that ran is kept as run 7."
    pub fn text(&self) -> String {
        match self.run {
            Some(id) => format!("{}run {id}.", self.before),
            None => self.before.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(events: &[MarkEvent]) -> Snapshot {
        let mut s = Snapshot::default();
        for e in events {
            s.apply(e);
        }
        s
    }

    #[test]
    fn a_stop_is_not_a_failure() {
        let s = ended(&[MarkEvent::Phase { label: "SEQ1M Q1T1 read".into() }, MarkEvent::Stopped { run_id: Some(7) }]);
        let e = s.ending().expect("ended");
        assert_eq!((e.kind, e.text().as_str()), ("stopped", "Stopped: the part that ran is kept as run 7."));
        assert_eq!(s.phase.as_deref(), Some("stopped"));
        assert!(s.error.is_none());
        let s = ended(&[MarkEvent::Stopped { run_id: None }]);
        assert_eq!(s.ending().expect("ended").text(), "Stopped before anything was measured: nothing kept.");
    }

    #[test]
    fn endings_read_as_sentences() {
        let done = ended(&[MarkEvent::Done { run_id: Some(3) }]).ending().expect("ended");
        assert_eq!((done.kind, done.text().as_str()), ("done", "Done: stored as run 3."));
        let failed = ended(&[MarkEvent::Error { message: "read error at offset 0".into(), run_id: Some(4) }]);
        assert_eq!(
            failed.ending().expect("ended").text(),
            "Failed: read error at offset 0. The part that ran is kept as run 4."
        );
        assert_eq!(Snapshot { running: true, ..Snapshot::default() }.ending(), None);
        assert_eq!(Snapshot::default().ending(), None);
        // An old client's error event, without run_id, still reads.
        let e: MarkEvent = serde_json::from_str(r#"{"type":"error","message":"x"}"#).expect("reads");
        assert_eq!(e, MarkEvent::Error { message: "x".into(), run_id: None });
    }
}
