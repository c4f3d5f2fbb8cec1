//! The figures of the closing note, measured once by hand, not timed in CI:
//! `cargo test --release -p diskmeter-history --test figures -- --ignored --nocapture`
//! (set `DISKMETER_FIGURES_DIR` to put the databases on a given file system).

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Instant;

use history::{Filter, Store};
use serde_json::{json, Value};

fn mark_doc() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mark-quick.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn dir() -> tempfile::TempDir {
    match std::env::var_os("DISKMETER_FIGURES_DIR") {
        Some(d) => tempfile::tempdir_in(d).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

/// Like a new run: a new time and figures that differ (so bodies do not compress into each
/// other's patterns any better than real ones would).
fn variant(base: &Value, i: u64) -> Value {
    let mut doc = base.clone();
    let s = i % 86_400;
    doc["started_at"] = json!(format!(
        "2026-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        1 + i / 86_400 % 12,
        1 + i / 7 % 28,
        s / 3600,
        s / 60 % 60,
        s % 60
    ));
    if let Some(results) = doc["results"].as_array_mut() {
        for r in results {
            for dir in ["read", "write"] {
                if let Some(iops) = r[dir]["iops"].as_f64() {
                    r[dir]["iops"] = json!(iops * (1.0 + (i % 17) as f64 / 1000.0));
                }
            }
        }
    }
    doc
}

fn file_bytes(db: &Path) -> u64 {
    ["", "-wal", "-shm"]
        .iter()
        .filter_map(|s| std::fs::metadata(format!("{}{s}", db.display())).ok())
        .map(|m| m.len())
        .sum()
}

#[test]
#[ignore = "figures for the closing note; run by hand"]
fn figures() {
    let base = mark_doc();
    let raw = serde_json::to_vec(&base).unwrap().len();

    // 200 marks: size per stored mark and insert time.
    let d = dir();
    let db = d.path().join("h.db");
    let mut store = Store::open(&db).unwrap();
    let mut times = Vec::new();
    for i in 0..200 {
        let doc = variant(&base, i);
        let t = Instant::now();
        store.insert(&doc).unwrap();
        times.push(t.elapsed());
    }
    times.sort();
    let storage = store.storage().unwrap();
    drop(store); // checkpoints the WAL into the file
    let size = file_bytes(&db);
    println!(
        "mark document: {raw} B JSON; stored body {:.0} B ({:.1} %)",
        storage.stored_bytes as f64 / 200.0,
        100.0 * storage.stored_bytes as f64 / storage.raw_bytes as f64
    );
    println!("200 marks: database {size} B = {:.1} KiB per mark", size as f64 / 200.0 / 1024.0);
    println!(
        "insert: median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        times[100].as_secs_f64() * 1e3,
        times[180].as_secs_f64() * 1e3,
        times[199].as_secs_f64() * 1e3
    );

    // 10 000 runs: list with no filter.
    let d = dir();
    let db = d.path().join("h.db");
    let mut store = Store::open(&db).unwrap();
    let t = Instant::now();
    for i in 0..10_000 {
        store.insert(&variant(&base, i * 37)).unwrap();
    }
    println!("10 000 inserts: {:.1} s", t.elapsed().as_secs_f64());
    drop(store);
    println!("10 000 marks: database {:.1} MiB", file_bytes(&db) as f64 / 1048576.0);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let avg: (f64, f64, f64, f64) = conn
        .query_row(
            "SELECT avg(length(key_json)), avg(length(summary_json)), avg(length(state_json)),
                    (SELECT avg(length(body)) FROM docs) FROM runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    println!(
        "per run: key_json {:.0} B, summary_json {:.0} B, state_json {:.0} B, body {:.0} B",
        avg.0, avg.1, avg.2, avg.3
    );
    drop(conn);
    let store = Store::open(&db).unwrap();
    let mut list_times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let rows = store.list(&Filter::default()).unwrap();
        let listed = t.elapsed();
        let json = serde_json::to_vec(&rows).unwrap();
        list_times.push((listed, t.elapsed(), rows.len(), json.len()));
    }
    for (listed, total, n, bytes) in &list_times {
        println!(
            "list (no filter) of {n} runs: {:.1} ms; with its JSON ({bytes} B): {:.1} ms",
            listed.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3
        );
    }
    let t = Instant::now();
    let rows = store.list(&Filter { limit: Some(100), ..Filter::default() }).unwrap();
    println!("list --limit 100: {:.2} ms ({} rows)", t.elapsed().as_secs_f64() * 1e3, rows.len());
    let t = Instant::now();
    let rows = store.list(&Filter { search: Some("RND4K".into()), ..Filter::default() }).unwrap();
    println!("list search RND4K: {:.1} ms ({} rows)", t.elapsed().as_secs_f64() * 1e3, rows.len());
}
