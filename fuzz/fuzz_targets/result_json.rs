//! Fuzz the result-JSON loader of `diskmeter report` and `compare --results`
//! (`ResultDoc::from_json`) and, for every document it accepts, each exporter (human,
//! JSON, Markdown, CSV, HTML), as `report` does: nothing may panic. The logic lives in
//! `diskmeter_report::fuzz_support`, which `crates/report/tests/fuzz_corpus_result_json.rs`
//! replays over `corpus/result_json/` in plain `cargo test`.
//!
//! Run with: `cargo +nightly fuzz run result_json` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    diskmeter_report::fuzz_support::load_and_render(data);
});
