//! Option groups several commands take (target safety, outputs, hosts, `--sustained`, how to
//! read a trace) and their copies into `app`'s options. No command module is used here.

use clap::Args;
use std::path::PathBuf;

/// Options of commands that run on several hosts at once (under mpirun, or merged later).
#[derive(Debug, Args, Clone)]
pub struct HostsArgs {
    /// Keep the lossless latency histograms (HdrHistogram V2, base64) and wall-clock times in
    /// the result, so that `diskmeter merge` can combine results of several hosts exactly.
    #[arg(long)]
    pub histograms: bool,
    /// Start the first measured window at this wall-clock instant (RFC 3339 UTC, or Unix
    /// seconds): hosts started independently then measure together.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// Several ranks measure one shared target on purpose (no shared-target warning).
    #[arg(long)]
    pub shared: bool,
}

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Print the result as JSON on stdout (schema diskmeter.result.v1); diagnostics go to stderr.
    #[arg(long)]
    pub json: bool,
    /// Also write the result to FILE; the extension picks the format (.json, .csv, .md, .txt).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress display and no human result on stdout (JSON and -o still work).
    #[arg(short, long)]
    pub quiet: bool,
    /// Also write a self-contained HTML report (charts inline, opens offline) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

/// Where a measuring command's result is kept (the history database).
#[derive(Debug, Args, Clone, Default)]
pub struct HistoryArgs {
    /// Keep the result in this history database [default: $DISKMETER_HISTORY, else
    /// $XDG_DATA_HOME/diskmeter/history.db or ~/.local/share/diskmeter/history.db].
    #[arg(long = "history", value_name = "FILE", conflicts_with = "no_history")]
    pub history: Option<PathBuf>,
    /// Do not keep this result in the history (DISKMETER_HISTORY=off does so for every run).
    #[arg(long = "no-history")]
    pub no_history: bool,
}

impl From<&HistoryArgs> for app::history::Choice {
    fn from(a: &HistoryArgs) -> Self {
        Self { file: a.history.clone(), off: a.no_history }
    }
}

/// The output options of a command whose result is kept in the history.
pub fn outputs(out: &OutputArgs, history: &HistoryArgs) -> app::output::OutputOptions {
    app::output::OutputOptions { history: history.into(), ..out.into() }
}

/// Options about the target and data safety.
#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// Allow writing to an existing file that diskmeter did not create (its contents are lost).
    #[arg(long)]
    pub overwrite: bool,
    /// Keep the test file diskmeter created instead of removing it at exit.
    #[arg(long)]
    pub keep: bool,
    /// Allow writing to this exact block device, destroying its data (must name the target).
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Use buffered I/O (page cache) instead of direct I/O; the result carries a warning.
    #[arg(long)]
    pub buffered: bool,
    /// Do not register I/O buffers with io_uring (needs no RLIMIT_MEMLOCK headroom; slower).
    #[arg(long)]
    pub no_register_buffers: bool,
    /// Let the scheduler place worker threads instead of pinning each to one allowed CPU.
    #[arg(long)]
    pub no_pin: bool,
    #[arg(
        long,
        value_name = "US",
        value_parser = clap::value_parser!(u64).range(0..=app::session::MAX_POLL_US),
        help = poll_us_help()
    )]
    pub poll_us: Option<u64>,
    /// Skip the tool-bottleneck and memory-bandwidth checks (short null- and mem-engine runs
    /// after each job).
    #[arg(long)]
    pub no_ceiling_check: bool,
    /// If another run holds the test file or device, refuse (exit 2) instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    #[arg(long, value_name = "POLICY", value_enum, help = handoff_help())]
    pub handoff: Option<Handoff>,
    /// Writes reach the medium before they complete: FILE_FLAG_WRITE_THROUGH on Windows
    /// (DiskSpd's -Sh with unbuffered I/O), O_DSYNC on Linux. Measures the device without its
    /// volatile write cache's help.
    #[arg(long)]
    pub write_through: bool,
}

/// `--handoff`: how a job runs where the target hands io_uring's requests to kernel workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Handoff {
    Threads,
    Ring,
}

impl From<Handoff> for stats::HandoffPolicy {
    fn from(h: Handoff) -> Self {
        match h {
            Handoff::Threads => stats::HandoffPolicy::Threads,
            Handoff::Ring => stats::HandoffPolicy::Ring,
        }
    }
}

