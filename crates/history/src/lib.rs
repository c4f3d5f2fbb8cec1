//! diskmeter's memory: every result document stored whole in a local SQLite database, with
//! the identity and state of the device it measured and a key that says which runs can be
//! compared.
//!
//! The `history` commands and `serve` read it; every measuring command writes to it. No CLI
//! types here: the app layer calls this API and turns [`HistoryError`] (one line naming the
//! database and the fix) into a warning, so a measurement is never lost to the database.
//!
//! # Where
//! [`default_path`]: `$DISKMETER_HISTORY`, else `$XDG_DATA_HOME/diskmeter/history.db`, else
//! `~/.local/share/diskmeter/history.db` (Windows: `%LOCALAPPDATA%\diskmeter\history.db`).
//! The folder is made on [`Store::open`], private to the user on unix.
//!
//! # Safety of the data
//! SQLite (compiled in) in WAL mode with `synchronous=NORMAL`, foreign keys on and a 10 s
//! busy timeout: two processes writing at once both land, one after the other. Each insert is
//! one immediate transaction; a process killed mid-insert leaves no half row. The schema is
//! versioned by `PRAGMA user_version` and migrated on open (see [`CURRENT_VERSION`]); a
//! database from a newer diskmeter is refused, not altered.
//!
//! # Tables
//! - `runs`: one row per document: command, schema, `started_at` (and `started_ns`, Unix
//!   nanoseconds, which orders and filters), host, device name, `device_key`, model, target
//!   path, the comparability `key` and `key_json`, `partial`, `summary_json` (per job: IOPS,
//!   MB/s, mean and p99 latency per direction), `state_json` (the target's file system,
//!   scheduler, blocks, cache…) and `doc_hash`.
//! - `docs`: the whole document, zlib-compressed JSON (its histograms, CDFs and series with
//!   it); deleted with its run.
//! - `devices`: per `device_key`, model, serial, WWN, firmware, size, link, rotational,
//!   first and last seen.
//! - `smart`: per run and disk, percentage used, temperature, data written, media errors,
//!   power-on hours (from health documents, or a `smart` object a result carries).
//!
//! # Example
//! ```no_run
//! # fn main() -> Result<(), history::HistoryError> {
//! let mut store = history::Store::open(history::default_path()?)?;
//! let doc = serde_json::json!({"command": "run", "started_at": "2026-03-02T10:00:00Z",
//!                              "results": []});
//! let id = store.insert(&doc)?;
//! let key = history::comparability_key(&doc);
//! let row = store.run(id)?.expect("just stored");
//! let previous = store.last_comparable(&row.device_key, &key.key, Some(id))?;
//! # let _ = previous; Ok(()) }
//! ```

mod codec;
mod error;
mod extract;
mod key;
mod path;
mod schema;
mod store;
mod time;

pub use error::{HistoryError, Result};
pub use extract::{DirSummary, JobSummary, SmartFigures};
pub use key::HEALTH_SCHEMA;
pub use key::{comparability_key, JobKey, Key, Workload};
pub use path::{default_path, path_from_env, ENV_VAR};
pub use schema::CURRENT_VERSION;
pub use store::{DeviceRow, Filter, RunRow, SmartRow, Storage, Store};
