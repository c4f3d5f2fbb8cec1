//! The routes: each handler asks the service (on the blocking pool) and renders a page or JSON.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Form, Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;

use crate::events::{MarkEvent, Snapshot};
use crate::live::Hub;
use crate::pages::{self, html, message, Chrome};
use crate::security::{self, CsrfChecked};
use crate::service::{MarkRequest, Refusal, RunFilter, Service};
use crate::{Config, WebError, IMPORT_CAP, PAGE_ROWS};

pub(crate) struct AppState {
    service: Arc<dyn Service>,
    hub: Arc<Hub>,
    pub(crate) csrf: String,
    pub(crate) token: Option<String>,
    pub(crate) read_only: bool,
    /// The Host values accepted (lower case); `None` when listening beyond loopback, where the
    /// token guards instead.
    pub(crate) allowed_hosts: Option<Vec<String>>,
    shutdown: watch::Receiver<bool>,
}

impl AppState {
    pub(crate) fn new(
        service: Arc<dyn Service>,
        cfg: &Config,
        addr: SocketAddr,
        shutdown: watch::Receiver<bool>,
    ) -> Result<Arc<Self>, WebError> {
        let csrf = security::new_csrf()
            .map_err(|e| std::io::Error::other(format!("no random numbers for the CSRF token: {e}")))?;
        let port = addr.port();
        let allowed_hosts = addr
            .ip()
            .is_loopback()
            .then(|| vec![addr.to_string(), format!("127.0.0.1:{port}"), format!("localhost:{port}")]);
        Ok(Arc::new(AppState {
            service,
            hub: Hub::new(),
            csrf,
            token: cfg.token.clone(),
            read_only: cfg.read_only,
            allowed_hosts,
            shutdown,
        }))
    }

    fn chrome(&self) -> Chrome {
        Chrome { read_only: self.read_only, csrf: self.csrf.clone() }
    }

    /// Run `f` against the service on the blocking pool. A panic in it is a 500.
    async fn call<T: Send + 'static>(&self, f: impl FnOnce(&dyn Service) -> T + Send + 'static) -> Result<T, Response> {
        let svc = Arc::clone(&self.service);
        tokio::task::spawn_blocking(move || f(&*svc))
            .await
            .map_err(|e| security::refuse(StatusCode::INTERNAL_SERVER_ERROR, &format!("internal error: {e}")))
    }
}

pub(crate) fn router(st: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(runs_page))
        .route("/api/runs", get(api_runs))
        .route("/api/runs/{id}", get(api_run))
        .route("/runs/{id}", get(run_page))
        .route("/devices/{key}", get(device_page))
        .route("/compare", get(compare_page))
        .route("/new", get(new_page))
        .route("/api/marks", post(start_mark))
        .route("/api/marks/current/events", get(mark_events))
        .route("/api/marks/current/stop", post(stop_mark))
        .route("/import", get(import_page))
        .route("/api/import", post(import).layer(DefaultBodyLimit::max(IMPORT_CAP)))
        .route("/assets/{name}", get(crate::assets::serve))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(
            Arc::new(security::Rules {
                csrf: st.csrf.clone(),
                token: st.token.clone(),
                read_only: st.read_only,
                allowed_hosts: st.allowed_hosts.clone(),
            }),
            security::guard,
        ))
        .with_state(st)
}

// --- runs ----------------------------------------------------------------------------------

#[derive(Deserialize, Default)]
struct RunsQuery {
    device: Option<String>,
    command: Option<String>,
    since: Option<String>,
    search: Option<String>,
    limit: Option<usize>,
    offset: Option<usize>,
}

impl RunsQuery {
    fn filter(self) -> RunFilter {
        let keep = |s: Option<String>| s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        RunFilter {
            device: keep(self.device),
            command: keep(self.command),
            since: keep(self.since),
            search: keep(self.search),
            limit: self.limit,
            offset: self.offset.unwrap_or(0),
        }
    }
}