/// `--handoff`'s help, its default read from the constant that sets it.
fn handoff_help() -> String {
    format!(
        "Where the target hands io_uring's requests to kernel worker threads (zram, bio-based \
         drivers; found by a probe read): threads = serve the queue depth with as many threads of \
         synchronous I/O, each request run in the thread that issued it; ring = keep io_uring, \
         hand every request off at once and let its workers use every allowed CPU (replay \
         always keeps io_uring: one thread issues its trace) [default: {}]",
        app::session::DEFAULT_HANDOFF.name()
    )
}

/// `--sustained` and its options (`mark`, `run`).
#[derive(Debug, Args, Clone)]
pub struct SustainedArgs {
    #[arg(long, help = sustained_help())]
    pub sustained: bool,
    /// With --sustained: idle this long, then re-test the first region, for each pause
    /// (e.g. 30s,60s,120s): how long the write cache takes to recover.
    #[arg(long, value_name = "DURATIONS")]
    pub recovery: Option<String>,
}

/// How to read a trace, whatever names it (`--trace FILE` or a positional TRACE).
#[derive(Debug, Args, Clone)]
pub struct TraceReadArgs {
    /// blkparse[:Q|D|C], fio, msr, alibaba, tencent, csv:MAPPING, binary [default: detected].
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Keep only this device / volume / disk as the trace names it.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Keep requests from this time on (since the trace's first request), e.g. 10m.
    #[arg(long, value_name = "DURATION")]
    pub from: Option<String>,
    /// Keep requests before this time (since the trace's first request), e.g. 2h.
    #[arg(long, value_name = "DURATION")]
    pub until: Option<String>,
    /// Skip malformed lines (counted) instead of stopping at the first one.
    #[arg(long)]
    pub skip_bad: bool,
}

impl TraceReadArgs {
    /// `app`'s trace options for the trace at `trace`.
    pub fn options(&self, trace: &std::path::Path) -> app::cache::TraceOptions {
        app::cache::TraceOptions {
            trace: trace.to_path_buf(),
            format: self.format.clone(),
            device: self.device.clone(),
            from: self.from.clone(),
            until: self.until.clone(),
            skip_bad: self.skip_bad,
        }
    }
}

impl From<&OutputArgs> for app::output::OutputOptions {
    fn from(a: &OutputArgs) -> Self {
        Self {
            json: a.json,
            output: a.output.clone(),
            quiet: a.quiet,
            html: a.html.clone(),
            force: a.force,
            history: app::history::Choice::none(),
        }
    }
}

impl From<&TargetArgs> for app::session::TargetFlags {
    fn from(a: &TargetArgs) -> Self {
        Self {
            overwrite: a.overwrite,
            keep: a.keep,
            destroy_data: a.destroy_data.clone(),
            buffered: a.buffered,
            no_register_buffers: a.no_register_buffers,
            no_pin: a.no_pin,
            poll_us: a.poll_us,
            no_ceiling_check: a.no_ceiling_check,
            no_wait: a.no_wait,
            histograms: false,
            handoff: a.handoff.map(Into::into),
            write_through: a.write_through,
        }
    }
}

/// The help of a TARGET that may be a folder, which then holds diskmeter's own test file, as
/// does the working directory when no target is named.
pub fn target_help(to: &str) -> String {
    let t = app::session::DEFAULT_TARGET;
    format!("File, block device or folder (a mount point: its {t}){to} [default: ./{t}, created and removed]")
}

/// `--poll-us`'s help, its defaults read from the constants that set them.
fn poll_us_help() -> String {
    format!(
        "An io_uring worker waiting for completions polls its ring this many microseconds \
         before it sleeps, when the run's workers leave a CPU free (0 = sleep at once, as \
         fio) [default: {} for workers of QD ≤ {}, deeper ones sleep, and only where a CPU \
         is also left for the device's own kernel thread (a loop device's worker); 0 for \
         several MPI ranks]",
        app::session::DEFAULT_POLL_US,
        engine::measure::DEFAULT_POLL_MAX_DEPTH
    )
}

/// `--sustained`'s help, its depth and block size read from the constants that set them.
fn sustained_help() -> String {
    format!(
        "First write the whole test range once (QD{} {} MiB; run: --bs/--qd) and chart MB/s against bytes \
         written: the write cliff, the cache size it implies, MB/s before and after. mark on a block device \
         then tests the whole device unless --size is given",
        app::steady::sustained::SUSTAINED_QD,
        app::steady::sustained::SUSTAINED_BS >> 20
    )
}
