//! `diskmeter serve` end to end in a real headless Chromium, driven over the DevTools protocol
//! (`headless_chrome`): open the runs page, start a mark on a temporary folder from the "new
//! mark" page, watch the card fill in cell by cell, open the device page and see its chart,
//! run a second mark and compare the two runs; import results through the import form's real
//! file input and submit button; stop a mark with the Stop button and see "stopped", the link
//! to the partial run and Start enabled again; a target that cannot work refused before the
//! start.
//!
//! Without Chromium the test prints "skipped: chromium not installed" and passes, unless
//! `DISKMETER_REQUIRE_BROWSER=1` is set (then it fails). `DISKMETER_CHROMIUM` names another
//! browser binary. Screenshots of the last run stay under `$CARGO_TARGET_TMPDIR/browser-serve/`
//! and are copied to `/tmp/serve-shots/`.
//!
//! `runs_page_at_scale` (ignored; `cargo test --test browser_serve -- --ignored --nocapture`)
//! stores 10 000 runs and prints the runs page's server time (`Server-Timing`) and the time
//! until Chromium has rendered it (navigation `loadEventEnd`, first contentful paint), medians
//! of 5 loads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde_json::Value;
use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A mark from the web takes a few seconds (profile `real`, quick, 16M: four 1 s passes).
const MARK_TIMEOUT: Duration = Duration::from_secs(90);

/// The browser: `$DISKMETER_CHROMIUM` when set, else `/usr/bin/chromium`, else `chromium` or
/// `chromium-browser` on PATH (as the report's browser tests look for it).
fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DISKMETER_CHROMIUM") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let fixed = Path::new("/usr/bin/chromium");
    if fixed.is_file() {
        return Some(fixed.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n))).find(|p| p.is_file())
}

/// Chromium, or `None` after printing why the test is skipped; with
/// `DISKMETER_REQUIRE_BROWSER=1` a missing browser is a failure.
fn browser_bin() -> Option<PathBuf> {
    if let Some(b) = chromium() {
        return Some(b);
    }
    if std::env::var("DISKMETER_REQUIRE_BROWSER").as_deref() == Ok("1") {
        panic!(
            "DISKMETER_REQUIRE_BROWSER=1 but chromium is not installed (DISKMETER_CHROMIUM, /usr/bin/chromium, \
             PATH); install it, e.g. `apt-get install chromium`"
        );
    }
    println!("skipped: chromium not installed");
    eprintln!("skipped: chromium not installed");
    None
}

fn launch(bin: &Path) -> Browser {
    let args: Vec<&OsStr> = [
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-color-profile=srgb",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-breakpad",
        "--password-store=basic",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    let opts = LaunchOptions::default_builder()
        .path(Some(bin.to_path_buf()))
        .headless(true)
        // CI runs as root, where Chromium's sandbox cannot start.
        .sandbox(false)
        .window_size(Some((1280, 1500)))
        .idle_browser_timeout(Duration::from_secs(180))
        .args(args)
        .build()
        .expect("launch options");
    Browser::new(opts).expect("start headless Chromium")
}

/// Screenshots of this run: `$CARGO_TARGET_TMPDIR/browser-serve/`, copied to `/tmp/serve-shots/`.
struct Shots {
    dir: PathBuf,
}

impl Shots {
    fn new() -> Shots {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser-serve");
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Shots { dir }
    }

    fn take(&self, tab: &Tab, name: &str) {
        let png = tab.capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true).expect("screenshot");
        assert!(png.len() > 1000, "{name}: an empty screenshot");
        let file = self.dir.join(format!("{name}.png"));
        fs::write(&file, &png).unwrap();
        let copy = Path::new("/tmp/serve-shots");
        if fs::create_dir_all(copy).is_ok() {
            let _ = fs::write(copy.join(format!("{name}.png")), &png);
        }
    }
}

