//! Long sequential writes: `steady`'s preconditioning passes and `--sustained` (`mark`,
//! `run`): the whole test range written once, MB/s against bytes written, the write cliff and
//! its recovery after idle pauses.

use crate::session::{Observer, SessionOptions};
use engine::measure::{self, Measurement, Need, Needs, OpenTarget, TargetPlan};
use spec::units::{self, TimeUnit};
use spec::{DataPattern, EngineKind, JobSpec, RwMode, SpecError};
use stats::steady::{detect_cliff, ProgressPoint, Recovery, SustainedResult};
use stats::{ErrorInfo, JobResult, ResultDoc};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A drop below this share of the starting MB/s that lasts is a cliff.
pub const CLIFF_FRACTION: f64 = 0.7;
/// Defaults of `--sustained`: QD32, 1 MiB.
pub const SUSTAINED_BS: u64 = 1 << 20;
pub const SUSTAINED_QD: u32 = 32;
/// A re-test counts as recovered when it wrote this share of the cliff's bytes fast.
const RECOVERED_PCT: f64 = 90.0;
/// Longest idle pause `--recovery` takes.
const MAX_IDLE: Duration = Duration::from_secs(24 * 3600);

/// `--recovery 30s,60s,120s`: idle pauses, each followed by a re-test of the first region.
pub fn parse_recovery(s: &str) -> Result<Vec<Duration>, SpecError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let d = units::parse_duration("--recovery", part, TimeUnit::Seconds)?;
        if d.is_zero() || d > MAX_IDLE {
            return Err(SpecError::value(
                "--recovery",
                format!("{part:?}: give idle pauses between 1s and 24h, e.g. --recovery 30s,60s,120s"),
            ));
        }
        out.push(d);
    }
    if out.is_empty() {
        return Err(SpecError::value("--recovery", "give at least one pause, e.g. --recovery 30s"));
    }
    Ok(out)
}

/// One sequential write over a range, second by second.
pub(crate) struct WriteRun {
    pub series: Vec<ProgressPoint>,
    pub bytes: u64,
    pub seconds: f64,
    pub result: Option<JobResult>,
    pub error: Option<ErrorInfo>,
    pub interrupted: bool,
}

/// How a sequential write is shown: its label, and the bytes before it and in all of the
/// phase it belongs to (several preconditioning passes make one progress line).
pub(crate) struct Shown<'a> {
    pub label: &'a str,
    pub before: u64,
    pub total: u64,
    pub since: Instant,
}

/// The job of a sequential write of `[from, from + len)`.
pub(crate) fn write_job(name: &str, from: u64, len: u64, bs: u64, qd: u32, direct: bool, seed: u64) -> JobSpec {
    JobSpec {
        name: name.to_string(),
        rw: RwMode::Write,
        bs,
        qd,
        threads: 1,
        size: Some(len),
        offset: from,
        runtime: Duration::ZERO,
        ramp: Duration::ZERO,
        time_based: false,
        data: DataPattern::Random,
        direct,
        engine: EngineKind::NATIVE,
        seed,
        ..JobSpec::default()
    }
}

/// Write `job`'s range once on `t`, recording bytes and MB/s each second.
pub(crate) fn seq_write(
    t: &OpenTarget,
    job: &JobSpec,
    m: &Measurement,
    obs: &mut dyn Observer,
    shown: &Shown<'_>,
) -> engine::Result<WriteRun> {
    let b = m.bind(job, Some(t))?;
    let mut series = Vec::new();
    // Bytes and MB/s of the last finished second, shown with every tick.
    let last = std::cell::Cell::new((0u64, 0.0f64));
    obs.phase(shown.label, None);
    let out = m.run_windows(
        std::slice::from_ref(&b),
        false,
        &mut |tk| {
            obs.tick(tk);
            let (done, mb_s) = last.get();
            obs.written(shown.before + done, shown.total, shown.since.elapsed(), mb_s);
        },
        &mut |w| {
            let done = last.get().0 + w.write_bytes;
            let mb_s = w.write_bytes as f64 / 1e6;
            series.push(ProgressPoint { t_s: (w.index + 1) as f64, bytes: done, mb_s });
            last.set((done, mb_s));
            true
        },
    );
    obs.phase_done();
    let done = last.get().0;
    let out = out?;
    let result = out.results.into_iter().next();
    let (bytes, seconds) = result.as_ref().and_then(|r| r.write.as_ref()).map_or((done, 0.0), |w| (w.bytes, w.seconds));
    // The last window may cover only part of a second (the write ended in it): its rate is
    // over the time it covered. Bytes done after the last window are one more point.
    if let Some(last) = series.last_mut() {
        let prev_t = last.t_s - 1.0;
        if seconds > prev_t && seconds < last.t_s {
            last.mb_s /= (seconds - prev_t).max(1e-3);
            last.t_s = seconds;
        }
    }
    let last_t = series.last().map_or(0.0, |p| p.t_s);
    if bytes > done && seconds > last_t + 0.05 {
        series.push(ProgressPoint { t_s: seconds, bytes, mb_s: (bytes - done) as f64 / 1e6 / (seconds - last_t) });
    }
    Ok(WriteRun { series, bytes, seconds, result, error: out.error, interrupted: out.interrupted })
}

