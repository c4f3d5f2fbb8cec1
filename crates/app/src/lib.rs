//! diskmeter's command layer, between the command line (`cli`, clap only) and the I/O kernel
//! (`engine`): one module per command, each with its options as typed (`Options`), a
//! validated configuration (`Config::new`, where every rule and limit lives) and a `run`.
pub mod cache;
pub mod capture;
pub mod checks;
pub mod cluster;
pub mod compare;
pub mod doctor;
mod engine_words;
pub mod error;
pub mod fio_import;
mod fioflow;
pub mod health;
pub mod history;
pub mod input;
pub mod mark;
pub mod merge;
pub mod output;
mod parse;
pub mod profile;
pub mod ranks;
pub mod replay;
pub mod report;
pub mod run;
pub mod serve;
pub mod session;
pub mod sla;
mod spec_words;
pub mod steady;
pub mod surface;
#[cfg(test)]
mod test_support;
pub mod top;
pub mod trace_options;
pub mod verify;
pub use error::{Error, Result};
