//! Markdown: target facts, a results table (the card for `mark`), warnings.

use std::fmt::Write as _;

use stats::{DirStats, DocKind, ResultDoc};

use crate::fmt;

/// Escape text for a table cell or list item.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\n', " ")
}

fn push(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

fn table_head(out: &mut String, cols: &[&str], left: usize) {
    push(out, format!("| {} |", cols.join(" | ")));
    let aligns: Vec<&str> = (0..cols.len()).map(|i| if i < left { "---" } else { "---:" }).collect();
    push(out, format!("| {} |", aligns.join(" | ")));
}

pub(crate) fn render(doc: &ResultDoc) -> String {
    let kind = doc.kind();
    let body: fn(&ResultDoc, &mut String) = match kind {
        DocKind::Cache => return crate::cache_text::markdown(doc) + &crate::cluster_text::markdown(doc),
        DocKind::Surface => return crate::surface_text::markdown(doc) + &crate::cluster_text::markdown(doc),
        DocKind::Mark => mark_table,
        DocKind::Sla => sla_body,
        DocKind::Compare => |doc, out| out.push_str(&crate::compare_text::markdown(doc)),
        // `steady`: the PTS rounds and their table stand for the jobs.
        DocKind::Run if doc.steady.is_some() => |doc, out| out.push_str(&crate::steady_text::markdown(doc)),
        DocKind::Run => run_table,
    };
    let mut out = String::new();
    facts(doc, kind == DocKind::Mark, &mut out);
    body(doc, &mut out);
    // Several ranks: what each measured, after the merged figures.
    out.push_str(&crate::cluster_text::markdown(doc));
    out.push_str(&crate::replay_text::markdown(doc));
    out.push_str(&crate::steady_text::sustained_markdown(doc));
    out.push_str(&crate::verify_text::markdown(doc));
    problems(doc, &mut out);
    out
}

/// Title, partial-result note and the facts list (with the test and figures lines of `mark`).
fn facts(doc: &ResultDoc, mark: bool, out: &mut String) {
    let what = doc.target.as_ref().map(|t| esc(&t.path)).unwrap_or_else(|| "-".to_string());
    push(out, format!("# diskmeter {} — {what}", doc.command));
    push(out, "");
    if doc.partial {
        let why = esc(&crate::fmt::partial_why(doc));
        push(out, format!("> **PARTIAL RESULTS** ({why}) — figures cover only the part that completed."));
        push(out, "");
    }
    if let Some(t) = &doc.target {
        push(out, format!("- **Target:** `{}` ({})", t.path.replace('`', "'"), esc(&fmt::target_what(t))));
        push(out, format!("- **Device:** {}", esc(&fmt::device(t))));
        push(out, format!("- **File system:** {}", esc(t.filesystem.as_deref().unwrap_or("-"))));
        push(
            out,
            format!(
                "- **Media:** {} · scheduler {} · blocks {}",
                fmt::media(t),
                esc(t.scheduler.as_deref().unwrap_or("unknown")),
                fmt::blocks(t)
            ),
        );
    }
    if let Some(r) = doc.results.first() {
        push(out, format!("- **I/O:** {}", fmt::io_mode(&r.spec)));
    }
    if mark {
        let passes = doc.results.iter().map(|r| r.passes.len()).max().unwrap_or(0).max(1);
        let how = doc.results.iter().find_map(|r| r.aggregate);
        if let Some(r) = doc.results.first() {
            let size = r
                .spec
                .size
                .or(doc.target.as_ref().map(|t| t.size_bytes))
                .map(fmt::bytes)
                .unwrap_or_else(|| "-".to_string());
            push(
                out,
                format!(
                    "- **Test:** {size} · {passes} {} × {} · {}",
                    if passes == 1 { "pass" } else { "passes" },
                    fmt::secs(r.spec.runtime.as_secs_f64()),
                    fmt::data(&r.spec.data)
                ),
            );
        }
        push(out, format!("- **Figures:** {}", fmt::aggregation(how, passes)));
    }
    push(out, format!("- **Date:** {} · {} {}", fmt::date(&doc.started_at), doc.tool.name, doc.tool.version));
    push(out, "");
}

/// The search, then the best point's jobs.
fn sla_body(doc: &ResultDoc, out: &mut String) {
    out.push_str(&crate::sla_text::markdown(doc));
    push(out, "");
    push(out, "## Best point in full");
    push(out, "");
    run_table(doc, out);
}

/// The errors and warnings sections, when there are any.
fn problems(doc: &ResultDoc, out: &mut String) {
    let errors: Vec<String> = doc
        .results
        .iter()
        .filter_map(|r| r.error.as_ref().map(|e| format!("- `{}` in {}: {}", e.kind, esc(&r.name), esc(&e.message))))
        .collect();
    if !errors.is_empty() || (doc.error.is_some() && !doc.partial) {
        push(out, "");
        push(out, "## Errors");
        push(out, "");
        for e in errors {
            push(out, e);
        }
        if let (Some(e), false) = (&doc.error, doc.partial) {
            push(out, format!("- `{}`: {}", e.kind, esc(&e.message)));
        }
    }
    if !doc.warnings.is_empty() {
        push(out, "");
        push(out, "## Warnings");
        push(out, "");
        for w in &doc.warnings {
            push(out, format!("- `{}`: {}", w.code, esc(&w.message)));
        }
    }
}

fn run_table(doc: &ResultDoc, out: &mut String) {
    table_head(
        out,
        &["Job", "Dir", "Workload", "IOPS", "MB/s", "MiB/s", "lat mean", "p50", "p99", "p99.9", "max", "QD(mean)"],
        3,
    );
    for r in &doc.results {
        let workload = match &r.workload {
            Some(w) => format!("{w} · {}", fmt::depth(&r.spec)),
            None => format!("{} · {} · {}", fmt::rw(&r.spec), fmt::bytes(r.spec.bs), fmt::depth(&r.spec)),
        };
        for (dir, d) in [("read", &r.read), ("write", &r.write)] {
            let Some(d) = d else { continue };
            let mut row = format!("| {} | {dir} | {workload} |", esc(&r.name));
            for c in fmt::dir_cells(d) {
                let _ = write!(row, " {c} |");
            }
            push(out, row);
        }
    }
}

fn mark_cells(d: Option<&DirStats>) -> String {
    match d {
        Some(d) => format!(
            "**{}** | {} | {} / {}",
            fmt::rate(d.mb_s),
            fmt::iops(d.iops),
            fmt::lat(d.lat_ns.mean),
            fmt::lat(d.lat_ns.p99 as f64)
        ),
        None => "- | - | -".to_string(),
    }
}

fn mark_table(doc: &ResultDoc, out: &mut String) {
    table_head(
        out,
        &["Test", "Read MB/s", "Read IOPS", "Read lat mean / p99", "Write MB/s", "Write IOPS", "Write lat mean / p99"],
        1,
    );
    for r in &doc.results {
        push(out, format!("| {} | {} | {} |", esc(&r.name), mark_cells(r.read.as_ref()), mark_cells(r.write.as_ref())));
    }
}
