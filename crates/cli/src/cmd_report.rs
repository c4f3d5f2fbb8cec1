//! `diskmeter report`: options → app::report; the text goes to stdout, a file is named on stderr.

use crate::args::ReportArgs;
use crate::term::{fail, print_stdout};
use app::report::{self, Done};
use std::process::ExitCode;

pub fn run(a: &ReportArgs) -> ExitCode {
    let opts = report::Options { result: a.result.clone(), output: a.output.clone(), force: a.force };
    match report::Config::new(&opts).and_then(|cfg| report::run(&cfg)) {
        Ok(Done::Stdout(text)) => print_stdout(&text).map_or_else(|e| fail(&e), |()| ExitCode::SUCCESS),
        Ok(Done::Wrote(path)) => {
            eprintln!("wrote {}", files::path::shown(&path));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}
