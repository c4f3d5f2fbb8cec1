//! `app::fio_import`: fio's JSON output as a diskmeter result document.
//!
//! The fixtures in `tests/data/fio/` are real fio 3.33 outputs made on a test machine, in a
//! folder on /dev/shm (tmpfs: no O_DIRECT, hence `direct=0`), untrimmed:
//! - `randread.json`: `fio --name=randread --rw=randread --bs=4k --iodepth=8 --ioengine=io_uring
//!   --direct=0 --size=16M --runtime=1 --time_based --filename=/dev/shm/x/f --output-format=json`;
//! - `mixed-group.json`: `fio --output-format=json mixed-group.fio` (global options, a randrw job
//!   with `numjobs=2`, `bs=4k,64k`, `group_reporting`, and a sequential job after a stonewall);
//! - `seqwrite-jsonplus.json`: a psync sequential write, `--output-format=json+` (with `bins`);
//! - `clones.json`: `numjobs=2` without `group_reporting` (one entry per clone);
//! - `randread-direct-vda.json`: `direct=1` on a file of the root file system (`disk_util` names
//!   the device `vda`);
//! - `client-server.json`: `fio --client=ip:127.0.0.1,18765 --output-format=json cs.fio` against a
//!   local `fio --server`: `client_stats` with `hostname`, no `timestamp_ms`, and fio's
//!   "note: … queue depth will be capped at 1" line before the JSON.
#![allow(clippy::unwrap_used)]

use diskmeter_app::fio_import::from_fio_json;
use proptest::prelude::*;
use serde_json::Value;
use spec::{EngineKind, RwMode, SizeChoice};
use stats::{DirStats, ResultDoc, TargetKind};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fio").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The fio JSON itself (past any leading note), for the expected figures.
fn raw(text: &str) -> Value {
    serde_json::from_str(&text[text.find("\n{").map_or(0, |i| i + 1)..]).unwrap()
}

fn convert(name: &str) -> (ResultDoc, Value) {
    let text = fixture(name);
    let doc = from_fio_json(&text, name).unwrap();
    (doc, raw(&text))
}

fn f(v: &Value, ptr: &str) -> f64 {
    v.pointer(ptr).and_then(Value::as_f64).unwrap_or_else(|| panic!("no {ptr}"))
}

fn u(v: &Value, ptr: &str) -> u64 {
    v.pointer(ptr).and_then(Value::as_u64).unwrap_or_else(|| panic!("no {ptr}"))
}

/// Every figure of one direction equals fio's own (`dir` is fio's `read` or `write` object).
fn assert_same_figures(d: &DirStats, fio: &Value, dir: &str) {
    let at = |k: &str| format!("/{dir}/{k}");
    assert_eq!(d.ops, u(fio, &at("total_ios")));
    assert_eq!(d.bytes, u(fio, &at("io_bytes")));
    assert_eq!(d.seconds, f(fio, &at("runtime")) / 1000.0);
    // fio prints its IOPS with 6 decimals.
    assert!((d.iops - f(fio, &at("iops"))).abs() < 1e-5, "iops {} vs fio {}", d.iops, f(fio, &at("iops")));
    // fio truncates bw_bytes to whole bytes per second.
    assert!((d.mb_s * 1e6 - f(fio, &at("bw_bytes"))).abs() < 1.0, "mb_s {} vs bw_bytes", d.mb_s);
    assert!((d.mib_s - d.mb_s * 1e6 / 1_048_576.0).abs() < 1e-9);
    assert_eq!(d.lat_ns.mean, f(fio, &at("lat_ns/mean")));
    assert_eq!(d.lat_ns.stddev, f(fio, &at("lat_ns/stddev")));
    assert_eq!(d.lat_ns.min, u(fio, &at("lat_ns/min")));
    assert_eq!(d.lat_ns.max, u(fio, &at("lat_ns/max")));
    assert_eq!(d.lat_ns.p50, u(fio, &at("clat_ns/percentile/50.000000")));
    assert_eq!(d.lat_ns.p90, u(fio, &at("clat_ns/percentile/90.000000")));
    assert_eq!(d.lat_ns.p99, u(fio, &at("clat_ns/percentile/99.000000")));
    assert_eq!(d.lat_ns.p99_9, u(fio, &at("clat_ns/percentile/99.900000")));
    assert_eq!(d.lat_ns.p99_99, u(fio, &at("clat_ns/percentile/99.990000")));
    // fio gives no mean depth.
    assert_eq!(d.qd_mean, 0.0);
    // The CDF is fio's percentile points between clat's min and max, in order.
    assert_eq!(d.lat_cdf.first().unwrap().ns, u(fio, &at("clat_ns/min")));
    assert_eq!(d.lat_cdf.last().unwrap().ns, u(fio, &at("clat_ns/max")));
    assert!(d.lat_cdf.windows(2).all(|w| w[0].fraction < w[1].fraction && w[0].ns <= w[1].ns));
}

