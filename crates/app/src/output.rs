//! Result documents in and out: the output files of a command, checked before it starts and
//! written when it ends; the result on stdout; the document `--json` prints when a command
//! fails; reading a saved result back (`compare --results`, `report`). The rules for the
//! files themselves (never replace what is not diskmeter's, atomic writes) are `files`'.

use crate::ranks::RankNames;
use crate::{Error, Result};
use report::Format;
use stats::ResultDoc;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a command that writes results was asked for, as typed.
#[derive(Debug, Clone, Default)]
pub struct OutputOptions {
    /// The result as JSON on stdout.
    pub json: bool,
    /// Also write the result to this file (`-`: JSON on stdout); the extension picks the format.
    pub output: Option<PathBuf>,
    /// No human result on stdout.
    pub quiet: bool,
    /// Also write an HTML report to this file (`-`: stdout).
    pub html: Option<PathBuf>,
    /// Replace an existing file even when it is not diskmeter's.
    pub force: bool,
    /// Where the result is kept (`--history FILE`, `--no-history`).
    pub history: crate::history::Choice,
}

/// Where one output goes: stdout (`-`) or a checked file.
pub enum Dest {
    Stdout,
    File(files::output::OutputFile),
}

impl Dest {
    /// `-` is stdout; a file is checked now (`files::output::plan`) and written later.
    pub fn plan(path: &Path, option: &str, force: bool) -> Result<Dest> {
        if path.as_os_str() == "-" {
            return Ok(Dest::Stdout);
        }
        Ok(Dest::File(files::output::plan(path, option, force)?))
    }

    pub fn write(&self, text: &str) -> Result<()> {
        match self {
            Dest::Stdout => print_stdout(text),
            Dest::File(f) => Ok(f.write(text.as_bytes())?),
        }
    }

    fn same_file(&self, other: &Dest) -> bool {
        match (self, other) {
            (Dest::File(a), Dest::File(b)) => a.destination() == b.destination(),
            _ => false,
        }
    }
}

/// The outputs of a result command, checked before the command starts: a typo, a directory, a
/// device node or somebody else's file costs nothing and is never touched.
pub struct Outputs {
    output: Option<(Dest, Format)>,
    html: Option<Dest>,
    json: bool,
    quiet: bool,
    history: crate::history::Choice,
}

impl Outputs {
    pub fn plan(o: &OutputOptions) -> Result<Outputs> {
        let mut planned =
            Outputs { output: None, html: None, json: o.json, quiet: o.quiet, history: o.history.clone() };
        if let Some(p) = &o.output {
            let fmt = if p.as_os_str() == "-" {
                Format::Json
            } else {
                Format::from_path(p).ok_or_else(|| {
                    Error::usage(format!(
                        "invalid value for --output: cannot tell the format of {}; use a .json, .csv, .md, .txt or \
                         .html file (or - for JSON on stdout)",
                        files::path::shown(p)
                    ))
                })?
            };
            planned.output = Some((Dest::plan(p, "--output", o.force)?, fmt));
        }
        if let Some(p) = &o.html {
            planned.html = Some(Dest::plan(p, "--html", o.force)?);
        }
        if let (Some((a, _)), Some(b)) = (&planned.output, &planned.html) {
            if a.same_file(b) || matches!((a, b), (Dest::Stdout, Dest::Stdout)) {
                return Err(Error::usage("--output and --html name the same destination; give each its own"));
            }
        }
        if o.json && planned.uses_stdout() {
            return Err(Error::usage("--json and an output of - both write to stdout; use one of them"));
        }
        Ok(planned)
    }

    /// The outputs of one rank. `{rank}`, `{size}` and `{host}` expand in the paths. With
    /// several ranks, a path naming one file per rank (`{rank}` or `{host}` in it) gets that
    /// rank's own document (second of the pair), every other output and stdout rank 0's
    /// merged document (first); the other ranks print nothing.
    pub fn plan_ranked(o: &OutputOptions, names: &RankNames, multi: bool) -> Result<(Outputs, Outputs)> {
        let expand = |p: &Option<PathBuf>| p.as_ref().map(|p| names.expand(p));
        if !multi {
            let single = OutputOptions { output: expand(&o.output), html: expand(&o.html), ..o.clone() };
            return Ok((
                Outputs::plan(&single)?,
                Outputs::plan(&OutputOptions {
                    quiet: true,
                    history: crate::history::Choice::none(),
                    ..Default::default()
                })?,
            ));
        }
        let split = |p: &Option<PathBuf>, own: bool| {
            p.as_ref().filter(|p| RankNames::per_rank(p) == own).map(|p| names.expand(p))
        };
        let root = names.rank == 0;
        let merged = OutputOptions {
            json: o.json && root,
            output: split(&o.output, false).filter(|_| root),
            html: split(&o.html, false).filter(|_| root),
            quiet: o.quiet || !root,
            force: o.force,
            history: if root { o.history.clone() } else { crate::history::Choice::none() },
        };
        let own = OutputOptions {
            json: false,
            output: split(&o.output, true),
            html: split(&o.html, true),
            quiet: true,
            force: o.force,
            history: crate::history::Choice::none(),
        };
        Ok((Outputs::plan(&merged)?, Outputs::plan(&own)?))
    }

    /// Keeps `doc` in the history database and notes the change since the last comparable
    /// run in it (never fails: see [`crate::history::record`]). Called before [`Outputs::write`].
    pub fn record(&self, doc: &mut ResultDoc) {
        crate::history::record(&self.history, doc);
    }

    /// True when an output goes to stdout (the human result then stays off it).
    pub fn uses_stdout(&self) -> bool {
        matches!(self.output, Some((Dest::Stdout, _))) || matches!(self.html, Some(Dest::Stdout))
    }

