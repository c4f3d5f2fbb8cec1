//! What a command reads besides its target — a result document a user names — and text from
//! documents made safe for a terminal. Below `output` and `history`, which both use it.

use crate::error::{Error, Result};
use stats::ResultDoc;
use std::path::Path;

/// Replace control characters so file names cannot drive the terminal.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_control() && c != '\n' { '?' } else { c }).collect()
}

/// Read a result document (`compare --results`, `report`), with one clear error line. Only a
/// regular file of at most 256 MiB is read.
pub fn read_result(path: &Path) -> Result<ResultDoc> {
    let bytes = files::input::read_capped(path, "the result file", files::input::RESULT_CAP)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!("{} is not a diskmeter result (not UTF-8 text)", files::path::shown(path)))
    })?;
    ResultDoc::from_json(&text).map_err(|e| Error::usage(format!("{}: {e}", files::path::shown(path))))
}
