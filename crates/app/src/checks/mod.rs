//! Every honesty check of a measurement, and which measuring command it applies to: the
//! matrix ([`MATRIX`]) is the rule, and the three stages below are the only way a command
//! reaches a check, so a check added to the matrix reaches every command it applies to, and a
//! command that does not get it says why (`docs/METHOD.md`, "Which check reaches which
//! command", is rendered from the matrix and a test holds the two together).
//!
//! A command runs the stages in order: [`Checks::before`] once per target before the first
//! I/O, [`Checks::result`] on every measured job result as it comes, [`Checks::after`] once
//! the figures are in.

mod ceiling;
mod target;

use crate::session::Observer;
use engine::measure::{OpenTarget, RunControl};
use spec::JobSpec;
use stats::{codes, JobResult, ResultDoc};

/// The commands that measure a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Run,
    Mark,
    Compare,
    Sla,
    Steady,
    /// `run --sustained` and `mark --sustained`'s write: one sequential write of the range.
    Sustained,
    Replay,
}

impl Command {
    pub const ALL: [Command; 7] = [
        Command::Run,
        Command::Mark,
        Command::Compare,
        Command::Sla,
        Command::Steady,
        Command::Sustained,
        Command::Replay,
    ];

    /// As the matrix's header names it.
    pub fn name(self) -> &'static str {
        match self {
            Command::Run => "run",
            Command::Mark => "mark",
            Command::Compare => "compare",
            Command::Sla => "sla",
            Command::Steady => "steady",
            Command::Sustained => "--sustained",
            Command::Replay => "replay",
        }
    }
}

/// One check: a row of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    CgroupLimit,
    FasterThanMedium,
    LinkBound,
    SplitIo,
    DeviceCounters,
    RamBacked,
    BufferedIo,
    DeviceCache,
    TargetFindings,
    CompressibleData,
    StartupBurst,
    AsyncPunt,
    ToolBottleneck,
    ExceedsMemoryBandwidth,
    RateNotMet,
    DeviceState,
}

/// When a check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before the first I/O, once per target.
    Before,
    /// On every measured job result, as it comes.
    Result,
    /// Once the figures are in.
    After,
}

/// Whether a check applies to a command: `None` when it does, else why not.
pub type Applies = Option<&'static str>;

/// A row: the check, the warning codes it can give, its stage(s), and per command (in
/// [`Command::ALL`]'s order) whether it applies.
pub struct Row {
    pub check: Check,
    pub codes: &'static [&'static str],
    pub stages: &'static [Stage],
    pub applies: [Applies; 7],
}

const YES: Applies = None;
const NO_RATE: Applies = Some("no rate option: every job is closed-loop");
const STATE_OWN: Applies = Some("it purges and preconditions the device itself and reports that state");
const TRACE_AREA: Applies =
    Some("the area is the recorded workload's own footprint: its cache hits are part of what is replayed");
const TRACE_RATE: Applies = Some("the trace sets the rate; `replay-lagging` says when replay fell behind it");
const LONG_STATE: Applies = Some(
    "its figure is the device's state over a long write (rounds, the write cliff), judged against its own earlier \
     rounds; `run` with one of its shapes checks the tool and memory",
);

