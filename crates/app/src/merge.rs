//! `merge`: one result from the results of several hosts that ran the same workload
//! independently (ssh, pdsh, Ansible, a Kubernetes Indexed Job), written with
//! `--histograms`. The figures are those rank 0 makes under `mpirun` (`cluster::merge`).

use crate::cluster::merge::{self, MergeOptions, Part};
use crate::{Error, Result};
use stats::{ClusterSource, ResultDoc};
use std::path::PathBuf;

/// Most documents one merge reads.
pub const MAX_FILES: usize = 100_000;

/// `merge`'s options as typed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub files: Vec<PathBuf>,
    /// The hosts measured one shared target on purpose.
    pub shared: bool,
}

/// A validated `merge`.
#[derive(Debug, Clone)]
pub struct Config {
    files: Vec<PathBuf>,
    shared: bool,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        if o.files.len() < 2 {
            return Err(Error::usage("merge needs two or more result files (written with --histograms)"));
        }
        if o.files.len() > MAX_FILES {
            return Err(Error::usage(format!("merge reads at most {MAX_FILES} result files")));
        }
        Ok(Config { files: o.files.clone(), shared: o.shared })
    }
}

/// Read every document (each must be a `run` or `mark` result with histograms) and merge.
pub fn run(cfg: &Config) -> Result<ResultDoc> {
    let mut parts = Vec::with_capacity(cfg.files.len());
    for f in &cfg.files {
        let doc = crate::input::read_result(f)?;
        let label = files::path::shown(f).to_string();
        if doc.cluster.is_some() {
            return Err(Error::usage(format!("{label} is already a merged result; merge the per-host results")));
        }
        if !matches!(doc.command.as_str(), "run" | "mark") {
            return Err(Error::usage(format!(
                "{label} is a `{}` result; merge takes run and mark results",
                doc.command
            )));
        }
        parts.push(Part { label, doc });
    }
    merge::merge(&parts, MergeOptions { source: ClusterSource::Merge, shared: cfg.shared })
}
