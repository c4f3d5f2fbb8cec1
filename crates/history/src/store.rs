//! The store: one SQLite connection and the operations the `history` commands and the web UI
//! need.
//!
//! Every write is one `BEGIN IMMEDIATE` transaction: the write lock is taken up front, so two
//! writers queue on the busy timeout instead of failing on a lock upgrade, and a process
//! killed mid-insert leaves either the whole run or nothing (SQLite's WAL rolls the
//! uncommitted tail back on the next open).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Row, Transaction, TransactionBehavior};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::codec;
use crate::error::{HistoryError, Result, BUSY_TIMEOUT_S};
use crate::extract::{self, Facts, JobSummary, SmartFigures};
use crate::schema;

/// An open history database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    read_only: bool,
}

/// Which runs [`Store::list`] returns. Every field left `None` matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// A device: its display name (`nvme0n1`) or device key exactly, or part of its model.
    pub device: Option<String>,
    /// A command (`mark`, `run`, `health`, …), exactly.
    pub command: Option<String>,
    /// Runs started at or after: a date (`2026-03-02`, midnight UTC) or an RFC 3339 time.
    pub since: Option<String>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
    /// Part of the command, device, model, host, target path, key or a job's name.
    pub search: Option<String>,
    /// Skip this many of the newest matching runs first (paging).
    #[serde(default)]
    pub offset: Option<usize>,
}

/// One stored run, as the runs list shows it. `id`, `command`, `started_at`, `device` and
/// `key` are a contract: `history list --json` and `/api/runs` print an array of these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub command: String,
    /// As the document says it (RFC 3339).
    pub started_at: String,
    /// A display name: the kernel's device name, else the target folder or path.
    pub device: String,
    /// The comparability key (see [`crate::Key`]).
    pub key: String,
    /// The device's stable identity (see the `extract` module).
    pub device_key: String,
    pub model: Option<String>,
    pub host: Option<String>,
    pub target: Option<String>,
    pub schema: Option<String>,
    /// The run was interrupted or failed part way: its figures cover what ran.
    pub partial: bool,
    pub inserted_at: String,
    /// Per job or card cell: IOPS, MB/s, mean and p99 latency.
    pub summary: Vec<JobSummary>,
}

/// A device the database has seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceRow {
    pub device_key: String,
    pub name: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub firmware: Option<String>,
    pub size_bytes: Option<u64>,
    pub link: Option<String>,
    pub rotational: Option<bool>,
    pub first_seen: String,
    pub last_seen: String,
    pub runs: u64,
}

/// SMART figures of one disk at one run, for a trend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SmartRow {
    pub run_id: i64,
    pub started_at: String,
    #[serde(flatten)]
    pub figures: SmartFigures,
}

/// How much the stored documents take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Storage {
    pub runs: u64,
    /// Their JSON text.
    pub raw_bytes: u64,
    /// Their compressed bodies.
    pub stored_bytes: u64,
}

const RUN_COLS: &str = "r.id, r.command, r.started_at, r.device, r.key, r.device_key, r.model, \
                        r.host, r.target, r.schema, r.partial, r.inserted_at, r.summary_json";

/// Matches `?1` against a run's device (see [`Filter::device`]).
const DEVICE_MATCH: &str = "(r.device = ?1 OR r.device_key = ?1 OR r.model LIKE ?2 ESCAPE '\\' \
     OR r.id IN (SELECT run_id FROM smart WHERE device_key = ?1 OR device = ?1))";

/// SQLite integers are i64: counts beyond it are clamped (no disk is that big yet).
fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn run_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    let summary: String = r.get(12)?;
    Ok(RunRow {
        id: r.get(0)?,
        command: r.get(1)?,
        started_at: r.get(2)?,
        device: r.get(3)?,
        key: r.get(4)?,
        device_key: r.get(5)?,
        model: r.get(6)?,
        host: r.get(7)?,
        target: r.get(8)?,
        schema: r.get(9)?,
        partial: r.get(10)?,
        inserted_at: r.get(11)?,
        // A summary this build cannot read does not hide the run.
        summary: serde_json::from_str(&summary).unwrap_or_default(),
    })
}