fn started_at_of(fio: &Value) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(u(fio, "/timestamp"));
    humantime::format_rfc3339_seconds(t).to_string()
}

fn warning<'a>(doc: &'a ResultDoc, code: &str) -> Vec<&'a str> {
    doc.warnings.iter().filter(|w| w.code == code).map(|w| w.message.as_str()).collect()
}

#[test]
fn randread_figures_spec_and_time_are_fios() {
    let (doc, fio) = convert("randread.json");
    assert_eq!(doc.command, "fio");
    assert_eq!(doc.started_at, started_at_of(&fio));
    assert_eq!(doc.started_at, "2026-11-27T19:57:12Z");
    assert_eq!(doc.results.len(), 1);
    let r = &doc.results[0];
    assert_eq!(r.name, "randread");
    assert_same_figures(r.read.as_ref().unwrap(), &fio, "jobs/0/read");
    assert!(r.write.is_none(), "a direction with no I/O is None");
    let s = &r.spec;
    assert_eq!((s.rw, s.bs, s.qd, s.threads), (RwMode::RandRead, 4096, 8, 1));
    assert_eq!((s.engine, s.direct, s.size), (EngineKind::IoUring, false, Some(16 << 20)));
    assert_eq!(s.block_sizes, None);
    assert_eq!(s.runtime, std::time::Duration::from_secs(1));
    assert_eq!(s.target.as_deref(), Some(Path::new("/dev/shm/x/f")));
    // One worker: fio's CPU figures are the job's.
    assert_eq!((r.cpu.user_pct, r.cpu.sys_pct), (f(&fio, "/jobs/0/usr_cpu"), f(&fio, "/jobs/0/sys_cpu")));
    let t = doc.target.as_ref().unwrap();
    assert_eq!((t.path.as_str(), t.kind, t.device.as_deref()), ("/dev/shm/x/f", TargetKind::File, None));
    assert_eq!(
        warning(&doc, "imported-fio"),
        ["imported from fio's JSON output (randread.json): fio's own figures; no device view, no histogram, one pass"]
    );
    assert_eq!(warning(&doc, stats::codes::BUFFERED_IO).len(), 1);
    assert!(doc.host.hostname.is_none());
    assert!(!doc.partial && doc.error.is_none());
}

#[test]
fn global_options_merge_and_group_reporting() {
    let (doc, fio) = convert("mixed-group.json");
    assert_eq!(doc.results.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["mixed", "seq"]);
    let mixed = &doc.results[0];
    assert_same_figures(mixed.read.as_ref().unwrap(), &fio, "jobs/0/read");
    assert_same_figures(mixed.write.as_ref().unwrap(), &fio, "jobs/0/write");
    let s = &mixed.spec;
    // From the global options.
    assert_eq!((s.engine, s.direct, s.size), (EngineKind::IoUring, false, Some(16 << 20)));
    assert_eq!(s.target.as_deref(), Some(Path::new("/dev/shm/x/f")));
    // From the job's.
    assert_eq!((s.rw, s.mix, s.qd, s.threads), (RwMode::RandRw, 70, 4, 2));
    let sizes = s.block_sizes.as_ref().unwrap();
    assert_eq!(
        (&sizes.read.sizes, &sizes.write.sizes),
        (&SizeChoice::Fixed { bs: 4096 }, &SizeChoice::Fixed { bs: 65536 })
    );
    assert_eq!(s.bs, 65536);
    // Two workers: fio's per-worker CPU share is not the job's; left 0.
    assert_eq!(mixed.cpu.user_pct, 0.0);
    let seq = &doc.results[1];
    assert_same_figures(seq.read.as_ref().unwrap(), &fio, "jobs/1/read");
    assert!(seq.write.is_none());
    assert_eq!((seq.spec.rw, seq.spec.bs, seq.spec.qd, seq.spec.threads), (RwMode::Read, 128 << 10, 2, 1));
    assert_eq!(seq.spec.engine, EngineKind::IoUring);
}

#[test]
fn json_plus_output_converts_the_same_way() {
    let (doc, fio) = convert("seqwrite-jsonplus.json");
    assert!(fio.pointer("/jobs/0/write/clat_ns/bins").is_some(), "the fixture is json+");
    let r = &doc.results[0];
    assert_same_figures(r.write.as_ref().unwrap(), &fio, "jobs/0/write");
    assert!(r.read.is_none());
    assert_eq!((r.spec.rw, r.spec.bs, r.spec.qd, r.spec.engine), (RwMode::Write, 64 << 10, 1, EngineKind::Psync));
    assert_eq!(doc.started_at, started_at_of(&fio));
}

