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
            .envs(home_env())
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
        (serde_json::json!({"target": dir.path(), "profile": "fast"}), "Profile: "),
        (serde_json::json!({"target": dir.path(), "size": "1k"}), "Size: "),
        // Refused before the start, in the page's words: a folder that does not exist, a file
        // diskmeter did not create (the page has no "overwrite").
        (serde_json::json!({"target": dir.path().join("no/such")}), "does not exist"),
        (serde_json::json!({"target": db}), "did not create"),
    ] {
        let (code, answer) = post_mark(&srv, &token, body);
        assert_eq!(code, 422, "{answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(error.contains(needle), "{answer}");
        assert!(!error.contains("--"), "no command-line flags on a page: {error}");
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
            .envs(home_env())
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

// --- one verdict, one wording, on every surface ------------------------------------------------

/// A `mark` result whose every cell has these per-pass MB/s (read and write), started at `at`.
fn with_passes(template: &Value, passes: &[f64], at: &str) -> Value {
    let mut d = template.clone();
    d["started_at"] = Value::String(at.into());
    for r in d["results"].as_array_mut().unwrap() {
        let first = r["passes"][0].clone();
        let list: Vec<Value> = passes
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let mut p = first.clone();
                p["pass"] = (i + 1).into();
                for dir in ["read", "write"] {
                    if p[dir].is_object() {
                        p[dir]["mb_s"] = (*v).into();
                    }
                }
                p
            })
            .collect();
        r["passes"] = Value::Array(list);
        let best = passes.iter().copied().fold(0.0, f64::max);
        for dir in ["read", "write"] {
            if r[dir].is_object() {
                r[dir]["mb_s"] = best.into();
            }
        }
    }
    d
}

/// The row of `figure` (`MB/s`) for subject `label` under the test heading `test · read` of a
/// compare table printed as text.
fn text_row<'a>(text: &'a str, test: &str, figure: &str, label: &str) -> &'a str {
    let section = text.split(&format!("{test} · read\n")).nth(1).unwrap_or_else(|| panic!("no {test}: {text}"));
    let mut lines = section.lines().skip_while(|l| !l.trim_start().starts_with(figure));
    lines.next();
    lines.find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("no row {label}: {section}"))
}

/// The same two runs, judged on every surface — `compare --results`, `history diff`, `history
/// trend`, the device page, the compare page — get the one rule's verdict in the one wording,
/// with one pass a side (no interval), a few passes and many.
#[test]
fn every_surface_says_the_same_of_the_same_two_runs() {
    use report::history_text::{change_figure, change_words, describe, run_name};
    use stats::verdict::{judge, Basis, Sample, Verdict};
    let dir = tempdir();
    let template = run_json(dm_in(dir.path()).args(MARK).args(["--profile", "real", "--no-history"]));
    let few_a = [100.0, 102.0, 98.0];
    let many_a: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i % 3) - 1.0).collect();
    let many_b: Vec<f64> = many_a.iter().map(|v| v * 1.01).collect();
    type Case<'a> = (&'a str, &'a [f64], &'a [f64], Basis, Verdict);
    let cases: [Case; 3] = [
        ("one pass", &[100.0], &[165.5], Basis::SinglePass, Verdict::Faster),
        ("few passes", &few_a, &[120.0, 119.0, 121.5], Basis::Interval, Verdict::Faster),
        ("many passes", &many_a, &many_b, Basis::Interval, Verdict::WithinNoise),
    ];
    for (what, a, b, basis, verdict) in cases {
        let case = dir.path().join(what.replace(' ', "-"));
        std::fs::create_dir(&case).unwrap();
        let (fa, fb) = (case.join("a.json"), case.join("b.json"));
        std::fs::write(&fa, with_passes(&template, a, "2026-11-29T10:04:00Z").to_string()).unwrap();
        std::fs::write(&fb, with_passes(&template, b, "2026-11-29T10:09:00Z").to_string()).unwrap();
        let db = case.join("h.db");
        let o = output(dm().args(["history", "import"]).arg(&fa).arg(&fb).arg("--history").arg(&db));
        assert!(o.status.success(), "{}", stderr_of(&o));

        // The one rule, and the words every surface must print.
        let c = judge(Sample::passes(a), Sample::passes(b), true);
        assert_eq!((c.basis, c.verdict), (basis, verdict), "{what}: {c:?}");
        let (figure, words) = (change_figure(&c), change_words(&c));
        if basis == Basis::SinglePass {
            assert_eq!(figure, "+65.5 % (no interval: 1 pass each)");
        }
        let in_row = |surface: &str, row: &str| {
            assert!(
                row.contains(&figure) && row.contains(verdict.name()),
                "{what}, {surface}: {row:?} lacks {words:?}"
            );
        };

        // 1. compare --results, 2. history diff: the table row of SEQ1M Q1T1 read MB/s.
        let o = output(dm_in(&case).args(["compare", "--results", "a.json", "b.json"]));
        assert!(o.status.success(), "{}", stderr_of(&o));
        in_row("compare --results", text_row(&stdout_of(&o), "SEQ1M Q1T1", "MB/s", "b"));
        let o = output(dm().args(["history", "diff", "1", "2", "--history"]).arg(&db));
        assert!(o.status.success(), "{}", stderr_of(&o));
        in_row("history diff", text_row(&stdout_of(&o), "SEQ1M Q1T1", "MB/s", "run 2"));

        // 3. history trend: the change since the first run, which it names with its time.
        let o = output(dm().args(["history", "trend", "null", "--history"]).arg(&db));
        assert!(o.status.success(), "{}", stderr_of(&o));
        let line = describe("SEQ1M Q1T1 read", &c, &run_name(1, "2026-11-29T10:04:00Z"));
        assert!(stdout_of(&o).contains(&line), "{what}, history trend lacks {line:?}:\n{}", stdout_of(&o));

        // 4. the device page's caption, 5. the compare page's table.
        let srv = Server::start(&db, &["--read-only"]);
        let (code, _, page) = srv.get("/devices/null");
        assert_eq!(code, 200, "{page}");
        let caption = describe("", &c, &run_name(1, "2026-11-29T10:04:00Z"));
        assert!(page.contains(&caption), "{what}, device page lacks {caption:?}");
        let (code, _, page) = srv.get("/compare?a=1&b=2");
        assert_eq!(code, 200, "{page}");
        let table = page.split("id=\"compare-table\"").nth(1).expect("compare table");
        let row = table
            .split("<tr")
            .find(|r| r.contains("SEQ1M Q1T1") && r.contains(">read<") && r.contains("MB/s") && r.contains("run 2"))
            .or_else(|| table.split("<tr").find(|r| r.contains(&figure)))
            .unwrap_or_else(|| panic!("{what}: no row in {table}"));
        in_row("compare page", row);
        // No surface shows an interval of zero width.
        assert!(!page.contains("1.655–1.655") && !table.contains("(+65.5…+65.5"), "{what}");
    }
}
