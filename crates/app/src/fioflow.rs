//! fio's run-flow options that `run` handles around its groups: the steady-state end
//! (`steadystate`, `ss_dur`, `ss_ramp`), the rate floors (`rate_min`, `rate_iops_min` over
//! `ratecycle`) and fio's log files (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! averaged over `log_avg_msec`, or every I/O).

use crate::{Error, Result};
use engine::measure::{report_slots, ThreadLog, Window};
use spec::{JobSpec, RunPlan, SsMetric, SteadySpec};
use stats::{ErrorInfo, JobResult, SteadyStateCheck};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The warning of a run whose per-I/O fio log (`log_avg_msec=0`) stopped at its cap.
pub(crate) const FIO_LOG_CUT: &str = "fio-log-cut";

/// The warning a `latency_target` job's result carries: it ran as diskmeter's `sla` search.
pub(crate) const LATENCY_TARGET_AS_SLA: &str = "latency-target-as-sla";

/// fio's `latency_target` (fio searches the depth, up to `iodepth`, at which the given
/// percentile of I/Os stays under the bound): the job runs as diskmeter's `sla` search with
/// the job's mode, block size, mix, size, engine, depth (`iodepth` the most) and workers. Only
/// a job file of that one job. Returns the search and the note for the result.
pub(crate) fn latency_target_sla(
    plan: &RunPlan,
    flags: &crate::session::TargetFlags,
) -> Result<Option<(crate::sla::Config, String)>> {
    let jobs: Vec<&JobSpec> = plan.groups.iter().flat_map(|g| &g.jobs).collect();
    let Some(j) = jobs.iter().find(|j| j.flow.latency_target.is_some()) else { return Ok(None) };
    let Some(lt) = j.flow.latency_target else { return Ok(None) };
    if jobs.len() != 1 {
        return Err(Error::usage(format!(
            "latency_target in job [{}] runs the job as diskmeter's sla search, which takes one job; put it in a \
             job file of its own",
            j.name
        )));
    }
    let (pct, how) = match lt.percentile {
        p if p >= 100.0 => (
            "99.9".to_string(),
            "fio's latency_percentile=100 (every I/O) is searched as p99.9, the highest statistic sla bounds"
                .to_string(),
        ),
        p if [50.0, 90.0, 99.0, 99.9].contains(&p) => (p.to_string(), format!("p{p}")),
        p => {
            return Err(Error::usage(format!(
                "invalid value for latency_percentile: {p}; diskmeter's sla search bounds 50, 90, 99, 99.9 or 100 \
                 (searched as 99.9), e.g. latency_percentile=99"
            )))
        }
    };
    let mixed = !matches!(j.rw.read_pct(j.mix), 0 | 100);
    let o = crate::sla::Options {
        target: j.target.clone(),
        latency: format!("{}us", lt.bound_ns as f64 / 1000.0),
        percentile: pct,
        rw: j.rw.name().to_string(),
        bs: j.bs.to_string(),
        mix: mixed.then(|| j.mix.to_string()),
        max_qd: j.qd.to_string(),
        max_threads: Some(j.threads.to_string()),
        exhaustive: false,
        open_loop: false,
        size: j.size.unwrap_or(1 << 30).to_string(),
        ramp: format!("{}ms", j.ramp.as_millis()),
        min_windows: "3".into(),
        max_windows: "10".into(),
        cv: "5%".into(),
        guard: "10%".into(),
        engine: j.engine.name().to_string(),
        dist: None,
        data: None,
        seed: Some(j.seed),
        flags: crate::session::TargetFlags { buffered: !j.direct, ..flags.clone() },
    };
    let mut cfg = crate::sla::Config::new(&o)?;
    for s in &mut cfg.streams {
        s.dist = j.dist.clone();
        s.data = j.data;
    }
    let window = if lt.window_ns > 0 {
        format!("; fio's latency_window={} ms is replaced by sla's one-second windows", lt.window_ns / 1_000_000)
    } else {
        String::new()
    };
    let note = format!(
        "job [{}] has latency_target={} us: it ran as diskmeter's sla search for the most IOPS with {how} under \
         the bound, depth up to iodepth={} and up to {} worker{}{window}",
        j.name,
        lt.bound_ns as f64 / 1000.0,
        j.qd,
        j.threads,
        if j.threads == 1 { "" } else { "s" }
    );
    Ok(Some((cfg, note)))
}

