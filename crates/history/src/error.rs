//! One error type; every message is one line that names the database and says what to do.
//!
//! The caller (the app layer) prints the message and carries on: the measurement itself is
//! never lost because the history could not be written.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// What went wrong with the history database.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// No place for the database: none of the variables that locate it is set.
    #[error("no place for the history database: set DISKMETER_HISTORY, XDG_DATA_HOME or HOME, or give --history FILE")]
    NoLocation,

    /// The folder that holds the database cannot be made.
    #[error("cannot create the folder of the history database {}: {source}; give --history FILE elsewhere or --no-history", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// SQLite cannot open (or create) the file.
    #[error("cannot open the history database {}: {reason}; give --history FILE elsewhere or --no-history", path.display())]
    Open { path: PathBuf, reason: String },

    /// The schema is newer than this build knows.
    #[error("the history database {} was made by a newer diskmeter (schema {found}, this build knows up to {known}); upgrade diskmeter or give --history FILE", path.display())]
    NewerSchema { path: PathBuf, found: i64, known: i64 },

    /// A read-only open of a database whose schema still has to be migrated.
    #[error("the history database {} has an older schema ({found}, current {current}) and was opened read-only; run any history command once without --read-only to migrate it", path.display())]
    NeedsMigration { path: PathBuf, found: i64, current: i64 },

    /// A write on a store opened read-only, or on a file or folder the process may not write.
    #[error("the history database {} is read-only; give --history FILE elsewhere or --no-history", path.display())]
    ReadOnly { path: PathBuf },

    /// The disk (or a size limit) is full.
    #[error("the disk of the history database {} is full; free some space, `diskmeter history forget --before DATE`, or give --history FILE elsewhere", path.display())]
    Full { path: PathBuf },

    /// Another process held the database longer than the busy timeout.
    #[error("the history database {} is busy (another diskmeter has held it for over {seconds} s); try again", path.display())]
    Busy { path: PathBuf, seconds: u64 },

    /// The file is not a SQLite database, or is damaged.
    #[error("the history database {} is damaged or not a diskmeter history ({reason}); move it aside and a new one is made", path.display())]
    Corrupt { path: PathBuf, reason: String },

    /// The document lacks what a stored run needs.
    #[error("cannot store this document in the history database {}: {reason}", path.display())]
    InvalidDocument { path: PathBuf, reason: String },

    /// A date given to a filter or to `forget --before`.
    #[error("'{value}' is not a date (YYYY-MM-DD) or an RFC 3339 time (2026-03-02T10:00:00Z)")]
    BadDate { value: String },

    /// Writing an export failed.
    #[error("cannot write the export of the history database {}: {source}", path.display())]
    Export {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// Any other SQLite error.
    #[error("history database {}: {reason}", path.display())]
    Sqlite { path: PathBuf, reason: String },
}

/// Results of this crate.
pub type Result<T, E = HistoryError> = std::result::Result<T, E>;

/// How long a writer waits for another one before it gives up.
pub(crate) const BUSY_TIMEOUT_S: u64 = 10;

impl HistoryError {
    /// Sorts a SQLite error into the variant whose message tells the user what to do.
    pub(crate) fn sqlite(path: &Path, e: rusqlite::Error) -> Self {
        let path = path.to_path_buf();
        let reason = one_line(&e.to_string());
        match e.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => Self::Full { path },
            Some(ErrorCode::ReadOnly) => Self::ReadOnly { path },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Self::Busy { path, seconds: BUSY_TIMEOUT_S },
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Self::Corrupt { path, reason },
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => Self::Open { path, reason },
            _ => Self::Sqlite { path, reason },
        }
    }
}

/// SQLite's messages can hold a newline (a statement's text); a message here is one line.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