async fn runs_page(State(st): State<Arc<AppState>>, Query(q): Query<RunsQuery>) -> Response {
    let mut f = q.filter();
    f.limit = Some(PAGE_ROWS + 1);
    let t0 = Instant::now();
    let query = f.clone();
    let res = match st.call(move |s| s.runs(&query)).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let db = t0.elapsed();
    let t1 = Instant::now();
    let mut runs = match res {
        Ok(r) => r,
        Err(r) => return message(&st.chrome(), status(r.status), "Runs", &r.message),
    };
    let more = runs.len() > PAGE_ROWS;
    runs.truncate(PAGE_ROWS);
    let page = pages::RunsPage {
        chrome: st.chrome(),
        f_device: f.device.clone().unwrap_or_default(),
        f_command: f.command.clone().unwrap_or_default(),
        f_since: f.since.clone().unwrap_or_default(),
        f_search: f.search.clone().unwrap_or_default(),
        filtered: f.device.is_some() || f.command.is_some() || f.since.is_some() || f.search.is_some(),
        first: f.offset + 1,
        last: f.offset + runs.len(),
        prev: (f.offset > 0).then(|| pages::runs_query(&f, f.offset.saturating_sub(PAGE_ROWS))),
        next: more.then(|| pages::runs_query(&f, f.offset + PAGE_ROWS)),
        rows: runs.iter().map(pages::RunRowView::new).collect(),
    };
    let mut resp = html(StatusCode::OK, &page);
    let timing = format!("db;dur={:.1}, render;dur={:.1}", ms(db), ms(t1.elapsed()));
    if let Ok(v) = timing.parse() {
        resp.headers_mut().insert("server-timing", v);
    }
    resp
}

async fn api_runs(State(st): State<Arc<AppState>>, Query(q): Query<RunsQuery>) -> Response {
    let f = q.filter();
    match st.call(move |s| s.runs(&f)).await {
        Ok(Ok(runs)) => Json(runs).into_response(),
        Ok(Err(r)) => json_refusal(&r),
        Err(resp) => resp,
    }
}

async fn api_run(State(st): State<Arc<AppState>>, Path(id): Path<i64>) -> Response {
    match st.call(move |s| s.run_doc(id)).await {
        Ok(Ok(Some(doc))) => ([(header::CONTENT_TYPE, "application/json")], doc).into_response(),
        Ok(Ok(None)) => json_error(StatusCode::NOT_FOUND, &format!("no run {id}")),
        Ok(Err(e)) => json_error(StatusCode::INTERNAL_SERVER_ERROR, &e),
        Err(resp) => resp,
    }
}

async fn run_page(State(st): State<Arc<AppState>>, Path(id): Path<i64>) -> Response {
    let chrome = st.chrome();
    match st.call(move |s| s.run_html(id)).await {
        Ok(Ok(Some(h))) => html(
            StatusCode::OK,
            &pages::ReportPage {
                chrome,
                title: format!("Run {id}"),
                json_href: Some(format!("/api/runs/{id}")),
                head_style: h.head_style,
                body: h.body,
            },
        ),
        Ok(Ok(None)) => message(&chrome, StatusCode::NOT_FOUND, "Not found", &format!("There is no run {id}.")),
        Ok(Err(e)) => message(&chrome, StatusCode::INTERNAL_SERVER_ERROR, "Error", &e),
        Err(resp) => resp,
    }
}

async fn device_page(State(st): State<Arc<AppState>>, Path(key): Path<String>) -> Response {
    let chrome = st.chrome();
    let k = key.clone();
    match st.call(move |s| s.device(&k)).await {
        Ok(Ok(Some(view))) => {
            html(StatusCode::OK, &pages::DevicePage { chrome, device_q: pages::pct(&view.key), view })
        }
        Ok(Ok(None)) => {
            message(&chrome, StatusCode::NOT_FOUND, "Not found", &format!("No stored run of device {key}."))
        }
        Ok(Err(e)) => message(&chrome, StatusCode::INTERNAL_SERVER_ERROR, "Error", &e),
        Err(resp) => resp,
    }
}

// --- compare -------------------------------------------------------------------------------

#[derive(Deserialize, Default)]
struct CompareQuery {
    a: Option<String>,
    b: Option<String>,
    da: Option<String>,
    db: Option<String>,
}