/// fio's steady-state detection for the report slots of one group: one sample a second (fio's
/// `ss_interval` default); after `ss_ramp`, once the last `ss_dur` samples meet the criterion
/// the slot has attained it. The group ends when every slot that asks for it has.
pub(crate) struct SteadyWatch {
    slots: Vec<Option<SlotWatch>>,
}

struct SlotWatch {
    spec: SteadySpec,
    samples: VecDeque<f64>,
    /// One-second values of the sample being gathered (fio `ss_interval` > 1).
    pending: Vec<f64>,
    attained_at: Option<f64>,
    /// The criterion and the mean over the last full window.
    last: Option<(f64, f64)>,
}

impl SteadyWatch {
    pub(crate) fn new(jobs: &[JobSpec], group_reporting: bool) -> Self {
        let slots = report_slots(jobs, group_reporting);
        let n = slots.iter().max().map_or(0, |m| m + 1);
        let mut out: Vec<Option<SlotWatch>> = (0..n).map(|_| None).collect();
        for (j, &s) in jobs.iter().zip(&slots) {
            if let (Some(spec), None) = (j.flow.steadystate, &out[s]) {
                out[s] = Some(SlotWatch {
                    spec,
                    samples: VecDeque::new(),
                    pending: Vec::new(),
                    attained_at: None,
                    last: None,
                });
            }
        }
        Self { slots: out }
    }

    pub(crate) fn active(&self) -> bool {
        self.slots.iter().any(Option::is_some)
    }

    fn all_attained(&self) -> bool {
        self.slots.iter().flatten().all(|s| s.attained_at.is_some())
    }

    /// A finished second of a slot; false ends the group.
    pub(crate) fn window(&mut self, w: &Window) -> bool {
        if let Some(Some(s)) = self.slots.get_mut(w.slot) {
            if s.attained_at.is_none() {
                let v = match s.spec.metric {
                    SsMetric::Iops | SsMetric::IopsSlope => (w.read.count() + w.write.count()) as f64,
                    SsMetric::Bw | SsMetric::BwSlope => (w.read_bytes + w.write_bytes) as f64,
                    // fio's lat: the second's mean completion latency over both directions.
                    SsMetric::Lat | SsMetric::LatSlope => {
                        let n = (w.read.count() + w.write.count()) as f64;
                        if n == 0.0 {
                            0.0
                        } else {
                            (w.read.mean() * w.read.count() as f64 + w.write.mean() * w.write.count() as f64) / n
                        }
                    }
                };
                s.add(w.index, v);
            }
        }
        !self.all_attained()
    }

    /// Each watched slot's outcome into its result (results are in slot order).
    pub(crate) fn apply(&self, results: &mut [JobResult]) {
        for (s, r) in self.slots.iter().zip(results.iter_mut()) {
            if let Some(s) = s {
                r.steadystate = Some(SteadyStateCheck {
                    criterion: criterion_name(&s.spec),
                    attained: s.attained_at.is_some(),
                    attained_at_s: s.attained_at,
                    last_value: s.last.map(|l| l.0),
                    mean: s.last.map(|l| l.1),
                });
            }
        }
    }
}

impl SlotWatch {
    /// Sample of second `index` (its window is `[index, index + 1)` s after the measured start).
    fn add(&mut self, index: i64, v: f64) {
        if (index as f64) < self.spec.ramp.as_secs_f64() - 1e-9 {
            return;
        }
        // fio's ss_interval: a sample is the mean of that many seconds.
        let every = self.spec.interval_s.max(1) as usize;
        self.pending.push(v);
        if self.pending.len() < every {
            return;
        }
        let v = self.pending.iter().sum::<f64>() / every as f64;
        self.pending.clear();
        let n = (self.spec.dur.as_secs() as usize / every).max(1);
        self.samples.push_back(v);
        while self.samples.len() > n {
            self.samples.pop_front();
        }
        if self.samples.len() < n {
            return;
        }
        let (crit, mean) = criterion(&self.spec, &self.samples);
        self.last = Some((crit, mean));
        if crit < self.spec.limit {
            self.attained_at = Some((index + 1) as f64);
        }
    }
}

/// fio's criterion over a full window (steadystate.c): the largest deviation from the mean, or
/// the least-squares slope per sample, each in percent of the mean when the limit is a
/// percentage. Returns (criterion, mean); a window that moved nothing never qualifies.
fn criterion(spec: &SteadySpec, xs: &VecDeque<f64>) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let raw = if spec.metric.is_slope() {
        if xs.len() < 2 {
            return (f64::INFINITY, mean);
        }
        let sum_x = n * (n - 1.0) / 2.0;
        let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
        let sum_y: f64 = xs.iter().sum();
        let sum_xy: f64 = xs.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
        ((sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n)).abs()
    } else {
        xs.iter().map(|x| (x - mean).abs()).fold(0.0, f64::max)
    };
    if mean <= 0.0 {
        return (f64::INFINITY, mean);
    }
    (if spec.pct { raw * 100.0 / mean } else { raw }, mean)
}

