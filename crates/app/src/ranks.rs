//! The names a rank gives its files: below the commands, the output plans and the cluster
//! exchange, which all expand them.

use std::path::{Path, PathBuf};

/// What `{rank}`, `{size}` and `{host}` stand for in target and output paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankNames {
    pub rank: usize,
    pub size: usize,
    pub host: String,
}

impl Default for RankNames {
    fn default() -> Self {
        Self { rank: 0, size: 1, host: engine::measure::host_facts().hostname.unwrap_or_else(|| "localhost".into()) }
    }
}

impl RankNames {
    /// `path` with `{rank}`, `{size}` and `{host}` replaced.
    pub fn expand(&self, path: &Path) -> PathBuf {
        let Some(s) = path.to_str() else { return path.to_path_buf() };
        if !s.contains('{') {
            return path.to_path_buf();
        }
        PathBuf::from(
            s.replace("{rank}", &self.rank.to_string())
                .replace("{size}", &self.size.to_string())
                .replace("{host}", &self.host),
        )
    }

    /// True when `path` names one file per rank.
    pub fn per_rank(path: &Path) -> bool {
        path.to_str().is_some_and(|s| s.contains("{rank}") || s.contains("{host}"))
    }
}