async fn compare_page(State(st): State<Arc<AppState>>, Query(q): Query<CompareQuery>) -> Response {
    let given = |s: &Option<String>| s.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
    let (a, b, da, db) = (given(&q.a), given(&q.b), given(&q.da), given(&q.db));
    let recent = RunFilter { limit: Some(PAGE_ROWS), ..RunFilter::default() };
    let runs = match st.call(move |s| s.runs(&recent)).await {
        Ok(Ok(r)) => r,
        Ok(Err(r)) => return message(&st.chrome(), status(r.status), "Compare", &r.message),
        Err(resp) => return resp,
    };
    let mut devices = BTreeMap::new();
    for r in &runs {
        devices.entry(r.device_key.clone()).or_insert_with(|| r.device.clone());
    }
    let mut page = pages::ComparePage {
        chrome: st.chrome(),
        runs: runs
            .iter()
            .map(|r| pages::Choice {
                value: r.id.to_string(),
                label: format!(
                    "#{} {} {} {}",
                    r.id,
                    r.started_at.get(..16).unwrap_or(&r.started_at),
                    r.command,
                    r.device
                ),
            })
            .collect(),
        devices: devices
            .into_iter()
            .map(|(value, label)| pages::Choice { label: format!("{label} ({value})"), value })
            .collect(),
        sel_a: String::new(),
        sel_b: String::new(),
        sel_da: da.clone().unwrap_or_default(),
        sel_db: db.clone().unwrap_or_default(),
        refusal: None,
        head_style: String::new(),
        body: String::new(),
    };
    let ids = match (a, b, da, db) {
        (None, None, None, None) => return html(StatusCode::OK, &page),
        (Some(a), Some(b), _, _) => match (a.parse::<i64>(), b.parse::<i64>()) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            _ => Err(Refusal::new(400, "a and b must be run numbers")),
        },
        (_, _, Some(da), Some(db)) => last_runs(&st, da, db).await,
        _ => Err(Refusal::new(400, "pick two runs, or two devices")),
    };
    let (a, b) = match ids {
        Ok(ids) => ids,
        Err(r) => {
            page.refusal = Some(r.message);
            return html(status(r.status), &page);
        }
    };
    page.sel_a = a.to_string();
    page.sel_b = b.to_string();
    match st.call(move |s| s.compare(a, b)).await {
        Ok(Ok(h)) => {
            page.head_style = h.head_style;
            page.body = h.body;
            html(StatusCode::OK, &page)
        }
        Ok(Err(r)) => {
            page.refusal = Some(r.message);
            html(status(r.status), &page)
        }
        Err(resp) => resp,
    }
}

/// The newest run of each of two devices.
async fn last_runs(st: &AppState, da: String, db: String) -> Result<(i64, i64), Refusal> {
    let r = st
        .call(move |s| {
            let last = |d: &str| -> Result<i64, Refusal> {
                let f = RunFilter { device: Some(d.to_string()), limit: Some(1), ..RunFilter::default() };
                s.runs(&f)?
                    .first()
                    .map(|r| r.id)
                    .ok_or_else(|| Refusal::new(404, format!("no stored run of device {d}")))
            };
            Ok((last(&da)?, last(&db)?))
        })
        .await;
    r.unwrap_or_else(|_| Err(Refusal::new(500, "internal error")))
}

// --- the live mark -------------------------------------------------------------------------

async fn new_page(State(st): State<Arc<AppState>>) -> Response {
    new_view(&st, StatusCode::OK)
}

fn new_view(st: &AppState, code: StatusCode) -> Response {
    let snap = st.hub.snapshot();
    // A mark that ended is not shown as the current one: the page opens on a fresh card and
    // says in one line how the last mark ended, with its run.
    let (status, last, snap) = match (snap.running, snap.ending()) {
        (true, _) => (format!("Running on {}.", snap.target.as_deref().unwrap_or("?")), None, snap),
        (false, Some(end)) => {
            let on = snap.target.as_deref().map(|t| format!("Last mark, on {t}: ")).unwrap_or_default();
            (String::new(), Some(pages::LastMark { on, ending: end }), Snapshot::default())
        }
        (false, None) => (String::new(), None, snap),
    };
    let page = pages::NewPage {
        chrome: st.chrome(),
        profiles: pages::PROFILES,
        rows: pages::card_rows(&snap),
        snap,
        status,
        last,
    };
    html(code, &page)
}

#[derive(Deserialize, Default)]
struct MarkForm {
    #[serde(default)]
    target: String,
    profile: Option<String>,
    size: Option<String>,
    /// A checkbox ("1"/"on") from a form, a boolean from JSON.
    quick: Option<Value>,
    destroy_data: Option<String>,
    csrf: Option<String>,
}

