//! `diskmeter report`: options → app::report; the text goes to stdout, a file is named on stderr.

use crate::args::ReportArgs;
use crate::term::fail;
use app::report::{self, Done};
use std::process::ExitCode;

pub fn run(a: &ReportArgs) -> ExitCode {
    let opts = report::Options { result: a.result.clone(), output: a.output.clone(), force: a.force };
    match report::Config::new(&opts).and_then(|cfg| report::run(&cfg)) {
        Ok(Done::Stdout(text)) => match crate::print_stdout(&text) {
            Ok(()) => ExitCode::SUCCESS,
            Err(crate::Failure::Usage(m) | crate::Failure::Runtime(m)) => fail(&app::Error::Runtime(m)),
        },
        Ok(Done::Wrote(path)) => {
            eprintln!("wrote {}", files::path::shown(&path));
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}