/// The matrix: every check against every measuring command.
pub const MATRIX: &[Row] = &[
    Row {
        check: Check::CgroupLimit,
        codes: &[codes::CGROUP_LIMIT],
        stages: &[Stage::Before, Stage::After],
        applies: [YES; 7],
    },
    Row {
        check: Check::FasterThanMedium,
        codes: &[codes::FASTER_THAN_MEDIUM],
        stages: &[Stage::After],
        applies: [YES; 7],
    },
    Row { check: Check::LinkBound, codes: &[codes::LINK_BOUND], stages: &[Stage::After], applies: [YES; 7] },
    Row { check: Check::SplitIo, codes: &[codes::SPLIT_IO], stages: &[Stage::Before], applies: [YES; 7] },
    Row {
        check: Check::DeviceCounters,
        codes: &[codes::SPLIT_IO, codes::MERGED_IO, codes::DEVICE_SAW_LESS, codes::DEVICE_SAW_MORE, codes::FOREIGN_IO],
        stages: &[Stage::After],
        applies: [YES; 7],
    },
    Row { check: Check::RamBacked, codes: &[codes::RAM_BACKED], stages: &[Stage::After], applies: [YES; 7] },
    Row {
        check: Check::BufferedIo,
        codes: &[codes::BUFFERED_IO, codes::SMALL_TEST_AREA],
        stages: &[Stage::After],
        applies: [YES; 7],
    },
    Row {
        check: Check::DeviceCache,
        codes: &[codes::SMALL_TEST_AREA, codes::DEVICE_CACHE_UNKNOWN],
        stages: &[Stage::After],
        applies: [YES, YES, YES, YES, YES, YES, TRACE_AREA],
    },
    Row {
        check: Check::TargetFindings,
        codes: &[codes::UNWRITTEN_READ, codes::COMPRESSED_TARGET],
        stages: &[Stage::After],
        applies: [YES; 7],
    },
    Row {
        check: Check::CompressibleData,
        codes: &[codes::ZERO_DATA],
        stages: &[Stage::After],
        applies: [
            YES,
            YES,
            YES,
            YES,
            Some("it writes random data"),
            Some("it writes random data"),
            Some("it writes random data"),
        ],
    },
    Row {
        check: Check::StartupBurst,
        codes: &[codes::STARTUP_BURST],
        stages: &[Stage::Result],
        applies: [
            YES,
            YES,
            YES,
            Some("each point is judged on its windows' spread (`unstable`) and measured again for drift (`drift`)"),
            Some("the first rounds' decay is what steady state finds; the answer is the steady window"),
            Some("the fast start is the write cache the write cliff measures"),
            TRACE_RATE,
        ],
    },
    Row {
        check: Check::AsyncPunt,
        codes: &[codes::ASYNC_PUNT],
        stages: &[Stage::Result],
        applies: [
            YES,
            YES,
            YES,
            YES,
            YES,
            YES,
            Some("it issues with its own loop, which does not count the kernel's workers"),
        ],
    },
    Row {
        check: Check::ToolBottleneck,
        codes: &[codes::TOOL_BOTTLENECK],
        stages: &[Stage::Result],
        applies: [YES, YES, YES, YES, LONG_STATE, LONG_STATE, TRACE_RATE],
    },
    Row {
        check: Check::ExceedsMemoryBandwidth,
        codes: &[codes::EXCEEDS_MEMORY_BANDWIDTH],
        stages: &[Stage::Result],
        applies: [YES, YES, YES, YES, LONG_STATE, LONG_STATE, TRACE_RATE],
    },
    Row {
        check: Check::RateNotMet,
        codes: &[codes::RATE_NOT_MET],
        stages: &[Stage::Result],
        applies: [
            YES,
            NO_RATE,
            NO_RATE,
            Some("it sets each point's rate itself and counts a shortfall as infeasible"),
            NO_RATE,
            NO_RATE,
            TRACE_RATE,
        ],
    },
    Row {
        check: Check::DeviceState,
        codes: &[codes::NOT_PRECONDITIONED, codes::INSIDE_WRITE_CACHE],
        stages: &[Stage::After],
        applies: [
            YES,
            YES,
            YES,
            YES,
            STATE_OWN,
            YES,
            Some("it reproduces the recorded workload on the device as it is"),
        ],
    },
];

/// Whether `check` applies to `cmd` (`None`), else why not.
pub fn applies(cmd: Command, check: Check) -> Applies {
    let col = Command::ALL.iter().position(|c| *c == cmd).unwrap_or(0);
    MATRIX.iter().find(|r| r.check == check).map_or(Some("not in the matrix"), |r| r.applies[col])
}

