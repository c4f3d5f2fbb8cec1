//! A recording made on the build machine, replayed through the same code as a live run:
//! plain text and JSON Lines renderings (insta snapshots) and the TUI drawn on a TestBackend.
#![allow(clippy::unwrap_used)]

use diskmeter_monitor::devices::Filter;
use diskmeter_monitor::monitor::SortKey;
use diskmeter_monitor::render;
use diskmeter_monitor::run::{run_plain, Outcome, PlainConfig};
use diskmeter_monitor::sample::{ReplaySource, SampleSource};
use diskmeter_monitor::tui::{draw, App};
use diskmeter_monitor::{Columns, Monitor, Options, Report};
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn recording() -> ReplaySource {
    ReplaySource::open(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/recording.jsonl"))).unwrap()
}

/// Recorded as root with `kernel.task_delayacct=1` while `dd oflag=direct` wrote to vda.
fn taskstats_recording() -> ReplaySource {
    ReplaySource::open(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/recording-taskstats.jsonl"))).unwrap()
}

fn reports_of(mut src: ReplaySource, opts: Options) -> Vec<Report> {
    let mut m = Monitor::new(opts);
    let mut out = Vec::new();
    while let Some(s) = src.next_sample().unwrap() {
        out.extend(m.push(&s));
    }
    out
}

fn all_devices() -> Filter {
    Filter { all_devices: true, partitions: true, ..Filter::default() }
}

fn reports(opts: Options) -> Vec<Report> {
    let mut src = recording();
    let mut m = Monitor::new(opts);
    let mut out = Vec::new();
    while let Some(s) = src.next_sample().unwrap() {
        out.extend(m.push(&s));
    }
    out
}

#[test]
fn recording_header_and_count() {
    let src = recording();
    assert_eq!(src.header.schema, "diskmeter.top-record.v1");
    assert!(src.header.processes);
    assert!(!src.truncated_tail);
    assert_eq!(reports(Options::default()).len(), 3, "4 samples give 3 intervals");
}

#[test]
fn plain_text_snapshot() {
    let r = reports(Options { filter: all_devices(), processes: true, max_processes: 5, ..Options::default() });
    let text: String = r.iter().map(render::text).collect();
    insta::assert_snapshot!("plain_text", text);
}

#[test]
fn plain_text_perfmon_snapshot() {
    let r = reports(Options { filter: all_devices(), processes: true, max_processes: 5, ..Options::default() });
    let text: String = r.iter().map(|r| render::text_with(r, Columns::Perfmon)).collect();
    for name in render::PERFMON_COLUMNS {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    // The iostat block's other lines (title, verdicts, processes) are the same.
    let iostat: String = r.iter().map(render::text).collect();
    let not_figures = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("Device") && !l.starts_with("loop") && !l.starts_with("vda"))
            .map(String::from)
            .collect()
    };
    assert_eq!(not_figures(&text), not_figures(&iostat));
    insta::assert_snapshot!("plain_text_perfmon", text);
}

#[test]
fn perfmon_columns_stay_under_their_names() {
    let mut r = reports(Options::default()).remove(0);
    let p = &mut r.devices[0].perfmon;
    // Figures wider than their names (Disk Bytes/sec has 14 characters): they widen the column.
    (p.bytes_sec, p.reads_sec, p.sec_per_read, p.current_queue) =
        (70_000_000_000_000_000.0, 123_456_789.0, 12.5, 4_000_000);
    let t = render::text_with(&r, Columns::Perfmon);
    let header = t.lines().find(|l| l.starts_with("Device")).unwrap();
    let row = t.lines().find(|l| l.starts_with(r.devices[0].display_name())).unwrap();
    // Columns are two spaces apart and a name has single spaces: split at runs of two or more.
    let ends = |l: &str| -> Vec<usize> {
        let b = l.as_bytes();
        (1..=b.len())
            .filter(|&i| b[i - 1] != b' ' && (i == b.len() || (b[i] == b' ' && b.get(i + 1) == Some(&b' '))))
            .collect()
    };
    let (h, v) = (ends(header), ends(row));
    assert_eq!(h[1..=11], v[1..=11], "columns out of line:\n{header}\n{row}");
    for want in ["70000000000000000", "123456789.00", "12.50000", "4000000"] {
        assert!(row.split_whitespace().any(|f| f == want), "{want} is not a field of {row:?}");
    }
    // Every name is whole and apart from its neighbours.
    let names: Vec<&str> = header.split("  ").map(str::trim).filter(|s| !s.is_empty()).collect();
    assert_eq!(names[0], "Device");
    assert_eq!(names[1..=11], render::PERFMON_COLUMNS);
    assert_eq!(names[12], "verdict");
}

#[test]
fn perfmon_figures_are_in_perfmon_units() {
    let r = reports(Options::default()).remove(0);
    let d = &r.devices[0];
    let t = render::text_with(&r, Columns::Perfmon);
    let row: Vec<&str> = t.lines().find(|l| l.starts_with(d.display_name())).unwrap().split_whitespace().collect();
    let p = &d.perfmon;
    assert_eq!(row[1], format!("{:.2}", d.iostat.r_s), "Disk Reads/sec is r/s");
    // Bytes, not kB: rkB/s × 1024 (the fixture only reads).
    assert_eq!(row[4], format!("{:.0}", d.iostat.rkb_s * 1024.0));
    // Seconds, not ms.
    assert_eq!(row[6], format!("{:.5}", d.iostat.r_await / 1000.0));
    assert_eq!(row[10], p.current_queue.to_string());
    assert_eq!(row[11], format!("{:.1}", 100.0 - d.iostat.util));
}

#[test]
fn json_lines_snapshot_and_keys() {
    let r = reports(Options::default());
    let lines: Vec<String> = r.iter().map(render::json_line).collect();
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["schema"], "diskmeter.top.v1");
        let d = &v["devices"][0];
        for k in [
            "r/s", "w/s", "d/s", "f/s", "rkB/s", "wkB/s", "dkB/s", "rrqm/s", "wrqm/s", "drqm/s", "rrqm", "wrqm",
            "drqm", "r_await", "w_await", "d_await", "f_await", "rareq-sz", "wareq-sz", "dareq-sz", "aqu-sz", "util",
        ] {
            assert!(d[k].is_number(), "key {k} missing in {d}");
        }
        for k in [
            "Disk Transfers/sec",
            "Disk Bytes/sec",
            "Avg. Disk Bytes/Transfer",
            "Avg. Disk sec/Transfer",
            "Avg. Disk Queue Length",
            "Current Disk Queue Length",
        ] {
            assert!(d["perfmon"][k].is_number(), "perfmon {k} missing");
        }
        assert!(d["inflight"].is_u64());
        assert!(d["verdict"]["state"].is_string() && d["verdict"]["reason"].is_string());
        assert!(v.get("processes").is_none(), "processes only when asked");
    }
    insta::assert_snapshot!("json_lines", lines.concat());
}

