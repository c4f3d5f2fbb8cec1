//! What `diskmeter report` and `compare --results` do with a result file, for the
//! `result_json` fuzz target (`fuzz/`) and its corpus replay test
//! (`tests/fuzz_corpus_result_json.rs`), so both run the same code; built with the `fuzz`
//! feature only. Not part of the API: it panics (an `assert!`) when an exporter breaks one
//! of its promises, which is what a fuzzer looks for.

use stats::ResultDoc;

use crate::{render, Format};

/// Every export format.
pub const FORMATS: [Format; 5] = [Format::Human, Format::Json, Format::Markdown, Format::Csv, Format::Html];

/// Loads `bytes` as a result document (invalid UTF-8 is replaced, as lossy text: a superset
/// of what the CLI, which refuses it, can be given) and, when it loads, renders it in every
/// [`Format`]. Checks that every rendering ends in a newline and that the JSON export loads
/// again. Returns whether the document loaded.
pub fn load_and_render(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(doc) = ResultDoc::from_json(&text) else { return false };
    for format in FORMATS {
        let out = render(&doc, format);
        assert!(out.ends_with('\n'), "{format:?} output does not end in a newline");
        if format == Format::Json {
            if let Err(e) = ResultDoc::from_json(&out) {
                panic!("the JSON export does not load again: {e}");
            }
        }
    }
    true
}
