//! The store end to end on a temporary database.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use history::{comparability_key, Filter, HistoryError, Store, CURRENT_VERSION};
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The mark fixture, started at `at`, on `device`, with queue depth `qd` in its first cell.
fn mark(at: &str, device: &str, qd: u64) -> Value {
    let mut doc = fixture("mark-quick.json");
    doc["started_at"] = json!(at);
    doc["target"]["device"] = json!(device);
    doc["target"]["model"] = json!(format!("Model of {device}"));
    doc["results"][0]["spec"]["qd"] = json!(qd);
    doc
}

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("history.db");
    (dir, path)
}

fn one_line_naming(e: &HistoryError, path: &Path) -> String {
    let msg = e.to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    assert!(msg.contains(&path.display().to_string()), "names the database: {msg}");
    msg
}

#[test]
fn insert_get_list_filter_forget_export() {
    let (_dir, path) = db();
    let mut store = Store::open(&path).unwrap();
    let a = mark("2026-03-02T10:00:00Z", "nvme0n1", 8);
    let b = mark("2026-04-02T10:00:00Z", "nvme0n1", 8);
    let c = mark("2026-05-02T10:00:00Z", "sda", 8);
    let mut health = fixture("health.json");
    health["time"] = json!("2026-04-15T00:00:00Z");
    let ids: Vec<i64> = [&a, &b, &c, &health].iter().map(|d| store.insert(d).unwrap()).collect();

    // The whole document comes back.
    assert_eq!(store.get(ids[0]).unwrap().unwrap(), a);
    assert_eq!(store.get(ids[3]).unwrap().unwrap(), health);
    assert_eq!(store.get(9999).unwrap(), None);

    // Newest first, with the contract's fields.
    let all = store.list(&Filter::default()).unwrap();
    assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), [ids[2], ids[3], ids[1], ids[0]]);
    let json = serde_json::to_value(&all).unwrap();
    for field in ["id", "command", "started_at", "device", "key"] {
        assert!(json[0].get(field).is_some(), "{field} in {}", json[0]);
    }
    let row = &all[3];
    assert_eq!((row.command.as_str(), row.device.as_str()), ("mark", "nvme0n1"));
    assert_eq!(row.model.as_deref(), Some("Model of nvme0n1"));
    assert_eq!(row.summary.len(), 4);
    assert_eq!(row.summary[3].name, "RND4K Q1T1");
    assert!(row.summary[3].read.as_ref().unwrap().iops.unwrap() > 0.0);
    assert_eq!(all[1].command, "health");
    assert_eq!(all[1].device, "nvme0n1, vda");

    let ids_of = |f: Filter| store.list(&f).unwrap().iter().map(|r| r.id).collect::<Vec<_>>();
    let dev = |d: &str| Filter { device: Some(d.into()), ..Filter::default() };
    assert_eq!(ids_of(dev("nvme0n1")), [ids[3], ids[1], ids[0]], "health run has the disk");
    assert_eq!(ids_of(dev("of sda")), [ids[2]], "part of the model");
    assert_eq!(ids_of(Filter { command: Some("health".into()), ..Filter::default() }), [ids[3]]);
    assert_eq!(ids_of(Filter { since: Some("2026-04-02".into()), ..Filter::default() }).len(), 3);
    assert_eq!(ids_of(Filter { since: Some("2026-04-02T10:00:01Z".into()), ..Filter::default() }), [ids[2], ids[3]]);
    assert_eq!(ids_of(Filter { limit: Some(1), ..Filter::default() }), [ids[2]]);
    assert_eq!(ids_of(Filter { search: Some("SDA".into()), ..Filter::default() }), [ids[2]]);
    assert_eq!(ids_of(Filter { search: Some("100%".into()), ..Filter::default() }), Vec::<i64>::new());
    let e = store.list(&Filter { since: Some("last spring".into()), ..Filter::default() });
    assert!(matches!(e, Err(HistoryError::BadDate { .. })));

    // Device identity, state and SMART.
    let devices = store.devices().unwrap();
    assert!(devices.iter().any(|d| d.serial.as_deref() == Some("ACME0001") && d.runs == 1));
    assert_eq!(store.state(ids[0]).unwrap().unwrap()["filesystem"], "tmpfs");
    let smart = store.smart_of_device("nvme0n1").unwrap();
    assert_eq!(smart.len(), 1);
    assert_eq!(smart[0].figures.percentage_used, Some(7.0));
    assert_eq!(smart[0].figures.data_written_bytes, Some(48_237_124_567_040));

    // The last comparable run: same device, same key, before the given one.
    let key = comparability_key(&b).key;
    let last = store.last_comparable(&all[2].device_key, &key, Some(ids[1])).unwrap().unwrap();
    assert_eq!(last.id, ids[0]);
    assert_eq!(store.last_comparable(&all[2].device_key, &key, None).unwrap().unwrap().id, ids[1]);
    assert!(store.last_comparable(&all[2].device_key, &key, Some(ids[0])).unwrap().is_none());
    let other_qd = comparability_key(&mark("2026-03-02T10:00:00Z", "nvme0n1", 32)).key;
    assert!(store.last_comparable(&all[2].device_key, &other_qd, None).unwrap().is_none());

    // A trend's input: oldest first, with documents.
    let trend = store.runs_of_device("nvme0n1").unwrap();
    assert_eq!(trend.iter().map(|(r, _)| r.id).collect::<Vec<_>>(), [ids[0], ids[1], ids[3]]);
    assert_eq!(trend[1].1, b);

    // Export, then import into a new database: the same documents.
    let mut out = Vec::new();
    assert_eq!(store.export(&mut out).unwrap(), 4);
    let (_dir2, path2) = db();
    let mut copy = Store::open(&path2).unwrap();
    for line in String::from_utf8(out).unwrap().lines() {
        let doc: Value = serde_json::from_str(line).unwrap();
        assert!(store.find_same(&doc).unwrap().is_some());
        copy.insert(&doc).unwrap();
    }
    let copied = copy.list(&Filter::default()).unwrap();
    assert_eq!(copied.len(), 4);
    assert_eq!(copy.get(copied[0].id).unwrap().unwrap(), c);

    // Forget one, then everything before a date (documents and SMART rows go with them).
    assert!(store.forget(ids[2]).unwrap());
    assert!(!store.forget(ids[2]).unwrap());
    assert_eq!(store.get(ids[2]).unwrap(), None);
    assert_eq!(store.forget_before("2026-04-15").unwrap(), 2);
    assert_eq!(store.list(&Filter::default()).unwrap().iter().map(|r| r.id).collect::<Vec<_>>(), [ids[3]]);
    assert_eq!(store.storage().unwrap().runs, 1);
    assert!(store.forget_before("someday").is_err());
}

