//! The history database from the command line: every measuring command keeps its result
//! (`--history FILE`), the next comparable run says how it changed, a database that cannot be
//! written never costs the result, and `history list/show/export/forget` read it back.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

const MARK: &[&str] = &["mark", "--engine", "null", "--quick", "--time", "100ms"];

/// A null-engine mark kept in `db`, as JSON.
fn mark(dir: &Path, db: &Path) -> Value {
    let o = output(dm_in(dir).args(MARK).args(["--json", "--history"]).arg(db));
    assert!(o.status.success(), "mark failed: {}", stderr_of(&o));
    json_of(&o)
}

fn history(db: &Path, args: &[&str]) -> std::process::Output {
    output(dm().arg("history").args(args).arg("--history").arg(db))
}

#[test]
fn each_run_is_kept_and_the_next_one_says_how_it_changed() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let first = mark(dir.path(), &db);
    assert_eq!(first["history"]["id"], 1, "{}", first["history"]);
    assert!(first["history"].get("vs").is_none(), "nothing earlier to compare with");
    let second = mark(dir.path(), &db);
    let h = &second["history"];
    assert_eq!(h["id"], 2);
    assert_eq!(h["vs"]["id"], 1, "{h}");
    assert_eq!(h["vs"]["started_at"], first["started_at"]);
    assert_eq!(h["vs"]["threshold_pct"], 5.0);
    let cells = h["vs"]["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 8, "a card is 4 tests × read and write: {cells:?}");
    for c in cells {
        let (lo, pct, hi) =
            (c["ci_low_pct"].as_f64().unwrap(), c["pct"].as_f64().unwrap(), c["ci_high_pct"].as_f64().unwrap());
        assert!(lo <= pct && pct <= hi, "{c}");
        let v = c["verdict"].as_str().unwrap();
        assert!(["faster", "slower", "inconclusive"].contains(&v), "one pass has no interval: never within noise: {c}");
        assert_eq!(
            (c["basis"].as_str(), c["n_a"].as_u64(), c["n_b"].as_u64()),
            (Some("single-pass"), Some(1), Some(1))
        );
    }
    // The human result says it in one line.
    let o = output(dm_in(dir.path()).args(MARK).arg("--history").arg(&db));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let text = stdout_of(&o);
    assert!(text.contains("history: kept as run 3; vs run 2 ("), "{text}");
    assert!(text.contains(", same device, same workload): "), "{text}");
    // One pass a cell: the line says there is no interval, as every surface does.
    assert!(text.contains("(no interval: 1 pass each)"), "{text}");
    // A different workload is not compared with these.
    let o = output(
        dm_in(dir.path()).args(["run", "--engine", "null", "--runtime", "100ms", "--json", "--history"]).arg(&db),
    );
    let run = json_of(&o);
    assert_eq!(run["history"]["id"], 4);
    assert!(run["history"].get("vs").is_none(), "{}", run["history"]);
}

#[test]
fn a_database_that_cannot_be_written_never_costs_the_result() {
    let dir = tempdir();
    std::fs::write(dir.path().join("plain"), "not a folder").unwrap();
    let db = dir.path().join("plain").join("h.db");
    let out = dir.path().join("r.json");
    let o = output(dm_in(dir.path()).args(MARK).args(["--json", "-o"]).arg(&out).arg("--history").arg(&db));
    assert!(o.status.success(), "the measurement stands: {}", stderr_of(&o));
    let doc = json_of(&o);
    assert!(doc.get("history").is_none());
    let w: Vec<&Value> =
        doc["warnings"].as_array().unwrap().iter().filter(|w| w["code"] == "history-not-recorded").collect();
    assert_eq!(w.len(), 1, "{}", doc["warnings"]);
    let msg = w[0]["message"].as_str().unwrap();
    assert!(msg.contains("plain") && msg.contains("complete but was not kept"), "{msg}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("-o still written")).unwrap();
    assert_eq!(saved["results"].as_array().unwrap().len(), 4);
    // A file that is not a database: the same.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![0x5a; 8192]).unwrap();
    let o = output(dm_in(dir.path()).args(MARK).arg("--json").arg("--history").arg(&junk));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(stdout_of(&o).contains("history-not-recorded"));
    // --no-history keeps nothing, even with the variable set.
    let db2 = dir.path().join("h2.db");
    let o = output(dm_in(dir.path()).args(MARK).args(["--json", "--no-history"]).env("DISKMETER_HISTORY", &db2));
    assert!(o.status.success());
    assert!(json_of(&o).get("history").is_none() && !db2.exists());
    // The variable alone names the database.
    let o = output(dm_in(dir.path()).args(MARK).arg("--json").env("DISKMETER_HISTORY", &db2));
    assert_eq!(json_of(&o)["history"]["id"], 1);
    // Both options at once is a usage error.
    let o = output(dm_in(dir.path()).args(MARK).args(["--history", "x.db", "--no-history"]));
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
}

#[test]
fn two_runs_at_once_both_land() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let spawn = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("diskmeter"))
            .args(["run", "--engine", "null", "--runtime", "300ms", "-q", "--history"])
            .arg(&db)
            .current_dir(dir.path())
            .env_remove("DISKMETER_NULL_FAULT")
            .envs(home_env())
            .spawn()
            .expect("spawn diskmeter")
    };
    let (mut a, mut b) = (spawn(), spawn());
    assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
    let o = history(&db, &["list", "--json"]);
    let rows = json_of(&o);
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "{rows}");
}