#[test]
fn clones_without_group_reporting_are_one_job_each() {
    let (doc, fio) = convert("clones.json");
    assert_eq!(doc.results.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["clones #1", "clones #2"]);
    for (i, r) in doc.results.iter().enumerate() {
        assert_eq!(r.spec.threads, 1, "each entry is one clone");
        assert_same_figures(r.write.as_ref().unwrap(), &fio, &format!("jobs/{i}/write"));
    }
    assert!(warning(&doc, "imported-fio").iter().any(|w| w.contains("clones of [clones]")));
}

#[test]
fn direct_io_and_the_device_from_disk_util() {
    let (doc, fio) = convert("randread-direct-vda.json");
    let r = &doc.results[0];
    assert!(r.spec.direct);
    assert_same_figures(r.read.as_ref().unwrap(), &fio, "jobs/0/read");
    assert_eq!(doc.target.as_ref().unwrap().device.as_deref(), Some("vda"));
    assert!(warning(&doc, stats::codes::BUFFERED_IO).is_empty());
}

#[test]
fn client_server_output_with_a_leading_note() {
    let text = fixture("client-server.json");
    assert!(text.starts_with("<vm> note:"), "the fixture starts with fio's note");
    let doc = from_fio_json(&text, "client-server.json").unwrap();
    let fio = raw(&text);
    assert_eq!(doc.host.hostname.as_deref(), Some("127.0.0.1"));
    assert_eq!(doc.started_at, started_at_of(&fio));
    let r = &doc.results[0];
    assert_eq!(r.name, "cs");
    assert_same_figures(r.read.as_ref().unwrap(), &fio, "client_stats/0/read");
    // psync with iodepth=2: fio capped the depth at 1, as its note says.
    assert_eq!((r.spec.engine, r.spec.qd), (EngineKind::Psync, 1));
}

#[test]
fn text_before_and_after_the_json_is_skipped() {
    let plain = fixture("randread.json");
    let noted = format!(
        "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n\
         fio: {{weird}} line with a brace\n{plain}\nfio: some trailing message\n"
    );
    let a = from_fio_json(&plain, "a.json").unwrap();
    let b = from_fio_json(&noted, "a.json").unwrap();
    assert_eq!(a, b);
}

fn usage_line(text: &str) -> String {
    let e = from_fio_json(text, "old.json").unwrap_err();
    assert!(e.is_usage(), "{e:?}");
    let m = e.message().to_string();
    assert!(!m.contains('\n'), "one line: {m}");
    assert!(m.contains("old.json"), "names the file: {m}");
    assert!(m.contains("fio --output-format=json --output=FILE job.fio"), "says how to make one: {m}");
    m
}

