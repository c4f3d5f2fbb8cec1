//! `diskmeter report`: options → app::report; the text goes to stdout, a file is named on stderr.

use crate::output::{self, Outcome};
use app::report;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result document written by diskmeter (--json or -o FILE.json).
    #[arg(value_name = "RESULT.json")]
    pub result: PathBuf,
    /// Output file; the extension picks the format (.html, .md, .csv, .txt, .json)
    /// [default: RESULT.html next to the input].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: &ReportArgs) -> Outcome {
    let opts = report::Options { result: a.result.clone(), output: a.output.clone(), force: a.force };
    match report::run(&report::Config::new(&opts)?)? {
        Some(path) => output::wrote(&path),
        None => Ok(0),
    }
}
