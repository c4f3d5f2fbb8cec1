//! CSV: one row per (result, direction); for several ranks, then an empty line and one row
//! per (job, rank).

use stats::{DirStats, DocKind, JobResult, ResultDoc};

pub(crate) const HEADER: [&str; 22] = [
    "name",
    "direction",
    "rw",
    "bs",
    "qd",
    "threads",
    "ops",
    "bytes",
    "seconds",
    "iops",
    "mb_s",
    "mib_s",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_stddev_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
    "lat_max_ns",
    "qd_mean",
];

fn row(r: &JobResult, direction: &str, d: &DirStats) -> Vec<String> {
    let l = &d.lat_ns;
    vec![
        r.name.clone(),
        direction.to_string(),
        // A replayed trace: what the trace was (`trace: 100 % reads, 4 KiB`), not a mode.
        r.workload.clone().unwrap_or_else(|| r.spec.rw.name().to_string()),
        r.spec.bs.to_string(),
        r.spec.qd.to_string(),
        r.spec.threads.to_string(),
        d.ops.to_string(),
        d.bytes.to_string(),
        d.seconds.to_string(),
        d.iops.to_string(),
        d.mb_s.to_string(),
        d.mib_s.to_string(),
        l.min.to_string(),
        l.mean.to_string(),
        l.stddev.to_string(),
        l.p50.to_string(),
        l.p90.to_string(),
        l.p99.to_string(),
        l.p99_9.to_string(),
        l.p99_99.to_string(),
        l.max.to_string(),
        d.qd_mean.to_string(),
    ]
}

fn try_render(doc: &ResultDoc) -> Result<String, Box<dyn std::error::Error>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for r in &doc.results {
        for (dir, d) in [("read", &r.read), ("write", &r.write)] {
            if let Some(d) = d {
                w.write_record(row(r, dir, d))?;
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    Ok(String::from_utf8(bytes)?)
}

pub(crate) fn render(doc: &ResultDoc) -> String {
    // sla: one row per measured point; compare: one row per subject per figure.
    match doc.kind() {
        DocKind::Cache => crate::cache_text::csv(doc),
        DocKind::Surface => crate::surface_text::csv(doc),
        DocKind::Sla => crate::sla_text::csv(doc),
        DocKind::Compare => crate::compare_text::csv(doc),
        // steady: one row per round and test point.
        DocKind::Run if doc.steady.is_some() => crate::steady_text::csv(doc),
        DocKind::Run | DocKind::Mark => {
            let mut out = try_render(doc).unwrap_or_else(|e| format!("# csv export failed: {e}\n"));
            // Several ranks: a second table, per job and rank, after an empty line.
            out.push_str(&crate::cluster_text::csv(doc));
            out.push_str(&crate::replay_text::csv(doc));
            // --sustained: MB/s per second of the write, after an empty line.
            out.push_str(&crate::steady_text::sustained_csv(doc));
            // --verify: one row per listed failure, after an empty line.
            out.push_str(&crate::verify_text::csv(doc));
            out
        }
    }
}