#[test]
fn what_is_not_fio_output_is_a_one_line_usage_error() {
    let m = usage_line(r#"{"schema": "diskmeter.result.v1", "results": []}"#);
    assert!(m.contains("is not fio JSON output"), "{m}");
    usage_line(r#"{"fio version": "fio-3.33", "timestamp": 1}"#);
    usage_line(r#"{"jobs": []}"#);
    usage_line("");
    usage_line("fio: no job file given\n");
    usage_line("[1, 2, 3]");
    let m = usage_line(r#"{"fio version": "fio-3.33", "timestamp": 1795809432, "jobs": []}"#);
    assert!(m.contains("no job"), "{m}");
    let m = usage_line(r#"{"fio version": "fio-3.33", "jobs": [{"jobname": "j"}]}"#);
    assert!(m.contains("timestamp"), "{m}");
}

#[test]
fn a_truncated_file_is_a_one_line_usage_error() {
    let text = fixture("randread.json");
    for cut in [1, 10, text.len() / 3, text.len() / 2, text.len() - 3] {
        let m = usage_line(&text[..cut]);
        assert!(m.contains("is not fio JSON output"), "{m}");
    }
    assert!(usage_line(&text[..text.len() / 2]).contains("truncated"));
}

#[test]
fn a_file_name_with_control_characters_stays_on_one_line() {
    let e = from_fio_json("{}", "a\nb\x1b[31m.json").unwrap_err();
    assert!(!e.message().contains('\n') && !e.message().contains('\x1b'), "{}", e.message());
}

#[test]
fn reports_render_the_imported_runs() {
    for name in [
        "randread.json",
        "mixed-group.json",
        "seqwrite-jsonplus.json",
        "clones.json",
        "randread-direct-vda.json",
        "client-server.json",
    ] {
        let (doc, _) = convert(name);
        for format in [report::Format::Human, report::Format::Html, report::Format::Markdown, report::Format::Csv] {
            let out = report::render(&doc, format);
            for r in &doc.results {
                assert!(out.contains(&r.name), "{name} {format:?} lacks {}", r.name);
            }
        }
    }
}

#[test]
fn the_document_round_trips_and_keys_like_a_diskmeter_run() {
    let (doc, _) = convert("mixed-group.json");
    let back = ResultDoc::from_json(&doc.to_json_pretty().unwrap()).unwrap();
    assert_eq!(back, doc);
    let key = history::comparability_key(&serde_json::to_value(&doc).unwrap());
    assert!(key.key.starts_with("fio:"));
    let w = &key.jobs[0].workload;
    assert_eq!(
        (w.rw.as_deref(), w.mix, w.bs, w.qd, w.threads, w.size),
        (Some("randrw"), Some(70), Some(65536), Some(4), Some(2), Some(16 << 20))
    );
    assert_eq!(
        (w.direct, w.engine.as_deref(), w.target_kind.as_deref()),
        (Some(false), Some("io_uring"), Some("file"))
    );
}

#[test]
fn fio_2_output_is_read_in_its_units() {
    // fio 2.x: io_bytes in KiB, latencies in µs under slat/clat/lat (shape of fio 2.x's stat.c).
    let text = r#"{"fio version": "fio-2.2.10", "timestamp": 1500000000, "time": "x", "jobs": [{
        "jobname": "old", "groupid": 0, "error": 0,
        "job options": {"rw": "randread", "bs": "4k", "iodepth": "32", "ioengine": "libaio", "direct": "1",
                        "filename": "/dev/sdb"},
        "read": {"io_bytes": 400000, "bw": 40000, "iops": 10000.0, "runtime": 10000, "total_ios": 100000,
                 "clat": {"min": 50, "max": 9000, "mean": 3100.5, "stddev": 20.25,
                          "percentile": {"50.000000": 3000, "99.000000": 5008}},
                 "lat": {"min": 52, "max": 9001, "mean": 3102.5, "stddev": 20.5}},
        "write": {"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
                  "clat": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0},
                  "lat": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}},
        "usr_cpu": 5.0, "sys_cpu": 20.0}],
        "disk_util": [{"name": "sdb", "util": 99.0}]}"#;
    let doc = from_fio_json(text, "old.json").unwrap();
    let r = &doc.results[0];
    let d = r.read.as_ref().unwrap();
    assert_eq!((d.ops, d.bytes, d.seconds, d.iops), (100_000, 400_000 * 1024, 10.0, 10_000.0));
    assert_eq!((d.lat_ns.min, d.lat_ns.mean, d.lat_ns.max), (52_000, 3_102_500.0, 9_001_000));
    assert_eq!((d.lat_ns.p50, d.lat_ns.p99, d.lat_ns.p90), (3_000_000, 5_008_000, 0));
    assert!(r.write.is_none());
    // libaio is recorded as io_uring, and says so.
    assert_eq!((r.spec.engine, r.spec.qd, r.spec.direct), (EngineKind::IoUring, 32, true));
    assert_eq!(warning(&doc, stats::codes::ENGINE_SUBSTITUTED).len(), 1);
    let t = doc.target.as_ref().unwrap();
    assert_eq!((t.kind, t.device.as_deref()), (TargetKind::Block, Some("sdb")));
    assert_eq!(doc.started_at, "2017-07-14T02:40:00Z");
}