#[test]
fn list_show_export_and_forget_read_it_back() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    // No database yet: one line, exit 2, and none is created.
    let o = history(&db, &["list"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("no history database at"), "{}", stderr_of(&o));
    assert!(!db.exists());
    let first = mark(dir.path(), &db);
    mark(dir.path(), &db);

    // list --json: the contract fields, newest first.
    let rows = json_of(&history(&db, &["list", "--json"]));
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 2);
    for k in ["id", "command", "started_at", "device", "key"] {
        assert!(rows.iter().all(|r| r.get(k).is_some()), "{k} missing: {rows:?}");
    }
    assert_eq!((rows[0]["id"].as_i64(), rows[1]["id"].as_i64()), (Some(2), Some(1)));
    assert_eq!(rows[0]["command"], "mark");
    assert_eq!(rows[0]["key"], rows[1]["key"], "the same workload has the same key");
    let filtered = json_of(&history(&db, &["list", "--json", "--command", "run"]));
    assert_eq!(filtered.as_array().map(Vec::len), Some(0));
    let text = stdout_of(&history(&db, &["list"]));
    assert!(text.starts_with("    ID  STARTED"), "{text}");
    assert_eq!(text.lines().count(), 3, "{text}");

    // show: the document whole, as stored; as text; in a file by its extension.
    let shown = json_of(&history(&db, &["show", "1", "--json"]));
    assert_eq!(shown["started_at"], first["started_at"]);
    assert_eq!(shown["results"], first["results"]);
    let o = history(&db, &["show", "1"]);
    assert!(o.status.success() && stdout_of(&o).contains("RND4K"), "{}", stdout_of(&o));
    let html = dir.path().join("r.html");
    let o = output(dm().args(["history", "show", "2", "-o"]).arg(&html).arg("--history").arg(&db));
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    for bad in ["99", "abc", "0"] {
        let o = history(&db, &["show", bad]);
        assert_eq!(o.status.code(), Some(2), "show {bad}: {}", stderr_of(&o));
        assert_eq!(stderr_of(&o).lines().count(), 1, "{}", stderr_of(&o));
    }

    // export: one document per line, oldest first.
    let o = history(&db, &["export"]);
    let lines: Vec<Value> = stdout_of(&o).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["started_at"], first["started_at"]);

    // forget: an unknown id forgets nothing; then by id and by date.
    let o = history(&db, &["forget", "1", "7"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(json_of(&history(&db, &["list", "--json"])).as_array().map(Vec::len), Some(2));
    let o = history(&db, &["forget", "1"]);
    assert!(o.status.success() && stderr_of(&o).contains("forgot 1 run"), "{}", stderr_of(&o));
    let o = history(&db, &["forget", "--before", "2000-01-01"]);
    assert!(stderr_of(&o).contains("forgot 0 runs"), "{}", stderr_of(&o));
    let left = json_of(&history(&db, &["list", "--json"]));
    assert_eq!(left.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect::<Vec<_>>(), [2]);
}

#[test]
fn trend_follows_each_cell_and_diff_compares_two_runs() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let first = mark(dir.path(), &db);
    mark(dir.path(), &db);
    mark(dir.path(), &db);
    let device = first["target"]["path"].as_str().expect("the target").to_string();

    let t = json_of(&history(&db, &["trend", &device, "--json"]));
    assert_eq!(t["threshold_pct"], 5.0);
    let cells = t["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 8, "4 tests × read and write");
    for c in cells {
        assert_eq!(c["run_ids"], serde_json::json!([1, 2, 3]), "{c}");
        assert_eq!(c["trend"]["points"].as_array().map(Vec::len), Some(3));
        assert!(c["trend"]["since_first"]["pct"].is_number() && c["trend"]["since_last"]["pct"].is_number());
    }
    let text = stdout_of(&history(&db, &["trend", &device]));
    assert!(text.starts_with(&format!("history of {device} (MB/s")), "{text}");
    assert!(text.contains("RND4K Q1T1 read · mark · 3 runs"), "{text}");
    assert!(text.contains("(no interval: 1 pass each)"), "one pass per quick cell: {text}");
    assert!(text.contains("since run 1 ("), "the earlier run by number and time: {text}");
    let o = history(&db, &["trend", "no-such-disk"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));

    // diff: compare's statistics over stored runs, as a compare document.
    let d = json_of(&history(&db, &["diff", "1", "3", "--json"]));
    assert_eq!(d["command"], "compare");
    let subjects: Vec<&str> =
        d["compare"]["subjects"].as_array().unwrap().iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(subjects, ["run 1", "run 3"]);
    assert!(!d["compare"]["rows"].as_array().unwrap().is_empty());
    // Another workload is refused, in one line.
    let o =
        output(dm_in(dir.path()).args(["run", "--engine", "null", "--runtime", "100ms", "-q", "--history"]).arg(&db));
    assert!(o.status.success());
    let o = history(&db, &["diff", "1", "4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert_eq!(stderr_of(&o).lines().count(), 1, "{}", stderr_of(&o));
}

#[test]
fn import_takes_results_exports_and_fio_output() {
    let dir = tempdir();
    let db = dir.path().join("h.db");
    let first = mark(dir.path(), &db);
    mark(dir.path(), &db);
    let export = dir.path().join("all.jsonl");
    let o = output(dm().args(["history", "export", "-o"]).arg(&export).arg("--history").arg(&db));
    assert!(o.status.success(), "{}", stderr_of(&o));
    let result = dir.path().join("r.json");
    std::fs::write(&result, serde_json::to_string(&first).unwrap()).unwrap();
    let fio = Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/tests/data/fio/randread.json");

    // A file that is none of these: one line, exit 2, nothing imported (no database made).
    let other = dir.path().join("db2.db");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, r#"{"hello": 1}"#).unwrap();
    let o = output(dm().args(["history", "import"]).arg(&fio).arg(&junk).arg("--history").arg(&other));
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert_eq!(stderr_of(&o).lines().count(), 1, "{}", stderr_of(&o));
    assert!(!other.exists());

    // Into a new database: the export, the same result again (already there), and fio's run.
    let o = output(
        dm().args(["history", "import", "--json"]).arg(&export).arg(&result).arg(&fio).arg("--history").arg(&other),
    );
    assert!(o.status.success(), "{}", stderr_of(&o));
    let done = json_of(&o);
    let kinds: Vec<&str> = done.as_array().unwrap().iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["export", "result", "fio"]);
    assert_eq!(done[0]["ids"], serde_json::json!([1, 2]));
    assert_eq!((done[1]["ids"].clone(), done[1]["already"].clone()), (serde_json::json!([]), serde_json::json!([1])));
    assert_eq!(done[2]["ids"], serde_json::json!([3]));
    let rows = json_of(&history(&other, &["list", "--json"]));
    let commands: Vec<&str> = rows.as_array().unwrap().iter().map(|r| r["command"].as_str().unwrap()).collect();
    assert_eq!(commands, ["mark", "mark", "fio"], "newest first by start time: fio's run is older");
    let shown = json_of(&history(&other, &["show", "3", "--json"]));
    assert_eq!(shown["command"], "fio");
    assert!(shown["results"][0]["read"]["iops"].as_f64().unwrap() > 0.0);
    let text = stderr_of(&output(dm().args(["history", "import"]).arg(&fio).arg("--history").arg(&other)));
    assert!(text.contains("(fio): no new run; 1 already stored"), "{text}");
}

/// A tmpfs of `size` mounted at `at` with `opts`, unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str, opts: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).ok()?;
        let o = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},{opts}"), "tmpfs"])
            .arg(at)
            .output()
            .ok()?;
        o.status.success().then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_or_read_only_disk_never_costs_the_result() {
    if !is_root() {
        return skip_note("not root: cannot mount the small and read-only file systems; skipped");
    }
    let dir = tempdir();
    // A database on a file system with room for a few pages only: the first insert (27 KB of
    // document, compressed to about 4 KB, plus the schema and the WAL) runs out of space.
    let Some(_full) = Tmpfs::mount(&dir.path().join("full"), "12k", "rw") else {
        return skip_note("mount -t tmpfs failed (no CAP_SYS_ADMIN?); skipped");
    };
    let Some(_ro) = Tmpfs::mount(&dir.path().join("ro"), "1m", "ro") else {
        return skip_note("mount -t tmpfs failed; skipped");
    };
    for (what, db) in [("full", dir.path().join("full/h.db")), ("read-only", dir.path().join("ro/h.db"))] {
        let out = dir.path().join(format!("{what}.json"));
        let o = output(dm_in(dir.path()).args(MARK).args(["--json", "-o"]).arg(&out).arg("--history").arg(&db));
        assert!(o.status.success(), "{what}: the measurement stands: {}", stderr_of(&o));
        let doc = json_of(&o);
        assert_eq!(doc["results"].as_array().map(Vec::len), Some(4), "{what}");
        assert!(doc.get("history").is_none(), "{what}: {}", doc["history"]);
        let codes: Vec<&str> =
            doc["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap()).collect();
        assert!(codes.contains(&"history-not-recorded"), "{what}: {codes:?}");
        assert!(out.exists(), "{what}: -o is still written");
    }
}
