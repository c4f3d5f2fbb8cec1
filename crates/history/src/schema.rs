//! The schema and its migrations, numbered by `PRAGMA user_version`.
//!
//! Each migration runs in one `BEGIN IMMEDIATE` transaction together with the new version
//! number, so a database is always at one version or the next, never between; two processes
//! opening an old database at once migrate it once (the second re-reads the version under
//! the write lock and finds nothing to do).
//!
//! - **1**: `runs` (one row per stored document, with what the runs list shows), `docs`
//!   (the compressed document) and `devices` (identity, last seen).
//! - **2**: per-run device state (`runs.state_json`), the document hash (`runs.doc_hash`,
//!   to find a document imported twice), the `smart` table, and the index that finds the last
//!   comparable run. Rows of version 1 are filled in from their stored documents.

use std::path::Path;

use rusqlite::{params, Connection, TransactionBehavior};
use serde_json::Value;

use crate::error::{HistoryError, Result};

/// The schema version this build writes.
pub const CURRENT_VERSION: i64 = 2;

const V1: &str = "
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    command      TEXT NOT NULL,
    schema       TEXT,
    started_at   TEXT NOT NULL,
    started_ns   INTEGER NOT NULL,
    inserted_at  TEXT NOT NULL,
    host         TEXT,
    device       TEXT NOT NULL,
    device_key   TEXT NOT NULL,
    model        TEXT,
    target       TEXT,
    key          TEXT NOT NULL,
    key_json     TEXT NOT NULL,
    partial      INTEGER NOT NULL DEFAULT 0,
    summary_json TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX runs_started ON runs(started_ns);
CREATE INDEX runs_device ON runs(device_key);
CREATE TABLE docs (
    run_id    INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    encoding  TEXT NOT NULL,
    raw_bytes INTEGER NOT NULL,
    body      BLOB NOT NULL
);
CREATE TABLE devices (
    device_key TEXT PRIMARY KEY,
    name       TEXT,
    model      TEXT,
    serial     TEXT,
    wwn        TEXT,
    firmware   TEXT,
    size_bytes INTEGER,
    link       TEXT,
    rotational INTEGER,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL
);
";

const V2: &str = "
ALTER TABLE runs ADD COLUMN state_json TEXT;
ALTER TABLE runs ADD COLUMN doc_hash TEXT;
CREATE INDEX runs_comparable ON runs(device_key, key, started_ns);
CREATE INDEX runs_hash ON runs(doc_hash);
CREATE TABLE smart (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    device_key         TEXT NOT NULL,
    device             TEXT,
    percentage_used    REAL,
    temperature_c      INTEGER,
    data_written_bytes INTEGER,
    media_errors       INTEGER,
    power_on_hours     INTEGER
);
CREATE INDEX smart_device ON smart(device_key, run_id);
CREATE INDEX smart_run ON smart(run_id);
";

pub(crate) fn version(conn: &Connection, path: &Path) -> Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0)).map_err(|e| HistoryError::sqlite(path, e))
}

/// Brings the database to `target` (the current version outside tests).
pub(crate) fn migrate_to(conn: &mut Connection, path: &Path, target: i64) -> Result<()> {
    let sql = |e| HistoryError::sqlite(path, e);
    // The common case, a current database, takes no write lock.
    let found = version(conn, path)?;
    if found > CURRENT_VERSION {
        return Err(HistoryError::NewerSchema { path: path.to_path_buf(), found, known: CURRENT_VERSION });
    }
    if found >= target {
        return Ok(());
    }
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let v = version(&tx, path)?;
        if v >= target {
            return Ok(());
        }
        match v {
            0 => {
                let foreign: i64 = tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).map_err(sql)?;
                if foreign > 0 {
                    return Err(HistoryError::Corrupt {
                        path: path.to_path_buf(),
                        reason: "it is a SQLite database with other tables".into(),
                    });
                }
                tx.execute_batch(V1).map_err(sql)?;
            }
            1 => {
                tx.execute_batch(V2).map_err(sql)?;
                backfill_v2(&tx, path)?;
            }
            _ => unreachable!("versions above CURRENT_VERSION are refused above"),
        }
        tx.pragma_update(None, "user_version", v + 1).map_err(sql)?;
        tx.commit().map_err(sql)?;
    }
}

