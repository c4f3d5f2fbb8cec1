//! Fuzz the verify chunk decoder and the diagnosis: `decode_header` and `diagnose` must never
//! panic on any bytes, and a chunk that fails the fast check is never diagnosed `ok` (see
//! `diskmeter_engine::verify::fuzz_support::exercise`, which
//! `crates/engine/tests/fuzz_corpus_verify_header.rs` replays over `corpus/verify_header/` in
//! plain `cargo test`).
//!
//! Run with: `cargo +nightly fuzz run verify_header` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    diskmeter_engine::verify::fuzz_support::exercise(data);
});