impl MarkForm {
    fn request(self) -> MarkRequest {
        let keep = |s: Option<String>| s.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let quick = match self.quick {
            Some(Value::Bool(b)) => b,
            Some(Value::String(s)) => !matches!(s.as_str(), "" | "0" | "false" | "off"),
            _ => false,
        };
        MarkRequest {
            target: self.target.trim().to_string(),
            profile: keep(self.profile).unwrap_or_else(|| "default".into()),
            size: keep(self.size),
            quick,
            // Passed on exactly as typed: the service compares it with the target.
            destroy_data: self.destroy_data.filter(|v| !v.is_empty()),
        }
    }
}

fn content_type_is(h: &HeaderMap, kind: &str) -> bool {
    h.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with(kind))
}

fn is_json(h: &HeaderMap) -> bool {
    content_type_is(h, "application/json")
}

/// A form post (the only kind that can carry the token in its body).
fn is_form(h: &HeaderMap) -> bool {
    content_type_is(h, "application/x-www-form-urlencoded")
}

/// The CSRF rule for a handler: the guard already checked a header; otherwise the form field.
fn csrf_ok(st: &AppState, checked: bool, field: Option<&str>) -> bool {
    checked || field.is_some_and(|f| security::ct_eq(f.as_bytes(), st.csrf.as_bytes()))
}

const CSRF_MISSING: &str = "missing or wrong CSRF token: reload the page and try again";

