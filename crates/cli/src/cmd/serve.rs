//! `diskmeter serve`: the local web window over the history. The rules live in `app::serve`.

use crate::output::Outcome;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The port to listen on [default: a free one, printed in the URL].
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Listen on this address instead of 127.0.0.1 (0.0.0.0: every address); needs --token.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// The access token (16 or more of A-Z a-z 0-9 . _ ~ -) a browser must bring with --listen;
    /// the printed URL carries it.
    #[arg(long, value_name = "T")]
    pub token: Option<String>,
    /// Browse only: no mark, no import.
    #[arg(long)]
    pub read_only: bool,
    /// The history database [default: $DISKMETER_HISTORY, else $XDG_DATA_HOME/diskmeter/history.db
    /// or ~/.local/share/diskmeter/history.db]; an empty one is made when it does not exist.
    #[arg(long = "history", value_name = "FILE")]
    pub history: Option<PathBuf>,
}

impl From<&ServeArgs> for app::serve::Options {
    fn from(a: &ServeArgs) -> Self {
        Self {
            port: a.port,
            listen: a.listen.clone(),
            token: a.token.clone(),
            read_only: a.read_only,
            history: app::history::Choice { file: a.history.clone(), off: false },
        }
    }
}

/// Serves until Ctrl-C (or another stop request), then exits 0: that is how it ends.
pub fn run(a: &ServeArgs) -> Outcome {
    let cfg = app::serve::Config::new(&a.into())?;
    let stop = crate::signals::install();
    app::serve::run(&cfg, stop, |url| {
        // The one line on stdout, flushed at once: scripts and tests read the URL from it.
        let _ = app::output::print_stdout(&format!("{url}\n"));
        eprintln!("serving {} (Ctrl-C stops)", files::path::shown(cfg.database()));
    })?;
    Ok(0)
}