/// The matrix as the Markdown table `docs/METHOD.md` carries.
pub fn matrix_markdown() -> String {
    let mut out = String::from("| check (codes) | stage |");
    for c in Command::ALL {
        out.push_str(&format!(" {} |", c.name()));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(Command::ALL.len()));
    out.push('\n');
    let mut why: Vec<&str> = Vec::new();
    for r in MATRIX {
        let codes: Vec<String> = r.codes.iter().map(|c| format!("`{c}`")).collect();
        let stages: Vec<&str> = r
            .stages
            .iter()
            .map(|s| match s {
                Stage::Before => "before",
                Stage::Result => "each result",
                Stage::After => "after",
            })
            .collect();
        out.push_str(&format!("| {} | {} |", codes.join(", "), stages.join(", ")));
        for a in r.applies {
            match a {
                None => out.push_str(" yes |"),
                Some(w) => {
                    let n = why.iter().position(|x| *x == w).unwrap_or_else(|| {
                        why.push(w);
                        why.len() - 1
                    });
                    out.push_str(&format!(" no ({}) |", n + 1));
                }
            }
        }
        out.push('\n');
    }
    out.push('\n');
    for (i, w) in why.iter().enumerate() {
        out.push_str(&format!("{}. {w}\n", i + 1));
    }
    out
}

/// The checks of one command.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checks {
    cmd: Command,
}

impl Checks {
    pub(crate) const fn new(cmd: Command) -> Checks {
        Checks { cmd }
    }

    fn on(&self, check: Check) -> bool {
        applies(self.cmd, check).is_none()
    }

    /// Before the first I/O on target `t`: a `bs` above the request-size limit, a cgroup
    /// limit on the device (said on the terminal; its warning comes with the figures).
    pub(crate) fn before(&self, doc: &mut ResultDoc, jobs: &[&JobSpec], t: &OpenTarget, obs: &mut dyn Observer) {
        if self.on(Check::SplitIo) {
            target::split_limit_warning(doc, jobs, t, obs);
        }
        if self.on(Check::CgroupLimit) {
            target::cgroup_notice(t, obs);
        }
    }

    /// On a measured job result: a startup burst (the headline becomes the rest's rate), a
    /// rate not met; with `reference` (the run went to its end and the ceiling checks are
    /// on), where its I/O ran and the tool's and memory's ceilings for its shape.
    pub(crate) fn result(&self, doc: &mut ResultDoc, r: &mut JobResult, ctl: &RunControl, reference: bool) {
        if self.on(Check::StartupBurst) {
            for b in doctor::bench::startup_burst(r) {
                doc.warn(codes::STARTUP_BURST, doctor::bench::burst_message(&r.name, &b));
                r.startup_burst.push(b);
            }
        }
        if reference && r.spec.engine.uses_target() {
            if self.on(Check::AsyncPunt) {
                if let Some(msg) = ceiling::handoff_warning(r) {
                    doc.judge(&stats::margin::HANDOFF, ceiling::handoff_share(r), msg);
                }
            }
            if self.on(Check::ToolBottleneck) {
                let more = match self.cmd {
                    Command::Sla => "allow more workers with --max-threads",
                    _ => "add --threads or lower --qd per thread",
                };
                ceiling::ceiling_check(doc, r, ctl, more);
            }
            if self.on(Check::ExceedsMemoryBandwidth) {
                ceiling::bandwidth_check(doc, r, ctl);
            }
        }
        if self.on(Check::RateNotMet) {
            rate_check(doc, r);
        }
    }

    /// [`result`](Self::result) on every result the document holds (a command whose results
    /// are made whole at its end).
    pub(crate) fn results(&self, doc: &mut ResultDoc, ctl: &RunControl, reference: bool) {
        let mut results = std::mem::take(&mut doc.results);
        for r in &mut results {
            self.result(doc, r, ctl, reference);
        }
        doc.results = results;
    }