/// Version 2's columns and SMART rows for the runs a version 1 database holds.
fn backfill_v2(tx: &rusqlite::Transaction<'_>, path: &Path) -> Result<()> {
    let sql = |e| HistoryError::sqlite(path, e);
    let mut read = tx.prepare("SELECT run_id, encoding, body FROM docs").map_err(sql)?;
    let mut rows = read.query([]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let id: i64 = row.get(0).map_err(sql)?;
        let encoding: String = row.get(1).map_err(sql)?;
        let body: Vec<u8> = row.get(2).map_err(sql)?;
        let doc = crate::codec::decode(&encoding, &body)
            .map_err(|reason| HistoryError::Corrupt { path: path.to_path_buf(), reason })?;
        let hash = crate::codec::encode(&doc).hash;
        // A document that no longer reads as one keeps its row, without the new figures.
        let Ok(facts) = crate::extract::facts(&doc) else { continue };
        let state = facts.state.as_ref().map(Value::to_string);
        tx.execute("UPDATE runs SET state_json = ?2, doc_hash = ?3 WHERE id = ?1", params![id, state, hash])
            .map_err(sql)?;
        insert_smart(tx, id, &facts.smart).map_err(sql)?;
    }
    Ok(())
}

pub(crate) fn insert_smart(
    tx: &rusqlite::Transaction<'_>,
    run_id: i64,
    rows: &[crate::extract::SmartFigures],
) -> rusqlite::Result<()> {
    for s in rows {
        tx.execute(
            "INSERT INTO smart (run_id, device_key, device, percentage_used, temperature_c,
                                data_written_bytes, media_errors, power_on_hours)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                run_id,
                s.device_key,
                s.device,
                s.percentage_used,
                s.temperature_c,
                s.data_written_bytes.map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
                s.media_errors.map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
                s.power_on_hours.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{codec, extract, Store};

    fn fixture(name: &str) -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    /// A row as a version 1 build wrote it (no state, no hash, no SMART table).
    fn insert_v1(conn: &Connection, doc: &Value) -> i64 {
        let f = extract::facts(doc).unwrap();
        conn.execute(
            "INSERT INTO runs (command, schema, started_at, started_ns, inserted_at, host, device,
                               device_key, model, target, key, key_json, partial, summary_json)
             VALUES (?1, ?2, ?3, ?4, '2026-11-01T00:00:00Z', ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                f.command,
                f.schema,
                f.started_at,
                f.started_ns,
                f.host,
                f.device.clone().unwrap_or_default(),
                f.device_key,
                f.model,
                f.target,
                f.key.key,
                serde_json::to_string(&f.key).unwrap(),
                f.partial,
                serde_json::to_string(&f.summary).unwrap()
            ],
        )
        .unwrap();
        let id = conn.last_insert_rowid();
        let e = codec::encode(doc);
        conn.execute(
            "INSERT INTO docs (run_id, encoding, raw_bytes, body) VALUES (?1, ?2, ?3, ?4)",
            params![id, codec::ENCODING, e.raw_len as i64, e.body],
        )
        .unwrap();
        id
    }

    #[test]
    fn a_version_1_database_is_migrated_with_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let (mark, health) = (fixture("mark-quick.json"), fixture("health.json"));
        let ids = {
            let mut conn = Connection::open(&path).unwrap();
            migrate_to(&mut conn, &path, 1).unwrap();
            assert_eq!(version(&conn, &path).unwrap(), 1);
            let has_smart: i64 =
                conn.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'smart'", [], |r| r.get(0)).unwrap();
            assert_eq!(has_smart, 0, "version 1 has no smart table");
            [insert_v1(&conn, &mark), insert_v1(&conn, &health)]
        };

        let store = Store::open(&path).unwrap();
        assert_eq!(version(store.conn(), &path).unwrap(), CURRENT_VERSION);
        assert_eq!(store.get(ids[0]).unwrap().unwrap(), mark);
        assert_eq!(store.get(ids[1]).unwrap().unwrap(), health);
        assert_eq!(store.list(&Default::default()).unwrap().len(), 2);
        // Version 2's columns were filled in from the stored documents.
        assert_eq!(store.state(ids[0]).unwrap().unwrap()["filesystem"], "tmpfs");
        assert_eq!(store.find_same(&mark).unwrap(), Some(ids[0]));
        let smart = store.smart_of_device("nvme0n1").unwrap();
        assert_eq!(smart.len(), 1);
        assert_eq!(smart[0].run_id, ids[1]);
        assert_eq!(smart[0].figures.temperature_c, Some(41));
        drop(store);
        // Opening again changes nothing.
        assert_eq!(Store::open(&path).unwrap().list(&Default::default()).unwrap().len(), 2);
    }

    #[test]
    fn another_programs_database_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
        let e = Store::open(&path).err().expect("refused").to_string();
        assert!(e.contains("not a diskmeter history"), "{e}");
    }
}
