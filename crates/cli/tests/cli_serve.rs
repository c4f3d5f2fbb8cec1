//! `diskmeter serve` as a process: it binds 127.0.0.1 on a free port and prints the URL; `/`
//! is the runs page, `/api/runs` the very array `history list --json` prints, `/api/runs/ID`
//! the stored document; listening beyond loopback needs a token (exit 2 without one); Ctrl-C
//! ends it cleanly with no process left behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MARK: &[&str] = &["mark", "--engine", "null", "--quick", "--time", "100ms"];

/// A running `serve`, killed (and reaped) when dropped.
struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/`
    url: String,
    addr: String,
}

impl Server {
    fn start(db: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("diskmeter"))
            .args(["serve", "--port", "0", "--history"])
            .arg(db)
            .args(extra)
            .env("DISKMETER_HISTORY", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn diskmeter serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(l) if !l.is_empty() => l,
            _ => {
                let _ = child.kill();
                let out = child.wait_with_output().unwrap();
                panic!("serve printed no URL: {}", String::from_utf8_lossy(&out.stderr));
            }
        };
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with('/'), "{url:?}");
        let addr = url.trim_start_matches("http://").trim_end_matches('/').to_string();
        Server { child, url, addr }
    }

    /// A GET: status, headers (lower-case names) and body.
    fn get(&self, path: &str) -> (u16, String, String) {
        request(&self.addr, "GET", path, &[], "")
    }

    /// Ctrl-C: the server stops within seconds, with exit 0 and nothing left running.
    fn interrupt(mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on the child this test spawned and has not reaped yet.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                assert_eq!(st.code(), Some(0), "Ctrl-C ends serve cleanly");
                break;
            }
            assert!(Instant::now() < deadline, "serve did not stop within 15 s of Ctrl-C");
            std::thread::sleep(Duration::from_millis(50));
        }
        // Reaped: the pid is gone.
        // SAFETY: signal 0 only checks that the process exists.
        assert_ne!(unsafe { libc::kill(pid, 0) }, 0, "no serve process is left");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One HTTP/1.1 request over a fresh connection (`Connection: close`).
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).expect("connect to serve");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let head = head.to_ascii_lowercase();
    let body = if head.contains("transfer-encoding: chunked") { dechunk(body) } else { body.to_string() };
    (status, head, body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

fn history_json(db: &Path, args: &[&str]) -> Value {
    let o = output(dm().arg("history").args(args).arg("--history").arg(db));
    assert!(o.status.success(), "history {args:?}: {}", stderr_of(&o));
    json_of(&o)
}

#[test]
fn serve_shows_what_history_keeps() {
    let dir = tempdir();
    let db = dir.path().join("new").join("h.db");
    let srv = Server::start(&db, &[]);
    assert!(db.exists(), "a fresh user's database is made");
    let (code, head, body) = srv.get("/");
    assert_eq!(code, 200, "{head}");
    assert!(head.contains("content-type: text/html"), "{head}");
    assert!(head.contains("server-timing: db;dur="), "{head}");
    assert!(body.contains("No runs yet"), "an empty history says so: {body}");
    let (code, _, body) = srv.get("/api/runs");
    assert_eq!((code, json(&body)), (200, serde_json::json!([])));

    // Two marks kept in the database while it is served.
    for _ in 0..2 {
        let o = output(dm_in(dir.path()).args(MARK).arg("--history").arg(&db));
        assert!(o.status.success(), "{}", stderr_of(&o));
    }
    let (code, head, body) = srv.get("/api/runs");
    assert_eq!(code, 200, "{head}");
    assert!(head.contains("application/json"), "{head}");
    let api = json(&body);
    let cli = history_json(&db, &["list", "--json"]);
    assert_eq!(api, cli, "/api/runs prints what `history list --json` prints");
    let runs = api.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        for k in ["id", "command", "started_at", "device", "key"] {
            assert!(r.get(k).is_some(), "{k} in {r}");
        }
    }
    // Paging and filters reach the database.
    let (_, _, body) = srv.get("/api/runs?limit=1&offset=1");
    assert_eq!(json(&body), serde_json::json!([cli[1].clone()]));
    let (_, _, body) = srv.get("/api/runs?command=run");
    assert_eq!(json(&body), serde_json::json!([]));
    let (code, _, _) = srv.get("/api/runs?since=yesterday");
    assert_eq!(code, 400);

    let (code, head, body) = srv.get("/api/runs/1");
    assert_eq!(code, 200, "{head}");
    assert!(head.contains("application/json"), "{head}");
    let doc = json(&body);
    assert_eq!(doc, history_json(&db, &["show", "1", "--json"]), "the stored document, whole");
    assert_eq!(doc["schema"], "diskmeter.result.v1");
    assert_eq!(doc["command"], "mark");
    assert_eq!(srv.get("/api/runs/999").0, 404);
    assert_eq!(srv.get("/api/runs/abc").0, 400);

    // The pages over them.
    let (code, _, body) = srv.get("/");
    assert_eq!(code, 200);
    assert!(body.contains("<table class=\"runs\"") && body.contains("href=\"/runs/2\""), "{body}");
    let (code, _, body) = srv.get("/runs/1");
    assert_eq!(code, 200);
    assert!(body.contains("class=\"report\"") && body.contains("RND4K Q1T1"), "the report: {body}");
    assert_eq!(srv.get("/runs/999").0, 404);
    let key = runs[0]["device_key"].as_str().unwrap();
    let (code, _, body) = srv.get(&format!("/devices/{}", pct(key)));
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("data-chart=\"trend\"") && body.contains("id=\"card-history\""), "{body}");
    let (code, _, body) = srv.get("/compare?a=1&b=2");
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("id=\"compare-table\""), "the verdict table: {body}");
    srv.interrupt();
}

#[test]
fn a_read_only_server_starts_nothing() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let srv = Server::start(&db, &["--read-only"]);
    let (code, _, body) = srv.get("/new");
    assert_eq!(code, 200);
    assert!(!body.contains("id=\"mark-form\""), "no form on a read-only server");
    let (code, _, _) = request(
        &srv.addr,
        "POST",
        "/api/marks",
        &[("Content-Type", "application/json"), ("X-Csrf-Token", "x")],
        "{\"target\": \"/tmp\"}",
    );
    assert_eq!(code, 403);
    assert!(srv.url.starts_with("http://127.0.0.1:"));
    srv.interrupt();
}

/// The page's CSRF token (its `<meta name="csrf">`).
fn csrf(srv: &Server) -> String {
    let (_, _, page) = srv.get("/new");
    page.split("name=\"csrf\" content=\"").nth(1).and_then(|s| s.split('"').next()).expect("a CSRF token").to_string()
}

fn post_mark(srv: &Server, token: &str, body: Value) -> (u16, Value) {
    let (code, _, answer) = request(
        &srv.addr,
        "POST",
        "/api/marks",
        &[("Content-Type", "application/json"), ("X-Csrf-Token", token)],
        &body.to_string(),
    );
    // Refusals by the security layer are plain text.
    (code, serde_json::from_str(&answer).unwrap_or(Value::String(answer)))
}

#[test]
fn the_browser_gets_the_command_lines_rules_and_no_more() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let srv = Server::start(&db, &[]);
    let token = csrf(&srv);
    let (code, _) = post_mark(&srv, "wrong", serde_json::json!({"target": "/tmp"}));
    assert_eq!(code, 403, "no CSRF token, no mark");
    for (body, needle) in [
        (serde_json::json!({"target": dir.path(), "profile": "fast"}), "--profile"),
        (serde_json::json!({"target": dir.path(), "size": "1k"}), "--size"),
    ] {
        let (code, answer) = post_mark(&srv, &token, body);
        assert_eq!(code, 422, "{answer}");
        assert!(answer["error"].as_str().unwrap().contains(needle), "{answer}");
    }
    // A block device: never without its exact name typed (and that case is not tried here).
    let device = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| format!("/dev/{}", e.file_name().to_string_lossy()))
        .find(|d| Path::new(d).exists());
    if let Some(dev) = device {
        for typed in [None, Some("/dev/not-this-one")] {
            let (code, answer) = post_mark(&srv, &token, serde_json::json!({"target": dev, "destroy_data": typed}));
            assert_eq!(code, 422, "{dev} {typed:?}: {answer}");
            assert!(answer["error"].as_str().unwrap().contains("Destroy data"), "{answer}");
        }
    }
    // A mark on a folder starts; a second is refused while it runs; Stop ends it.
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let (code, answer) =
        post_mark(&srv, &token, serde_json::json!({"target": target, "profile": "real", "size": "8M"}));
    assert_eq!(code, 202, "{answer}");
    let (code, answer) = post_mark(&srv, &token, serde_json::json!({"target": target, "quick": true}));
    assert_eq!(code, 409, "{answer}");
    let msg = answer["error"].as_str().unwrap();
    assert!(
        msg.starts_with("a mark is running on ") && msg.contains(" since ") && msg.ends_with("stop it or wait"),
        "{msg}"
    );
    let (code, _, answer) = request(
        &srv.addr,
        "POST",
        "/api/marks/current/stop",
        &[("Content-Type", "application/json"), ("X-Csrf-Token", &token)],
        "{}",
    );
    assert_eq!((code, json(&answer)), (200, serde_json::json!({"stopped": true})));
    // The stopped mark ends (its partial result kept), and the next one may start.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, answer) = post_mark(&srv, &token, serde_json::json!({"target": target, "profile": "none"}));
        if code == 422 {
            break;
        }
        assert_eq!(code, 409, "{answer}");
        assert!(Instant::now() < deadline, "the stopped mark never ended");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, _, body) = srv.get("/api/runs");
    let runs = json(&body);
    if let Some(r) = runs.as_array().unwrap().first() {
        assert_eq!(r["partial"], true, "{r}");
    }
    assert!(std::fs::read_dir(&target).unwrap().next().is_none(), "the test file is removed");
    srv.interrupt();
}

#[test]
fn listening_beyond_loopback_needs_a_token() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    for (args, needles) in [
        (&["--listen", "0.0.0.0"][..], &["--listen", "--token"][..]),
        (&["--listen", "my-host"][..], &["--listen"][..]),
        (&["--token", "short"][..], &["--token"][..]),
    ] {
        let o = expect_code(dm().arg("serve").args(args).arg("--history").arg(&db), 2);
        let err = stderr_of(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err}");
        }
        assert!(stdout_of(&o).is_empty(), "no URL: {}", stdout_of(&o));
    }
    let o = expect_code(dm().args(["serve", "--port", "70000", "--history"]).arg(&db), 2);
    assert!(stderr_of(&o).contains("--port"), "{}", stderr_of(&o));
    assert!(!db.exists(), "bad options touch nothing");
    // With a token, the URL carries it.
    let srv_out = {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("diskmeter"))
            .args(["serve", "--listen", "0.0.0.0", "--token", "0123456789abcdef", "--port", "0", "--history"])
            .arg(&db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        line
    };
    assert!(
        srv_out.starts_with("http://0.0.0.0:") && srv_out.trim_end().ends_with("/?token=0123456789abcdef"),
        "{srv_out}"
    );
}

/// Percent-encode a path segment.
fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
