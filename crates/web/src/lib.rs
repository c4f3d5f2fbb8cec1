//! `diskmeter serve`: a local web window over the history — runs, reports, device trends,
//! compare, a live mark and import. This crate is HTTP only (axum on tokio): every figure, report
//! and mark comes through the [`Service`] trait, which the app implements and [`fake`] fakes.
//!
//! Security model, in the order a request meets it (see `security.rs`):
//! - bound to 127.0.0.1 unless `listen` names another address, and then only with a token;
//! - on loopback, a Host other than `127.0.0.1:PORT`/`localhost:PORT` is refused (421), so a
//!   page on another site cannot reach the server through DNS rebinding;
//! - token mode: the token (cookie, `?token=` or `Authorization: Bearer`) or 401;
//! - every POST: refused on a read-only server (403), from a cross-site page (403), or without
//!   the per-start CSRF token (403);
//! - no file is ever read: pages come from the service, the two assets are compiled in.

mod assets;
mod events;
pub mod fake;
mod live;
mod pages;
mod routes;
mod security;
mod service;

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use events::{Cell, Ending, MarkEvent, Snapshot};
pub use live::EventSink;
pub use service::{DeviceView, Html, MarkRequest, Refusal, RunFilter, RunSummary, Service};

/// Shortest access token accepted with `listen`.
pub const MIN_TOKEN_LEN: usize = 16;
/// Largest upload `/api/import` takes (the same cap as a result file read from disk).
pub const IMPORT_CAP: usize = 256 << 20;
/// Rows per page on the runs page.
pub const PAGE_ROWS: usize = 200;

/// How to serve, from `serve`'s options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `--listen ADDR`; `None` is 127.0.0.1.
    pub listen: Option<IpAddr>,
    /// `--port N`; 0 picks a free port.
    pub port: u16,
    /// `--token T`: required (16+ characters) with a non-loopback `listen`.
    pub token: Option<String>,
    /// `--read-only`: no POST at all, no forms.
    pub read_only: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("--listen {0} needs --token T ({MIN_TOKEN_LEN} or more characters): anyone who can reach that address could otherwise start benchmarks")]
    ListenWithoutToken(IpAddr),
    #[error(
        "--token must be {MIN_TOKEN_LEN} or more characters of A-Z a-z 0-9 . _ ~ - (it goes in a URL and a cookie)"
    )]
    BadToken,
    #[error("cannot listen on {addr}: {source} (try another --port, or 0 for a free one)")]
    Bind { addr: SocketAddr, source: std::io::Error },
    #[error("serve: {0}")]
    Io(#[from] std::io::Error),
}

/// A listening socket, ready to serve. Binding is separate from serving so that the caller can
/// print the URL (and fail with exit 2 on bad options) before anything runs.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
    addr: SocketAddr,
    url: String,
    cfg: Config,
}

/// The options' own rules, before anything is bound: a token must be a good one, and a
/// non-loopback `listen` needs one.
pub fn check(cfg: &Config) -> Result<(), WebError> {
    let ip = cfg.listen.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if let Some(t) = &cfg.token {
        if !security::token_ok(t) {
            return Err(WebError::BadToken);
        }
    }
    if !ip.is_loopback() && cfg.token.is_none() {
        return Err(WebError::ListenWithoutToken(ip));
    }
    Ok(())
}

/// Check the options ([`check`]) and bind.
pub fn bind(cfg: &Config) -> Result<Bound, WebError> {
    check(cfg)?;
    let ip = cfg.listen.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let want = SocketAddr::new(ip, cfg.port);
    let listener = TcpListener::bind(want).map_err(|source| WebError::Bind { addr: want, source })?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let mut url = format!("http://{addr}/");
    if let Some(t) = &cfg.token {
        url.push_str("?token=");
        url.push_str(t);
    }
    Ok(Bound { listener, addr, url, cfg: cfg.clone() })
}

impl Bound {
    /// The address actually bound (the real port when `port` was 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// What to open in a browser: `http://127.0.0.1:PORT/`, with `?token=T` in token mode.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serve until `shutdown` completes, then stop a running mark, end the live streams and let
    /// requests in flight finish. Must run inside a tokio runtime.
    pub async fn serve(
        self,
        service: Arc<dyn Service>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), WebError> {
        let listener = tokio::net::TcpListener::from_std(self.listener)?;
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let state = routes::AppState::new(Arc::clone(&service), &self.cfg, self.addr, stop_rx)?;
        let app = routes::router(state);
        let on_shutdown = async move {
            shutdown.await;
            let _ = stop_tx.send(true);
            let _ = tokio::task::spawn_blocking(move || service.stop_mark()).await;
        };
        axum::serve(listener, app).with_graceful_shutdown(on_shutdown).await?;
        Ok(())
    }
}

/// Serve on a runtime of its own until `stop` becomes true (the command line's Ctrl-C flag).
pub fn serve_blocking(bound: Bound, service: Arc<dyn Service>, stop: Arc<AtomicBool>) -> Result<(), WebError> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("serve").enable_all().build()?;
    rt.block_on(bound.serve(service, async move {
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }))
}