/// `%text%` for LIKE, with LIKE's own characters taken literally.
fn like(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

fn date_ns(value: &str) -> Result<i64> {
    crate::time::parse_ns(value).ok_or_else(|| HistoryError::BadDate { value: value.to_string() })
}

/// How many times [`Store::open`] opens again after an immediate "busy" (about 5 s in all).
const OPEN_RETRIES: u32 = 60;

impl Store {
    /// Opens the database at `path` for reading and writing, creating it (and its folder)
    /// when missing and migrating an older schema.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        crate::path::create_parent(&path)?;
        // Two processes that open a new database at once race to switch it to WAL and to
        // create the schema; SQLite answers the loser "busy" at once, without waiting for its
        // busy timeout. Opening again then finds the work done.
        let mut tries = 0;
        loop {
            match Self::open_once(&path) {
                Err(HistoryError::Busy { .. }) if tries < OPEN_RETRIES => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(10 * u64::from(tries.min(10))));
                }
                r => return r,
            }
        }
    }

    fn open_once(path: &Path) -> Result<Store> {
        let conn = Connection::open(path).map_err(|e| HistoryError::sqlite(path, e))?;
        let mut store = Store { conn, path: path.to_path_buf(), read_only: false };
        store.configure()?;
        schema::migrate_to(&mut store.conn, &store.path, schema::CURRENT_VERSION)?;
        Ok(store)
    }

    /// Opens an existing database for reading only (`serve --read-only`, `history list`):
    /// nothing is created or migrated, and every write returns [`HistoryError::ReadOnly`].
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(HistoryError::Open { path, reason: "no such file (nothing has been stored yet)".into() });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags).map_err(|e| HistoryError::sqlite(&path, e))?;
        let store = Store { conn, path, read_only: true };
        store.configure()?;
        let found = schema::version(&store.conn, &store.path)?;
        if found > schema::CURRENT_VERSION {
            return Err(HistoryError::NewerSchema { path: store.path, found, known: schema::CURRENT_VERSION });
        }
        if found < schema::CURRENT_VERSION {
            return Err(HistoryError::NeedsMigration { path: store.path, found, current: schema::CURRENT_VERSION });
        }
        Ok(store)
    }

    fn configure(&self) -> Result<()> {
        let sql = |e| HistoryError::sqlite(&self.path, e);
        self.conn.busy_timeout(Duration::from_secs(BUSY_TIMEOUT_S)).map_err(sql)?;
        self.conn.pragma_update(None, "foreign_keys", true).map_err(sql)?;
        if !self.read_only {
            // WAL: readers never wait for the writer, a crash rolls back the uncommitted tail.
            // A file system without shared memory leaves the journal as it was; that is
            // slower but as safe, so it is not an error.
            let _mode: String =
                self.conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)).map_err(sql)?;
            // In WAL mode NORMAL keeps the database consistent on power loss (the last
            // commits may be lost) and loses nothing when only the process dies.
            self.conn.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
        }
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> HistoryError + '_ {
        move |e| HistoryError::sqlite(&self.path, e)
    }

    fn writable(&self) -> Result<()> {
        if self.read_only {
            return Err(HistoryError::ReadOnly { path: self.path.clone() });
        }
        Ok(())
    }

    /// Stores a whole document: a result (`diskmeter.result.v1`), a health document
    /// (`diskmeter.health.v1`, stored as command `health` with one SMART row per disk), or any
    /// document with `command`, `started_at` and `results` or `disks` (an imported fio run).
    /// Returns the new run's id. One transaction: on any error nothing is stored.
    pub fn insert(&mut self, doc: &Value) -> Result<i64> {
        self.writable()?;
        let facts =
            extract::facts(doc).map_err(|reason| HistoryError::InvalidDocument { path: self.path.clone(), reason })?;
        let encoded = codec::encode(doc);
        let sql = |e| HistoryError::sqlite(&self.path, e);
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let id = insert_run(&tx, &facts, &encoded).map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// The newest complete run comparable with `doc` (the same device, the same workload), as
    /// [`Store::last_comparable`] would find it once `doc` is stored: its row and document.
    pub fn last_like(&self, doc: &Value) -> Result<Option<(RunRow, Value)>> {
        let facts =
            extract::facts(doc).map_err(|reason| HistoryError::InvalidDocument { path: self.path.clone(), reason })?;
        let Some(row) = self.last_comparable(&facts.device_key, &facts.key.key, None)? else { return Ok(None) };
        Ok(self.get(row.id)?.map(|v| (row, v)))
    }

    /// The run already holding this exact document (an import of a file imported before).
    pub fn find_same(&self, doc: &Value) -> Result<Option<i64>> {
        let hash = codec::encode(doc).hash;
        self.conn
            .query_row("SELECT id FROM runs WHERE doc_hash = ?1 ORDER BY id LIMIT 1", [hash], |r| r.get(0))
            .optional()
            .map_err(self.sql())
    }

    /// The runs that match `filter`, newest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<RunRow>> {
        let since = filter.since.as_deref().map(date_ns).transpose()?;
        let limit = filter.limit.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let offset = filter.offset.map_or(0, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let query = format!(
            "SELECT {RUN_COLS} FROM runs r
             WHERE (?1 IS NULL OR {DEVICE_MATCH})
               AND (?3 IS NULL OR r.command = ?3)
               AND (?4 IS NULL OR r.started_ns >= ?4)
               AND (?5 IS NULL OR r.command LIKE ?5 ESCAPE '\\' OR r.device LIKE ?5 ESCAPE '\\'
                    OR r.device_key LIKE ?5 ESCAPE '\\' OR r.model LIKE ?5 ESCAPE '\\'
                    OR r.host LIKE ?5 ESCAPE '\\' OR r.target LIKE ?5 ESCAPE '\\'
                    OR r.key LIKE ?5 ESCAPE '\\' OR r.summary_json LIKE ?5 ESCAPE '\\')
             ORDER BY r.started_ns DESC, r.id DESC
             LIMIT ?6 OFFSET ?7"
        );
        let mut stmt = self.conn.prepare_cached(&query).map_err(self.sql())?;
        let rows = stmt
            .query_map(
                params![
                    filter.device,
                    filter.device.as_deref().map(like),
                    filter.command,
                    since,
                    filter.search.as_deref().map(like),
                    limit,
                    offset
                ],
                run_row,
            )
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.sql())
    }

    /// One run's row.
    pub fn run(&self, id: i64) -> Result<Option<RunRow>> {
        self.conn
            .query_row(&format!("SELECT {RUN_COLS} FROM runs r WHERE r.id = ?1"), [id], run_row)
            .optional()
            .map_err(self.sql())
    }

    /// The whole stored document (equal, as a JSON value, to the one inserted).
    pub fn get(&self, id: i64) -> Result<Option<Value>> {
        let row: Option<(String, Vec<u8>)> = self
            .conn
            .query_row("SELECT encoding, body FROM docs WHERE run_id = ?1", [id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(self.sql())?;
        row.map(|(encoding, body)| self.decode(&encoding, &body)).transpose()
    }

    fn decode(&self, encoding: &str, body: &[u8]) -> Result<Value> {
        codec::decode(encoding, body).map_err(|reason| HistoryError::Corrupt { path: self.path.clone(), reason })
    }

    /// The newest complete run of this device with this key, started before run
    /// `before_id` when given (a run that does not exist has nothing before it). Partial
    /// runs are not a baseline.
    pub fn last_comparable(&self, device_key: &str, key: &str, before_id: Option<i64>) -> Result<Option<RunRow>> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {RUN_COLS} FROM runs r
                     WHERE r.device_key = ?1 AND r.key = ?2 AND r.partial = 0
                       AND (?3 IS NULL OR (r.started_ns, r.id) <
                            (SELECT started_ns, id FROM runs WHERE id = ?3))
                     ORDER BY r.started_ns DESC, r.id DESC LIMIT 1"
                ),
                params![device_key, key, before_id],
                run_row,
            )
            .optional()
            .map_err(self.sql())
    }

    /// Every run of a device (matched as [`Filter::device`]) with its document, oldest
    /// first: the input of `history trend` and the device page.
    pub fn runs_of_device(&self, device: &str) -> Result<Vec<(RunRow, Value)>> {
        let query = format!(
            "SELECT {RUN_COLS}, d.encoding, d.body FROM runs r JOIN docs d ON d.run_id = r.id
             WHERE {DEVICE_MATCH} ORDER BY r.started_ns, r.id"
        );
        let mut stmt = self.conn.prepare(&query).map_err(self.sql())?;
        let mut rows = stmt.query(params![device, like(device)]).map_err(self.sql())?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(self.sql())? {
            let run = run_row(r).map_err(self.sql())?;
            let encoding: String = r.get(13).map_err(self.sql())?;
            let body: Vec<u8> = r.get(14).map_err(self.sql())?;
            out.push((run, self.decode(&encoding, &body)?));
        }
        Ok(out)
    }

    /// The SMART figures of a device (its name or device key), oldest first.
    pub fn smart_of_device(&self, device: &str) -> Result<Vec<SmartRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT s.run_id, r.started_at, s.device_key, s.device, s.percentage_used,
                        s.temperature_c, s.data_written_bytes, s.media_errors, s.power_on_hours
                 FROM smart s JOIN runs r ON r.id = s.run_id
                 WHERE s.device_key = ?1 OR s.device = ?1
                 ORDER BY r.started_ns, r.id",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([device], |r| {
                Ok(SmartRow {
                    run_id: r.get(0)?,
                    started_at: r.get(1)?,
                    figures: SmartFigures {
                        device_key: r.get(2)?,
                        device: r.get(3)?,
                        percentage_used: r.get(4)?,
                        temperature_c: r.get(5)?,
                        data_written_bytes: r.get::<_, Option<i64>>(6)?.map(to_u64),
                        media_errors: r.get::<_, Option<i64>>(7)?.map(to_u64),
                        power_on_hours: r.get::<_, Option<i64>>(8)?.map(to_u64),
                    },
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.sql())
    }

    /// Every device seen, the most recently seen first.
    pub fn devices(&self) -> Result<Vec<DeviceRow>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT v.device_key, v.name, v.model, v.serial, v.wwn, v.firmware, v.size_bytes,
                        v.link, v.rotational, v.first_seen, v.last_seen,
                        (SELECT count(*) FROM runs r WHERE r.device_key = v.device_key)
                 FROM devices v ORDER BY v.last_seen DESC",
            )
            .map_err(self.sql())?;
        let rows = stmt
            .query_map([], |r| {
                Ok(DeviceRow {
                    device_key: r.get(0)?,
                    name: r.get(1)?,
                    model: r.get(2)?,
                    serial: r.get(3)?,
                    wwn: r.get(4)?,
                    firmware: r.get(5)?,
                    size_bytes: r.get::<_, Option<i64>>(6)?.map(to_u64),
                    link: r.get(7)?,
                    rotational: r.get(8)?,
                    first_seen: r.get(9)?,
                    last_seen: r.get(10)?,
                    runs: to_u64(r.get(11)?),
                })
            })
            .map_err(self.sql())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.sql())
    }

    /// The per-run device state (file system, scheduler, …) stored with run `id`.
    pub fn state(&self, id: i64) -> Result<Option<Value>> {
        let text: Option<Option<String>> = self
            .conn
            .query_row("SELECT state_json FROM runs WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map_err(self.sql())?;
        Ok(text.flatten().and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Removes one run (its document and SMART rows with it). False when there was none.
    pub fn forget(&mut self, id: i64) -> Result<bool> {
        self.writable()?;
        let n = self.conn.execute("DELETE FROM runs WHERE id = ?1", [id]).map_err(self.sql())?;
        Ok(n > 0)
    }

    /// Removes every run started before `date` (a date or an RFC 3339 time); returns how many.
    pub fn forget_before(&mut self, date: &str) -> Result<usize> {
        self.writable()?;
        let ns = date_ns(date)?;
        self.conn.execute("DELETE FROM runs WHERE started_ns < ?1", [ns]).map_err(self.sql())
    }

    /// Writes every stored document as JSON Lines, oldest first (what `insert` reads back);
    /// returns how many.
    pub fn export(&self, w: &mut dyn Write) -> Result<usize> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT d.encoding, d.body FROM docs d JOIN runs r ON r.id = d.run_id
                 ORDER BY r.started_ns, r.id",
            )
            .map_err(self.sql())?;
        let mut rows = stmt.query([]).map_err(self.sql())?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(self.sql())? {
            let encoding: String = r.get(0).map_err(self.sql())?;
            let body: Vec<u8> = r.get(1).map_err(self.sql())?;
            let doc = self.decode(&encoding, &body)?;
            let export_err = |source| HistoryError::Export { path: self.path.clone(), source };
            serde_json::to_writer(&mut *w, &doc).map_err(|e| export_err(e.into()))?;
            w.write_all(b"\n").map_err(export_err)?;
            n += 1;
        }
        w.flush().map_err(|source| HistoryError::Export { path: self.path.clone(), source })?;
        Ok(n)
    }

    /// How many runs are stored and the bytes their documents take.
    pub fn storage(&self) -> Result<Storage> {
        self.conn
            .query_row(
                "SELECT count(*), coalesce(sum(raw_bytes), 0), coalesce(sum(length(body)), 0) FROM docs",
                [],
                |r| {
                    Ok(Storage {
                        runs: to_u64(r.get(0)?),
                        raw_bytes: to_u64(r.get(1)?),
                        stored_bytes: to_u64(r.get(2)?),
                    })
                },
            )
            .map_err(self.sql())
    }

    #[cfg(test)]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

fn insert_run(tx: &Transaction<'_>, f: &Facts, doc: &codec::Encoded) -> rusqlite::Result<i64> {
    let key_json = serde_json::to_string(&f.key).unwrap_or_default();
    let summary = serde_json::to_string(&f.summary).unwrap_or_else(|_| "[]".into());
    let state = f.state.as_ref().map(Value::to_string);
    let device = f.device.clone().or_else(|| f.target.clone()).unwrap_or_else(|| f.device_key.clone());
    tx.execute(
        "INSERT INTO runs (command, schema, started_at, started_ns, inserted_at, host, device,
                           device_key, model, target, key, key_json, partial, summary_json,
                           state_json, doc_hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            f.command,
            f.schema,
            f.started_at,
            f.started_ns,
            crate::time::now_rfc3339(),
            f.host,
            device,
            f.device_key,
            f.model,
            f.target,
            f.key.key,
            key_json,
            f.partial,
            summary,
            state,
            doc.hash,
        ],
    )?;
    let id = tx.last_insert_rowid();
    tx.execute(
        "INSERT INTO docs (run_id, encoding, raw_bytes, body) VALUES (?1, ?2, ?3, ?4)",
        params![id, codec::ENCODING, doc.raw_len as i64, doc.body],
    )?;
    let seen = crate::time::format_ns(f.started_ns);
    for d in &f.devices {
        // What this run knows fills in what earlier runs did not; `last_seen` only moves on.
        tx.execute(
            "INSERT INTO devices (device_key, name, model, serial, wwn, firmware, size_bytes,
                                  link, rotational, first_seen, last_seen)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
             ON CONFLICT (device_key) DO UPDATE SET
                 name = coalesce(excluded.name, name),
                 model = coalesce(excluded.model, model),
                 serial = coalesce(excluded.serial, serial),
                 wwn = coalesce(excluded.wwn, wwn),
                 firmware = coalesce(excluded.firmware, firmware),
                 size_bytes = coalesce(excluded.size_bytes, size_bytes),
                 link = coalesce(excluded.link, link),
                 rotational = coalesce(excluded.rotational, rotational),
                 first_seen = min(first_seen, excluded.first_seen),
                 last_seen = max(last_seen, excluded.last_seen)",
            params![
                d.key,
                d.name,
                d.model,
                d.serial,
                d.wwn,
                d.firmware,
                d.size_bytes.map(to_i64),
                d.link,
                d.rotational,
                seen
            ],
        )?;
    }
    schema::insert_smart(tx, id, &f.smart)?;
    Ok(id)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_one_clear_error_and_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut store = Store::open(&path).unwrap();
        let doc = serde_json::json!({"command": "run", "started_at": "2026-03-02T10:00:00Z",
                                     "results": [], "pad": "x".repeat(1000)});
        store.insert(&doc).unwrap();
        // SQLite's own size limit gives the same error as a full file system (SQLITE_FULL).
        let pages: i64 = store.conn().pragma_query_value(None, "page_count", |r| r.get(0)).unwrap();
        store.conn().pragma_update(None, "max_page_count", pages).unwrap();
        // Incompressible: a xorshift stream of letters.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let big: String = (0..200_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'a' + (x % 26) as u8)
            })
            .collect();
        let doc = serde_json::json!({"command": "run", "started_at": "2026-03-02T11:00:00Z",
                                     "results": [], "pad": big});
        let e = store.insert(&doc).unwrap_err();
        assert!(matches!(e, HistoryError::Full { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&path.display().to_string()) && msg.contains("full"), "{msg}");
        assert!(!msg.contains('\n'));
        assert_eq!(store.storage().unwrap().runs, 1);
    }
}
