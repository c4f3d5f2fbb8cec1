//! The one entry for a measurement. A command says what it measures — the jobs it may run
//! ([`Need`]) and the targets they run on ([`TargetPlan`]) — and [`Measurement::open`] does
//! the sequence every command shares, once: the memory the plan will hold and the memory it
//! will pin (checked before anything is touched, so bad input writes nothing), the open-files
//! limit, then each target opened once (probe, safety guard, create, fill, lock), with the
//! progress reported and a stop honoured between targets. The open measurement then binds jobs
//! to its targets and runs groups of them ([`Measurement::run`]); the results come back as a
//! [`GroupOutcome`], each with the device's own counters beside diskmeter's.
//!
//! The runner, the memory and hand-off planning, the worker and the target's opening and
//! probing are private to the engine: this module and the types it names are what the
//! commands above it see. Replay keeps its own issuing loop ([`replay`]) but opens its targets
//! here; the surface scan is its own kernel (`crate::scan`).

use crate::error::Result;
use crate::io::{memory, runner};
use crate::target::{self, open};
use spec::JobSpec;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// The engine's errors as data (what went wrong, with its numbers and paths), for the caller
/// to put into words: [`crate::EngineError`]'s parts.
pub use crate::error::{
    Invalid, Knobs, MemoryCause, MemoryShort, Refusal, Relation, Setup, Shrink, Signature, SystemPart, Unsafe, Verb,
    Writer,
};
pub use crate::io::memory::Available;
pub use crate::io::replay::{
    replay, Lane, OpFigures, ReplayConfig, ReplayItem, ReplayOp, ReplayOutcome, ReplaySource, Timing, CHUNK,
};
pub use crate::io::runner::{
    allowed_cpus, report_slots, unix_ns_now, BoundJob, GroupOutcome, RunControl, ThreadLog, Tick, TickKind, Window,
    DEFAULT_POLL_MAX_DEPTH, DEFAULT_POLL_NS,
};
pub use crate::io::verifier::{ReadBack, VerifyJob};
pub use crate::io::worker::IO_LOG_MAX;
pub use crate::target::devview::{snapshot as device_counters, watch_for, Watch};
pub use crate::target::fault::Hook as FaultHook;
pub use crate::target::fault::{null_fault_from_env, write_faults_from_env};
pub use crate::target::open::{
    created_by_diskmeter, direct_block, mem_align, target_info, Needs, OpenTarget, TargetEvent, TargetOptions, WhenBusy,
};
pub use crate::target::probe::{host_facts, page_cache_relevant_ram, HostFacts, Probe, TargetKind};
pub use crate::target::purge::{purge, PurgeOutcome};
pub use crate::verify::{state as verify_state, CheckKind};

/// What is at a path before anything is opened: `None` when nothing can be learnt (it does
/// not exist, or cannot be read).
pub fn probe(path: &Path) -> Option<Probe> {
    target::probe::probe(path).ok()
}

/// What a measurement will hold in memory: the footprint of its largest moment, how many
/// jobs run at once then, the bytes it registers (pins) with io_uring, and the limits the
/// footprint is held to.
#[derive(Debug, Clone)]
pub struct Need {
    footprint: memory::Footprint,
    jobs: usize,
    pinned: u64,
    knobs: Knobs,
}

impl Need {
    /// Groups run one after another: the largest group's memory, the most pinned by any.
    pub fn groups<'a>(groups: impl IntoIterator<Item = (&'a [JobSpec], bool)> + Clone) -> Need {
        let (footprint, jobs) = memory::plan_footprint(groups.clone());
        let pinned = groups.into_iter().map(|(g, _)| runner::pinned_bytes(g.iter())).max().unwrap_or(0);
        Need { footprint, jobs, pinned, knobs: Knobs::CLI }
    }

    /// One group of jobs that run at once.
    pub fn group(jobs: &[JobSpec]) -> Need {
        Need {
            footprint: memory::group_footprint(jobs, false),
            jobs: jobs.len(),
            pinned: runner::pinned_bytes(jobs.iter()),
            knobs: Knobs::CLI,
        }
    }

    /// Each job alone, one after another (a card of tests, a comparison's steps).
    pub fn each(jobs: &[JobSpec]) -> Need {
        let mut n = Need::groups(jobs.iter().map(|j| (std::slice::from_ref(j), false)));
        n.jobs = 1;
        n
    }

    /// Only these bytes pinned, no workers (a command with its own issuing loop: replay).
    pub fn pinned_only(bytes: u64) -> Need {
        Need::groups(std::iter::empty::<(&[JobSpec], bool)>()).pinning(bytes)
    }

    /// With these bytes pinned instead (a command that registers its own buffers).
    pub fn pinning(mut self, bytes: u64) -> Need {
        self.pinned = bytes;
        self
    }

    /// Held to these limits instead of the command line's.
    pub fn with_knobs(mut self, knobs: Knobs) -> Need {
        self.knobs = knobs;
        self
    }

    /// Whether this machine has the memory for it (a check run must not be what runs it out).
    pub fn fits(&self) -> bool {
        memory::available().is_none_or(|a| self.footprint.total() <= a.usable())
    }

    /// Refused (with what to lower) when the machine cannot hold it or may not pin it.
    fn check(&self, register_buffers: bool) -> Result<()> {
        memory::check(&self.footprint, self.jobs, &self.knobs)?;
        runner::check_memlock(self.pinned, register_buffers)
    }
}

