//! `diskmeter report`: options → app::report; the text goes to stdout, a file is named on stderr.

use crate::args::ReportArgs;
use crate::Outcome;
use app::report;

pub fn run(a: &ReportArgs) -> Outcome {
    let opts = report::Options { result: a.result.clone(), output: a.output.clone(), force: a.force };
    if let Some(path) = report::run(&report::Config::new(&opts)?)? {
        eprintln!("wrote {}", files::path::shown(&path));
    }
    Ok(0)
}
