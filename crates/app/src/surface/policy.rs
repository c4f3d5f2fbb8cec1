//! How a finished surface scan ends: its exit code and the line on stderr that says why
//! (docs/METHOD.md, "surface"; the exit codes are in the command's help).

use super::command::Outcome;

/// The end of a scan whose results (complete or partial) were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The scan is complete and found no bad sectors (slow blocks do not change that): exit 0.
    Clean,
    /// Bad sectors were found; the full results are still written: exit 1.
    BadSectors(usize),
    /// A signal stopped the scan; the part scanned is written, marked partial: exit 130.
    Interrupted(String),
    /// A runtime fault, a block that could not be restored, a vanished device, or a bad-block
    /// list that could not be written: exit 1.
    Failed(String),
}

impl Ending {
    pub fn of(outcome: &Outcome) -> Ending {
        if let Some(e) = &outcome.bad_list_error {
            return Ending::Failed(e.message().to_string());
        }
        match &outcome.doc.error {
            Some(e) if e.kind == "interrupted" => return Ending::Interrupted(e.message.clone()),
            Some(e) => return Ending::Failed(e.message.clone()),
            None => {}
        }
        match outcome.doc.surface.as_ref().map(|s| s.bad_sectors.len()).unwrap_or(0) {
            0 => Ending::Clean,
            bad => Ending::BadSectors(bad),
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Ending::Clean => 0,
            Ending::BadSectors(_) | Ending::Failed(_) => 1,
            Ending::Interrupted(_) => 130,
        }
    }

    /// The line for stderr. `results_shown`: the human result, whose verdict counts the bad
    /// sectors, is on stdout (no `--json`, no `--quiet`).
    pub fn line(&self, results_shown: bool) -> Option<String> {
        match self {
            Ending::Clean => None,
            Ending::BadSectors(_) if results_shown => None,
            Ending::BadSectors(n) => Some(format!("diskmeter: {n} bad sector{} found", if *n == 1 { "" } else { "s" })),
            Ending::Interrupted(m) => Some(m.clone()),
            Ending::Failed(m) => Some(format!("error: {m}")),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::Error;
    use stats::{ErrorInfo, ResultDoc};

    fn outcome(error: Option<ErrorInfo>, bad_sectors: usize, bad_list_error: Option<Error>) -> Outcome {
        let mut doc = ResultDoc::new("surface", "2026-01-01T00:00:00Z", stats::HostInfo::default());
        doc.error = error;
        let sector = serde_json::json!({"offset": 0, "bytes": 512, "errno": 5, "error": "EIO", "phase": "read"});
        doc.surface = Some(
            serde_json::from_value(serde_json::json!({
                "mode": "read", "block_bytes": 4096, "logical_block": 512, "offset": 0, "size": 0, "direct": true,
                "scanned_bytes": 0, "blocks": 0, "seconds": 0.0, "zones": [],
                "slow_rule": {"factor": 5.0, "window": 64, "floor_ns": 1, "rereads": 2},
                "slow_blocks": [], "bad_sectors": vec![sector; bad_sectors], "verdict": "",
            }))
            .unwrap(),
        );
        Outcome { doc, bad_list_error }
    }

    #[test]
    fn endings_and_exit_codes() {
        let clean = Ending::of(&outcome(None, 0, None));
        assert_eq!((clean.exit_code(), clean.line(false)), (0, None));
        let bad = Ending::of(&outcome(None, 2, None));
        assert_eq!(bad, Ending::BadSectors(2));
        assert_eq!((bad.exit_code(), bad.line(true)), (1, None));
        assert_eq!(bad.line(false).as_deref(), Some("diskmeter: 2 bad sectors found"));
        assert_eq!(Ending::BadSectors(1).line(false).as_deref(), Some("diskmeter: 1 bad sector found"));
        let stopped = Ending::of(&outcome(Some(ErrorInfo::new("interrupted", "interrupted (Ctrl-C)")), 2, None));
        assert_eq!((stopped.exit_code(), stopped.line(true).as_deref()), (130, Some("interrupted (Ctrl-C)")));
        let vanished = Ending::of(&outcome(Some(ErrorInfo::new("io", "the device vanished")), 0, None));
        assert_eq!((vanished.exit_code(), vanished.line(true).as_deref()), (1, Some("error: the device vanished")));
        let unwritten = Ending::of(&outcome(None, 1, Some(Error::runtime("cannot write bb.txt"))));
        assert_eq!(unwritten, Ending::Failed("cannot write bb.txt".into()), "the list's failure comes first");
    }
}
