//! `serve`: the local web window over the history — the runs, each run's report, a device's
//! trends, compare, a live mark and import. The HTTP layer is the `web` crate; this module is
//! its [`web::Service`] over the history database and the `mark` command, and the command's
//! own rules: where it listens, with which token, on which database.
//!
//! A web page never gets more power than the command line: a mark started from the browser is
//! checked by `mark`'s own rules (`mark::Config::new`), never overwrites a file diskmeter did not
//! create and keeps nothing, and writes a block device only when the browser typed that exact
//! device as its "destroy data" (the engine's guard still checks mounts and signatures). Nothing
//! is read from the file system but the database (and the compiled-in assets of `web`).

mod device;
mod live;
mod service;

use crate::history::Choice;
use crate::{Error, Result};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use service::StoreService;

/// `serve`'s options as typed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--port N`: `None` (or 0) picks a free port.
    pub port: Option<u16>,
    /// `--listen ADDR`: `None` is 127.0.0.1.
    pub listen: Option<String>,
    /// `--token T`: needed with a `--listen` address other than loopback.
    pub token: Option<String>,
    /// `--read-only`: no mark, no import, no form.
    pub read_only: bool,
    /// `--history FILE` (`DISKMETER_HISTORY`, the XDG data folder).
    pub history: Choice,
}

/// A validated `serve`.
#[derive(Debug, Clone)]
pub struct Config {
    web: web::Config,
    db: PathBuf,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        let listen = o
            .listen
            .as_deref()
            .map(|s| {
                s.trim().parse::<IpAddr>().map_err(|_| {
                    Error::usage(format!(
                        "invalid value for --listen: {s:?} is not an IP address; give one such as 127.0.0.1, \
                         192.168.1.20 or 0.0.0.0 (every address)"
                    ))
                })
            })
            .transpose()?;
        let web = web::Config { listen, port: o.port.unwrap_or(0), token: o.token.clone(), read_only: o.read_only };
        web::check(&web).map_err(|e| match e {
            web::WebError::BadToken => Error::usage(format!("invalid value for --token: {e}")),
            e => Error::usage(e.to_string()),
        })?;
        let db = match o.history.path() {
            None => {
                return Err(Error::usage(
                    "serve shows the history database, and DISKMETER_HISTORY is off; name one with --history FILE",
                ))
            }
            Some(Ok(p)) => p,
            Some(Err(e)) => return Err(Error::usage(e.to_string())),
        };
        Ok(Config { web, db })
    }

    /// The history database served.
    pub fn database(&self) -> &std::path::Path {
        &self.db
    }
}

/// Opens the database (creating an empty one: a fresh user has no runs yet), binds, hands the
/// URL to `print_url` and serves until `stop` is raised (Ctrl-C). Opens no browser.
pub fn run(cfg: &Config, stop: Arc<AtomicBool>, print_url: impl FnOnce(&str)) -> Result<()> {
    let service = StoreService::open(&cfg.db, cfg.web.read_only)?;
    let bound = web::bind(&cfg.web).map_err(web_error)?;
    print_url(bound.url());
    web::serve_blocking(bound, Arc::new(service), stop).map_err(web_error)
}

/// Options the user fixes (the address, the token, a port in use) are usage errors.
fn web_error(e: web::WebError) -> Error {
    match e {
        web::WebError::ListenWithoutToken(_) | web::WebError::BadToken | web::WebError::Bind { .. } => {
            Error::usage(e.to_string())
        }
        web::WebError::Io(_) => Error::runtime(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn opts(f: impl FnOnce(&mut Options)) -> Options {
        let mut o = Options { history: Choice { file: Some("/tmp/x.db".into()), off: false }, ..Options::default() };
        f(&mut o);
        o
    }

    #[test]
    fn loopback_by_default_and_a_token_beyond_it() {
        let c = Config::new(&opts(|_| {})).unwrap();
        assert_eq!(c.web.listen, None);
        assert_eq!(c.web.port, 0);
        let e = Config::new(&opts(|o| o.listen = Some("0.0.0.0".into()))).unwrap_err();
        assert!(e.is_usage() && e.message().contains("--listen") && e.message().contains("--token"), "{e}");
        assert!(!e.message().contains('\n'));
        let c = Config::new(&opts(|o| {
            o.listen = Some("0.0.0.0".into());
            o.token = Some("0123456789abcdef".into());
        }))
        .unwrap();
        assert!(c.web.listen.is_some());
        // Loopback needs no token.
        Config::new(&opts(|o| o.listen = Some("::1".into()))).unwrap();
    }

    #[test]
    fn bad_values_name_their_option() {
        let e = Config::new(&opts(|o| o.listen = Some("my-host".into()))).unwrap_err();
        assert!(e.is_usage() && e.message().contains("--listen"), "{e}");
        let e = Config::new(&opts(|o| o.token = Some("short".into()))).unwrap_err();
        assert!(e.is_usage() && e.message().contains("--token"), "{e}");
        let e = Config::new(&opts(|o| o.history = Choice::none())).unwrap_err();
        assert!(e.is_usage() && e.message().contains("--history"), "{e}");
    }
}