#[test]
fn replay_driver_counts_and_writes_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.jsonl");
    let cfg = PlainConfig {
        interval: Duration::from_secs(1),
        count: Some(2),
        json: true,
        quiet: false,
        output: Some(files::output::plan(&out, "--output", false).unwrap()),
        output_json: true,
        record: None,
        columns: Columns::Iostat,
    };
    let mut m = Monitor::new(Options::default());
    let mut src = recording();
    let mut stdout = Vec::new();
    let o = run_plain(&mut m, &mut src, &cfg, &mut stdout, &AtomicBool::new(false)).unwrap();
    assert_eq!(o, Outcome::Done);
    let text = String::from_utf8(stdout).unwrap();
    assert_eq!(text.lines().count(), 2);
    assert_eq!(std::fs::read_to_string(out).unwrap(), text);
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn app_with_data(show_procs: bool) -> App {
    let mut app = App::new(Filter::default(), SortKey::Name, show_procs);
    for r in reports(Options { filter: all_devices(), processes: true, max_processes: 5, ..Options::default() }) {
        app.on_report(r);
    }
    app
}

fn screen(app: &App) -> String {
    screen_of(app, 130)
}

fn screen_of(app: &App, width: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(width, 36)).unwrap();
    t.draw(|f| draw(f, app)).unwrap();
    t.backend().to_string()
}

#[test]
fn tui_snapshot_default_and_all_devices_with_processes() {
    let mut app = app_with_data(false);
    insta::assert_snapshot!("tui_default", screen(&app));
    assert!(!app.on_key(key(KeyCode::Char('a'))));
    assert!(!app.on_key(key(KeyCode::Char('p'))));
    insta::assert_snapshot!("tui_all_processes", screen(&app));
}

