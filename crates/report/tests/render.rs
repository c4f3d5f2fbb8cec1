//! Every format of the `run` and `mark` documents: snapshots, shape and round trips.

mod common;

use std::path::Path;

use common::fixtures::{cluster_doc, cluster_failed_doc, mark_doc, run_doc};
use diskmeter_report::{render, Format};

#[test]
fn format_from_path() {
    assert_eq!(Format::from_path(Path::new("r.json")), Some(Format::Json));
    assert_eq!(Format::from_path(Path::new("r.CSV")), Some(Format::Csv));
    assert_eq!(Format::from_path(Path::new("a/b.md")), Some(Format::Markdown));
    assert_eq!(Format::from_path(Path::new("b.markdown")), Some(Format::Markdown));
    assert_eq!(Format::from_path(Path::new("b.txt")), Some(Format::Human));
    assert_eq!(Format::from_path(Path::new("b.html")), Some(Format::Html));
    assert_eq!(Format::from_path(Path::new("b.pdf")), None);
    assert_eq!(Format::from_path(Path::new("noext")), None);
}

#[test]
fn human_run() {
    insta::assert_snapshot!(render(&run_doc(), Format::Human));
}

#[test]
fn human_mark_card() {
    insta::assert_snapshot!(render(&mark_doc(), Format::Human));
}

#[test]
fn csv_run() {
    insta::assert_snapshot!(render(&run_doc(), Format::Csv));
}

#[test]
fn markdown_run() {
    insta::assert_snapshot!(render(&run_doc(), Format::Markdown));
}

#[test]
fn markdown_mark() {
    insta::assert_snapshot!(render(&mark_doc(), Format::Markdown));
}

#[test]
fn json_is_valid_and_round_trips() {
    for doc in [run_doc(), mark_doc()] {
        let text = render(&doc, Format::Json);
        assert!(text.ends_with('\n'));
        let back = stats::ResultDoc::from_json(&text).expect("valid result JSON");
        assert_eq!(back, doc);
    }
}

#[test]
fn no_colour_and_narrow() {
    for doc in [run_doc(), mark_doc()] {
        for f in [Format::Human, Format::Json, Format::Csv, Format::Markdown] {
            let text = render(&doc, f);
            assert!(!text.contains('\x1b'), "{f:?} has escape codes");
            assert!(text.ends_with('\n'));
        }
        // The HTML page too (askama drops the template's final newline: it used not to).
        assert!(render(&doc, Format::Html).ends_with("</html>\n"));
        for l in render(&doc, Format::Human).lines() {
            assert!(l.chars().count() <= 100, "line too wide: {l}");
        }
    }
}

#[test]
fn csv_shape() {
    let text = render(&run_doc(), Format::Csv);
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let headers = r.headers().expect("header").clone();
    assert_eq!(headers.len(), 22);
    assert_eq!(&headers[0], "name");
    assert_eq!(&headers[21], "qd_mean");
    let rows: Vec<_> = r.records().collect::<Result<_, _>>().expect("rows");
    assert_eq!(rows.len(), 3, "randread (read) + oltp (read, write)");
    assert_eq!(&rows[2][1], "write");
}

#[test]
fn empty_doc_renders() {
    let doc = stats::ResultDoc::new("run", "2025-01-15T10:30:00Z", Default::default());
    for f in [Format::Human, Format::Json, Format::Csv, Format::Markdown] {
        assert!(!render(&doc, f).is_empty());
    }
    let mut mark = doc.clone();
    mark.command = "mark".into();
    assert!(render(&mark, Format::Human).contains("Read"));
}

// ---------------------------------------------------------------------------------------
// several ranks (`cluster`)

#[test]
fn human_cluster() {
    insta::assert_snapshot!(render(&cluster_doc(), Format::Human));
}

#[test]
fn human_cluster_failed_rank() {
    insta::assert_snapshot!(render(&cluster_failed_doc(), Format::Human));
}

#[test]
fn markdown_cluster() {
    insta::assert_snapshot!(render(&cluster_doc(), Format::Markdown));
}

#[test]
fn markdown_cluster_failed_rank() {
    insta::assert_snapshot!(render(&cluster_failed_doc(), Format::Markdown));
}

#[test]
fn cluster_section_is_additive() {
    for doc in [cluster_doc(), cluster_failed_doc()] {
        let mut single = doc.clone();
        single.cluster = None;
        for f in [Format::Human, Format::Markdown, Format::Csv] {
            let (with, without) = (render(&doc, f), render(&single, f));
            assert!(with.len() > without.len(), "{f:?}: no cluster section");
            assert!(!without.contains("node02") && !without.contains("Hosts:"), "{f:?}");
        }
        // The merged figures come first, exactly as for one host.
        let csv = render(&doc, Format::Csv);
        assert!(csv.starts_with(&render(&single, Format::Csv)));
        // The section's own lines fit in 100 columns.
        let without = render(&single, Format::Human);
        for l in render(&doc, Format::Human).lines().filter(|l| !without.lines().any(|w| w == *l)) {
            assert!(l.chars().count() <= 100, "line too wide: {l}");
        }
    }
}

#[test]
fn csv_cluster_rows() {
    let text = render(&cluster_doc(), Format::Csv);
    let (jobs, hosts) = text.split_once("\n\n").expect("an empty line before the per-rank table");
    // The jobs table is unchanged: one merged row.
    let mut r = csv::Reader::from_reader(jobs.as_bytes());
    assert_eq!(r.records().count(), 1);
    let mut r = csv::Reader::from_reader(hosts.as_bytes());
    let headers = r.headers().expect("header").clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        ["job", "rank", "host", "iops", "mb_s", "lat_mean_ns", "lat_p99_ns", "lat_max_ns", "qd_mean", "start_offset_s"]
    );
    let rows: Vec<csv::StringRecord> = r.records().collect::<Result<_, _>>().expect("rows");
    let doc = cluster_doc();
    let hosts = &doc.cluster.as_ref().expect("cluster section").jobs[0].hosts;
    assert_eq!(rows.len(), 3);
    for (row, h) in rows.iter().zip(hosts) {
        assert_eq!(&row[0], "randread-4k");
        assert_eq!(&row[1], h.rank.to_string());
        assert_eq!(&row[2], h.host);
        assert_eq!(row[3].parse::<f64>().expect("iops"), h.iops);
        assert_eq!(row[4].parse::<f64>().expect("mb_s"), h.mb_s);
        assert_eq!(row[6].parse::<u64>().expect("p99"), h.lat_p99_ns);
        assert_eq!(row[9].parse::<f64>().ok(), h.start_offset_s);
    }
    // A rank without a start offset leaves the field empty; a failed rank has no row.
    let mut doc = cluster_failed_doc();
    doc.cluster.as_mut().expect("cluster section").jobs[0].hosts[1].start_offset_s = None;
    let text = render(&doc, Format::Csv);
    let (_, hosts) = text.split_once("\n\n").expect("per-rank table");
    let rows: Vec<csv::StringRecord> =
        csv::Reader::from_reader(hosts.as_bytes()).records().collect::<Result<_, _>>().expect("rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[1][9], "");
}