#[test]
fn documents_it_cannot_store_are_refused_clearly() {
    let (_dir, path) = db();
    let mut store = Store::open(&path).unwrap();
    for doc in [json!({"command": "run"}), json!({"started_at": "2026-01-01", "results": []}), json!(3)] {
        let e = store.insert(&doc).unwrap_err();
        assert!(matches!(e, HistoryError::InvalidDocument { .. }));
        one_line_naming(&e, &path);
    }
    assert_eq!(store.storage().unwrap().runs, 0);
}

#[test]
fn a_newer_schema_is_refused() {
    let (_dir, path) = db();
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", CURRENT_VERSION + 1).unwrap();
    drop(conn);
    for e in [Store::open(&path).err().unwrap(), Store::open_read_only(&path).err().unwrap()] {
        assert!(matches!(e, HistoryError::NewerSchema { .. }), "{e:?}");
        let msg = one_line_naming(&e, &path);
        assert!(msg.contains("made by a newer diskmeter"), "{msg}");
    }
    // Left as it was.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(v, CURRENT_VERSION + 1);
}

#[test]
fn read_only_and_impossible_places() {
    let (dir, path) = db();
    let mut store = Store::open(&path).unwrap();
    let id = store.insert(&mark("2026-03-02T10:00:00Z", "nvme0n1", 8)).unwrap();
    drop(store);

    // Read-only: reads work, writes are one clear error.
    let mut ro = Store::open_read_only(&path).unwrap();
    assert!(ro.get(id).unwrap().is_some());
    for e in [ro.insert(&mark("2026-03-03T10:00:00Z", "nvme0n1", 8)).unwrap_err(), ro.forget(id).unwrap_err()] {
        assert!(matches!(e, HistoryError::ReadOnly { .. }), "{e:?}");
        assert!(one_line_naming(&e, &path).contains("read-only"));
    }
    let missing = dir.path().join("none.db");
    let e = Store::open_read_only(&missing).err().unwrap();
    one_line_naming(&e, &missing);
    assert!(!missing.exists(), "a read-only open creates nothing");

    // A path whose parent is a regular file: no folder can be made there.
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let impossible = file.join("history.db");
    let e = Store::open(&impossible).err().unwrap();
    assert!(matches!(e, HistoryError::CreateDir { .. }), "{e:?}");
    assert!(e.to_string().contains(&file.display().to_string()), "{e}");

    // A file that is not a database.
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![b'j'; 4096]).unwrap();
    let e = Store::open(&junk).err().unwrap();
    assert!(matches!(e, HistoryError::Corrupt { .. }), "{e:?}");
    one_line_naming(&e, &junk);
}

#[test]
fn two_writers_at_once_both_land() {
    let (_dir, path) = db();
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        for w in 0..2 {
            let (path, barrier) = (&path, &barrier);
            s.spawn(move || {
                barrier.wait();
                // Both open a fresh database at once: creation and migration race too.
                let mut store = Store::open(path).unwrap();
                for i in 0..50 {
                    let at = format!("2026-03-{:02}T10:{w:02}:{i:02}Z", 1 + i % 28);
                    store.insert(&mark(&at, &format!("dev{w}"), 8)).unwrap();
                }
            });
        }
    });
    let store = Store::open(&path).unwrap();
    let all = store.list(&Filter::default()).unwrap();
    assert_eq!(all.len(), 100);
    for w in 0..2 {
        let f = Filter { device: Some(format!("dev{w}")), ..Filter::default() };
        assert_eq!(store.list(&f).unwrap().len(), 50);
    }
}

#[test]
fn default_path_reads_the_variable() {
    let p = history::path_from_env(|k| (k == history::ENV_VAR).then(|| std::ffi::OsString::from("/x/h.db")), false);
    assert_eq!(p, Some(PathBuf::from("/x/h.db")));
}