/// A running `serve`, killed and reaped when dropped.
struct Server {
    child: Child,
    url: String,
    addr: String,
}

impl Server {
    fn start(db: &Path) -> Server {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("diskmeter"))
            .args(["serve", "--port", "0", "--history"])
            .arg(db)
            .envs(home_env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn diskmeter serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "serve printed {url:?}");
        let addr = url.trim_start_matches("http://").trim_end_matches('/').to_string();
        Server { child, url, addr }
    }

    fn at(&self, path: &str) -> String {
        format!("{}{}", self.url, path.trim_start_matches('/'))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Evaluate `js` in the page: its value as JSON.
fn eval(tab: &Tab, js: &str) -> Value {
    tab.evaluate(js, true).unwrap_or_else(|e| panic!("{js}: {e}")).value.unwrap_or(Value::Null)
}

fn goto(tab: &Tab, url: &str) {
    tab.navigate_to(url).unwrap().wait_until_navigated().unwrap();
}

/// Wait until `js` is true in the page, failing with the page's status line after `timeout`.
fn wait_true(tab: &Tab, js: &str, timeout: Duration, what: &str) {
    let deadline = Instant::now() + timeout;
    loop {
        if eval(tab, js) == Value::Bool(true) {
            return;
        }
        let status = eval(
            tab,
            "((document.getElementById('status') || {}).textContent || '') + ' ' + \
             ((document.getElementById('refusal') || {}).textContent || '')",
        );
        if status.as_str().is_some_and(|s| s.contains("Failed") || s.contains("Not started")) {
            panic!("{what}: {status}");
        }
        assert!(Instant::now() < deadline, "{what}: not within {timeout:?} (status: {status})");
        std::thread::sleep(Duration::from_millis(100));
    }
}

const ALL_FILLED: &str = "(() => { const c = document.querySelectorAll('#card td.cell'); \
     return c.length > 0 && [...c].every(x => x.getAttribute('data-filled') === '1'); })()";
const ANY_FILLED: &str = "document.querySelectorAll('#card td.cell[data-filled=\"1\"]').length > 0";
const STORED: &str = "!!document.querySelector('#status a[href^=\"/runs/\"]')";

/// On the "new mark" page: fill the form as a user does and click Start; wait for the card.
fn mark_from_the_page(tab: &Tab, srv: &Server, target: &Path, shots: Option<&Shots>) -> i64 {
    goto(tab, &srv.at("/new"));
    tab.wait_for_element("#mark-form").unwrap();
    // Each DevTools call takes a while: the long path is set, the size typed key by key.
    let path = serde_json::to_string(&target.display().to_string()).unwrap();
    eval(tab, &format!("document.getElementById('target').value = {path}"));
    eval(tab, "document.getElementById('profile').value = 'real'");
    tab.find_element("#size").unwrap().type_into("16M").unwrap();
    tab.find_element("#quick").unwrap().click().unwrap();
    assert_eq!(eval(tab, "document.getElementById('quick').checked"), Value::Bool(true));
    tab.find_element("#start").unwrap().click().unwrap();
    wait_true(tab, ANY_FILLED, MARK_TIMEOUT, "the first cell");
    if let Some(s) = shots {
        s.take(tab, "2-new-mark-filling");
        // One mark at a time: a second start while this one runs is refused (409). The request
        // is invalid too (no such profile), so that it starts nothing should the first have
        // ended meanwhile (422).
        let second = eval(
            tab,
            "fetch('/api/marks', {method: 'POST', headers: {'Content-Type': 'application/json', \
             'X-Csrf-Token': document.querySelector('meta[name=csrf]').content}, \
             body: JSON.stringify({target: '/tmp', profile: 'none', quick: true})}) \
             .then(r => r.json().then(j => JSON.stringify([r.status, j.error])))",
        );
        let second: Value = serde_json::from_str(second.as_str().unwrap_or("null")).unwrap();
        let msg = second[1].as_str().unwrap_or_default();
        match second[0].as_u64() {
            Some(409) => assert!(msg.contains("a mark is running on") && msg.contains("since"), "{second}"),
            Some(422) => assert!(msg.contains("--profile"), "{second}"),
            _ => panic!("a second start: {second}"),
        }
    }
    wait_true(tab, ALL_FILLED, MARK_TIMEOUT, "every cell");
    wait_true(tab, STORED, MARK_TIMEOUT, "the run stored");
    let href = eval(tab, "document.querySelector('#status a').getAttribute('href')");
    href.as_str().unwrap().trim_start_matches("/runs/").parse().unwrap()
}

#[test]
fn a_mark_from_the_browser_fills_its_card_and_compares() {
    let Some(bin) = browser_bin() else { return };
    let shots = Shots::new();
    let dir = tempdir();
    let target = dir.path().join("target");
    fs::create_dir(&target).unwrap();
    let db = dir.path().join("h.db");
    let srv = Server::start(&db);
    let browser = launch(&bin);
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));

    // The runs page of a new user.
    goto(&tab, &srv.url);
    let empty = tab.wait_for_element("p.empty").unwrap().get_inner_text().unwrap();
    assert!(empty.contains("No runs yet"), "{empty}");
    shots.take(&tab, "1-runs-empty");

    // A mark from the "new mark" page, watched live.
    let first = mark_from_the_page(&tab, &srv, &target, Some(&shots));
    let cells = eval(&tab, "document.querySelectorAll('#card td.cell[data-filled=\"1\"]').length");
    assert_eq!(cells, 4, "profile real: 2 tests × read and write");
    shots.take(&tab, "3-new-mark-done");
    assert!(fs::read_dir(&target).unwrap().next().is_none(), "the test file is removed, nothing is kept");

    // The runs page lists it; its device page draws the timeline.
    goto(&tab, &srv.url);
    tab.wait_for_element(&format!("tr[data-id=\"{first}\"]")).unwrap();
    shots.take(&tab, "4-runs");
    tab.find_element(&format!("tr[data-id=\"{first}\"] td:nth-child(4) a")).unwrap().click().unwrap();
    tab.wait_for_element("svg[data-chart=\"trend\"]").unwrap();
    tab.wait_for_element("#card-history").unwrap();

    // A second mark, then the device page has two points per cell and compare gives verdicts.
    let second = mark_from_the_page(&tab, &srv, &target, None);
    assert_ne!(first, second);
    goto(&tab, &srv.url);
    tab.find_element(&format!("tr[data-id=\"{second}\"] td:nth-child(4) a")).unwrap().click().unwrap();
    tab.wait_for_element("svg[data-chart=\"trend\"]").unwrap();
    wait_true(
        &tab,
        "document.querySelectorAll('svg[data-chart=\"trend\"] circle').length >= 8",
        MARK_TIMEOUT,
        "two points per cell",
    );
    shots.take(&tab, "5-device");

    goto(&tab, &srv.at("/compare"));
    eval(&tab, &format!("document.querySelector('select[name=a]').value = '{first}'"));
    eval(&tab, &format!("document.querySelector('select[name=b]').value = '{second}'"));
    tab.find_element("form.picker button").unwrap().click().unwrap();
    tab.wait_for_element("#verdict #compare-table").unwrap();
    let verdicts = eval(&tab, "document.querySelectorAll('#compare-table .tag').length");
    assert!(verdicts.as_u64().unwrap() >= 1, "verdict tags: {verdicts}");
    eval(&tab, "document.getElementById('compare-table').scrollIntoView()");
    shots.take(&tab, "6-compare");

    // The report of a run, served whole.
    goto(&tab, &srv.at(&format!("/runs/{first}")));
    tab.wait_for_element(".report table").unwrap();
    shots.take(&tab, "7-run");
}