#[test]
fn tui_perfmon_headers() {
    let mut app = app_with_data(false);
    app.columns = Columns::Perfmon;
    // 130 columns: perfmon's words, shortened.
    let s = screen(&app);
    insta::assert_snapshot!("tui_perfmon", s);
    let head = s.lines().find(|l| l.contains("Device")).unwrap();
    for h in [
        "class",
        "Reads/sec",
        "Writes/sec",
        "Bytes/sec",
        "sec/Read",
        "sec/Write",
        "Avg. Queue",
        "Cur. Queue",
        "% Idle",
        "verdict",
    ] {
        assert!(head.contains(h), "{h} missing: {head}");
    }
    for h in ["r/s", "r_await", "aqu-sz", "%util", "inflight"] {
        assert!(!head.contains(h), "{h} in the perfmon table: {head}");
    }
    // Wide enough: the full names.
    let s = screen_of(&app, 180);
    let head = s.lines().find(|l| l.contains("Device")).unwrap();
    for h in [
        "Disk Reads/sec",
        "Disk Writes/sec",
        "Disk Bytes/sec",
        "Avg. Disk sec/Read",
        "Avg. Disk sec/Write",
        "Avg. Disk Queue Length",
        "Current Disk Queue Length",
        "% Idle Time",
    ] {
        assert!(head.contains(h), "{h} missing: {head}");
    }
    let vda = s.lines().find(|l| l.contains("│vda")).unwrap();
    assert!(vda.contains("0.00006") && vda.contains("16.0"), "{vda}");
    // The sort keys still order the table: all devices, by IOPS.
    app.on_key(key(KeyCode::Char('a')));
    app.on_key(key(KeyCode::Char('s')));
    assert_eq!(app.sort, SortKey::Iops);
    let s = screen(&app);
    let first = s.lines().skip_while(|l| !l.contains("Device")).nth(1).unwrap();
    assert!(first.starts_with("\"│vda"), "{first}");
}

#[test]
fn tui_keys() {
    let mut app = app_with_data(false);
    assert!(!app.on_key(key(KeyCode::Char('s'))));
    assert_eq!(app.sort, SortKey::Iops);
    assert!(!app.on_key(key(KeyCode::Char('S'))));
    assert_eq!(app.sort, SortKey::Name);
    // Filter: a, f, "lo", Enter → only loop devices.
    app.on_key(key(KeyCode::Char('a')));
    app.on_key(key(KeyCode::Char('f')));
    for c in "lo".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    // While typing, q is text, not quit.
    assert!(!app.on_key(key(KeyCode::Char('q'))));
    app.on_key(key(KeyCode::Backspace));
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.filter.prefix.as_deref(), Some("lo"));
    assert!(app.visible().iter().all(|d| d.name.starts_with("loop")));
    // Pause: new reports are ignored.
    app.on_key(key(KeyCode::Char(' ')));
    let before = app.last.as_ref().unwrap().t.clone();
    app.on_report(reports(Options::default()).remove(0));
    assert_eq!(app.last.as_ref().unwrap().t, before);
    assert!(app.on_key(key(KeyCode::Char('q'))));
    assert!(app.on_key(key(KeyCode::Esc)));
    assert!(app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)));
}

#[test]
fn wide_figures_never_run_into_their_neighbours() {
    let mut r = reports(Options::default()).remove(0);
    let m = &mut r.devices[0].iostat;
    (m.w_s, m.wkb_s, m.r_s, m.rkb_s) = (4160.0, 2_129_920.0, 123_456_789.0, 9_876_543_210.0);
    let t = render::text(&r);
    let row = t.lines().find(|l| l.starts_with(r.devices[0].display_name())).unwrap();
    for want in ["4160.00", "2129920.00", "123456789.00", "9876543210.00"] {
        assert!(row.split_whitespace().any(|f| f == want), "{want} is not a field of {row:?}");
    }
    // Every figure ends where its header ends (right-aligned under it), wide ones included.
    let header = t.lines().find(|l| l.starts_with("Device")).unwrap();
    let ends = |l: &str| -> Vec<usize> {
        let b = l.as_bytes();
        (1..=b.len()).filter(|&i| b[i - 1] != b' ' && (i == b.len() || b[i] == b' ')).collect()
    };
    let (h, v) = (ends(header), ends(row));
    assert_eq!(h[1..=22], v[1..=22], "columns out of line:\n{header}\n{row}");
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let mut r = reports(Options { processes: true, max_processes: 1, ..Options::default() }).remove(0);
    r.devices[0].name = "vd\x1b[2Ja".into();
    if let Some(p) = r.processes.as_mut().and_then(|p| p.first_mut()) {
        p.comm = "evil\x1b]0;title\x07".into();
    }
    let t = render::text(&r);
    assert!(!t.contains('\x1b') && !t.contains('\x07'), "{t:?}");
    let mut app = App::new(Filter::default(), SortKey::Name, true);
    app.on_report(r);
    let s = screen(&app);
    assert!(!s.contains('\x1b') && !s.contains('\x07'));
}

