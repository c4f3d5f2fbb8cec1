//! `diskmeter merge`: the results of several hosts into one.

use super::common::{HistoryArgs, OutputArgs};
use crate::output::{self, Outcome};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result files of the hosts (JSON written with --histograms), in host order.
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,
    /// The hosts measured one shared target on purpose (no shared-target warning).
    #[arg(long)]
    pub shared: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
}

impl From<&MergeArgs> for app::merge::Options {
    fn from(a: &MergeArgs) -> Self {
        Self { files: a.files.clone(), shared: a.shared }
    }
}

pub fn run(a: &MergeArgs) -> Outcome {
    output::measure("merge", &super::common::outputs(&a.out, &a.history), |_, _| {
        app::merge::run(&app::merge::Config::new(&a.into())?)
    })
}
