//! Hand-made, deterministic result documents shared by the tests. `text_fixtures` also
//! serves the unit tests of `src/sla_text.rs` and `src/compare_text.rs` (through a
//! `#[path]` module in `src/lib.rs`).

// Each test file uses some of the builders.
#![allow(dead_code)]

pub mod doctor_fixtures;
pub mod fixtures;
pub mod text_fixtures;
