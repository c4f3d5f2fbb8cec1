//! Replays the `result_json` fuzz corpus (`fuzz/corpus/result_json/`) through the same
//! function the fuzz target calls (load as `report` and `compare --results` do, then render
//! in every format), so plain `cargo test` guards every input the fuzzer was seeded with or
//! found: nothing may panic on any of them.
#![allow(clippy::unwrap_used)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use diskmeter_report::fuzz_support::load_and_render;
use diskmeter_report::{render, Format};

mod common;

/// The corpus holds at least this many files (a test over an empty directory proves nothing).
const MIN_FILES: usize = 40;

#[test]
fn corpus_replays_without_panics() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/result_json");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= MIN_FILES, "{} holds {} files, expected at least {MIN_FILES}", dir.display(), files.len());
    let mut failed = Vec::new();
    let mut loaded = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(f).unwrap();
        match catch_unwind(AssertUnwindSafe(|| load_and_render(&bytes))) {
            Ok(true) => loaded.push(name),
            Ok(false) => {}
            Err(_) => failed.push(name),
        }
    }
    assert!(failed.is_empty(), "loading or rendering panicked on {failed:?} (messages above)");
    // The real documents load (and so are rendered), the broken ones (`bad_*`) do not.
    let real = files.iter().filter(|f| !f.file_name().unwrap().to_string_lossy().starts_with("bad_")).count();
    assert_eq!(loaded.len(), real, "loaded: {loaded:?}");
    assert!(loaded.iter().all(|n| !n.starts_with("bad_")), "loaded: {loaded:?}");
}

#[test]
fn fixtures_load_and_render() {
    for doc in [common::fixtures::mark_doc(), common::fixtures::run_doc(), common::text_fixtures::sla_doc()] {
        let json = render(&doc, Format::Json);
        assert!(load_and_render(json.as_bytes()));
    }
    assert!(!load_and_render(b""));
    assert!(!load_and_render(b"{\"schema\": \"diskmeter.result.v0\"}"));
}
