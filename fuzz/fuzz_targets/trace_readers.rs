//! Fuzz every trace reader (blkparse, fio iolog v2/v3, MSR, Alibaba, Tencent, generic CSV
//! with three mappings, the binary format) and format detection, from the same bytes,
//! iterating every request: nothing may panic, and the readers keep their promises (see
//! `diskmeter_trace::fuzz_support::read_all`, which `crates/trace/tests/fuzz_corpus.rs`
//! replays over `corpus/trace_readers/` in plain `cargo test`).
//!
//! Run with: `cargo +nightly fuzz run trace_readers` (from the repository root).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    diskmeter_trace::fuzz_support::read_all(data);
});
