//! `diskmeter history`: the results kept in the history database, listed, shown, exported
//! and forgotten. The rules live in `app::history`.

use crate::output::{self, Outcome};
use app::history as hist;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The history database [default: $DISKMETER_HISTORY, else $XDG_DATA_HOME/diskmeter/history.db
    /// or ~/.local/share/diskmeter/history.db].
    #[arg(long = "history", value_name = "FILE", global = true)]
    pub history: Option<PathBuf>,
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// The stored runs, newest first.
    List(ListArgs),
    /// One stored result, whole: as text, or in any format `report` writes.
    Show(ShowArgs),
    /// A device's runs over time, per card cell or job: the change since the first run and since
    /// the previous one, with a 95 % interval and a verdict (within ±5 % is noise).
    Trend(TrendArgs),
    /// compare's statistics over two stored runs of the same workload (B against A).
    Diff(DiffArgs),
    /// Add results to the history: diskmeter result files, `history export` files, and fio's own
    /// JSON output (fio --output-format=json), kept as runs of command `fio`.
    Import(ImportArgs),
    /// Every stored document, oldest first, as JSON Lines (one result per line).
    Export(ExportArgs),
    /// Remove runs from the history: by id, or every run started before a date.
    Forget(ForgetArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only runs of this device: its name (nvme0n1), its identity, or part of its model.
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
    /// Only runs of this command (mark, run, sla, compare, steady, surface, replay, merge).
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
    /// Only runs started on or after this date (2026-03-02) or time (RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only runs whose command, device, model, host, target or job names contain TEXT.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// At most N runs (the newest).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// A JSON array on stdout: id, command, started_at, device and key of each run, and more.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The run's id, as `history list` shows it.
    #[arg(value_name = "ID")]
    pub id: String,
    /// The stored JSON document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write it to FILE instead; the extension picks the format (.html, .md, .csv, .txt, .json).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct TrendArgs {
    /// The device: its name (nvme0n1), its identity, or part of its model, as `list --device`.
    #[arg(value_name = "DEVICE")]
    pub device: String,
    /// JSON on stdout: per cell the timeline points, the changes and their intervals.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier run's id (the baseline).
    #[arg(value_name = "A")]
    pub a: String,
    /// The later run's id.
    #[arg(value_name = "B")]
    pub b: String,
    #[command(flatten)]
    pub out: super::common::OutputArgs,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The files: result.json, an export.jsonl, or fio's fio.json.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// JSON on stdout: per file its kind and the new runs' ids.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write to FILE instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The runs' ids, as `history list` shows them.
    #[arg(value_name = "ID", required_unless_present = "before", conflicts_with = "before")]
    pub ids: Vec<String>,
    /// Every run started before this date (2026-03-02) or time (RFC 3339).
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
}

pub fn run(a: &HistoryArgs) -> Outcome {
    let path = hist::Choice { file: a.history.clone(), off: false }.required()?;
    match &a.action {
        Action::List(l) => {
            let filter = hist::Filter {
                device: l.device.clone(),
                command: l.command.clone(),
                since: l.since.clone(),
                limit: l.limit,
                search: l.search.clone(),
                offset: None,
            };
            let rows = hist::list(&path, &filter)?;
            let text = if l.json { hist::json_text(&rows)? } else { hist::list_text(&rows) };
            app::output::print_stdout(&text)?;
            Ok(0)
        }
        Action::Show(s) => {
            let id = hist::parse_id(&s.id)?;
            // The destination is checked before anything is read.
            let dest = match &s.output {
                Some(p) => {
                    let fmt = report::Format::from_path(p).ok_or_else(|| {
                        app::Error::usage(format!(
                            "invalid value for --output: cannot tell the format of {}; use a .json, .csv, .md, .txt or \
                             .html file",
                            files::path::shown(p)
                        ))
                    })?;
                    Some((app::output::Dest::plan(p, "--output", s.force)?, fmt, p.clone()))
                }
                None => None,
            };
            let doc = hist::get(&path, id)?;
            if s.json && dest.is_none() {
                app::output::print_stdout(&hist::json_text(&doc)?)?;
                return Ok(0);
            }
            let result = hist::as_result(id, doc)?;
            match dest {
                Some((d, fmt, p)) => {
                    d.write(&app::output::rendered(&result, fmt)?)?;
                    if !matches!(d, app::output::Dest::Stdout) {
                        return output::wrote(&p);
                    }
                    Ok(0)
                }
                None => {
                    app::output::print_stdout(&app::output::rendered(&result, report::Format::Human)?)?;
                    Ok(0)
                }
            }
        }
        Action::Trend(t) => {
            let trend = hist::trend(&path, &t.device)?;
            let text = if t.json { hist::json_text(&trend)? } else { report::history_text::trend_text(&trend) };
            app::output::print_stdout(&text)?;
            Ok(0)
        }
        Action::Diff(d) => {
            let (a, b) = (hist::parse_id(&d.a)?, hist::parse_id(&d.b)?);
            output::measure("compare", &(&d.out).into(), |_, _| hist::diff(&path, a, b))
        }
        Action::Import(i) => {
            let done = hist::import(&path, &i.files)?;
            if i.json {
                app::output::print_stdout(&hist::json_text(&done)?)?;
            } else {
                for d in &done {
                    let ids: Vec<String> = d.ids.iter().map(i64::to_string).collect();
                    let mut line = format!("imported {} ({}): ", d.file, d.kind);
                    line.push_str(&match ids.len() {
                        0 => "no new run".to_string(),
                        1 => format!("run {}", ids[0]),
                        _ => format!("runs {}", ids.join(", ")),
                    });
                    if !d.already.is_empty() {
                        line.push_str(&format!("; {} already stored", d.already.len()));
                    }
                    eprintln!("{}", app::output::sanitize(&line));
                }
            }
            Ok(0)
        }
        Action::Export(e) => match &e.output {
            Some(p) => {
                let dest = files::output::plan(p, "--output", e.force).map_err(app::Error::from)?;
                let mut buf = Vec::new();
                let n = hist::export(&path, &mut buf)?;
                dest.write(&buf).map_err(app::Error::from)?;
                eprintln!("exported {n} runs to {}", files::path::shown(p));
                Ok(0)
            }
            None => {
                let mut out = std::io::stdout().lock();
                let n = hist::export(&path, &mut out)?;
                eprintln!("exported {n} runs");
                Ok(0)
            }
        },
        Action::Forget(f) => {
            let ids = f.ids.iter().map(|s| hist::parse_id(s)).collect::<Result<Vec<_>, _>>()?;
            let n = hist::forget(&path, &ids, f.before.as_deref())?;
            eprintln!("forgot {n} run{}", if n == 1 { "" } else { "s" });
            Ok(0)
        }
    }
}