    /// Prints the result (JSON with `--json`, else the human text unless quiet or stdout is
    /// taken), its warnings on stderr when stdout is not human text, and writes the files.
    pub fn write(&self, doc: &ResultDoc) -> Result<()> {
        let text = if self.json {
            Some(rendered(doc, Format::Json)?)
        } else if !self.quiet && !self.uses_stdout() {
            Some(rendered(doc, Format::Human)?)
        } else {
            None
        };
        if let Some(t) = text {
            print_stdout(&t)?;
        }
        if self.json || self.uses_stdout() {
            for w in &doc.warnings {
                eprintln!("warning[{}]: {}", w.code, sanitize(&w.message));
            }
        }
        if let Some((dest, fmt)) = &self.output {
            dest.write(&rendered(doc, *fmt)?)?;
        }
        if let Some(dest) = &self.html {
            dest.write(&rendered(doc, Format::Html)?)?;
        }
        Ok(())
    }

    /// A runtime fault ended `command` before it had a result: with `--json`, stdout still
    /// gets a valid document, carrying the error.
    pub fn failed(&self, command: &str, e: &Error) {
        if let (true, Error::Runtime(m)) = (self.json, e) {
            let doc = crate::session::error_doc(command, "io", m);
            let _ = print_stdout(&report::render(&doc, Format::Json));
        }
    }
}

/// What a finished (or partial) result means for the exit: its error, if it has one (an
/// interruption, or the fault that cut it short).
pub fn status(doc: &ResultDoc) -> Result<()> {
    match &doc.error {
        None => verify_status(doc),
        Some(e) if e.kind == "interrupted" => Err(Error::Interrupted(e.message.clone())),
        Some(e) => Err(Error::Runtime(e.message.clone())),
    }
}

/// A verify failure is a failed run (exit 1), with its count and diagnoses in one line.
fn verify_status(doc: &ResultDoc) -> Result<()> {
    let Some(v) = doc.verify.as_ref().filter(|v| v.failures_total > 0) else { return Ok(()) };
    let kinds = v.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    let s = if v.failures_total == 1 { "" } else { "s" };
    Err(Error::Runtime(format!(
        "verify failed: {} chunk{s} did not hold what was written ({kinds}); the result lists each",
        v.failures_total
    )))
}

/// Writes `text` to stdout; a closed pipe is not an error.
pub fn print_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(Error::runtime(format!("cannot write to stdout: {e}")));
        }
    }
    Ok(())
}

/// Writes `pages` (file name, contents) into `dir`, creating it when missing (`man --dir`).
/// Every file is checked before the first is written, under the rules of every output (never
/// replace a file that is not diskmeter's unless `force`; each written whole or not at all).
pub fn write_files_into(dir: &Path, pages: &[(String, Vec<u8>)], force: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::usage(format!(
            "--dir {}: not a directory; name a directory (it is created when missing)",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::runtime(format!("cannot create the directory {}: {e}", dir.display())))?;
    let planned = pages
        .iter()
        .map(|(name, bytes)| Ok((files::output::plan(&dir.join(name), "--dir", force)?, bytes)))
        .collect::<Result<Vec<_>>>()?;
    for (file, bytes) in planned {
        file.write(bytes)?;
    }
    Ok(())
}

/// Renders `doc`; a document that cannot be rendered is a runtime failure (exit 1), never a
/// stand-in printed with exit 0.
pub fn rendered(doc: &ResultDoc, fmt: Format) -> Result<String> {
    report::try_render(doc, fmt).map_err(|e| Error::runtime(format!("cannot write the result: {e}")))
}

pub use crate::input::{read_result, sanitize};

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(output: Option<&str>, html: Option<&str>, json: bool) -> OutputOptions {
        OutputOptions { json, output: output.map(PathBuf::from), html: html.map(PathBuf::from), ..Default::default() }
    }

    fn usage(o: &OutputOptions) -> String {
        match Outputs::plan(o) {
            Err(Error::Usage(m)) => m,
            Err(e) => panic!("not a usage error: {e:?}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn output_conflicts_are_usage_errors() {
        assert_eq!(
            usage(&opts(Some("-"), Some("-"), false)),
            "--output and --html name the same destination; give each its own"
        );
        assert_eq!(
            usage(&opts(Some("-"), None, true)),
            "--json and an output of - both write to stdout; use one of them"
        );
        assert_eq!(
            usage(&opts(None, Some("-"), true)),
            "--json and an output of - both write to stdout; use one of them"
        );
        assert_eq!(
            usage(&opts(Some("result.xyz"), None, false)),
            "invalid value for --output: cannot tell the format of result.xyz; use a .json, .csv, .md, .txt or .html \
             file (or - for JSON on stdout)"
        );
    }

    #[test]
    fn stdout_outputs() {
        let o = Outputs::plan(&opts(Some("-"), None, false)).expect("planned");
        assert!(o.uses_stdout());
        let o = Outputs::plan(&opts(None, None, true)).expect("planned");
        assert!(!o.uses_stdout());
    }

    #[test]
    fn status_follows_the_error() {
        let mut d = crate::session::error_doc("run", "io", "disk gone");
        assert_eq!(status(&d), Err(Error::runtime("disk gone")));
        d.error = Some(stats::ErrorInfo::new("interrupted", "stopped"));
        assert_eq!(status(&d).map_err(|e| e.exit_code()), Err(130));
        d.error = None;
        assert_eq!(status(&d), Ok(()));
    }

    #[test]
    fn control_characters_are_replaced() {
        assert_eq!(sanitize("a\x1b[31mb\nc"), "a?[31mb\nc");
    }
}
