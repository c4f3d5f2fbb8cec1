//! The HTML report in a real browser: each test document (`tests/data/*.json`) is rendered
//! with `render_html`, opened in headless Chromium from a `file://` URL, screenshotted and
//! dumped as a DOM, while Chromium's net log records every request. The page must draw
//! (a non-blank screenshot), contain every expected chart, and fetch nothing from the
//! network.
//!
//! Without Chromium the browser tests print "skipped: chromium not installed" and pass,
//! unless `DISKMETER_REQUIRE_BROWSER=1` is set (then they fail). `DISKMETER_CHROMIUM`
//! names another browser binary. Reports, screenshots, DOM dumps and net logs of the last
//! run stay under `$CARGO_TARGET_TMPDIR/browser/`; one screenshot per document is copied
//! to `/tmp/html-shots/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use stats::ResultDoc;

/// Each document and the `data-chart` kinds its report must contain.
const DOCS: [(&str, &[&str]); 6] = [
    ("mark", &["mark-card", "latency-cdf"]),
    ("run", &["results-table", "latency-cdf", "timeline"]),
    ("sla", &["sla-curve", "results-table", "latency-cdf", "timeline"]),
    ("compare", &["compare-bars"]),
    ("cache", &["cache-warmup", "cache-mrc"]),
    ("surface", &["surface-rate", "surface-map", "surface-access"]),
];

/// Kinds drawn as HTML tables rather than SVG.
const TABLE_KINDS: [&str; 2] = ["mark-card", "results-table"];

/// Chromium is killed after this long.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Flags for a quiet, reproducible headless run. The background-networking switches keep
/// the browser's own housekeeping requests (updates, time, sign-in) to a minimum; those
/// that remain are told apart from the page's requests in [`network_requests`].
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--no-pings",
    "--disable-features=NetworkTimeServiceQuerying,Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
    "--password-store=basic",
    "--use-mock-keychain",
];

/// URL schemes that never touch the network.
const LOCAL_SCHEMES: [&str; 4] = ["file", "data", "about", "chrome"];

