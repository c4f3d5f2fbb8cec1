//! Replays the `jobfile` fuzz corpus (`fuzz/corpus/jobfile/`) through the same checks as the
//! fuzz target (`fuzz/fuzz_targets/jobfile.rs`), so plain `cargo test` guards every seed: the
//! parser never panics, a plan it accepts has jobs in every group, and an error names a line
//! inside the file.
#![allow(clippy::unwrap_used)]

use diskmeter_spec::fiojob::parse_jobfile;
use diskmeter_spec::{JobSpec, SpecError};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// The corpus holds at least this many files (a test over an empty directory proves nothing).
const MIN_FILES: usize = 25;

#[test]
fn corpus_replays_as_the_fuzz_target_checks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/jobfile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= MIN_FILES, "{} holds {} files, expected at least {MIN_FILES}", dir.display(), files.len());
    let (mut accepted, mut refused) = (0, 0);
    let mut failed = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let lines = text.strip_prefix('\u{feff}').unwrap_or(&text).lines().count().max(1);
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        match catch_unwind(AssertUnwindSafe(|| parse_jobfile("fuzz.fio", &text, &JobSpec::default()))) {
            Ok(Ok(plan)) => {
                assert!(!plan.groups.is_empty() && plan.groups.iter().all(|g| !g.jobs.is_empty()), "{name}");
                accepted += 1;
            }
            Ok(Err(SpecError::JobFile { line, .. })) => {
                assert!((1..=lines).contains(&line), "{name}: error at line {line} of {lines}");
                refused += 1;
            }
            Ok(Err(e)) => panic!("{name}: a non-file error: {e}"),
            Err(_) => failed.push(name),
        }
    }
    assert!(failed.is_empty(), "the parser panicked on {failed:?} (messages above)");
    // Both sides are exercised: real job files parse, broken ones are refused.
    assert!(accepted >= 8 && refused >= 8, "{accepted} accepted, {refused} refused");
}
