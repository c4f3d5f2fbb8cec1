//! A writer killed with SIGKILL mid-insert leaves the database intact: no half row, and
//! `PRAGMA integrity_check` is ok.
//!
//! The writer is this test binary run again (`current_exe`) with [`CHILD_ENV`] set, so that
//! it runs only [`crash_child_inserts_until_killed`]; without the variable that test does
//! nothing.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use serde_json::{json, Value};

const CHILD_ENV: &str = "DISKMETER_HISTORY_CRASH_CHILD";

fn mark_doc() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mark-quick.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn crash_child_inserts_until_killed() {
    let Some(db) = std::env::var_os(CHILD_ENV) else { return };
    let mut store = history::Store::open(&db).unwrap();
    let mut doc = mark_doc();
    for i in 0u64.. {
        doc["started_at"] = json!(format!("2026-03-02T10:00:00.{:09}Z", i % 1_000_000_000));
        // A document that varies, so every insert compresses a different body.
        doc["results"][0]["read"]["ops"] = json!(i);
        store.insert(&doc).unwrap();
        if i == 0 {
            println!("inserting");
        }
    }
}

#[cfg(unix)]
#[test]
fn sigkill_during_inserts_leaves_no_half_row() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash_child_inserts_until_killed", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until it is writing, then let it write a while.
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        while !line.contains("inserting") {
            line.clear();
            assert!(out.read_line(&mut line).unwrap() > 0, "the child ended before inserting");
        }
        std::thread::sleep(std::time::Duration::from_millis(200 + 37 * round));
        child.kill().unwrap(); // SIGKILL on unix
        child.wait().unwrap();

        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        let count = |q: &str| -> i64 { conn.query_row(q, [], |r| r.get(0)).unwrap() };
        let runs = count("SELECT count(*) FROM runs");
        assert!(runs >= 1);
        assert_eq!(count("SELECT count(*) FROM runs WHERE id NOT IN (SELECT run_id FROM docs)"), 0);
        assert_eq!(count("SELECT count(*) FROM docs WHERE run_id NOT IN (SELECT id FROM runs)"), 0);
        drop(conn);
        // And the store reads every document back.
        let store = history::Store::open(&db).unwrap();
        let rows = store.list(&history::Filter::default()).unwrap();
        assert_eq!(rows.len() as i64, runs);
        assert!(store.get(rows[0].id).unwrap().is_some());
        eprintln!("round {round}: {runs} runs after SIGKILL, integrity ok");
    }
}

#[cfg(not(unix))]
#[test]
fn sigkill_during_inserts_leaves_no_half_row() {
    eprintln!("skipped: SIGKILL exists on unix only");
}
