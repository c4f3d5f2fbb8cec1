//! `diskmeter report`: a saved result rendered again, as HTML (the default, next to the input),
//! text, Markdown, CSV or JSON; a saved `doctor --json` as its HTML page, text or JSON.

use crate::error::{Error, Result};
use crate::input::read_result;
use crate::output::{rendered, Dest};
use std::path::PathBuf;

/// The options of `diskmeter report`.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The result document to read.
    pub result: PathBuf,
    /// Where to write; `-` is stdout (text). Default: the input with `.html`.
    pub output: Option<PathBuf>,
    pub force: bool,
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
        let dest = Dest::plan(&out, "--output", o.force)?;
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

/// Reads the result, renders it and writes it: to stdout, or to the file, which it returns.
pub fn run(cfg: &Config) -> Result<Option<PathBuf>> {
    let body = match read_doctor(&cfg.input)? {
        Some(d) => match cfg.format {
            report::Format::Html => report::html::doctor::render_html(&d),
            report::Format::Json => crate::doctor::json(&d),
            report::Format::Human => report::doctor_text::render(&d),
            _ => {
                return Err(Error::usage(format!(
                    "{} is a doctor report: render it as .html, .txt or .json",
                    files::path::shown(&cfg.input)
                )))
            }
        },
        None => rendered(&read_result(&cfg.input)?, cfg.format)?,
    };
    cfg.dest.write(&body)?;
    Ok(match &cfg.dest {
        Dest::Stdout => None,
        Dest::File(f) => Some(f.path().to_path_buf()),
    })
}

/// A `doctor --json` document (schema `diskmeter.doctor.v1`), or None for anything else.
fn read_doctor(path: &std::path::Path) -> Result<Option<crate::doctor::DoctorDoc>> {
    let bytes = files::input::read_capped(path, "the result file", files::input::RESULT_CAP)?;
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return Ok(None) };
    if v.get("schema").and_then(|s| s.as_str()) != Some(doctor::model::SCHEMA) {
        return Ok(None);
    }
    serde_json::from_value(v).map(Some).map_err(|e| Error::usage(format!("{}: {e}", files::path::shown(path))))
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
            read_result(&p).unwrap_err(),
            Error::usage(format!("{} is not a diskmeter result (not UTF-8 text)", p.display()))
        );
    }
}
