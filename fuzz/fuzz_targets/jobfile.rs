//! Fuzz the fio job-file parser: it must never panic, and any error must point at a
//! line inside the file.
//!
//! Run with: `cargo +nightly fuzz run jobfile` (from the repository root). Its seed corpus
//! (`fuzz/corpus/jobfile/`) replays as a test: `crates/spec/tests/fuzz_corpus_jobfile.rs`.
#![no_main]

use diskmeter_spec::fiojob::parse_jobfile;
use diskmeter_spec::{JobSpec, SpecError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lines = text
        .strip_prefix('\u{feff}')
        .unwrap_or(&text)
        .lines()
        .count()
        .max(1);
    match parse_jobfile("fuzz.fio", &text, &JobSpec::default()) {
        Ok(plan) => {
            assert!(!plan.groups.is_empty());
            assert!(plan.groups.iter().all(|g| !g.jobs.is_empty()));
        }
        Err(SpecError::JobFile { line, .. }) => assert!((1..=lines).contains(&line)),
        Err(e @ (SpecError::Value { .. } | SpecError::Invalid(_))) => {
            panic!("parse_jobfile returned a non-file error: {e}")
        }
    }
});
