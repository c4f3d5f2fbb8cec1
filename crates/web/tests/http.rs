//! The HTTP layer against a FakeService, spoken to over raw TCP: requests go out exactly as
//! written (no client normalises `..` or percent escapes away).

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;
use web::fake::FakeService;
use web::{bind, serve_blocking, Config, WebError};

const TOKEN: &str = "s3cret-token-0123456789";

struct Server {
    addr: SocketAddr,
    url: String,
    svc: Arc<FakeService>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Result<(), WebError>>>,
}

impl Server {
    fn start(cfg: Config) -> Server {
        Server::with(cfg, FakeService::new(Duration::from_millis(5)))
    }

    fn with(cfg: Config, svc: FakeService) -> Server {
        let bound = bind(&cfg).expect("bind");
        let (addr, url) = (bound.local_addr(), bound.url().to_string());
        let svc = Arc::new(svc);
        let stop = Arc::new(AtomicBool::new(false));
        let (s, f) = (Arc::clone(&svc) as Arc<dyn web::Service>, Arc::clone(&stop));
        let handle = Some(thread::spawn(move || serve_blocking(bound, s, f)));
        Server { addr, url, svc, stop, handle }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    fn get(&self, path: &str) -> Resp {
        self.raw(&format!("GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.host()))
    }

    fn get_with(&self, path: &str, headers: &str) -> Resp {
        self.raw(&format!("GET {path} HTTP/1.1\r\nHost: {}\r\n{headers}Connection: close\r\n\r\n", self.host()))
    }

    fn post(&self, path: &str, headers: &str, body: &str) -> Resp {
        self.raw(&format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.host(),
            body.len()
        ))
    }

    fn raw(&self, request: &str) -> Resp {
        let mut s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        s.write_all(request.as_bytes()).expect("send");
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).expect("read");
        Resp::parse(&buf)
    }

    /// The CSRF token, as the pages embed it.
    fn csrf(&self) -> String {
        let page = self.get("/new").body;
        let at = page.find("name=\"csrf\" content=\"").expect("csrf meta") + 21;
        page[at..at + 64].to_string()
    }

    fn shutdown(mut self) -> Duration {
        let t = Instant::now();
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            h.join().expect("server thread").expect("serve");
        }
        t.elapsed()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn parse(buf: &[u8]) -> Resp {
        let text = String::from_utf8_lossy(buf).to_string();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|c| c.parse().ok()).expect("status line");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked { dechunk(body) } else { body.to_string() };
        Resp { status, headers, body }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn loopback() -> Config {
    Config::default()
}

#[test]
fn runs_page_and_api() {
    let s = Server::start(loopback());
    let r = s.get("/");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("nvme0n1") && r.body.contains("SEQ1M Q8T1 R 3400"), "{}", r.body);
    assert!(!r.body.contains("<1TB>") && r.body.contains("Fake SSD &#60;1TB&#62;"), "model escaped: {}", r.body);
    // Runs on three folders of one disk are told apart by their target.
    assert!(r.body.contains("<th>Target</th>") && r.body.contains("/mnt/nvme0n1/diskmeter.test"), "{}", r.body);
    let timing = r.header("server-timing").expect("Server-Timing");
    assert!(timing.starts_with("db;dur=") && timing.contains("render;dur="), "{timing}");
    assert_eq!(
        r.header("content-security-policy"),
        Some("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'")
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("referrer-policy"), Some("same-origin"));

    let api = s.get("/api/runs");
    assert_eq!(api.status, 200);
    assert_eq!(api.header("cache-control"), Some("no-store"));
    let runs = api.json();
    let runs = runs.as_array().expect("array");
    assert_eq!(runs.len(), 3);
    for r in runs {
        for k in ["id", "command", "started_at", "device", "key"] {
            assert!(r.get(k).is_some(), "{k} missing in {r}");
        }
        assert_eq!(r["host"], "testhost", "extra fields pass through");
    }
    assert_eq!(runs[0]["id"], 3, "newest first");

    let f = s.get("/api/runs?device=sda").json();
    assert_eq!(f.as_array().map(Vec::len), Some(1));
    let f = s.get("/?command=mark&search=nvme").body;
    assert!(f.contains("data-id=\"2\"") && !f.contains("data-id=\"3\""));
    assert_eq!(s.get("/api/runs?since=yesterday").status, 400);
    assert_eq!(s.get("/api/runs?limit=x").status, 400);
}

#[test]
fn runs_page_pages_by_200() {
    let s = Server::with(loopback(), FakeService::new(Duration::ZERO).with_many(450));
    let first = s.get("/").body;
    assert_eq!(first.matches("<tr data-id=").count(), 200);
    assert!(first.contains("href=\"/?offset=200\""), "next link");
    let third = s.get("/?offset=400").body;
    assert_eq!(third.matches("<tr data-id=").count(), 53);
    assert!(third.contains("href=\"/?offset=200\"") && !third.contains("offset=600"));
}

#[test]
fn documents_reports_devices() {
    let s = Server::start(loopback());
    let d = s.get("/api/runs/1");
    assert_eq!(d.status, 200);
    assert_eq!(d.header("content-type"), Some("application/json"));
    assert_eq!(d.json()["schema"], "diskmeter.result.v1");
    assert_eq!(s.get("/api/runs/999").status, 404);
    assert_eq!(s.get("/api/runs/abc").status, 400);
    assert_eq!(s.get("/api/runs/1.5").status, 400);

    let p = s.get("/runs/2");
    assert_eq!(p.status, 200);
    assert!(p.body.contains("id=\"report\"") && p.body.contains(".fake-report"));
    assert_eq!(s.get("/runs/999").status, 404);
    assert_eq!(s.get("/runs/x").status, 400);

    let dev = s.get("/devices/wwn-nvme0n1");
    assert_eq!(dev.status, 200);
    assert!(dev.body.contains("data-chart=\"trend\"") && dev.body.contains("card-history"));
    assert_eq!(s.get("/devices/nothing").status, 404);
    assert_eq!(s.get("/no/such/page").status, 404);
}

#[test]
fn compare_picks_and_refuses() {
    let s = Server::start(loopback());
    let pick = s.get("/compare");
    assert_eq!(pick.status, 200);
    assert!(pick.body.contains("name=\"a\"") && pick.body.contains("name=\"da\""));
    let ok = s.get("/compare?a=1&b=2");
    assert_eq!(ok.status, 200);
    assert!(ok.body.contains("id=\"verdict\"") && ok.body.contains("slower"));
    let diff = s.get("/compare?a=1&b=3");
    assert_eq!(diff.status, 422);
    assert!(diff.body.contains("different workloads"));
    assert_eq!(s.get("/compare?a=x&b=1").status, 400);
    assert_eq!(s.get("/compare?a=1").status, 400);
    let dev = s.get("/compare?da=wwn-nvme0n1&db=nvme0n1");
    assert_eq!(dev.status, 200, "{}", dev.body);
    assert_eq!(s.get("/compare?da=wwn-nvme0n1&db=ghost").status, 404);
}

#[test]
fn no_path_traversal() {
    let s = Server::start(loopback());
    let js = s.get("/assets/app.js");
    assert_eq!(js.status, 200);
    assert!(js.header("content-type").is_some_and(|t| t.starts_with("text/javascript")));
    assert_eq!(s.get("/assets/style.css").status, 200);
    for path in [
        "/assets/../Cargo.toml",
        "/assets/../../Cargo.toml",
        "/assets/%2e%2e%2fCargo.toml",
        "/assets/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/assets/..%2f..%2fCargo.toml",
        "/assets/..%5c..%5cCargo.toml",
        "/assets/app.js%00",
        "/assets/./app.js/..",
        "/assets/%2fetc%2fpasswd",
        "/runs/..%2f..",
        "/runs/../../Cargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/devices/..%2f..%2fCargo.toml",
        "/../../../../etc/passwd",
    ] {
        let r = s.get(path);
        assert_ne!(r.status, 200, "{path} answered 200: {}", r.body);
        for leak in ["[package]", "[workspace]", "root:x:", "diskmeter-web"] {
            assert!(!r.body.contains(leak), "{path} leaked {leak}");
        }
    }
}

#[test]
fn posts_need_csrf() {
    let s = Server::start(loopback());
    let csrf = s.csrf();
    let json = "Content-Type: application/json\r\n";
    let body = r#"{"target": "/tmp/x", "profile": "real", "size": "16M", "quick": true}"#;
    assert_eq!(s.post("/api/marks", json, body).status, 403, "no token");
    assert_eq!(
        s.post("/api/marks", &format!("{json}X-Csrf-Token: {}\r\n", "0".repeat(64)), body).status,
        403,
        "wrong token"
    );
    let form = "Content-Type: application/x-www-form-urlencoded\r\n";
    assert_eq!(s.post("/api/marks", form, "target=%2Ftmp%2Fx").status, 403, "form without csrf");
    assert_eq!(s.post("/api/marks", form, "target=%2Ftmp%2Fx&csrf=abc").status, 403, "form with a wrong csrf");
    assert_eq!(s.post("/api/marks/current/stop", "", "").status, 403);
    assert_eq!(s.post("/api/import", json, "{}").status, 403);
    assert!(s.svc.started.lock().expect("lock").is_empty(), "nothing started without the token");

    // A page of another site: refused even with the token.
    let cross = format!("{json}X-Csrf-Token: {csrf}\r\nOrigin: http://evil.example\r\n");
    assert_eq!(s.post("/api/marks", &cross, body).status, 403);
    let cross = format!("{json}X-Csrf-Token: {csrf}\r\nSec-Fetch-Site: cross-site\r\n");
    assert_eq!(s.post("/api/marks", &cross, body).status, 403);
    // Another server on the same host (another port) is the same site, not the same origin.
    let cross = format!("{json}X-Csrf-Token: {csrf}\r\nSec-Fetch-Site: same-site\r\nOrigin: http://127.0.0.1:1\r\n");
    assert_eq!(s.post("/api/marks", &cross, body).status, 403);
    // A hidden origin with nothing else to go by.
    let hidden = format!("{json}X-Csrf-Token: {csrf}\r\nOrigin: null\r\n");
    assert_eq!(s.post("/api/marks", &hidden, body).status, 403);
    assert!(s.svc.started.lock().expect("lock").is_empty(), "nothing started from another site");

    // A device without the typed name: the service refuses, 422.
    let ok = format!("{json}X-Csrf-Token: {csrf}\r\nOrigin: http://{}\r\n", s.host());
    let dev = s.post("/api/marks", &ok, r#"{"target": "/dev/sdz", "destroy_data": "/dev/sdy"}"#);
    assert_eq!(dev.status, 422);
    assert!(dev.json()["error"].as_str().is_some_and(|e| e.contains("exact name")));

    let started = s.post("/api/marks", &ok, body);
    assert_eq!(started.status, 202, "{}", started.body);
    let busy = s.post("/api/marks", &ok, body);
    assert_eq!(busy.status, 409);
    assert!(busy.json()["error"].as_str().is_some_and(|e| e.contains("running")));
    {
        let reqs = s.svc.started.lock().expect("lock");
        assert_eq!(reqs.len(), 1);
        assert_eq!((reqs[0].profile.as_str(), reqs[0].size.as_deref(), reqs[0].quick), ("real", Some("16M"), true));
    }
    let stop = s.post("/api/marks/current/stop", &format!("X-Csrf-Token: {csrf}\r\n"), "");
    assert_eq!(stop.status, 200, "{}", stop.body);
    wait_idle(&s);

    // The form (no JavaScript) with its hidden field, and the device name passed on as typed.
    let f = s.post(
        "/api/marks",
        form,
        &format!("csrf={csrf}&target=%2Fdev%2Fsdz&profile=peak&quick=1&destroy_data=%2Fdev%2Fsdz"),
    );
    assert_eq!(f.status, 202, "{}", f.body);
    assert!(f.body.contains("id=\"live\""));
    let reqs = s.svc.started.lock().expect("lock").clone();
    assert_eq!(reqs[1].destroy_data.as_deref(), Some("/dev/sdz"));
    let stop = s.post("/api/marks/current/stop", form, &format!("csrf={csrf}"));
    assert_eq!(stop.status, 200);
    wait_idle(&s);
}

fn wait_idle(s: &Server) {
    let t = Instant::now();
    while s.svc.is_running() {
        assert!(t.elapsed() < Duration::from_secs(5), "fake mark did not stop");
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn import_raw_and_multipart() {
    let s = Server::start(loopback());
    let csrf = s.csrf();
    let raw = s.post(
        "/api/import?name=fio.json",
        &format!("Content-Type: application/json\r\nX-Csrf-Token: {csrf}\r\n"),
        r#"{"fio version": "fio-3.36"}"#,
    );
    assert_eq!(raw.status, 200, "{}", raw.body);
    assert_eq!(raw.json()["ids"], serde_json::json!([4]));
    let bad = s.post("/api/import", &format!("X-Csrf-Token: {csrf}\r\n"), "not json");
    assert_eq!(bad.status, 422);

    let boundary = "XyZ";
    let part = |name: &str, file: Option<&str>, value: &str| {
        let disp = match file {
            Some(f) => format!("form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/json"),
            None => format!("form-data; name=\"{name}\""),
        };
        format!("--{boundary}\r\nContent-Disposition: {disp}\r\n\r\n{value}\r\n")
    };
    let mp = format!("Content-Type: multipart/form-data; boundary={boundary}\r\n");
    let good = format!(
        "{}{}--{boundary}--\r\n",
        part("csrf", None, &csrf),
        part("file", Some("r.json"), r#"{"command": "mark"}"#)
    );
    let r = s.post("/api/import", &mp, &good);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("href=\"/runs/5\""));
    // What Chromium sends with the import form of this server's own page: a null Origin (the
    // page's referrer policy once made it so) and Sec-Fetch-Site: same-origin.
    let chromium = format!("{mp}Origin: null\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: navigate\r\n");
    let r = s.post("/api/import", &chromium, &good);
    assert_eq!(r.status, 200, "a real browser's own form post: {}", r.body);
    assert_eq!(r.header("referrer-policy"), Some("same-origin"));
    let late = format!("{}{}--{boundary}--\r\n", part("file", Some("r.json"), "{}"), part("csrf", None, &csrf));
    assert_eq!(s.post("/api/import", &mp, &late).status, 403, "the token must come before the file");
    let none = format!("{}--{boundary}--\r\n", part("file", Some("r.json"), "{}"));
    assert_eq!(s.post("/api/import", &mp, &none).status, 403);
    assert_eq!(s.get("/api/runs").json().as_array().map(Vec::len), Some(6));
    let page = s.get("/import");
    assert!(page.body.contains("enctype=\"multipart/form-data\"") && page.body.contains(&csrf));
}

#[test]
fn read_only_refuses_every_post() {
    let s = Server::start(Config { read_only: true, ..loopback() });
    let page = s.get("/new").body;
    assert!(!page.contains("<form") || !page.contains("method=\"post\""), "no forms: {page}");
    assert!(!page.contains("name=\"csrf\""));
    assert!(!s.get("/import").body.contains("method=\"post\""));
    assert!(!s.get("/").body.contains("href=\"/new\""));
    for path in ["/api/marks", "/api/marks/current/stop", "/api/import", "/", "/api/runs"] {
        let r = s.post(path, "Content-Type: application/json\r\n", "{}");
        assert_eq!(r.status, 403, "{path}");
        assert_eq!(r.body.trim(), "read-only server");
    }
    assert_eq!(s.get("/").status, 200);
    assert!(s.svc.started.lock().expect("lock").is_empty());
}

#[test]
fn host_header_is_checked_on_loopback() {
    let s = Server::start(loopback());
    let port = s.addr.port();
    let req = |host: &str| s.raw(&format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"));
    assert_eq!(req(&format!("localhost:{port}")).status, 200);
    assert_eq!(req(&format!("LOCALHOST:{port}")).status, 200);
    let evil = req(&format!("evil.example:{port}"));
    assert_eq!(evil.status, 421);
    assert!(evil.header("content-security-policy").is_some(), "headers on refusals too");
    assert_eq!(req("127.0.0.1").status, 421, "port missing");
    assert_eq!(req(&format!("127.0.0.1:{}", port.wrapping_add(1))).status, 421);
    assert_eq!(s.raw("GET / HTTP/1.0\r\n\r\n").status, 421, "no Host at all");
}

#[test]
fn default_bind_is_loopback_only() {
    let b = bind(&Config::default()).expect("bind");
    assert_eq!(b.local_addr().ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_ne!(b.local_addr().port(), 0);
    assert_eq!(b.url(), format!("http://127.0.0.1:{}/", b.local_addr().port()));
    let port = b.local_addr().port();
    // The machine's own outward address (a UDP "connect" only picks the route; nothing is sent).
    let own = UdpSocket::bind("0.0.0.0:0")
        .and_then(|u| u.connect("192.0.2.1:9").and_then(|()| u.local_addr()))
        .ok()
        .map(|a| a.ip())
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    match own {
        Some(ip) => {
            let r = TcpStream::connect_timeout(&SocketAddr::new(ip, port), Duration::from_secs(2));
            assert!(r.is_err(), "reachable on {ip}:{port}");
        }
        None => {
            eprintln!("default_bind_is_loopback_only: no non-loopback address here; only the bound address was checked")
        }
    }
    assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
}

#[test]
fn listen_needs_a_token() {
    let any = Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let e = bind(&Config { listen: any, ..Config::default() }).expect_err("no token");
    assert!(matches!(e, WebError::ListenWithoutToken(_)));
    let msg = e.to_string();
    assert!(msg.contains("--listen 0.0.0.0") && msg.contains("--token") && !msg.contains('\n'), "{msg}");
    let short = bind(&Config { listen: any, token: Some("short".into()), ..Config::default() });
    assert!(matches!(short, Err(WebError::BadToken)));
    let odd = bind(&Config { listen: any, token: Some("has spaces in it, sixteen+".into()), ..Config::default() });
    assert!(matches!(odd, Err(WebError::BadToken)));
    let ok = bind(&Config { listen: any, token: Some(TOKEN.into()), ..Config::default() }).expect("with a token");
    assert!(ok.url().ends_with(&format!("/?token={TOKEN}")), "{}", ok.url());
    // An explicit loopback address needs no token.
    assert!(bind(&Config { listen: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)), ..Config::default() }).is_ok());
}

#[test]
fn token_flow() {
    let s = Server::start(Config { token: Some(TOKEN.into()), ..loopback() });
    assert!(s.url.ends_with(&format!("/?token={TOKEN}")));
    let r = s.get("/");
    assert_eq!(r.status, 401);
    assert!(r.header("content-security-policy").is_some());
    assert_eq!(s.get("/api/runs").status, 401);
    assert_eq!(s.get("/assets/app.js").status, 401);
    assert_eq!(s.get("/?token=wrong-token-0123456789").status, 401);

    let first = s.get(&format!("/?device=sda&token={TOKEN}"));
    assert_eq!(first.status, 303);
    assert_eq!(first.header("location"), Some("/?device=sda"));
    let cookie = first.header("set-cookie").expect("cookie");
    assert!(
        cookie.starts_with(&format!("dm_token={TOKEN};"))
            && cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );

    let with_cookie = s.get_with("/?device=sda", &format!("Cookie: other=1; dm_token={TOKEN}\r\n"));
    assert_eq!(with_cookie.status, 200);
    assert!(with_cookie.body.contains("sda"));
    assert_eq!(s.get_with("/", "Cookie: dm_token=nope\r\n").status, 401);
    assert_eq!(s.get_with("/api/runs", &format!("Authorization: Bearer {TOKEN}\r\n")).status, 200);
    assert_eq!(s.get_with("/api/runs", "Authorization: Bearer wrong\r\n").status, 401);
    assert_eq!(s.get(&format!("/api/runs?token={TOKEN}")).status, 200, "scripts: no redirect on /api");
    // The token does not replace the CSRF token.
    let auth = format!("Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n");
    assert_eq!(s.post("/api/marks", &auth, r#"{"target": "/tmp/x"}"#).status, 403);
}

#[test]
fn live_mark_reaches_the_browser() {
    let s = Server::with(loopback(), FakeService::new(Duration::from_millis(20)));
    let csrf = s.csrf();
    // A watcher connected before the start.
    let mut early = TcpStream::connect(s.addr).expect("connect");
    early.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    write!(early, "GET /api/marks/current/events HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n", s.host())
        .expect("send");
    let head = read_until(&mut early, "event: snapshot");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("content-type: text/event-stream"));

    let r = s.post(
        "/api/marks",
        &format!("Content-Type: application/json\r\nX-Csrf-Token: {csrf}\r\n"),
        r#"{"target": "/tmp/dm-web-test", "profile": "real", "size": "16M", "quick": true}"#,
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let seen = read_until(&mut early, "event: done");
    assert!(seen.contains("event: plan") && seen.contains("event: phase") && seen.contains("event: tick"));
    assert_eq!(seen.matches("event: cell").count(), 8, "{seen}");
    assert!(seen.contains(r#""type":"cell","test":"RND4K Q1T1","direction":"write""#), "{seen}");
    assert!(seen.contains(r#""run_id":99"#));

    // A late joiner gets everything at once in the first snapshot.
    let mut late = TcpStream::connect(s.addr).expect("connect");
    late.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    write!(late, "GET /api/marks/current/events HTTP/1.1\r\nHost: {}\r\n\r\n", s.host()).expect("send");
    let snap = read_until(&mut late, "\n\n");
    let data = snap.lines().find_map(|l| l.strip_prefix("data: ")).expect("data line");
    let v: Value = serde_json::from_str(data).expect("snapshot JSON");
    assert_eq!(v["type"], "snapshot");
    assert_eq!(v["cells"].as_array().map(Vec::len), Some(8));
    assert_eq!(v["done"], 99);
    assert_eq!(v["running"], false);

    // Opened later, the page shows a fresh card and one line on how the last mark ended.
    let page = s.get("/new").body;
    assert_eq!(page.matches("data-filled=\"1\"").count(), 0, "{page}");
    assert!(page.contains("data-ended=\"done\""), "{page}");
    assert!(
        page.contains("Last mark, on /tmp/dm-web-test: Done: stored as <a href=\"/runs/99\">run 99</a>."),
        "{page}"
    );
    assert!(!page.contains("id=\"start\" disabled"), "Start is enabled again: {page}");

    // Stop is the user's choice, not a failure: "stopped", with the part kept.
    let r = s.post(
        "/api/marks",
        &format!("Content-Type: application/json\r\nX-Csrf-Token: {csrf}\r\n"),
        r#"{"target": "/tmp/dm-web-test", "profile": "real", "quick": true}"#,
    );
    assert_eq!(r.status, 202, "{}", r.body);
    read_until(&mut early, "event: cell");
    let running = s.get("/new").body;
    assert!(running.contains("id=\"start\" disabled"), "Start waits while a mark runs: {running}");
    assert!(running.contains("Running on /tmp/dm-web-test."), "{running}");
    let stop = s.post("/api/marks/current/stop", &format!("X-Csrf-Token: {csrf}\r\n"), "");
    assert_eq!(stop.status, 200, "{}", stop.body);
    let seen = read_until(&mut early, "event: stopped");
    assert!(!seen.contains("event: error"), "{seen}");
    wait_idle(&s);
    let page = s.get("/new").body;
    assert!(page.contains("data-ended=\"stopped\""), "{page}");
    assert!(page.contains("Stopped: the part that ran is kept as <a href=\"/runs/98\">run 98</a>."), "{page}");
    assert!(!page.contains("Failed") && !page.contains("failed"), "{page}");

    // Shutting down with watchers still connected ends their streams at once.
    let took = s.shutdown();
    assert!(took < Duration::from_secs(3), "shutdown took {took:?}");
    drop((early, late));
}

/// Read from a stream until `needle` has been seen; everything read so far.
fn read_until(s: &mut TcpStream, needle: &str) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let t = Instant::now();
    loop {
        let text = String::from_utf8_lossy(&got).to_string();
        if text.contains(needle) {
            return text;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "no {needle:?} in: {text}");
        match s.read(&mut buf) {
            Ok(0) => panic!("stream closed before {needle:?}: {text}"),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!("read: {e}; so far: {text}"),
        }
    }
}