/// What `--sustained` writes.
#[derive(Debug, Clone)]
pub struct SustainedSpec {
    pub bs: u64,
    pub qd: u32,
    /// Bytes from 0.
    pub range: u64,
    pub recovery: Vec<Duration>,
    pub direct: bool,
    pub seed: u64,
}

/// `run --sustained` as validated: the target and the write (the range is found when the
/// target is opened: `size`, else a block device or existing file whole, else 1 GiB).
#[derive(Debug, Clone)]
pub struct SustainedRun {
    pub target: std::path::PathBuf,
    pub bs: u64,
    pub qd: u32,
    pub size: Option<u64>,
    pub recovery: Vec<Duration>,
    pub direct: bool,
    pub seed: u64,
}

/// The checks of `run --sustained`.
const CHECKS: crate::checks::Checks = crate::checks::Checks::new(crate::checks::Command::Sustained);

/// `run --sustained`: open the target (a new file only reserved), write it once, re-test.
pub(crate) fn run_sustained(
    r: &SustainedRun,
    opts: &SessionOptions,
    obs: &mut dyn Observer,
) -> engine::Result<ResultDoc> {
    let mut doc = crate::session::new_doc("run");
    let range = match r.size {
        Some(s) => s,
        None => match measure::probe(&r.target) {
            Some(p) if p.exists && p.size_bytes >= r.bs => p.size_bytes,
            _ => 1 << 30,
        },
    } / r.bs
        * r.bs;
    let job = write_job("sustained", 0, range, r.bs, r.qd, r.direct, r.seed);
    let needs =
        Needs { reads: false, writes: true, region_start: 0, region_end: range, direct: r.direct, bs_gcd: r.bs };
    let mut topts = opts.target.clone();
    topts.no_fill = true;
    topts.prefill = false;
    let plan = TargetPlan { path: r.target.clone(), needs, options: topts };
    let m = crate::session::open_measurement(&Need::group(std::slice::from_ref(&job)), Some(vec![plan]), opts, obs)?;
    let Some(t) = m.targets().first() else {
        crate::session::finish_error(&mut doc, None, true);
        return Ok(doc);
    };
    doc.target = Some(measure::target_info(t));
    CHECKS.before(&mut doc, &[&job], t, obs);
    let spec =
        SustainedSpec { bs: r.bs, qd: r.qd, range, recovery: r.recovery.clone(), direct: r.direct, seed: r.seed };
    if !opts.ctl.stop.load(Ordering::Relaxed) {
        match sustained(&mut doc, &spec, t, &m, obs, true)? {
            Some((e, interrupted)) => crate::session::finish_error(&mut doc, e, interrupted),
            None => CHECKS.results(&mut doc, &opts.ctl, opts.ceiling_check),
        }
    } else {
        crate::session::finish_error(&mut doc, None, true);
    }
    CHECKS.after(&mut doc, &[&job], Some(t), range, true);
    Ok(doc)
}

/// Why a command stopped early: its error, and whether a signal stopped it.
pub(crate) type Stopped = (Option<ErrorInfo>, bool);

/// Run `--sustained` on `t`: the whole range once, the cliff, then the re-tests. The section
/// goes into `doc.sustained` and the write's job into `doc.results`; `Some` when it stopped
/// early (the section then holds what was measured).
pub(crate) fn sustained(
    doc: &mut ResultDoc,
    spec: &SustainedSpec,
    t: &OpenTarget,
    m: &Measurement,
    obs: &mut dyn Observer,
    keep_job: bool,
) -> engine::Result<Option<Stopped>> {
    let started = Instant::now();
    let label = format!("sustained write {} Q{}", units::format_bs_label(spec.bs), spec.qd);
    let job = write_job(&label, 0, spec.range, spec.bs, spec.qd, spec.direct, spec.seed);
    let shown = Shown { label: &label, before: 0, total: spec.range, since: started };
    let w = seq_write(t, &job, m, obs, &shown)?;
    let (start, cliff) = detect_cliff(&w.series, CLIFF_FRACTION);
    let mut s = SustainedResult {
        bs: spec.bs,
        qd: spec.qd,
        range_bytes: spec.range,
        bytes_written: w.bytes,
        seconds: w.seconds,
        fraction: CLIFF_FRACTION,
        series: w.series,
        start_mb_s: start,
        cliff,
        recovery: Vec::new(),
        recovered_after_s: None,
        verdict: String::new(),
    };
    if let Some(mut r) = w.result.filter(|_| keep_job) {
        r.name = label.clone();
        doc.results.push(r);
    }
    let mut stopped = (w.error.is_some() || w.interrupted).then_some((w.error, w.interrupted));
    if stopped.is_none() && w.bytes < spec.range {
        stopped = Some((None, m.control().stop.load(Ordering::Relaxed)));
    }
    if stopped.is_none() {
        if let Some(c) = cliff {
            crate::steady::state::update(t, |r| {
                r.cliff_bytes = Some(c.offset_bytes);
                r.cliff_at = Some(crate::steady::state::now());
            });
            crate::steady::state::record_full_write(t, spec.range);
            stopped = recover(&mut s, spec, c.offset_bytes, t, m, obs)?;
        } else {
            crate::steady::state::record_full_write(t, spec.range);
        }
    }
    s.verdict = verdict(&s, spec);
    doc.sustained = Some(s);
    Ok(stopped)
}

