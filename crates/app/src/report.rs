//! `diskmeter report`: a saved result rendered again, as HTML (the default, next to the input),
//! text, Markdown, CSV or JSON.

use crate::error::{Error, Result};
use files::output::OutputFile;
use stats::ResultDoc;
use std::path::{Path, PathBuf};

/// The options of `diskmeter report`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The result document to read.
    pub result: PathBuf,
    /// Where to write; `-` is stdout (text). Default: the input with `.html`.
    pub output: Option<PathBuf>,
    pub force: bool,
}

/// Where the rendered result goes.
pub enum Dest {
    Stdout,
    /// A checked file, never the input itself.
    File(OutputFile),
}

/// A validated `report` command: the format is known and the destination checked before the
/// input is read.
pub struct Config {
    pub input: PathBuf,
    pub format: report::Format,
    pub dest: Dest,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        let out = match &o.output {
            Some(p) => p.clone(),
            None => o.result.with_extension("html"),
        };
        let format = if out.as_os_str() == "-" {
            report::Format::Human
        } else if out.extension().is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")) {
            report::Format::Html
        } else {
            report::Format::from_path(&out).ok_or_else(|| {
                Error::usage(format!(
                    "invalid value for --output: cannot tell the format of {}; use .html, .md, .csv, .txt or .json \
                     (or - for text on stdout)",
                    files::path::shown(&out)
                ))
            })?
        };
        let dest = if out.as_os_str() == "-" {
            Dest::Stdout
        } else {
            Dest::File(files::output::plan(&out, "--output", o.force)?)
        };
        if let (Dest::File(f), Ok(input)) = (&dest, o.result.canonicalize()) {
            if f.destination().canonicalize().ok().as_ref() == Some(&input) {
                return Err(Error::usage(format!(
                    "refusing to overwrite the input {}; choose another -o",
                    files::path::shown(&out)
                )));
            }
        }
        Ok(Config { input: o.result.clone(), format, dest })
    }
}

/// What [`run`] did.
pub enum Done {
    /// The text for stdout (the caller prints it).
    Stdout(String),
    /// The report was written to this file.
    Wrote(PathBuf),
}

/// Reads the result, renders it and writes the file (or hands back the text for stdout).
pub fn run(cfg: &Config) -> Result<Done> {
    let doc = load_result(&cfg.input)?;
    let text =
        report::try_render(&doc, cfg.format).map_err(|e| Error::runtime(format!("cannot write the result: {e}")))?;
    match &cfg.dest {
        Dest::Stdout => Ok(Done::Stdout(text)),
        Dest::File(f) => {
            f.write(text.as_bytes())?;
            Ok(Done::Wrote(f.path().to_path_buf()))
        }
    }
}

/// Reads a result document with one clear error line. Only a regular file of at most 256 MiB
/// is read.
pub fn load_result(path: &Path) -> Result<ResultDoc> {
    let bytes = files::input::read_capped(path, "the result file", files::input::RESULT_CAP)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!("{} is not a diskmeter result (not UTF-8 text)", files::path::shown(path)))
    })?;
    ResultDoc::from_json(&text).map_err(|e| Error::usage(format!("{}: {e}", files::path::shown(path))))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::usage_message;

    fn usage(o: &Options) -> String {
        usage_message(Config::new(o))
    }

    #[test]
    fn the_format_follows_the_output_name() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("r.json");
        let o = Options { result: result.clone(), output: None, force: false };
        let cfg = Config::new(&o).unwrap();
        assert_eq!(cfg.format, report::Format::Html);
        assert!(matches!(&cfg.dest, Dest::File(f) if f.path() == dir.path().join("r.html")));
        let o = Options { result: result.clone(), output: Some("-".into()), force: false };
        assert!(matches!(Config::new(&o).unwrap(), Config { format: report::Format::Human, dest: Dest::Stdout, .. }));
        let o = Options { result: result.clone(), output: Some(dir.path().join("r.MD")), force: false };
        assert_eq!(Config::new(&o).unwrap().format, report::Format::Markdown);
        let o = Options { result, output: Some(PathBuf::from("r.pdf")), force: false };
        assert_eq!(
            usage(&o),
            "invalid value for --output: cannot tell the format of r.pdf; use .html, .md, .csv, .txt or .json \
             (or - for text on stdout)"
        );
    }

    #[test]
    fn the_input_is_never_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("r.json");
        std::fs::write(&result, "{}").unwrap();
        let o = Options { result: result.clone(), output: Some(result.clone()), force: true };
        assert_eq!(usage(&o), format!("refusing to overwrite the input {}; choose another -o", result.display()));
    }

    #[test]
    fn a_result_that_is_not_one_is_a_usage_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.json");
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(
            load_result(&p).unwrap_err(),
            Error::usage(format!("{} is not a diskmeter result (not UTF-8 text)", p.display()))
        );
    }
}
