//! The HTML report in a real browser: each test document (`tests/data/*.json`, and the
//! `steady` and `mark --sustained` documents built in [`built`]) is rendered with `render_html`, opened in headless Chromium from a `file://` URL, screenshotted and
//! dumped as a DOM, while Chromium's net log records every request. The page must draw
//! (a non-blank screenshot), contain every expected chart, and fetch nothing from the
//! network. `doctor`'s page gets one lean case of its own (its causes table must show).
//!
//! Without Chromium the browser tests print "skipped: chromium not installed" and pass,
//! unless `DISKMETER_REQUIRE_BROWSER=1` is set (then they fail). `DISKMETER_CHROMIUM`
//! names another browser binary. Reports, screenshots, DOM dumps and net logs of the last
//! run stay under `$CARGO_TARGET_TMPDIR/browser/`; one screenshot per document is copied
//! to `/tmp/html-shots/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use stats::ResultDoc;

/// Each document and the `data-chart` kinds its report must contain. A name is its
/// command, with what the document adds after a `-`.
const DOCS: [(&str, &[&str]); 8] = [
    ("mark", &["mark-card", "latency-cdf"]),
    ("run", &["results-table", "latency-cdf", "timeline"]),
    ("sla", &["sla-curve", "results-table", "latency-cdf", "timeline"]),
    ("compare", &["compare-bars"]),
    ("cache", &["cache-warmup", "cache-mrc"]),
    ("surface", &["surface-rate", "surface-map", "surface-access"]),
    ("steady", &["steady-iops", "steady-p99", "steady-precondition"]),
    ("mark-sustained", &["mark-card", "latency-cdf", "sustained-write"]),
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

/// The test document `name`: a data file, or one built in [`built`].
fn data(name: &str) -> ResultDoc {
    match name {
        "steady" => return built::steady(),
        "mark-sustained" => {
            let mut doc = data("mark");
            doc.sustained = Some(built::sustained());
            return doc;
        }
        _ => {}
    }
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
        assert_eq!(doc.command, name.split('-').next().unwrap_or(name));
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
        if name == "steady" {
            // The window is shaded in the tracking chart; the tables are there.
            let fig = dom.split("id=\"chart-steady-iops\"").nth(1).expect("steady: no IOPS chart");
            let fig = fig.split("</figure>").next().unwrap_or_default();
            assert!(fig.contains("class=\"window\"") && fig.contains("class=\"band\""), "steady: no window band");
            for id in ["steady-checks", "steady-table", "steady-rounds"] {
                assert!(dom.contains(&format!("id=\"{id}\"")), "steady: no #{id}");
            }
        }
        if name == "mark-sustained" {
            // After the card: the sustained write with its cliff marked.
            let fig = dom.split("id=\"chart-sustained\"").nth(1).expect("mark-sustained: no sustained chart");
            let fig = fig.split("</figure>").next().unwrap_or_default();
            assert!(fig.contains("class=\"cliff\"") && fig.contains("cliff at "), "mark-sustained: no cliff marker");
            assert!(dom.contains("id=\"sustained-recovery\""), "mark-sustained: no recovery table");
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

/// `doctor`'s page in one Chromium run: its causes table is laid out and painted (a colour
/// given to the table shows in the screenshot), lists the causes, and nothing is fetched.
#[test]
fn doctor_page_shows_its_causes_in_chromium() {
    let Some(bin) = browser() else { return };
    let dir = workdir("doctor");
    let page = diskmeter_report::html::doctor::render_html(&common::doctor_fixtures::sata_doc()).replacen(
        "<table id=\"doctor-causes\">",
        "<table id=\"doctor-causes\" style=\"background:#00ff00\">",
        1,
    );
    assert!(page.contains("#00ff00"), "doctor: no causes table in the page");
    let html = dir.join("doctor.html");
    fs::write(&html, page).unwrap();
    let (png, netlog) = (dir.join("doctor.png"), dir.join("doctor.netlog.json"));
    let dom = run_chromium(
        &bin,
        &dir,
        "doctor",
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,1200".to_string(),
            "--dump-dom".to_string(),
            format!("--log-net-log={}", netlog.display()),
            "--net-log-capture-mode=Everything".to_string(),
            file_url(&html),
        ],
    );
    fs::write(dir.join("doctor.dom.html"), &dom).unwrap();
    assert_offline(&netlog, "doctor");
    assert!(!dom.to_ascii_lowercase().contains("<script"), "doctor: a script in the DOM");
    let table = dom.split("id=\"doctor-causes\"").nth(1).expect("doctor: no causes table in the DOM");
    let table = table.split("</table>").next().unwrap_or_default();
    for code in ["sata-link-slow", "misaligned-partition"] {
        assert!(table.contains(code), "doctor: {code} missing from the causes table");
    }
    let painted = pixels_of(&png, [0x00, 0xff, 0x00]);
    assert!(painted > 5_000, "doctor: the causes table is not visible ({painted} pixels of its colour)");
}

/// How many pixels of a PNG have exactly the colour `rgb`.
fn pixels_of(png: &Path, rgb: [u8; 3]) -> usize {
    let file = fs::File::open(png).unwrap_or_else(|e| panic!("no screenshot {}: {e}", png.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("PNG header");
    let mut buf = vec![0; reader.output_buffer_size().expect("PNG size")];
    let info = reader.next_frame(&mut buf).expect("PNG data");
    let channels = info.color_type.samples();
    assert!(channels >= 3, "screenshot colour type {:?}", info.color_type);
    buf[..info.buffer_size()].chunks_exact(channels).filter(|px| px[..3] == rgb).count()
}

// ---------------------------------------------------------------------------------------
// documents built here

/// The `steady` document and the `--sustained` section of the browser test: a drive that
/// settles after its fresh-out-of-box burst, and one whose write cache runs out.
mod built {
    use stats::steady::{
        detect_cliff, first_steady_window, Cliff, Precondition, ProgressPoint, Purge, Recovery, Round, RoundPoint,
        SteadyPoint, SteadyResult, SteadyTable, SteadyWindow, SustainedResult, TableRow, TrackedCheck, Tracking,
        WindowCheck, WINDOW_ROUNDS,
    };
    use stats::{HostInfo, ResultDoc, TargetInfo, TargetKind};

    const GIB: u64 = 1 << 30;

    /// One point per second of a write of `total` bytes at `fast` MB/s for `fast_s`
    /// seconds, then at `slow` MB/s.
    fn progress(total: u64, fast: f64, fast_s: f64, slow: f64) -> Vec<ProgressPoint> {
        let mut out = Vec::new();
        let mut bytes = 0f64;
        let mut t = 0u32;
        while bytes < total as f64 && t < 100_000 {
            let (a, b) = (f64::from(t), f64::from(t + 1));
            let fast_part = (fast_s.min(b) - a).clamp(0.0, 1.0);
            let wobble = 1.0 + 0.03 * ((f64::from(t) * 1.7).sin());
            let rate = (fast * fast_part + slow * (1.0 - fast_part)) * wobble;
            // The last point covers the part of a second that finishes the write.
            let dt = ((total as f64 - bytes) / (rate * 1e6)).min(1.0);
            bytes = if dt < 1.0 { total as f64 } else { bytes + rate * 1e6 };
            out.push(ProgressPoint { t_s: f64::from(t) + dt, bytes: bytes as u64, mb_s: rate });
            t += 1;
        }
        out
    }

    pub fn steady() -> ResultDoc {
        let mut doc = ResultDoc::new("steady", "2026-12-01T09:00:00Z", HostInfo::default());
        let range = 128 * GIB;
        let mut t = TargetInfo::new("/dev/nvme0n1", TargetKind::Block, range);
        t.device = Some("nvme0n1".into());
        t.model = Some("Samsung SSD 990 PRO 2TB".into());
        t.rotational = Some(false);
        doc.target = Some(t);
        let points: Vec<(&str, u64, u8, f64)> = vec![
            ("4K 100/0", 4096, 100, 310_000.0),
            ("4K 65/35", 4096, 65, 96_000.0),
            ("4K 0/100", 4096, 0, 0.0),
            ("64K 100/0", 65_536, 100, 41_000.0),
            ("64K 65/35", 65_536, 65, 12_500.0),
            ("64K 0/100", 65_536, 0, 6_100.0),
        ];
        let write = [
            182_000.0, 121_000.0, 76_000.0, 58_500.0, 52_300.0, 50_900.0, 49_800.0, 51_200.0, 50_400.0, 49_900.0,
            50_700.0,
        ];
        let p99: Vec<f64> = write.iter().map(|w| 128.0 / w * 1e9 * 2.3).collect();
        let tracking = vec![
            Tracking {
                name: "4K 0/100 IOPS".into(),
                point: "4K 0/100".into(),
                metric: "iops".into(),
                values: write.to_vec(),
            },
            Tracking { name: "4K 0/100 p99".into(), point: "4K 0/100".into(), metric: "p99".into(), values: p99 },
        ];
        let vars: Vec<Vec<f64>> = tracking.iter().map(|t| t.values.clone()).collect();
        let first = first_steady_window(&vars, WINDOW_ROUNDS).expect("a steady window");
        let (a, b) = (first + 1, first + WINDOW_ROUNDS);
        let rounds: Vec<Round> = (0..write.len())
            .map(|i| Round {
                round: i as u32 + 1,
                t_s: i as f64 * 60.0 * points.len() as f64,
                points: points
                    .iter()
                    .map(|&(name, bs, read, iops)| {
                        let iops = if name == "4K 0/100" { write[i] } else { iops * (1.0 - 0.01 * (i % 2) as f64) };
                        let r = iops * f64::from(read) / 100.0;
                        RoundPoint {
                            name: name.into(),
                            iops,
                            mb_s: iops * bs as f64 / 1e6,
                            read_iops: r,
                            write_iops: iops - r,
                            lat_mean_ns: 128.0 / iops * 1e9,
                            lat_p99_ns: 128.0 / iops * 1e9 * 2.3,
                        }
                    })
                    .collect(),
            })
            .collect();
        let mean = |name: &str| {
            let v: Vec<f64> = rounds[a - 1..b]
                .iter()
                .filter_map(|r| r.points.iter().find(|p| p.name == name).map(|p| p.iops))
                .collect();
            Some(v.iter().sum::<f64>() / v.len() as f64)
        };
        let series = progress(2 * range, 6_800.0, 1e9, 6_800.0);
        let last = series.last().copied().unwrap_or_default();
        doc.steady = Some(SteadyResult {
            profile: "enterprise".into(),
            matrix: "quick".into(),
            qd: 32,
            threads: 4,
            active_range_pct: 100,
            range_bytes: range,
            active_bytes: range,
            round_time_s: 60.0,
            max_rounds: 25,
            purge: Purge {
                method: "secure-discard".into(),
                done: true,
                bytes: range,
                message: "the whole 128 GiB range was discarded (BLKSECDISCARD)".into(),
            },
            precondition: Precondition {
                passes_planned: 2,
                passes_done: 2,
                bs: 131_072,
                qd: 32,
                bytes: last.bytes,
                seconds: last.t_s,
                mb_s: last.bytes as f64 / 1e6 / last.t_s,
                series,
                complete: true,
            },
            points: points.iter().map(|&(n, bs, read_pct, _)| SteadyPoint { name: n.into(), bs, read_pct }).collect(),
            skipped: Vec::new(),
            window: Some(SteadyWindow {
                first_round: a as u32,
                last_round: b as u32,
                steady: true,
                checks: tracking
                    .iter()
                    .map(|t| TrackedCheck { name: t.name.clone(), check: WindowCheck::of(&t.values[a - 1..b]) })
                    .collect(),
            }),
            table: SteadyTable {
                mixes: vec!["100/0".into(), "65/35".into(), "0/100".into()],
                rows: vec![
                    TableRow { bs: 4096, iops: vec![mean("4K 100/0"), mean("4K 65/35"), mean("4K 0/100")] },
                    TableRow { bs: 65_536, iops: vec![mean("64K 100/0"), mean("64K 65/35"), mean("64K 0/100")] },
                ],
            },
            rounds,
            tracking,
            steady: true,
            latency: true,
            seconds: 4_130.0,
            verdict: format!("Steady state in rounds {a}–{b}: 4K random writes settle near 50,500 IOPS."),
        });
        doc
    }

    pub fn sustained() -> SustainedResult {
        let range = 48 * GIB;
        let series = progress(range, 2_400.0, 14.3, 520.0);
        let (start, cliff) = detect_cliff(&series, 0.7);
        let cache = cliff.map_or(0, |c: Cliff| c.offset_bytes);
        let retest = |idle: f64, share: f64| {
            let fast_s = cache as f64 * share / 2_400e6;
            let series = progress(cache + cache / 4, 2_400.0, fast_s, 520.0);
            let last = series.last().copied().unwrap_or_default();
            Recovery {
                idle_s: idle,
                bytes: last.bytes,
                seconds: last.t_s,
                mb_s: last.bytes as f64 / 1e6 / last.t_s,
                fast_bytes: (cache as f64 * share) as u64,
                recovered_pct: share * 100.0,
                series,
            }
        };
        let last = series.last().copied().unwrap_or_default();
        SustainedResult {
            bs: 1 << 20,
            qd: 32,
            range_bytes: range,
            bytes_written: last.bytes,
            seconds: last.t_s,
            fraction: 0.7,
            series,
            start_mb_s: start,
            cliff,
            recovery: vec![retest(30.0, 0.21), retest(120.0, 0.64), retest(600.0, 0.97)],
            recovered_after_s: Some(600.0),
            verdict: "Writes fall from 2400 MB/s to 520 MB/s after about 32 GiB: that is the write cache; it is \
                      back after 600 s idle."
                .into(),
        }
    }
}