/// The re-tests: idle for each pause, then write the first region again (twice the cliff's
/// bytes, so that the cliff shows again when the cache has recovered).
fn recover(
    s: &mut SustainedResult,
    spec: &SustainedSpec,
    cliff: u64,
    t: &OpenTarget,
    m: &Measurement,
    obs: &mut dyn Observer,
) -> engine::Result<Option<Stopped>> {
    let len = (cliff.saturating_mul(2)).min(spec.range) / spec.bs * spec.bs;
    if len == 0 || cliff == 0 {
        return Ok(None);
    }
    for (i, idle) in spec.recovery.iter().enumerate() {
        obs.phase(
            &format!("idle {} before re-test {}/{}", humantime::format_duration(*idle), i + 1, spec.recovery.len()),
            Some(*idle),
        );
        let until = Instant::now() + *idle;
        while Instant::now() < until {
            if m.control().stop.load(Ordering::Relaxed) {
                obs.phase_done();
                return Ok(Some((None, true)));
            }
            std::thread::sleep(Duration::from_millis(50).min(until.saturating_duration_since(Instant::now())));
        }
        obs.phase_done();
        let label = format!("re-test after {} idle", humantime::format_duration(*idle));
        let job = write_job(&label, 0, len, spec.bs, spec.qd, spec.direct, spec.seed.wrapping_add(i as u64 + 1));
        let shown = Shown { label: &label, before: 0, total: len, since: Instant::now() };
        let w = seq_write(t, &job, m, obs, &shown)?;
        let (_, c) = detect_cliff(&w.series, CLIFF_FRACTION);
        let mb_s = if w.seconds > 0.0 { w.bytes as f64 / 1e6 / w.seconds } else { 0.0 };
        let fast_bytes = match c {
            Some(c) => c.offset_bytes,
            None if mb_s >= CLIFF_FRACTION * s.start_mb_s => w.bytes,
            None => 0,
        };
        let recovered_pct = (fast_bytes as f64 / cliff as f64 * 100.0).min(100.0);
        s.recovery.push(Recovery {
            idle_s: idle.as_secs_f64(),
            bytes: w.bytes,
            seconds: w.seconds,
            mb_s,
            fast_bytes,
            recovered_pct,
            series: w.series,
        });
        if s.recovered_after_s.is_none() && recovered_pct >= RECOVERED_PCT {
            s.recovered_after_s = Some(idle.as_secs_f64());
        }
        if w.error.is_some() || w.interrupted {
            return Ok(Some((w.error, w.interrupted)));
        }
    }
    Ok(None)
}

fn verdict(s: &SustainedResult, spec: &SustainedSpec) -> String {
    let size = units::format_size;
    let Some(c) = s.cliff else {
        let mut v = format!(
            "no write cliff: {} written at {:.0} MB/s on average without falling below {:.0}% of the start; a cache \
             larger than the test range would not show — test a larger range to rule it out",
            size(s.bytes_written),
            s.start_mb_s,
            s.fraction * 100.0
        );
        if !spec.recovery.is_empty() {
            v.push_str("; --recovery: nothing to recover from, no re-tests were run");
        }
        return v;
    };
    let mut v = format!(
        "write cliff after {} ({:.1} s): {:.0} MB/s before, {:.0} MB/s after ({:.0}%) — a write cache of about {}",
        size(c.offset_bytes),
        c.t_s,
        c.mb_s_before,
        c.mb_s_after,
        if c.mb_s_before > 0.0 { c.mb_s_after / c.mb_s_before * 100.0 } else { 0.0 },
        size(c.offset_bytes)
    );
    if !spec.recovery.is_empty() {
        match s.recovered_after_s {
            Some(idle) => v.push_str(&format!("; recovered after {idle:.0} s idle")),
            None if s.recovery.len() == spec.recovery.len() => {
                let best = s.recovery.iter().map(|r| r.recovered_pct).fold(0.0, f64::max);
                v.push_str(&format!(
                    "; not recovered after {:.0} s idle (at best {best:.0}% of the cache came back)",
                    spec.recovery.last().map_or(0.0, Duration::as_secs_f64)
                ));
            }
            None => {}
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_list() {
        let d = parse_recovery("30s, 1m,120").expect("a value");
        assert_eq!(d, vec![Duration::from_secs(30), Duration::from_secs(60), Duration::from_secs(120)]);
        for bad in ["", "0s", "30s,,60s", "soon", "2d"] {
            let e = parse_recovery(bad).expect_err("an error").to_string();
            assert!(e.contains("--recovery"), "{bad}: {e}");
        }
    }
}