#[test]
fn taskstats_recording_plain_text_snapshot() {
    let opts = Options { processes: true, max_processes: 5, sort: SortKey::IoDelay, ..Options::default() };
    let r = reports_of(taskstats_recording(), opts);
    assert_eq!(r.len(), 3);
    for rep in &r {
        let p = rep.processes.as_ref().unwrap();
        assert_eq!(p[0].comm, "dd", "IO% sort puts the writer first");
        let io = p[0].io_delay_pct.unwrap();
        assert!(io > 50.0 && io < 100.0, "dd waited {io} % of the interval");
        assert!(p.iter().all(|x| x.io_delay_pct.is_some() && x.swapin_delay_pct.is_some()));
        let note = rep.processes_note.as_deref().unwrap();
        assert!(note.contains("IO% from taskstats delay accounting; io_uring I/O is not counted in IO%"), "{note}");
    }
    let text: String = r.iter().map(render::text).collect();
    insta::assert_snapshot!("taskstats_plain_text", text);
}

#[test]
fn taskstats_json_fields() {
    let opts = Options { processes: true, max_processes: 3, ..Options::default() };
    for rep in reports_of(taskstats_recording(), opts) {
        let v: serde_json::Value = serde_json::from_str(&render::json_line(&rep)).unwrap();
        for p in v["processes"].as_array().unwrap() {
            assert!(p["io_delay_pct"].is_number() && p["swapin_delay_pct"].is_number(), "{p}");
        }
    }
    // An old recording: the keys are there, null, and the note says why.
    let opts = Options { processes: true, max_processes: 3, ..Options::default() };
    for rep in reports(opts) {
        let v: serde_json::Value = serde_json::from_str(&render::json_line(&rep)).unwrap();
        for p in v["processes"].as_array().unwrap() {
            assert!(p["io_delay_pct"].is_null() && p["swapin_delay_pct"].is_null(), "{p}");
        }
        assert!(v["processes_note"].as_str().unwrap().contains("IO% not recorded"));
    }
}

#[test]
fn delay_accounting_off_shows_a_dash_not_zero() {
    // The same recording as if kernel.task_delayacct had been 0: no IO% at all.
    let mut src = taskstats_recording();
    let mut m = Monitor::new(Options { processes: true, max_processes: 3, ..Options::default() });
    let mut last = None;
    while let Some(mut s) = src.next_sample().unwrap() {
        if let Some(p) = s.procs.as_mut() {
            p.delayacct = Some(false);
        }
        last = m.push(&s).or(last);
    }
    let r = last.unwrap();
    assert!(r.processes.as_ref().unwrap().iter().all(|p| p.io_delay_pct.is_none() && p.swapin_delay_pct.is_none()));
    let t = render::text(&r);
    assert!(t.contains("IO% unavailable: delay accounting is off (sysctl kernel.task_delayacct=1)"), "{t}");
    assert!(t.lines().filter(|l| l.contains(" dd ")).all(|l| l.trim_end().ends_with('—')), "{t}");
}

#[test]
fn tui_shows_io_percent_and_sorts_by_it() {
    let mut app = App::new(Filter::default(), SortKey::IoDelay, true);
    for r in reports_of(
        taskstats_recording(),
        Options { processes: true, max_processes: 5, sort: SortKey::IoDelay, ..Options::default() },
    ) {
        app.on_report(r);
    }
    let s = screen(&app);
    assert!(s.contains("IO%") && s.contains("SWAPIN%") && s.contains("sort: iodelay"), "{s}");
    let dd = s.lines().find(|l| l.contains(" dd ")).unwrap();
    assert!(dd.contains("77.0"), "{dd}");
}
