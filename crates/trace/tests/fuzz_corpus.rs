//! Replays the `trace_readers` fuzz corpus (`fuzz/corpus/trace_readers/`) through the same
//! function the fuzz target calls, so plain `cargo test` guards every input the fuzzer was
//! seeded with or found: no reader may panic on any of them.
#![allow(clippy::unwrap_used)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use diskmeter_trace::fuzz_support::read_all;

/// The corpus holds at least this many files (a test over an empty directory proves nothing).
const MIN_FILES: usize = 30;

#[test]
fn corpus_replays_without_panics() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/trace_readers");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= MIN_FILES, "{} holds {} files, expected at least {MIN_FILES}", dir.display(), files.len());
    let mut failed = Vec::new();
    let mut requests = 0;
    let mut clean = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        match catch_unwind(AssertUnwindSafe(|| read_all(&bytes))) {
            Ok(s) => {
                requests += s.requests;
                clean += usize::from(s.requests > 0);
            }
            Err(_) => failed.push(f.file_name().unwrap().to_string_lossy().into_owned()),
        }
    }
    assert!(failed.is_empty(), "readers panicked on {failed:?} (messages above)");
    // The real samples are read, not just rejected.
    assert!(clean >= 15 && requests >= 500, "only {clean} files gave requests ({requests} in all)");
}