fn criterion_name(s: &SteadySpec) -> String {
    format!("{}:{}{}", s.metric.name(), s.limit, if s.pct { "%" } else { "" })
}

/// fio's `rate_min`/`rate_iops_min`: the first `ratecycle` window (whole seconds of the job's
/// series, after its ramp) in which a limited direction moved less, as the job's error.
pub(crate) fn rate_floor_error(r: &JobResult) -> Option<ErrorInfo> {
    let f = &r.spec.flow;
    if f.rate_iops_min.iter().chain(&f.rate_bytes_min).all(Option::is_none) {
        return None;
    }
    let cycle = (f.ratecycle().as_secs_f64().round() as usize).max(1);
    // Only the directions the job does are checked (fio checks the directions that move).
    let rp = r.spec.rw.read_pct(r.spec.mix);
    let does = [rp > 0, rp < 100];
    // The last point may be a partial second (rescaled); only whole cycles count.
    for (ci, chunk) in r.series.chunks_exact(cycle).enumerate() {
        for (d, name) in [(0, "read"), (1, "write")].into_iter().filter(|&(d, _)| does[d]) {
            let iops =
                chunk.iter().map(|p| if d == 0 { p.read_iops } else { p.write_iops }).sum::<f64>() / cycle as f64;
            let bytes =
                chunk.iter().map(|p| if d == 0 { p.read_mb_s } else { p.write_mb_s }).sum::<f64>() * 1e6 / cycle as f64;
            let low = match (f.rate_iops_min[d], f.rate_bytes_min[d]) {
                (Some(m), _) if iops < m as f64 => Some(format!("{iops:.0} IOPS, below rate_iops_min {m}")),
                (_, Some(m)) if bytes < m as f64 => Some(format!("{bytes:.0} bytes/s, below rate_min {m}")),
                _ => None,
            };
            if let Some(low) = low {
                let at = (ci * cycle) as f64;
                return Some(ErrorInfo {
                    kind: "rate-min".into(),
                    message: format!(
                        "job {}: the {name} rate over {} ms from {at} s was {low} (the job fails, as in fio)",
                        r.name,
                        f.ratecycle().as_millis()
                    ),
                    offset: None,
                    job: Some(r.name.clone()),
                });
            }
        }
    }
    None
}

/// The run's fio log files: where each goes, and what they hold so far.
#[derive(Debug, Clone)]
pub(crate) struct LogFiles {
    /// For each job of the plan in order (group, job): the number of its first fio thread
    /// (fio numbers the threads of a job file from 1, across all jobs).
    bases: Vec<Vec<usize>>,
    /// Every file's contents so far (per_job_logs=0 gathers several threads in one).
    contents: BTreeMap<PathBuf, String>,
    outputs: BTreeMap<PathBuf, files::output::OutputFile>,
}

