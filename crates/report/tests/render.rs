//! Every format of the `run` and `mark` documents: snapshots, shape and round trips.

mod common;

use std::path::Path;

use common::fixtures::{mark_doc, run_doc};
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