async fn start_mark(State(st): State<Arc<AppState>>, req: Request) -> Response {
    let checked = req.extensions().get::<CsrfChecked>().is_some();
    let json = is_json(req.headers());
    if !checked && !is_form(req.headers()) {
        return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
    }
    let form = if json {
        Json::<MarkForm>::from_request(req, &()).await.map(|Json(f)| f).map_err(IntoResponse::into_response)
    } else {
        Form::<MarkForm>::from_request(req, &()).await.map(|Form(f)| f).map_err(IntoResponse::into_response)
    };
    let form = match form {
        Ok(f) => f,
        Err(resp) => return resp,
    };
    if !csrf_ok(&st, checked, form.csrf.as_deref()) {
        return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
    }
    let mark = form.request();
    if mark.target.is_empty() {
        return answer(&st, json, Err(Refusal::unprocessable("name a target: a folder, a file or a device")));
    }
    let sink = st.hub.sink();
    let target = mark.target.clone();
    let sink2 = sink.clone();
    let res = match st.call(move |s| s.start_mark(mark, sink2)).await {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    if res.is_ok() {
        st.hub.started(&sink, &target);
    }
    answer(&st, json, res.map(|()| json!({"started": true, "events": "/api/marks/current/events"})))
}

/// Answer a POST: JSON for scripts, a page for a form sent without JavaScript.
fn answer(st: &AppState, json: bool, res: Result<Value, Refusal>) -> Response {
    match (res, json) {
        (Ok(v), true) => (StatusCode::ACCEPTED, Json(v)).into_response(),
        (Ok(_), false) => new_view(st, StatusCode::ACCEPTED),
        (Err(r), true) => json_refusal(&r),
        (Err(r), false) => message(&st.chrome(), status(r.status), "Not started", &r.message),
    }
}

async fn stop_mark(State(st): State<Arc<AppState>>, req: Request) -> Response {
    let checked = req.extensions().get::<CsrfChecked>().is_some();
    let json = is_json(req.headers()) || checked;
    if !checked && !is_form(req.headers()) {
        return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
    }
    let field = if checked {
        None
    } else {
        match Form::<MarkForm>::from_request(req, &()).await {
            Ok(Form(f)) => f.csrf,
            Err(e) => return e.into_response(),
        }
    };
    if !csrf_ok(&st, checked, field.as_deref()) {
        return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
    }
    let stopped = match st.call(|s| s.stop_mark()).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    match (stopped, json) {
        (true, true) => Json(json!({"stopped": true})).into_response(),
        (false, true) => json_error(StatusCode::CONFLICT, "no mark is running"),
        (_, false) => new_view(&st, StatusCode::OK),
    }
}

async fn mark_events(State(st): State<Arc<AppState>>) -> Response {
    let (snap, mut rx) = st.hub.subscribe();
    let (tx, out) = mpsc::channel(64);
    let hub = Arc::clone(&st.hub);
    let mut shutdown = st.shutdown.clone();
    tokio::spawn(async move {
        let mut next = Some(MarkEvent::Snapshot(snap));
        loop {
            if let Some(ev) = next.take() {
                if tx.send(Ok(sse_event(&ev))).await.is_err() {
                    return; // the browser went away
                }
            }
            tokio::select! {
                r = rx.recv() => match r {
                    Ok(ev) => next = Some(ev),
                    // Fell behind: start over from the state now.
                    Err(broadcast::error::RecvError::Lagged(_)) => next = Some(MarkEvent::Snapshot(hub.snapshot())),
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = shutdown.wait_for(|stop| *stop) => return,
            }
        }
    });
    let stream: ReceiverStream<Result<Event, Infallible>> = ReceiverStream::new(out);
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

fn sse_event(ev: &MarkEvent) -> Event {
    let data = serde_json::to_string(ev).unwrap_or_else(|_| "{}".into());
    Event::default().event(ev.name()).data(data)
}

// --- import --------------------------------------------------------------------------------

async fn import_page(State(st): State<Arc<AppState>>) -> Response {
    html(StatusCode::OK, &pages::ImportPage { chrome: st.chrome() })
}

#[derive(Deserialize, Default)]
struct ImportQuery {
    name: Option<String>,
}

async fn import(State(st): State<Arc<AppState>>, Query(q): Query<ImportQuery>, req: Request) -> Response {
    let checked = req.extensions().get::<CsrfChecked>().is_some();
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    if !multipart {
        if !checked {
            return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
        }
        let body = match Bytes::from_request(req, &()).await {
            Ok(b) => b,
            Err(e) => return e.into_response(),
        };
        let name = q.name.unwrap_or_else(|| "upload.json".into());
        return match st.call(move |s| s.import(&name, &body)).await {
            Ok(Ok(ids)) => Json(json!({"ids": ids})).into_response(),
            Ok(Err(r)) => json_refusal(&r),
            Err(resp) => resp,
        };
    }
    let mut mp = match Multipart::from_request(req, &()).await {
        Ok(m) => m,
        Err(e) => return e.into_response(),
    };
    let mut csrf_seen = checked;
    let mut ids = Vec::new();
    loop {
        let field = match mp.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return e.into_response(),
        };
        if field.name() == Some("csrf") {
            let v = field.text().await.unwrap_or_default();
            csrf_seen = csrf_seen || csrf_ok(&st, false, Some(&v));
            continue;
        }
        // The form puts the token first: no file is read before it is checked.
        if !csrf_seen {
            return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
        }
        let name = field.file_name().unwrap_or("upload.json").to_string();
        let bytes = match field.bytes().await {
            Ok(b) => b,
            Err(e) => return e.into_response(),
        };
        if bytes.is_empty() && name.is_empty() {
            continue;
        }
        match st.call(move |s| s.import(&name, &bytes)).await {
            Ok(Ok(new)) => ids.extend(new),
            Ok(Err(r)) => {
                return if checked {
                    json_refusal(&r)
                } else {
                    message(&st.chrome(), status(r.status), "Not imported", &r.message)
                }
            }
            Err(resp) => return resp,
        }
    }
    if !csrf_seen {
        return security::refuse(StatusCode::FORBIDDEN, CSRF_MISSING);
    }
    if checked {
        return Json(json!({"ids": ids})).into_response();
    }
    let page = pages::MessagePage {
        chrome: st.chrome(),
        title: "Imported".into(),
        message: format!("{} run(s) stored.", ids.len()),
        links: ids
            .iter()
            .map(|id| (format!("/runs/{id}"), format!("Run {id}")))
            .chain([("/".to_string(), "All runs".to_string())])
            .collect(),
    };
    html(StatusCode::OK, &page)
}

// --- helpers -------------------------------------------------------------------------------

async fn not_found(State(st): State<Arc<AppState>>) -> Response {
    message(&st.chrome(), StatusCode::NOT_FOUND, "Not found", "There is no such page.")
}

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn json_error(code: StatusCode, msg: &str) -> Response {
    (code, Json(json!({"error": msg}))).into_response()
}

fn json_refusal(r: &Refusal) -> Response {
    json_error(status(r.status), &r.message)
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
