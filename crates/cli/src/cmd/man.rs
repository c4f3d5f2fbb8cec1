//! `diskmeter man` (hidden): the manual pages, rendered from the same clap definitions as
//! `--help`. `diskmeter man` prints diskmeter(1), `diskmeter man mark` diskmeter-mark(1)
//! (`diskmeter man history list` a nested one), `--dir DIR` writes every page into DIR (what
//! `dist/build.sh` packages).
//!
//! Each page is clap_mangen's (name, synopsis, description, options, subcommands, version),
//! followed by what `--help` cannot say: exit status, the environment, files and SEE ALSO.

use crate::output::Outcome;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print, e.g. `mark` or `history list` (default: diskmeter(1)).
    #[arg(value_name = "COMMAND")]
    pub command: Vec<String>,
    /// Write every page (diskmeter.1, diskmeter-mark.1, …) into this directory instead.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
    /// With --dir: replace existing files even when they are not diskmeter's pages.
    #[arg(long, requires = "dir")]
    pub force: bool,
}

/// diskmeter(1)'s DESCRIPTION (`--help` keeps to one line).
const MAIN_DESCRIPTION: &str = "diskmeter measures storage honestly and explains the result. It \
reads and writes with direct I/O (the page cache is not measured), fills the test area before \
it reads it (never-written blocks cost a device nothing), writes incompressible data, sizes the \
test area against the caches in the path, and gives latency percentiles and the queue depth \
next to every IOPS figure. Every run holds the device's own counters (/proc/diskstats) against \
its own figures and says when they disagree, when a cgroup throttles the target, or when a \
cache answered instead of the medium.

Start with `diskmeter mark` (the CrystalDiskMark card, on a test file in the current \
directory), `diskmeter doctor` (why is this disk slow) or `diskmeter top` (what the disks are \
doing now). Each command has its own page: diskmeter-mark(1), diskmeter-run(1), and so on.

Sizes use binary units (4k = 4096 bytes); MB/s is decimal (10^6 B/s), MiB/s binary. Writing to \
a block device destroys its data and needs --destroy-data naming that device.";

/// What the top page says beyond the options.
const MAIN_EXTRA: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success.
.TP
\fB1\fR
A runtime fault (an I/O error, ENOSPC, a device that went away); the results measured so far
are written, marked partial. Also: \fBhealth\fR found a failing disk, \fBsurface\fR found bad
sectors, \fBdoctor\fR found a high or critical cause.
.TP
\fB2\fR
Bad input: one line on stderr says what is wrong; nothing is written.
.TP
\fB130\fR
Interrupted (Ctrl\-C or another terminating signal); the partial result is written.
.SH ENVIRONMENT
.TP
\fBDISKMETER_HISTORY\fR
The history database file, or \fBoff\fR to keep no history (as \fB\-\-no\-history\fR).
.TP
\fBXDG_DATA_HOME\fR
Where the history database lives by default.
.SH FILES
.TP
\fI$XDG_DATA_HOME/diskmeter/history.db\fR (else \fI~/.local/share/diskmeter/history.db\fR)
The history database (SQLite): every result, kept by \fBmark\fR, \fBrun\fR and the other
measuring commands; \fBdiskmeter history\fR and \fBdiskmeter serve\fR read it.
"#;

/// Renders the page of `cmd` (its display name set by clap: `diskmeter-history-list`), with the
/// extra sections (`top`: the exit status, environment and files) and `see_also`, the pages its
/// SEE ALSO names.
fn render(cmd: &clap::Command, see_also: &[String], top: bool) -> Result<Vec<u8>, std::io::Error> {
    let man = clap_mangen::Man::new(cmd.clone())
        .date(env!("DISKMETER_COMMIT_DATE"))
        .manual("diskmeter manual")
        .source(format!("diskmeter {}", env!("CARGO_PKG_VERSION")));
    let mut page = Vec::new();
    man.render(&mut page)?;
    if top {
        page.extend_from_slice(MAIN_EXTRA.as_bytes());
    }
    if !see_also.is_empty() {
        let refs: Vec<String> = see_also.iter().map(|n| format!("\\fB{}\\fR(1)", n.replace('-', "\\-"))).collect();
        page.extend_from_slice(format!(".SH \"SEE ALSO\"\n{}\n", refs.join(", ")).as_bytes());
    }
    Ok(page)
}

fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name()).to_string()
}

/// SEE ALSO of a page: the top page names every command's page; a command's page names its
/// parent's and its own subcommands'.
fn see_also(cmd: &clap::Command, parent: Option<&str>) -> Vec<String> {
    let mut names: Vec<String> = parent.map(str::to_string).into_iter().collect();
    names.extend(cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(page_name));
    names
}

/// All pages: (file name, roff text).
fn all_pages(cli: &clap::Command) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    fn go(cmd: &clap::Command, parent: Option<&str>, pages: &mut Vec<(String, Vec<u8>)>) -> Result<(), std::io::Error> {
        let name = page_name(cmd);
        pages.push((format!("{name}.1"), render(cmd, &see_also(cmd, parent), parent.is_none())?));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            go(sub, Some(&name), pages)?;
        }
        Ok(())
    }
    let mut pages = Vec::new();
    go(cli, None, &mut pages)?;
    Ok(pages)
}

/// `cli` is the whole `diskmeter` command line.
pub fn run(a: &ManArgs, cli: clap::Command) -> Outcome {
    // Built once so every subcommand carries its display name (diskmeter-history-list).
    let mut cli = cli.disable_help_subcommand(true).long_about(MAIN_DESCRIPTION);
    cli.build();
    let failed = |e: std::io::Error| app::Error::runtime(format!("cannot render the manual pages: {e}"));
    if let Some(dir) = &a.dir {
        let pages = all_pages(&cli).map_err(failed)?;
        let n = pages.len();
        app::output::write_files_into(dir, &pages, a.force)?;
        eprintln!("{n} manual pages written to {}", dir.display());
        return Ok(0);
    }
    let mut cmd = &cli;
    let mut parent = None;
    for word in &a.command {
        let Some(sub) = cmd.get_subcommands().find(|s| s.get_name() == word && !s.is_hide_set()) else {
            let names: Vec<&str> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).map(|s| s.get_name()).collect();
            let here = page_name(cmd).replace('-', " ");
            return Err(app::Error::usage(if names.is_empty() {
                format!("no manual page for `{word}`: `{here}` has no subcommands (`diskmeter man` lists them)")
            } else {
                format!("no manual page for `{word}`: the commands of `{here}` are {}", names.join(", "))
            }));
        };
        parent = Some(page_name(cmd));
        cmd = sub;
    }
    let page = render(cmd, &see_also(cmd, parent.as_deref()), parent.is_none()).map_err(failed)?;
    app::output::print_stdout(&String::from_utf8_lossy(&page))?;
    Ok(0)
}