    /// Once the figures are in: what the target, its device and the figures say. `region` is
    /// the area the jobs used; `writes` whether any job wrote.
    pub(crate) fn after(
        &self,
        doc: &mut ResultDoc,
        jobs: &[&JobSpec],
        t: Option<&OpenTarget>,
        region: u64,
        writes: bool,
    ) {
        if self.on(Check::BufferedIo) {
            target::buffered(doc, jobs, region);
        }
        if let Some(t) = t {
            let ram = self.on(Check::RamBacked) && target::ram_backed(doc, t);
            if !ram && self.on(Check::DeviceCache) {
                target::device_cache(doc, jobs, t, region);
            }
            if self.on(Check::TargetFindings) {
                target::target_findings(doc, t);
            }
        }
        if self.on(Check::DeviceCounters) {
            target::device_warnings(doc, t);
        }
        if let Some(t) = t {
            let keep = |code: &str| {
                [(codes::CGROUP_LIMIT, Check::CgroupLimit), (codes::FASTER_THAN_MEDIUM, Check::FasterThanMedium)]
                    .into_iter()
                    .chain([(codes::LINK_BOUND, Check::LinkBound)])
                    .find(|(c, _)| *c == code)
                    .is_none_or(|(_, check)| self.on(check))
            };
            target::cheap_checks(doc, t, &keep);
        }
        if self.on(Check::CompressibleData) {
            target::compressible(doc, jobs);
        }
        if self.on(Check::DeviceState) {
            crate::steady::warnings::device_state_checks(doc, t, writes, region);
        }
    }
}

/// `rate-not-met`: an open-loop job that delivered under 95 % of its rate.
fn rate_check(doc: &mut ResultDoc, r: &JobResult) {
    if let Some(rate) = r.spec.rate_iops {
        let got = r.read.as_ref().map_or(0.0, |d| d.iops) + r.write.as_ref().map_or(0.0, |d| d.iops);
        if got < 0.95 * rate as f64 && !r.spec.runtime.is_zero() {
            doc.warn(
                codes::RATE_NOT_MET,
                format!(
                    "{}: asked for {rate} IOPS, got {got:.0}: the device could not keep up, so latencies include the \
                     backlog (open-loop timing)",
                    r.name
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every check is a row, once, and every row names a code.
    #[test]
    fn the_matrix_has_every_check_once() {
        let all = [
            Check::CgroupLimit,
            Check::FasterThanMedium,
            Check::LinkBound,
            Check::SplitIo,
            Check::DeviceCounters,
            Check::RamBacked,
            Check::BufferedIo,
            Check::DeviceCache,
            Check::TargetFindings,
            Check::CompressibleData,
            Check::StartupBurst,
            Check::AsyncPunt,
            Check::ToolBottleneck,
            Check::ExceedsMemoryBandwidth,
            Check::RateNotMet,
            Check::DeviceState,
        ];
        assert_eq!(MATRIX.len(), all.len());
        for c in all {
            assert_eq!(MATRIX.iter().filter(|r| r.check == c).count(), 1, "{c:?}");
        }
        assert!(MATRIX.iter().all(|r| !r.codes.is_empty() && !r.stages.is_empty()));
    }

    /// The device-wide checks reach every measuring command.
    #[test]
    fn the_cgroup_limit_reaches_every_command() {
        for cmd in Command::ALL {
            for c in [Check::CgroupLimit, Check::FasterThanMedium, Check::LinkBound, Check::RamBacked, Check::SplitIo] {
                assert_eq!(applies(cmd, c), None, "{c:?} in {}", cmd.name());
            }
        }
    }

    /// `docs/METHOD.md` carries the matrix as the code has it.
    #[test]
    fn the_docs_carry_the_matrix() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/METHOD.md"))
            .expect("docs/METHOD.md");
        let table = matrix_markdown();
        assert!(doc.contains(&table), "docs/METHOD.md does not carry the matrix; put this there:\n{table}");
    }

    #[test]
    fn a_rate_below_95_percent_is_named() {
        let spec = JobSpec { name: "j".into(), rate_iops: Some(1000), ..JobSpec::default() };
        let mut r = JobResult::new(spec);
        let h = stats::LatHist::new();
        r.read = Some(stats::DirStats::new(900, 900 * 4096, 1.0, &h, 1.0));
        let mut doc = crate::session::new_doc("run");
        rate_check(&mut doc, &r);
        assert_eq!(doc.warnings.len(), 1);
        assert!(doc.warnings[0].message.starts_with("j: asked for 1000 IOPS, got 900"), "{:?}", doc.warnings);
    }
}