#[test]
fn import_through_the_form_as_a_user_does() {
    let Some(bin) = browser_bin() else { return };
    let dir = tempdir();
    let db = dir.path().join("h.db");
    // A diskmeter result and fio's own JSON output, as files a user picks.
    let mine = dir.path().join("mine.json");
    let o = output(
        dm_in(dir.path())
            .args(["mark", "--engine", "null", "--quick", "--time", "100ms", "--no-history", "-q", "-o"])
            .arg(&mine),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/tests/data/fio/randread.json");
    assert!(fio.is_file(), "{}", fio.display());
    let srv = Server::start(&db);
    let browser = launch(&bin);
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));

    goto(&tab, &srv.at("/import"));
    let input = tab.wait_for_element("form.import input[type=file]").unwrap();
    let files = [fio.canonicalize().unwrap(), mine.canonicalize().unwrap()];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    input.set_input_files(&names.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    assert_eq!(eval(&tab, "document.querySelector('form.import input[type=file]').files.length"), 2);
    // A real submit: Chromium sends the form with its own headers (Origin, Sec-Fetch-Site).
    tab.find_element("form.import button[type=submit]").unwrap().click().unwrap();
    wait_true(
        &tab,
        "document.querySelector('h1') && document.querySelector('h1').textContent === 'Imported'",
        Duration::from_secs(30),
        "the import answer",
    );
    let msg = eval(&tab, "document.querySelector('p.message').textContent");
    assert_eq!(msg, "2 run(s) stored.", "{msg}");

    // Both are in the runs list, told apart by their target; the fio run's unknowns read so.
    goto(&tab, &srv.url);
    tab.wait_for_element("table.runs").unwrap();
    let heads = eval(&tab, "[...document.querySelectorAll('table.runs thead th')].map(t => t.textContent).join('|')");
    assert!(heads.as_str().unwrap().contains("|Target|"), "{heads}");
    let commands = eval(&tab, "[...document.querySelectorAll('table.runs tbody tr td:nth-child(3)')].map(t => t.textContent.trim()).join('|')");
    let commands = commands.as_str().unwrap();
    assert!(commands.contains("fio") && commands.contains("mark"), "{commands}");
    let fio_id = eval(
        &tab,
        "[...document.querySelectorAll('table.runs tbody tr')].find(r => r.children[2].textContent.trim() === 'fio').getAttribute('data-id')",
    );
    goto(&tab, &srv.at(&format!("/runs/{}", fio_id.as_str().unwrap())));
    tab.wait_for_element(".report").unwrap();
    let text = eval(&tab, "document.querySelector('.report').innerText");
    let text = text.as_str().unwrap();
    for zero in ["0 B logical", "memory\t0 B", "CPUs\t0\n"] {
        assert!(!text.contains(zero), "unknown is not zero ({zero:?}): {text}");
    }
    assert!(text.contains("unknown"), "{text}");
}