fn data(name: &str) -> ResultDoc {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(format!("{name}.json"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ResultDoc::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The browser: `$DISKMETER_CHROMIUM` when set (another Chromium build, or a missing path
/// to exercise the skip), else `/usr/bin/chromium`, else `chromium`/`chromium-browser` on PATH.
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

/// Chromium, or `None` after printing why the test is skipped. With
/// `DISKMETER_REQUIRE_BROWSER=1` a missing browser is a failure instead.
fn browser() -> Option<PathBuf> {
    if let Some(b) = chromium() {
        return Some(b);
    }
    if std::env::var("DISKMETER_REQUIRE_BROWSER").as_deref() == Ok("1") {
        let looked = match std::env::var_os("DISKMETER_CHROMIUM") {
            Some(p) => format!("DISKMETER_CHROMIUM={} is not a file", PathBuf::from(p).display()),
            None => "looked for /usr/bin/chromium and for chromium or chromium-browser on PATH".to_string(),
        };
        panic!(
            "DISKMETER_REQUIRE_BROWSER=1 but chromium is not installed ({looked}); install it, e.g. \
             `apt-get install chromium`"
        );
    }
    println!("skipped: chromium not installed");
    eprintln!("skipped: chromium not installed");
    None
}

/// A fresh work directory for one test under Cargo's per-target temp dir; its contents
/// (reports, screenshots, net logs) stay there after the run for inspection.
fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Run Chromium with `args` in its own process group and a private profile; kill the
/// whole group after [`TIMEOUT`]. Returns stdout.
fn run_chromium(bin: &Path, dir: &Path, tag: &str, args: &[String]) -> String {
    let out = dir.join(format!("{tag}.stdout"));
    let err = dir.join(format!("{tag}.stderr"));
    let mut child = Command::new(bin)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", dir.join(format!("profile-{tag}")).display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TIMEOUT {
            // Negative pid: the process group we created, i.e. Chromium and its helpers.
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.wait();
            panic!("chromium ({tag}) did not finish within {} s; killed", TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = fs::read_to_string(&out).unwrap_or_default();
    if !status.success() {
        let stderr = fs::read_to_string(&err).unwrap_or_default();
        panic!("chromium ({tag}) failed with {status}:\n{stderr}");
    }
    stdout
}

/// Screenshot `html` into `png`, recording the net log into `netlog`.
fn screenshot(bin: &Path, dir: &Path, tag: &str, html: &Path, png: &Path, netlog: &Path) {
    run_chromium(
        bin,
        dir,
        tag,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,4000".to_string(),
            format!("--log-net-log={}", netlog.display()),
            "--net-log-capture-mode=Everything".to_string(),
            file_url(html),
        ],
    );
}

/// The DOM after loading `html`, recording the net log into `netlog`.
fn dump_dom(bin: &Path, dir: &Path, tag: &str, html: &Path, netlog: &Path) -> String {
    run_chromium(
        bin,
        dir,
        tag,
        &[
            "--dump-dom".to_string(),
            format!("--log-net-log={}", netlog.display()),
            "--net-log-capture-mode=Everything".to_string(),
            file_url(html),
        ],
    )
}

// ---------------------------------------------------------------------------------------
// net log

/// Parse a net log; one cut short (browser killed) lacks the closing `]}`.
fn parse_netlog(text: &str) -> Value {
    if let Ok(v) = serde_json::from_str(text) {
        return v;
    }
    let t = text.trim_end().trim_end_matches(',');
    serde_json::from_str(&format!("{t}]}}")).expect("net log is not JSON, even when closed")
}

fn scheme(url: &str) -> String {
    url.split_once(':').map(|(s, _)| s.to_ascii_lowercase()).unwrap_or_default()
}

/// A request to a non-local URL found in a net log.
#[derive(Debug)]
struct Request {
    url: String,
    /// Made on behalf of the page (or not provably the browser's own housekeeping).
    from_page: bool,
}

/// Every non-local URL the net log mentions. A URL counts as the browser's own only if
/// every URL request for it started with no initiating origin ("not an origin") and a
/// network isolation key that is not the page's (`file://`); anything else — including a
/// URL seen only in a connection or preconnect event — counts as the page's.
fn network_requests(netlog: &Path) -> Vec<Request> {
    let text = fs::read_to_string(netlog).unwrap_or_else(|e| panic!("{}: {e}", netlog.display()));
    let log = parse_netlog(&text);
    let types: BTreeMap<u64, String> = log["constants"]["logEventTypes"]
        .as_object()
        .expect("net log constants")
        .iter()
        .filter_map(|(k, v)| Some((v.as_u64()?, k.clone())))
        .collect();
    let events = log["events"].as_array().expect("net log events");

    fn urls(v: &Value, key: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| urls(v, k, out)),
            Value::Array(a) => a.iter().for_each(|v| urls(v, key, out)),
            Value::String(s) if key.to_ascii_lowercase().contains("url") => out.push(s.clone()),
            _ => {}
        }
    }

    let mut seen: BTreeSet<String> = BTreeSet::new();
    // url -> (requests started, of which by the browser itself)
    let mut starts: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for e in events {
        let mut found = Vec::new();
        urls(&e["params"], "", &mut found);
        for u in found {
            if !LOCAL_SCHEMES.contains(&scheme(&u).as_str()) {
                seen.insert(u);
            }
        }
        let ty = e["type"].as_u64().and_then(|t| types.get(&t)).map(String::as_str);
        if ty == Some("URL_REQUEST_START_JOB") {
            let p = &e["params"];
            let url = p["url"].as_str().unwrap_or_default().to_string();
            let initiator = p["initiator"].as_str().unwrap_or_default();
            let nik = p["network_isolation_key"].as_str().unwrap_or_default();
            let internal = initiator == "not an origin" && !nik.contains("file://");
            let s = starts.entry(url).or_default();
            s.0 += 1;
            s.1 += u32::from(internal);
        }
    }
    seen.into_iter()
        .map(|url| {
            let from_page = match starts.get(&url) {
                Some(&(n, internal)) => internal < n,
                None => true,
            };
            Request { url, from_page }
        })
        .collect()
}

/// Fail if the page fetched anything from the network; report the browser's own traffic.
fn assert_offline(netlog: &Path, what: &str) {
    let reqs = network_requests(netlog);
    let page: Vec<&Request> = reqs.iter().filter(|r| r.from_page).collect();
    assert!(page.is_empty(), "{what}: the page made network requests: {page:#?}");
    for r in reqs.iter().filter(|r| !r.from_page) {
        eprintln!("{what}: (browser housekeeping, not the page) {}", r.url);
    }
}

// ---------------------------------------------------------------------------------------
// screenshot

/// Decode a PNG and check it shows something: many distinct colours, real contrast.
fn assert_not_blank(png: &Path) {
    let file = fs::File::open(png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    assert!(info.width >= 1000 && info.height >= 1000, "screenshot is {}×{}", info.width, info.height);
    let channels = info.color_type.samples();
    assert!(channels >= 3, "screenshot colour type {:?}", info.color_type);
    let bytes = &buf[..info.buffer_size()];
    let mut colours = BTreeSet::new();
    let (mut sum, mut sum2, mut n) = (0f64, 0f64, 0f64);
    for px in bytes.chunks_exact(channels).step_by(7) {
        colours.insert((px[0] >> 3, px[1] >> 3, px[2] >> 3));
        let l = 0.2126 * f64::from(px[0]) + 0.7152 * f64::from(px[1]) + 0.0722 * f64::from(px[2]);
        sum += l;
        sum2 += l * l;
        n += 1.0;
    }
    let var = sum2 / n - (sum / n).powi(2);
    assert!(colours.len() >= 24, "{}: only {} distinct colours", png.display(), colours.len());
    assert!(var > 50.0, "{}: luminance variance {var:.1}: blank?", png.display());
}

// ---------------------------------------------------------------------------------------
// DOM

/// The `<figure>` elements of a DOM with their `data-chart` kind.
fn dom_figures(dom: &str) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(i) = rest.find("<figure") {
        let tail = &rest[i..];
        let end = tail.find("</figure>").map(|e| e + 9).unwrap_or(tail.len());
        let fig = &tail[..end];
        let kind = fig.split("data-chart=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("").to_string();
        out.push((kind, fig));
        rest = &tail[end..];
    }
    out
}

fn assert_dom(dom: &str, name: &str, kinds: &[&str]) {
    assert!(dom.contains("</html>"), "{name}: no DOM dumped");
    let figs = dom_figures(dom);
    for kind in kinds {
        let of_kind: Vec<&str> = figs.iter().filter(|(k, _)| k == kind).map(|(_, f)| *f).collect();
        assert!(!of_kind.is_empty(), "{name}: no data-chart=\"{kind}\" figure in the rendered DOM");
        for fig in of_kind {
            if TABLE_KINDS.contains(kind) {
                assert!(fig.contains("<table"), "{name}: {kind} figure without a table");
            } else {
                assert!(fig.contains("<svg"), "{name}: {kind} figure without an svg");
                assert!(fig.contains("<text"), "{name}: {kind} svg without text");
            }
        }
    }
    assert!(!dom.to_ascii_lowercase().contains("<script"), "{name}: a script in the DOM");
}

// ---------------------------------------------------------------------------------------
// tests

#[test]
fn data_files_are_result_documents() {
    for (name, kinds) in DOCS {
        let doc = data(name);
        assert_eq!(doc.schema, stats::SCHEMA);
        assert_eq!(doc.command, name);
        let html = diskmeter_report::render_html(&doc);
        for kind in kinds {
            assert!(html.contains(&format!("data-chart=\"{kind}\"")), "{name}: {kind}");
        }
    }
}

#[test]
fn reports_render_offline_in_chromium() {
    let Some(bin) = browser() else { return };
    let dir = workdir("reports");
    let shots = Path::new("/tmp/html-shots");
    fs::create_dir_all(shots).unwrap();
    for (name, kinds) in DOCS {
        let html = dir.join(format!("{name}.html"));
        fs::write(&html, diskmeter_report::render_html(&data(name))).unwrap();

        let png = dir.join(format!("{name}.png"));
        let netlog = dir.join(format!("{name}-screenshot.netlog.json"));
        screenshot(&bin, &dir, &format!("{name}-screenshot"), &html, &png, &netlog);
        assert_not_blank(&png);
        assert_offline(&netlog, name);
        fs::copy(&png, shots.join(format!("{name}.png"))).unwrap();

        let netlog = dir.join(format!("{name}-dom.netlog.json"));
        let dom = dump_dom(&bin, &dir, &format!("{name}-dom"), &html, &netlog);
        fs::write(dir.join(format!("{name}.dom.html")), &dom).unwrap();
        assert_dom(&dom, name, kinds);
        assert_offline(&netlog, name);
        if name == "run" {
            // The job name `oltp <b>& mix` arrives as text, not markup.
            assert!(dom.contains("oltp &lt;b&gt;&amp; mix"), "run: escaped job name missing from the DOM");
        }
        if name == "cache" {
            // The policy table lists every policy; the figures carry their ids.
            let table = dom.split("id=\"cache-policies\"").nth(1).expect("cache: no policy table in the DOM");
            let table = table.split("</table>").next().unwrap_or_default();
            for policy in ["qsan", "lru", "nhit", "s3fifo", "opt"] {
                assert!(table.contains(policy), "cache: policy {policy} missing from the table");
            }
            for id in ["chart-cache-warmup", "chart-cache-mrc"] {
                assert!(dom.contains(&format!("id=\"{id}\"")), "cache: no #{id}");
            }
        }
    }
}

/// The offline check must be able to fail: a page that loads an image over HTTP is caught.
#[test]
fn net_log_check_catches_a_network_request() {
    let Some(bin) = browser() else { return };
    let dir = workdir("bad-page");
    let html = dir.join("bad.html");
    fs::write(
        &html,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>bad</title></head>\
         <body><p>loads an image over the network</p><img src=\"http://127.0.0.1:9/x.png\"></body></html>\n",
    )
    .unwrap();
    let netlog = dir.join("bad.netlog.json");
    screenshot(&bin, &dir, "bad", &html, &dir.join("bad.png"), &netlog);
    let reqs = network_requests(&netlog);
    assert!(
        reqs.iter().any(|r| r.from_page && r.url == "http://127.0.0.1:9/x.png"),
        "the request to http://127.0.0.1:9/x.png was not detected: {reqs:#?}"
    );
}

/// Belt and braces: even markup smuggled into a report cannot fetch anything, because
/// the page's Content-Security-Policy blocks it before a request is made.
#[test]
fn content_security_policy_blocks_injected_requests() {
    let Some(bin) = browser() else { return };
    let dir = workdir("csp");
    let page = diskmeter_report::render_html(&data("run")).replacen(
        "<body>",
        "<body><img src=\"http://127.0.0.1:9/csp.png\" alt=\"\">",
        1,
    );
    let html = dir.join("csp.html");
    fs::write(&html, page).unwrap();
    let netlog = dir.join("csp.netlog.json");
    let dom = dump_dom(&bin, &dir, "csp", &html, &netlog);
    assert!(dom.contains("127.0.0.1:9/csp.png"), "the injected image is in the page");
    assert_offline(&netlog, "csp");
}
