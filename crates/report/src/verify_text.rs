//! The `verify` section (`run --verify`) as human text, Markdown and CSV: what was checked,
//! then every failure with its diagnosis and hex dump.

use crate::fmt;
use stats::verify::{VerifyFailure, VerifyResult};
use stats::ResultDoc;
use std::fmt::Write as _;

/// Failures shown with their hex dump in the human text; the rest get one line each.
pub(crate) const DUMPS: usize = 8;
/// Failure lines in the human text (all of them are in JSON and CSV).
const LINES: usize = 50;

/// What was checked, in one sentence.
pub(crate) fn checked(v: &VerifyResult) -> String {
    let mut parts = vec![format!("{} chunks of {}", fmt::group(v.chunks_written), fmt::bytes(v.interval))];
    if v.state_loaded {
        parts = vec![format!("against {}", v.state.as_deref().unwrap_or("the state file"))];
    }
    if v.checked_inline > 0 {
        parts.push(format!("{} checked by the job's reads", fmt::group(v.checked_inline)));
    }
    if v.checked_after > 0 {
        parts.push(format!(
            "{} read back in {} ({} MB/s)",
            fmt::group(v.checked_after),
            fmt::secs(v.after_seconds),
            fmt::rate_text(v.after_mb_s)
        ));
    }
    if !v.complete {
        parts.push("the read-back did not finish".into());
    }
    if v.newer > 0 {
        parts.push(format!("{} newer than the state file (written after its last save)", fmt::group(v.newer)));
    }
    parts.join(", ")
}

pub(crate) fn verdict(v: &VerifyResult) -> String {
    if v.failures_total == 0 {
        return "every checked chunk held what was written".into();
    }
    let kinds = v.by_kind.iter().map(|(k, n)| format!("{} {k}", fmt::group(*n))).collect::<Vec<_>>().join(", ");
    let s = if v.failures_total == 1 { "" } else { "s" };
    format!("FAILED: {} chunk{s} ({kinds})", fmt::group(v.failures_total))
}

fn failure_line(f: &VerifyFailure) -> String {
    format!("{}: {}", f.job, f.detail)
}

/// Human text of the section ("" without one), ending in an empty line.
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(v) = &doc.verify else { return String::new() };
    let mut out = String::new();
    let _ = writeln!(out, "verify ({}, run {}): {}", v.kind, v.run_id, checked(v));
    let _ = writeln!(out, "  {}", verdict(v));
    for (i, f) in v.failures.iter().take(LINES).enumerate() {
        let _ = writeln!(out, "  {}", failure_line(f));
        if i < DUMPS {
            for l in &f.hexdump {
                let _ = writeln!(out, "      {l}");
            }
        }
    }
    let listed = v.failures.len().min(LINES) as u64;
    if v.failures_total > listed {
        let _ = writeln!(out, "  … {} more in the JSON result", fmt::group(v.failures_total - listed));
    }
    out.push('\n');
    out
}

/// Markdown of the section ("" without one).
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(v) = &doc.verify else { return String::new() };
    let mut out = String::new();
    let _ = writeln!(out, "\n## Verify\n");
    let _ = writeln!(out, "{} ({}, run `{}`): {}.\n", verdict(v), v.kind, v.run_id, checked(v));
    if !v.failures.is_empty() {
        let _ = writeln!(out, "| offset | job | diagnosis | expected gen | found gen | found offset | detail |");
        let _ = writeln!(out, "| ---: | --- | --- | ---: | ---: | ---: | --- |");
        for f in &v.failures {
            let opt = |x: Option<u64>| x.map_or("—".to_string(), |n| n.to_string());
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                f.offset,
                f.job.replace('|', "\\|"),
                f.kind,
                f.expected_generation,
                opt(f.found_generation.map(u64::from)),
                opt(f.found_offset),
                f.detail.replace('|', "\\|")
            );
        }
    }
    out
}

/// CSV of the failures after an empty line ("" without a section).
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let Some(v) = &doc.verify else { return String::new() };
    let mut out = String::from(
        "\nverify_offset,job,diagnosis,found_by,expected_generation,found_generation,found_offset,detail\n",
    );
    for f in &v.failures {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{}",
            f.offset,
            q(&f.job),
            f.kind,
            f.found_by,
            f.expected_generation,
            f.found_generation.map(|g| g.to_string()).unwrap_or_default(),
            f.found_offset.map(|o| o.to_string()).unwrap_or_default(),
            q(&f.detail)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::HostInfo;

    fn failure(kind: &str, offset: u64, expected: u32, found: Option<u32>, detail: &str) -> VerifyFailure {
        VerifyFailure {
            job: "w".into(),
            offset,
            len: 4096,
            kind: kind.into(),
            found_by: "after".into(),
            expected_generation: expected,
            found_generation: found,
            found_offset: found.map(|_| offset),
            detail: detail.into(),
            first_difference: Some(24),
            hexdump: vec![
                format!(
                    "exp {:010x}: 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  |................|",
                    offset + 16
                ),
                format!(
                    "got {:010x}: 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  |................|",
                    offset + 16
                ),
            ],
        }
    }

    fn doc(failures: Vec<VerifyFailure>) -> ResultDoc {
        let mut d = ResultDoc::new("run", "2026-11-24T12:00:00Z", HostInfo::default());
        let mut v = VerifyResult {
            kind: "crc32c".into(),
            interval: 4096,
            run_id: "00c0ffee00c0ffee".into(),
            chunks_written: 51_200,
            checked_inline: 12_004,
            checked_after: 25_600,
            after_seconds: 0.25,
            after_mb_s: 419.4,
            complete: true,
            ..VerifyResult::default()
        };
        for f in failures {
            v.add_failure(f);
        }
        v.sort();
        d.verify = Some(v);
        d
    }

    fn failed() -> ResultDoc {
        doc(vec![
            failure(
                "torn",
                65_536,
                2,
                Some(2),
                "torn at 65536: sectors 0-3 generation 2, sectors 4-7 generation 1 (expected 2)",
            ),
            failure("stale", 4096, 2, Some(1), "stale at 4096: generation 1 found, 2 expected (a write was lost)"),
        ])
    }

    #[test]
    fn human_text_of_a_clean_and_a_failed_check() {
        insta::assert_snapshot!(format!("{}---\n{}", human(&doc(Vec::new())), human(&failed())));
    }

    #[test]
    fn markdown_and_csv_list_every_failure() {
        insta::assert_snapshot!(format!("{}---\n{}", markdown(&failed()), csv(&failed())));
    }

    #[test]
    fn no_section_no_text() {
        let d = ResultDoc::new("run", "2026-11-24T12:00:00Z", HostInfo::default());
        assert_eq!((human(&d), markdown(&d), csv(&d)), (String::new(), String::new(), String::new()));
    }
}
