//! Markdown: target facts, a results table (the card for `mark`), warnings.

use std::fmt::Write as _;

use stats::{DirStats, ResultDoc};

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
    let mut out = String::new();
    let what = doc.target.as_ref().map(|t| esc(&t.path)).unwrap_or_else(|| "-".to_string());
    push(&mut out, format!("# diskmeter {} — {what}", doc.command));
    push(&mut out, "");
    if doc.partial {
        let why = doc
            .error
            .as_ref()
            .map(|e| format!("{}: {}", e.kind, esc(&e.message)))
            .unwrap_or_else(|| "interrupted or failed before completion".to_string());
        push(&mut out, format!("> **PARTIAL RESULTS** ({why}) — figures cover only the part that completed."));
        push(&mut out, "");
    }
    if let Some(t) = &doc.target {
        let mut what = format!("{}, {}", fmt::kind(t.kind), fmt::bytes(t.size_bytes));
        if t.created_by_diskmeter {
            what.push_str(", created by diskmeter");
        }
        push(&mut out, format!("- **Target:** `{}` ({what})", t.path.replace('`', "'")));
        push(&mut out, format!("- **Device:** {}", esc(&fmt::device(t))));
        push(&mut out, format!("- **File system:** {}", esc(t.filesystem.as_deref().unwrap_or("-"))));
        push(
            &mut out,
            format!(
                "- **Media:** {} · scheduler {} · blocks {}",
                fmt::media(t),
                esc(t.scheduler.as_deref().unwrap_or("unknown")),
                fmt::blocks(t)
            ),
        );
    }
    if let Some(r) = doc.results.first() {
        push(&mut out, format!("- **I/O:** {}", fmt::io_mode(&r.spec)));
    }
    if doc.command == "mark" {
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
                &mut out,
                format!(
                    "- **Test:** {size} · {passes} {} × {} · {}",
                    if passes == 1 { "pass" } else { "passes" },
                    fmt::secs(r.spec.runtime.as_secs_f64()),
                    fmt::data(&r.spec.data)
                ),
            );
        }
        push(&mut out, format!("- **Figures:** {}", fmt::aggregation(how, passes)));
    }
    push(&mut out, format!("- **Date:** {} · {} {}", fmt::date(&doc.started_at), doc.tool.name, doc.tool.version));
    push(&mut out, "");

    if doc.command == "mark" {
        mark_table(doc, &mut out);
    } else if doc.sla.is_some() {
        out.push_str(&crate::sla_text::markdown(doc));
        push(&mut out, "");
        push(&mut out, "## Best point in full");
        push(&mut out, "");
        run_table(doc, &mut out);
    } else if doc.compare.is_some() {
        out.push_str(&crate::compare_text::markdown(doc));
    } else {
        run_table(doc, &mut out);
    }

    let errors: Vec<String> = doc
        .results
        .iter()
        .filter_map(|r| r.error.as_ref().map(|e| format!("- `{}` in {}: {}", e.kind, esc(&r.name), esc(&e.message))))
        .collect();
    if !errors.is_empty() || (doc.error.is_some() && !doc.partial) {
        push(&mut out, "");
        push(&mut out, "## Errors");
        push(&mut out, "");
        for e in errors {
            push(&mut out, e);
        }
        if let (Some(e), false) = (&doc.error, doc.partial) {
            push(&mut out, format!("- `{}`: {}", e.kind, esc(&e.message)));
        }
    }
    if !doc.warnings.is_empty() {
        push(&mut out, "");
        push(&mut out, "## Warnings");
        push(&mut out, "");
        for w in &doc.warnings {
            push(&mut out, format!("- `{}`: {}", w.code, esc(&w.message)));
        }
    }
    out
}

fn run_table(doc: &ResultDoc, out: &mut String) {
    table_head(
        out,
        &["Job", "Dir", "Workload", "IOPS", "MB/s", "MiB/s", "lat mean", "p50", "p99", "p99.9", "max", "QD(mean)"],
        3,
    );
    for r in &doc.results {
        let workload = format!("{} · {} · {}", fmt::rw(&r.spec), fmt::bytes(r.spec.bs), fmt::depth(&r.spec));
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
