//! The `replay` section (`ResultDoc::replay`): the trace and its mapping, and per pass a table
//! of the operation kinds with the fidelity line — the facts of the text formats
//! ([`crate::replay_text`]).

use stats::ResultDoc;

use crate::fmt;
use crate::replay_text::{fidelity, head_lines, op_cells, versus, OP_COLS};

pub(super) struct ReplayView {
    pub facts: Vec<(String, String)>,
    pub cols: [&'static str; 9],
    pub passes: Vec<PassView>,
}

pub(super) struct PassView {
    /// 1-based, for element ids.
    pub n: u32,
    pub title: String,
    pub rows: Vec<[String; 9]>,
    pub fidelity: String,
    /// The recorded-against-replayed sentence, or empty.
    pub versus: String,
}

pub(super) fn replay_view(doc: &ResultDoc) -> Option<ReplayView> {
    let r = doc.replay.as_ref()?;
    let facts = head_lines(r)
        .into_iter()
        .map(|l| match l.split_once(char::is_whitespace) {
            Some((k, v)) => (k.to_string(), v.trim().to_string()),
            None => (String::new(), l),
        })
        .collect();
    let passes = r
        .passes
        .iter()
        .map(|p| PassView {
            n: p.pass,
            title: format!(
                "Pass {} · {} · {} requests · {} req/s",
                p.pass,
                fmt::secs(p.seconds),
                fmt::group(p.requests),
                fmt::iops(p.ops.iter().map(|o| o.iops).sum())
            ),
            rows: p.ops.iter().map(op_cells).collect(),
            fidelity: fidelity(p, r.qd),
            versus: versus(p).unwrap_or_default(),
        })
        .collect();
    Some(ReplayView { facts, cols: OP_COLS, passes })
}