#[test]
fn stop_from_the_page_says_stopped_and_links_the_partial_run() {
    let Some(bin) = browser_bin() else { return };
    let dir = tempdir();
    let target = dir.path().join("target");
    fs::create_dir(&target).unwrap();
    let db = dir.path().join("h.db");
    let srv = Server::start(&db);
    let browser = launch(&bin);
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));

    // A folder that does not exist is refused before anything starts, in the page's words.
    goto(&tab, &srv.at("/new"));
    tab.wait_for_element("#mark-form").unwrap();
    let missing = serde_json::to_string(&dir.path().join("no/such").display().to_string()).unwrap();
    eval(&tab, &format!("document.getElementById('target').value = {missing}"));
    tab.find_element("#start").unwrap().click().unwrap();
    let refused = "!document.getElementById('refusal').hidden && \
                   document.getElementById('refusal').textContent.includes('does not exist')";
    let deadline = Instant::now() + Duration::from_secs(20);
    while eval(&tab, refused) != Value::Bool(true) {
        assert!(
            Instant::now() < deadline,
            "no refusal: {}",
            eval(&tab, "document.getElementById('refusal').textContent")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let refusal = eval(&tab, "document.getElementById('refusal').textContent");
    assert!(!refusal.as_str().unwrap().contains("--"), "no command-line flags on a page: {refusal}");
    assert_eq!(eval(&tab, "document.getElementById('status').textContent"), "", "nothing started");
    assert_eq!(eval(&tab, "document.getElementById('start').disabled"), Value::Bool(false));

    // A mark on a real folder: Start waits while it runs.
    let path = serde_json::to_string(&target.display().to_string()).unwrap();
    eval(&tab, &format!("document.getElementById('target').value = {path}"));
    tab.find_element("#size").unwrap().type_into("16M").unwrap();
    tab.find_element("#quick").unwrap().click().unwrap();
    tab.find_element("#start").unwrap().click().unwrap();
    wait_true(&tab, ANY_FILLED, MARK_TIMEOUT, "the first cell");
    assert_eq!(eval(&tab, "document.getElementById('start').disabled"), Value::Bool(true), "one mark at a time");
    let running = eval(&tab, "document.getElementById('status').textContent");
    assert!(running.as_str().unwrap().starts_with("Running on "), "{running}");

    // Stop: "stopped", not "failed"; the partial run linked; no stale speed; Start again.
    tab.find_element("#stop").unwrap().click().unwrap();
    wait_true(
        &tab,
        "document.getElementById('status').getAttribute('data-ended') === 'stopped'",
        MARK_TIMEOUT,
        "stopped",
    );
    let status = eval(&tab, "document.getElementById('status').textContent");
    let status = status.as_str().unwrap().to_string();
    assert!(status.starts_with("Stopped: the part that ran is kept as run "), "{status}");
    assert!(!status.contains("ailed"), "{status}");
    assert_eq!(eval(&tab, "document.getElementById('tick').textContent"), "", "no stale speed");
    assert_eq!(eval(&tab, "document.getElementById('phase').textContent"), "stopped");
    assert_eq!(eval(&tab, "document.getElementById('start').disabled"), Value::Bool(false));
    assert_eq!(eval(&tab, "document.getElementById('stop').hidden"), Value::Bool(true));
    let href = eval(&tab, "document.querySelector('#status a').getAttribute('href')");
    let href = href.as_str().expect("a link to the partial run").to_string();
    assert!(href.starts_with("/runs/"), "{href}");

    // The partial run says why once.
    tab.find_element("#status a").unwrap().click().unwrap();
    tab.wait_for_element(".report").unwrap();
    let report = eval(&tab, "document.querySelector('.report').innerText");
    let report = report.as_str().unwrap();
    assert!(report.contains("Partial results (interrupted by the user)"), "{report}");
    assert!(!report.contains("interrupted: interrupted"), "{report}");

    // Opened later, the page starts fresh and says how the last mark ended.
    goto(&tab, &srv.at("/new"));
    tab.wait_for_element("#mark-form").unwrap();
    wait_true(
        &tab,
        "document.getElementById('status').textContent.startsWith('Last mark, on ')",
        Duration::from_secs(10),
        "the last mark's line",
    );
    let last = eval(&tab, "document.getElementById('status').textContent");
    assert!(last.as_str().unwrap().contains("Stopped: the part that ran is kept as run "), "{last}");
    assert_eq!(eval(&tab, "document.querySelectorAll('#card td.cell[data-filled=\"1\"]').length"), 0, "a fresh card");
    assert_eq!(eval(&tab, "document.getElementById('start').disabled"), Value::Bool(false));
    assert!(fs::read_dir(&target).unwrap().next().is_none(), "the test file is removed");
}

// --- the runs page at scale ----------------------------------------------------------------

fn http(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let code = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, head, raw[(split + 4).min(raw.len())..].to_vec())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
#[ignore = "a figure, not a check: stores 10 000 runs (about a minute)"]
fn runs_page_at_scale() {
    const RUNS: usize = 10_000;
    let Some(bin) = browser_bin() else { return };
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let o = output(
        dm_in(dir.path())
            .args(["mark", "--engine", "null", "--quick", "--time", "100ms", "--json", "--history"])
            .arg(&db),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let doc = json_of(&o);
    let srv = Server::start(&db);
    let (_, _, page) = http(&srv.addr, "GET", "/", &[], b"");
    let page = String::from_utf8_lossy(&page).into_owned();
    let csrf = page.split("name=\"csrf\" content=\"").nth(1).and_then(|s| s.split('"').next()).unwrap().to_string();
    let t0 = Instant::now();
    for i in 1..RUNS {
        let mut d = doc.clone();
        let day = i / 86_400;
        d["started_at"] = Value::String(format!(
            "2025-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            1 + day / 28,
            1 + day % 28,
            i / 3600 % 24,
            i / 60 % 60,
            i % 60
        ));
        d.as_object_mut().unwrap().remove("history");
        let body = serde_json::to_vec(&d).unwrap();
        let (code, _, answer) = http(
            &srv.addr,
            "POST",
            "/api/import?name=copy.json",
            &[("Content-Type", "application/json"), ("X-Csrf-Token", &csrf)],
            &body,
        );
        assert_eq!(code, 200, "{}", String::from_utf8_lossy(&answer));
    }
    let insert = t0.elapsed();
    let size =
        fs::metadata(&db).unwrap().len() + fs::metadata(db.with_extension("db-wal")).map(|m| m.len()).unwrap_or(0);
    eprintln!(
        "stored {RUNS} runs in {:.1} s over HTTP import ({:.2} ms per run); database {:.1} MB ({:.0} bytes per run)",
        insert.as_secs_f64(),
        insert.as_secs_f64() * 1e3 / (RUNS - 1) as f64,
        size as f64 / 1e6,
        size as f64 / RUNS as f64
    );

    let mut server_ms = Vec::new();
    for _ in 0..5 {
        let (code, head, _) = http(&srv.addr, "GET", "/", &[], b"");
        assert_eq!(code, 200);
        let timing = head.lines().find(|l| l.starts_with("server-timing:")).unwrap().to_string();
        let total: f64 = timing
            .split([',', ':'])
            .filter_map(|p| p.split("dur=").nth(1))
            .map(|v| v.trim().parse::<f64>().unwrap())
            .sum();
        server_ms.push(total);
    }
    let browser = launch(&bin);
    let tab: Arc<Tab> = browser.new_tab().unwrap();
    let (mut load_ms, mut fcp_ms) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        goto(&tab, "about:blank");
        goto(&tab, &srv.url);
        tab.wait_for_element("table.runs").unwrap();
        wait_true(
            &tab,
            "performance.getEntriesByType('navigation')[0].loadEventEnd > 0",
            Duration::from_secs(30),
            "load",
        );
        let n = eval(&tab, "document.querySelectorAll('table.runs tbody tr').length");
        assert_eq!(n, 200, "the runs page pages by 200");
        load_ms.push(eval(&tab, "performance.getEntriesByType('navigation')[0].loadEventEnd").as_f64().unwrap());
        fcp_ms.push(
            eval(&tab, "(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: -1}).startTime")
                .as_f64()
                .unwrap(),
        );
    }
    eprintln!(
        "runs page with {RUNS} runs, medians of 5: server {:.1} ms (Server-Timing db+render: {server_ms:?}); \
         Chromium loadEventEnd {:.0} ms ({load_ms:?}), first contentful paint {:.0} ms ({fcp_ms:?})",
        median(server_ms.clone()),
        median(load_ms.clone()),
        median(fcp_ms.clone())
    );
    assert!(median(server_ms) < 200.0, "goal: under 200 ms server time");
    assert!(median(load_ms) < 1000.0, "goal: under 1 s to render");
}
