//! The `verify` section of the HTML page (`run --verify`, `--verify-only`): what was
//! checked, the verdict, every failure the result keeps in a table, and the first ones'
//! hex dumps (expected against found bytes).

use stats::ResultDoc;

use crate::fmt;
use crate::verify_text::{checked, verdict, DUMPS};

pub(super) struct VerifyView {
    /// "every checked chunk held what was written" or "FAILED: …".
    pub verdict: String,
    pub failed: bool,
    pub facts: Vec<(String, String)>,
    /// Offset, job, diagnosis, found by, expected generation, found generation, found
    /// offset, detail.
    pub rows: Vec<[String; 8]>,
    /// The first failures' hex dumps: heading and lines.
    pub dumps: Vec<(String, Vec<String>)>,
    /// "N more failures are counted but not kept" ("" when all are listed).
    pub more: String,
}

pub(super) fn verify_view(doc: &ResultDoc) -> Option<VerifyView> {
    let v = doc.verify.as_ref()?;
    let mut facts = vec![
        ("checksum".to_string(), v.kind.clone()),
        ("run".to_string(), v.run_id.clone()),
        ("checked".to_string(), checked(v)),
    ];
    if let Some(state) = &v.state {
        facts.push(("state file".to_string(), state.clone()));
    }
    let opt = |x: Option<u64>| x.map_or("–".to_string(), |n| n.to_string());
    let rows = v
        .failures
        .iter()
        .map(|f| {
            [
                f.offset.to_string(),
                f.job.clone(),
                f.kind.clone(),
                f.found_by.clone(),
                f.expected_generation.to_string(),
                opt(f.found_generation.map(u64::from)),
                opt(f.found_offset),
                f.detail.clone(),
            ]
        })
        .collect();
    let dumps = v
        .failures
        .iter()
        .filter(|f| !f.hexdump.is_empty())
        .take(DUMPS)
        .map(|f| (format!("{} at offset {} ({})", f.kind, f.offset, f.job), f.hexdump.clone()))
        .collect();
    let kept = v.failures.len() as u64;
    let more = if v.failures_total > kept {
        format!("{} more failing chunks are counted but not listed.", fmt::group(v.failures_total - kept))
    } else {
        String::new()
    };
    Some(VerifyView { verdict: verdict(v), failed: v.failures_total > 0, facts, rows, dumps, more })
}