/// One target of a measurement: where, what the jobs need of it, and how it may be opened.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub path: PathBuf,
    pub needs: Needs,
    pub options: TargetOptions,
}

/// What opening the targets reports, for a progress display.
pub enum Progress<'a> {
    /// The memory checks passed: nothing was refused, the targets are next.
    Checked,
    /// Opening (and perhaps creating and filling) this target has begun.
    Preparing(&'a Path),
    /// What the open is doing (filling, waiting for another run).
    Target(TargetEvent<'a>),
    /// That target is ready (or failed).
    Prepared,
}

/// A measurement with its targets open.
pub struct Measurement {
    targets: Vec<OpenTarget>,
    ctl: RunControl,
    stopped: bool,
}

impl Measurement {
    /// Checks the memory and the pinned memory, then opens every target in order. A stop
    /// raised while preparing them ends the opening early: [`stopped`](Self::stopped) says so,
    /// and the targets opened so far are closed (and removed, if diskmeter created them) when
    /// the measurement is dropped.
    pub fn open(
        need: &Need,
        targets: Vec<TargetPlan>,
        ctl: RunControl,
        progress: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Measurement> {
        need.check(ctl.register_buffers)?;
        progress(Progress::Checked);
        open::raise_open_files_limit(targets.len());
        let mut m = Measurement { targets: Vec::with_capacity(targets.len()), ctl, stopped: false };
        for t in targets {
            progress(Progress::Preparing(&t.path));
            let o =
                open::open_target(&t.path, t.needs, &t.options, &m.ctl.stop, &mut |e| progress(Progress::Target(e)));
            progress(Progress::Prepared);
            m.targets.push(o?);
            if m.ctl.stop.load(Ordering::Relaxed) {
                m.stopped = true;
                break;
            }
        }
        Ok(m)
    }

    /// A measurement of no target (the null and mem engines), after its memory check.
    pub fn without_target(need: &Need, ctl: RunControl, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Measurement> {
        need.check(ctl.register_buffers)?;
        progress(Progress::Checked);
        Ok(Measurement { targets: Vec::new(), ctl, stopped: false })
    }

    /// A stop came while the targets were being prepared.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The open targets, in the plan's order.
    pub fn targets(&self) -> &[OpenTarget] {
        &self.targets
    }

    /// The open target at `path`.
    pub fn target(&self, path: &Path) -> Option<&OpenTarget> {
        self.targets.iter().find(|t| t.path == path)
    }

    /// How the measurement runs (stop flag, pinning, polling, …).
    pub fn control(&self) -> &RunControl {
        &self.ctl
    }

    /// A job bound to target `t` (none for the null and mem engines): its region resolved
    /// against the target's size and block sizes.
    pub fn bind(&self, job: &JobSpec, t: Option<&OpenTarget>) -> Result<BoundJob> {
        runner::bind(job, t)
    }

    /// Runs one group of bound jobs concurrently; `on_tick` about every 250 ms.
    pub fn run(
        &self,
        jobs: &[BoundJob],
        group_reporting: bool,
        on_tick: &mut dyn FnMut(&Tick),
    ) -> Result<GroupOutcome> {
        runner::run_group(jobs, group_reporting, &self.ctl, on_tick)
    }

    /// [`run`](Self::run) that hands each finished one-second window to `on_window`; when it
    /// returns `false` the group ends early (not an interruption).
    pub fn run_windows(
        &self,
        jobs: &[BoundJob],
        group_reporting: bool,
        on_tick: &mut dyn FnMut(&Tick),
        on_window: &mut dyn FnMut(&Window) -> bool,
    ) -> Result<GroupOutcome> {
        runner::run_group_windows(jobs, group_reporting, &self.ctl, on_tick, on_window)
    }

    /// Gives up the open targets (a command that hands them on, then drops them).
    pub fn into_targets(self) -> Vec<OpenTarget> {
        self.targets
    }
}

/// A job run alone on no target (the null and mem engines) with control `ctl`: the honesty
/// checks' reference runs. `None` when it could not run.
pub fn run_alone(job: &JobSpec, ctl: &RunControl) -> Option<GroupOutcome> {
    let b = runner::bind(job, None).ok()?;
    runner::run_group(&[b], false, ctl, &mut |_| {}).ok()
}