#[test]
fn options_fio_writes_in_other_forms() {
    let doc = |opts: &str| {
        let text = format!(
            r#"{{"fio version": "fio-3.33", "timestamp": 1795809432, "jobs": [{{"jobname": "j",
            "job options": {{{opts}}}, "read": {{"io_bytes": 4096, "runtime": 1, "total_ios": 1}}}}]}}"#
        );
        from_fio_json(&text, "o.json").unwrap()
    };
    let d = doc(r#""readwrite": "randrw:8", "rwmixwrite": "30", "blocksize": "4096", "buffered": "0""#);
    let s = &d.results[0].spec;
    assert_eq!((s.rw, s.mix, s.bs, s.direct), (RwMode::RandRw, 70, 4096, true));
    // A write-only size keeps fio's 4k reads.
    let d = doc(r#""bs": ",64k""#);
    let sizes = d.results[0].spec.block_sizes.clone().unwrap();
    assert_eq!((sizes.read.sizes.max(), sizes.write.sizes.max()), (4096, 65536));
    let d = doc(r#""bssplit": "4k/50:64k/50", "filename": "C\\:\\data\\f:other""#);
    assert!(matches!(d.results[0].spec.block_sizes.as_ref().unwrap().read.sizes, SizeChoice::Split { .. }));
    assert_eq!(d.results[0].spec.target, Some(PathBuf::from(r"C:\data\f")));
    // A value the spec's parsers refuse keeps fio's default and is noted.
    let d = doc(r#""bs": "lots", "iodepth": "-3", "rw": "trim""#);
    let s = &d.results[0].spec;
    assert_eq!((s.bs, s.qd, s.rw), (4096, 1, RwMode::Read));
    assert_eq!(warning(&d, "imported-fio").len(), 4);
    // A directory is the target folder.
    let d = doc(r#""directory": "/mnt/test""#);
    assert_eq!(d.target.as_ref().unwrap().folder.as_deref(), Some("/mnt/test"));
}

#[test]
fn many_jobs_convert_quickly_with_bounded_warnings() {
    // fio runs thousands of jobs (numjobs=4096 without group_reporting gives one entry each).
    let job = |i: usize| {
        format!(
            r#"{{"jobname": "j{}", "groupid": {}, "job options": {{"bs": "bad{i}", "ioengine": "libaio"}},
            "read": {{"io_bytes": 4096, "runtime": 1, "total_ios": 1}}}}"#,
            i % 7,
            i % 3
        )
    };
    let jobs: Vec<String> = (0..20_000).map(job).collect();
    let text = format!(r#"{{"fio version": "fio-3.33", "timestamp": 1795809432, "jobs": [{}]}}"#, jobs.join(","));
    let t = std::time::Instant::now();
    let doc = from_fio_json(&text, "many.json").unwrap();
    assert!(t.elapsed() < std::time::Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(doc.results.len(), 20_000);
    assert!(doc.warnings.len() < 30, "{}", doc.warnings.len());
    assert_eq!(doc.results[0].name, "j0 #1");
}

/// Any JSON value: the replacements of the mutation test.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop_oneof![Just(1e308), Just(-1e308), Just(f64::MIN_POSITIVE), Just(-0.0)].prop_map(Value::from),
        "[ -~]{0,12}".prop_map(Value::from),
        prop_oneof![Just("4k,64k"), Just("99.000000"), Just("100%"), Just(""), Just("0"), Just(":"), Just("\\")]
            .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_ .0-9]{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every JSON pointer of `v`.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Ok or Err: only a panic fails, here or in the reports of what came out.
fn no_panic(text: &str) {
    if let Ok(doc) = from_fio_json(text, "p.json") {
        let _ = doc.to_json_pretty().unwrap();
        // What `history show` and `serve` do with an imported run.
        let _ = report::render(&doc, report::Format::Human);
        let _ = report::render(&doc, report::Format::Html);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
        no_panic(&s);
    }

    #[test]
    fn arbitrary_json_ish_text_never_panics(s in r#"[{}\[\]":,0-9a-z. \-\n]{0,200}"#) {
        no_panic(&s);
        no_panic(&format!("{{\"fio version\": 1, \"jobs\": [{s}"));
    }

    #[test]
    fn arbitrary_fio_shaped_json_never_panics(jobs in prop::collection::vec(any_json(), 0..4), root in any_json()) {
        let mut v = serde_json::json!({"fio version": "fio-3.33", "timestamp": 1795809432, "jobs": jobs});
        if let (Value::Object(m), Value::Object(extra)) = (&mut v, root) {
            m.extend(extra);
        }
        no_panic(&v.to_string());
    }

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0usize..4,
        picks in prop::collection::vec((any::<prop::sample::Index>(), any_json()), 1..6),
    ) {
        let name = ["randread.json", "mixed-group.json", "seqwrite-jsonplus.json", "clones.json"][which];
        let mut v = raw(&fixture(name));
        for (at, with) in picks {
            let mut all = Vec::new();
            pointers(&v, String::new(), &mut all);
            let p = &all[at.index(all.len())];
            if p.is_empty() {
                v = with;
            } else if let Some(slot) = v.pointer_mut(p) {
                *slot = with;
            }
        }
        no_panic(&v.to_string());
    }

    #[test]
    fn cut_and_spliced_fixtures_never_panic(cut in any::<prop::sample::Index>(), junk in "\\PC{0,8}") {
        let text = fixture("mixed-group.json");
        let mut at = cut.index(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        no_panic(&text[..at]);
        no_panic(&format!("{}{junk}{}", &text[..at], &text[at..]));
    }
}