/// The file names of a job's logs for fio thread numbers `first..first + threads`.
fn names(j: &JobSpec, first: usize) -> Vec<(PathBuf, usize, LogKind)> {
    let Some(l) = &j.flow.logs else { return Vec::new() };
    let mut out = Vec::new();
    type Types = &'static [(&'static str, LogKind)];
    let kinds: [(&Option<String>, Types); 3] = [
        (&l.bw, &[("bw", LogKind::Bw)]),
        (&l.lat, &[("lat", LogKind::Lat), ("clat", LogKind::Lat), ("slat", LogKind::Slat)]),
        (&l.iops, &[("iops", LogKind::Iops)]),
    ];
    for (name, types) in kinds {
        let Some(name) = name else { continue };
        for &(t, kind) in types {
            for k in 0..j.threads as usize {
                let file = if l.per_job { format!("{name}_{t}.{}.log", first + k) } else { format!("{name}_{t}.log") };
                out.push((PathBuf::from(file), k, kind));
            }
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogKind {
    Bw,
    Lat,
    Slat,
    Iops,
}

impl LogFiles {
    /// Number the fio threads and check every log path before any I/O (as fio does, they go to
    /// the current directory).
    pub(crate) fn plan(plan: &RunPlan, force: bool) -> Result<Self> {
        let mut next = 1;
        let mut bases = Vec::new();
        let mut outputs = BTreeMap::new();
        for g in &plan.groups {
            let mut b = Vec::new();
            for j in &g.jobs {
                b.push(next);
                for (p, _, kind) in names(j, next) {
                    if let std::collections::btree_map::Entry::Vacant(e) = outputs.entry(p) {
                        let option = match kind {
                            LogKind::Bw => "write_bw_log",
                            LogKind::Iops => "write_iops_log",
                            LogKind::Lat | LogKind::Slat => "write_lat_log",
                        };
                        let out = files::output::plan(e.key(), option, force).map_err(Error::from)?;
                        e.insert(out);
                    }
                }
                next += j.threads as usize;
            }
            bases.push(b);
        }
        Ok(Self { bases, contents: BTreeMap::new(), outputs })
    }

    /// Add group `gi`'s log windows; each job's result lists its files. True when a per-I/O log
    /// stopped at its cap.
    pub(crate) fn add(
        &mut self,
        gi: usize,
        jobs: &[JobSpec],
        group_reporting: bool,
        logs: &[ThreadLog],
        results: &mut [JobResult],
    ) -> bool {
        let slots = report_slots(jobs, group_reporting);
        for (ji, j) in jobs.iter().enumerate() {
            let Some(l) = &j.flow.logs else { continue };
            let base = self.bases.get(gi).and_then(|b| b.get(ji)).copied().unwrap_or(1);
            let rp = j.rw.read_pct(j.mix);
            let dirs: Vec<usize> = [(0, rp > 0), (1, rp < 100)].iter().filter(|d| d.1).map(|d| d.0).collect();
            for (path, thread, kind) in names(j, base) {
                let text = self.contents.entry(path.clone()).or_default();
                if let Some(t) = logs.iter().find(|t| t.job == ji && t.thread == thread) {
                    if l.avg_ms == 0 {
                        render_each(text, t, kind, l.offset);
                    } else {
                        render(text, t, kind, l.avg_ms, &dirs, l.offset);
                    }
                }
                if let Some(r) = slots.get(ji).and_then(|&s| results.get_mut(s)) {
                    let shown = path.display().to_string();
                    if !r.log_files.contains(&shown) {
                        r.log_files.push(shown);
                    }
                }
            }
        }
        logs.iter().any(|t| t.ios_cut)
    }

    /// Write every log file (atomically, through `files::output`).
    pub(crate) fn write(&self) -> Result<()> {
        for (p, out) in &self.outputs {
            let text = self.contents.get(p).map_or("", String::as_str);
            out.write(text.as_bytes()).map_err(Error::from)?;
        }
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }
}

/// fio's log lines for averaged windows: `time (ms), value, direction (0 read, 1 write),
/// block size (0 when averaged), offset (0)`. bw in KiB/s, iops per second, latencies the mean
/// in ns (no line for a direction without completions). diskmeter measures one latency, from
/// the (intended) issue to the completion: it is written as lat and clat; slat stays empty.
fn render(out: &mut String, t: &ThreadLog, kind: LogKind, avg_ms: u64, dirs: &[usize], offset: bool) {
    if kind == LogKind::Slat {
        return;
    }
    let avg = avg_ms.max(1);
    for s in &t.samples {
        for &d in dirs {
            let v = match kind {
                LogKind::Bw => s.bytes[d] * 1000 / avg / 1024,
                LogKind::Iops => s.ops[d] * 1000 / avg,
                LogKind::Lat if s.ops[d] > 0 => s.lat_ns[d] / s.ops[d],
                LogKind::Lat | LogKind::Slat => continue,
            };
            // (fio's offset column, with log_offset, is 0 for averaged lines too.)
            let _ = writeln!(out, "{}, {v}, {d}, 0, 0{}", s.end_ms, if offset { ", 0" } else { "" });
        }
    }
}

/// fio's per-I/O log lines (`log_avg_msec=0`): `time (ms), value, direction, block size, offset
/// (with log_offset)`, one per completion of the measured window. bw is fio's per-I/O rate,
/// bytes × 10⁶ / latency ns (KiB/s as fio counts it), iops 1, lat and clat the latency in ns.
fn render_each(out: &mut String, t: &ThreadLog, kind: LogKind, offset: bool) {
    if kind == LogKind::Slat {
        return;
    }
    for e in &t.ios {
        let v = match kind {
            LogKind::Bw => (u64::from(e.len) * 1_000_000).checked_div(e.lat_ns).unwrap_or(0),
            LogKind::Iops => 1,
            LogKind::Lat | LogKind::Slat => e.lat_ns,
        };
        let _ = if offset {
            writeln!(out, "{}, {v}, {}, {}, {}, 0", e.t_ms, e.dir, e.len, e.offset)
        } else {
            writeln!(out, "{}, {v}, {}, {}, 0", e.t_ms, e.dir, e.len)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(metric: SsMetric, limit: f64, pct: bool, dur: u64, ramp: u64) -> SteadySpec {
        SteadySpec { metric, limit, pct, dur: Duration::from_secs(dur), ramp: Duration::from_secs(ramp), interval_s: 1 }
    }

    fn feed(s: SteadySpec, xs: &[f64]) -> Option<f64> {
        let mut w = SlotWatch { spec: s, samples: VecDeque::new(), pending: Vec::new(), attained_at: None, last: None };
        for (i, &x) in xs.iter().enumerate() {
            if w.attained_at.is_none() {
                w.add(i as i64, x);
            }
        }
        w.attained_at
    }

    fn sla_of(text: &str) -> std::result::Result<Option<String>, String> {
        let plan = spec::fiojob::parse_jobfile("t.fio", text, &JobSpec::default()).expect("a valid job file");
        match latency_target_sla(&plan, &crate::session::TargetFlags::default()) {
            Ok(v) => Ok(v.map(|(_, note)| note)),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn latency_target_becomes_an_sla_search() {
        assert_eq!(sla_of("[j]\n"), Ok(None));
        let note = sla_of("[j]\nrw=randread\niodepth=16\nlatency_target=500\n").expect("runs as sla").expect("a note");
        assert!(note.contains("latency_target=500 us") && note.contains("searched as p99.9"), "{note}");
        assert!(note.contains("iodepth=16"), "{note}");
        let e = sla_of("[j]\nlatency_target=1ms\nlatency_percentile=95\n").expect_err("95 is no sla statistic");
        assert!(e.starts_with("invalid value for latency_percentile: 95;"), "{e}");
        let e = sla_of("[j]\nlatency_target=1ms\n[k]\n").expect_err("one job only");
        assert!(e.contains("put it in a job file of its own"), "{e}");
    }

    #[test]
    fn steady_state_follows_fio_criteria() {
        // Constant: attained as soon as ss_ramp + ss_dur seconds are in.
        assert_eq!(feed(spec(SsMetric::Iops, 1.0, true, 3, 2), &[5.0, 9.0, 100.0, 100.0, 100.0, 100.0]), Some(5.0));
        // Within 10 % of the mean (deviation), not within 1 %.
        let xs = [100.0, 105.0, 95.0, 100.0];
        assert_eq!(feed(spec(SsMetric::Iops, 10.0, true, 4, 0), &xs), Some(4.0));
        assert_eq!(feed(spec(SsMetric::Iops, 1.0, true, 4, 0), &xs), None);
        // Absolute limit: max deviation 5 < 6.
        assert_eq!(feed(spec(SsMetric::Iops, 6.0, false, 4, 0), &xs), Some(4.0));
        // A steady climb has a slope of 10 per second: 10 % of a mean of 100 (not below 5 %).
        let climb = [85.0, 95.0, 105.0, 115.0];
        assert_eq!(feed(spec(SsMetric::IopsSlope, 5.0, true, 4, 0), &climb), None);
        assert_eq!(feed(spec(SsMetric::IopsSlope, 10.5, true, 4, 0), &climb), Some(4.0));
        let (c, m) = criterion(&spec(SsMetric::IopsSlope, 0.0, true, 4, 0), &climb.iter().copied().collect());
        assert!((c - 10.0).abs() < 1e-9 && (m - 100.0).abs() < 1e-9, "{c} {m}");
        // Nothing moved: never steady.
        assert_eq!(feed(spec(SsMetric::Bw, 50.0, true, 2, 0), &[0.0, 0.0, 0.0]), None);
        // ss_interval=2: samples are two-second means; a 4 s window holds two of them.
        let two = SteadySpec { interval_s: 2, ..spec(SsMetric::Iops, 1.0, true, 4, 0) };
        assert_eq!(feed(two, &[90.0, 110.0, 120.0, 80.0]), Some(4.0), "means 100 and 100");
        let xs = [90.0, 110.0, 130.0, 80.0, 100.0, 100.0, 100.0, 100.0];
        assert_eq!(feed(two, &xs), Some(8.0), "samples 100, 105, 100, 100: the window of the last two");
        assert_eq!(criterion_name(&spec(SsMetric::BwSlope, 0.1, true, 1, 0)), "bw_slope:0.1%");
    }
}
