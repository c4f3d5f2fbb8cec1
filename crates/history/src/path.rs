//! Where the database lives by default, and making its folder.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{HistoryError, Result};

/// The environment variable that moves the database (the CLI's `--history FILE` wins over it).
pub const ENV_VAR: &str = "DISKMETER_HISTORY";

/// The database's file name inside its data folder.
const FILE_NAME: &str = "history.db";

/// The default database path of this process:
/// `$DISKMETER_HISTORY`, else `$XDG_DATA_HOME/diskmeter/history.db`, else
/// `~/.local/share/diskmeter/history.db`; on Windows `%LOCALAPPDATA%\diskmeter\history.db`.
pub fn default_path() -> Result<PathBuf> {
    path_from_env(|name| std::env::var_os(name), cfg!(windows)).ok_or(HistoryError::NoLocation)
}

/// [`default_path`] with the environment read through `get` (tests pass a map) and the OS
/// given (`windows`). Empty variables count as unset, as the XDG base directory spec says;
/// a relative `XDG_DATA_HOME` is ignored for the same reason.
pub fn path_from_env(get: impl Fn(&str) -> Option<OsString>, windows: bool) -> Option<PathBuf> {
    let var = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(p) = var(ENV_VAR) {
        return Some(p);
    }
    let data_dir = if windows {
        var("LOCALAPPDATA").or_else(|| var("USERPROFILE").map(|h| h.join("AppData").join("Local")))
    } else {
        var("XDG_DATA_HOME").filter(|p| p.is_absolute()).or_else(|| var("HOME").map(|h| h.join(".local").join("share")))
    }?;
    Some(data_dir.join("diskmeter").join(FILE_NAME))
}

/// Creates the folder that holds `db` (private to the user on unix: results name hosts,
/// devices and paths).
pub(crate) fn create_parent(db: &Path) -> Result<()> {
    let Some(parent) = db.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    if parent.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(parent).map_err(|source| HistoryError::CreateDir { path: parent.to_path_buf(), source })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: HashMap<String, OsString> = pairs.iter().map(|(k, v)| (k.to_string(), OsString::from(v))).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_variable_wins() {
        let e = env(&[("DISKMETER_HISTORY", "/tmp/h.db"), ("XDG_DATA_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(path_from_env(e, false), Some(PathBuf::from("/tmp/h.db")));
    }

    #[test]
    fn xdg_then_home() {
        let e = env(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")]);
        assert_eq!(path_from_env(e, false), Some(PathBuf::from("/x/diskmeter/history.db")));
        let e = env(&[("XDG_DATA_HOME", ""), ("HOME", "/h")]);
        assert_eq!(path_from_env(e, false), Some(PathBuf::from("/h/.local/share/diskmeter/history.db")));
        let e = env(&[("XDG_DATA_HOME", "relative"), ("HOME", "/h")]);
        assert_eq!(path_from_env(e, false), Some(PathBuf::from("/h/.local/share/diskmeter/history.db")));
        assert_eq!(path_from_env(env(&[]), false), None);
    }

    #[test]
    fn windows_local_app_data() {
        let e = env(&[("LOCALAPPDATA", "C:/Users/u/AppData/Local"), ("HOME", "/h")]);
        assert_eq!(
            path_from_env(e, true),
            Some(PathBuf::from("C:/Users/u/AppData/Local").join("diskmeter").join("history.db"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn parent_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("a").join("b").join("history.db");
        create_parent(&db).unwrap();
        let mode = std::fs::metadata(db.parent().unwrap()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
