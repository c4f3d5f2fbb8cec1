//! The cheap checks every benchmark runs, kept in its warnings: a cgroup limit on the target's
//! device (`cgroup-limit`), random-read latency below what the medium can do
//! (`faster-than-medium`), throughput at the link's ceiling (`link-bound`), and a first
//! second well above the rest (`startup-burst`, whose sustained rate becomes the headline).

use crate::checks::ROTATIONAL_FLOOR_US;
use platform::block::{Roots, Topology};
use platform::diag::{self, CgroupLimit};
use stats::{codes, DirStats, JobResult, ResultDoc};

/// A figure within this share below a cgroup limit (or above it: a throttle's burst) is the
/// limit's, not the disk's.
pub const LIMIT_SHARE: f64 = 0.02;
/// Throughput at or above this share of the link's practical ceiling is link-bound
/// (`stats::margin::LINK`, whose band holds it down to 92 %).
pub const LINK_SHARE: f64 = stats::margin::LINK.on;
/// A first second this much above the rest is a startup burst…
pub const BURST_FIRST_PCT: f64 = 5.0;
/// …when it moves the whole run's figure by at least this much.
pub const BURST_WHOLE_PCT: f64 = 0.5;
/// The largest block size whose QD1 random-read latency is held against a rotating medium.
pub const FLOOR_MAX_BS: u64 = 16 << 10;

/// What the cheap checks need about the target, read once before the run.
#[derive(Debug, Clone, Default)]
pub struct BenchContext {
    /// The device measured and what it sits on (kernel names).
    pub devices: Vec<String>,
    pub cgroup: Vec<CgroupLimit>,
    /// Every whole disk under the target says it rotates (`queue/rotational`), and which.
    pub rotational: Option<String>,
    /// The narrowest link's ceiling (bytes/s) and its name.
    pub link: Option<(f64, String)>,
}

/// The context of device `name` (kernel name) under `roots`.
pub fn context(roots: &Roots, name: &str) -> BenchContext {
    let topo = Topology::new(roots.clone());
    let Some(top) = topo.device(name) else { return BenchContext::default() };
    let layers = diag::stack(&topo, &top);
    let numbers: Vec<(u32, u32)> = layers.iter().map(|l| (l.device.major, l.device.minor)).collect();
    let disks: Vec<&diag::Layer> = layers.iter().filter(|l| l.is_whole_disk()).collect();
    let rotational = (!disks.is_empty() && disks.iter().all(|l| l.says_it_rotates()))
        .then(|| disks.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join(", "));
    let link = disks.iter().filter_map(|l| diag::links(&topo, &l.device).ceiling()).min_by(|a, b| a.0.total_cmp(&b.0));
    BenchContext {
        devices: layers.iter().map(|l| l.name.clone()).collect(),
        cgroup: diag::cgroup_limits(roots, &numbers),
        rotational,
        link,
    }
}

fn grouped(v: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = v.round().max(0.0) as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn limit_text(l: &CgroupLimit) -> String {
    match l.kind {
        "read_iops" => format!("{} read IOPS", grouped(l.value as f64)),
        "write_iops" => format!("{} write IOPS", grouped(l.value as f64)),
        "read_bps" => format!("{:.1} MB/s of reads", l.value as f64 / 1e6),
        _ => format!("{:.1} MB/s of writes", l.value as f64 / 1e6),
    }
}

/// The figure of `d` a limit of `kind` caps.
fn figure(kind: &str, r: &JobResult) -> Option<(f64, String)> {
    let (d, unit): (&DirStats, &str) = match kind {
        "read_iops" | "read_bps" => (r.read.as_ref()?, "read"),
        _ => (r.write.as_ref()?, "write"),
    };
    Some(if kind.ends_with("iops") {
        (d.iops, format!("{} {unit} IOPS", grouped(d.iops)))
    } else {
        (d.mb_s * 1e6, format!("{:.1} MB/s {unit}", d.mb_s))
    })
}

/// The warnings of the cheap checks for a finished run, in order.
pub fn warnings(ctx: &BenchContext, doc: &mut ResultDoc) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for l in &ctx.cgroup {
        let dev = ctx.devices.first().cloned().unwrap_or_default();
        let mut at_limit = Vec::new();
        for r in doc.results.iter_mut() {
            let Some((v, text)) = figure(l.kind, r) else { continue };
            #[allow(clippy::cast_precision_loss)]
            let lim = l.value as f64;
            // Within 2 % below the limit, or above it (a throttle's burst): the limit's figure.
            if v > 0.0 && v >= (1.0 - LIMIT_SHARE) * lim {
                at_limit.push(format!("{}: {text}", r.name));
                let d = if l.kind.starts_with("read") { r.read.as_mut() } else { r.write.as_mut() };
                if let Some(d) = d {
                    d.bound = Some(format!("cgroup limit ({})", limit_text(l)));
                }
            }
        }
        let base =
            format!("this process's cgroup limits {dev} (device {}) to {} ({})", l.device, limit_text(l), l.source);
        out.push((
            codes::CGROUP_LIMIT,
            if at_limit.is_empty() {
                format!("{base}: figures above it are impossible here; run outside the cgroup to measure the disk")
            } else {
                format!(
                    "{base}; {} within {:.0} % of it: the figure is the limit, not the disk; run outside the cgroup \
                     to measure the disk",
                    at_limit.join(", "),
                    LIMIT_SHARE * 100.0
                )
            },
        ));
    }
    if let Some(rot) = &ctx.rotational {
        for r in &doc.results {
            let s = &r.spec;
            let random_read = s.rw.read_pct(s.mix) > 0 && s.rw.is_random();
            if !(s.direct && random_read && s.qd == 1 && s.bs <= FLOOR_MAX_BS) {
                continue;
            }
            let Some(d) = &r.read else { continue };
            let mean_us = d.lat_ns.mean / 1000.0;
            if d.ops > 0 && mean_us < ROTATIONAL_FLOOR_US {
                out.push((
                    codes::FASTER_THAN_MEDIUM,
                    format!(
                        "{}: random reads of {} KiB at QD1 averaged {mean_us:.0} µs on {rot}, which says it rotates: a \
                         spinning disk needs milliseconds, so a cache answers (a VM host's, a controller's) or the \
                         rotational flag is wrong; the figures describe that cache",
                        r.name,
                        s.bs / 1024
                    ),
                ));
                break;
            }
        }
    }
    if let Some((ceiling, label)) = &ctx.link {
        let mut near = Vec::new();
        for r in &doc.results {
            for (dir, d) in [("read", &r.read), ("write", &r.write)] {
                let Some(d) = d else { continue };
                let share = d.mb_s * 1e6 / ceiling;
                let zone = stats::margin::LINK.zone(share);
                if zone == stats::margin::Zone::Clear {
                    continue;
                }
                let msg = format!(
                    "{}: {dir} {:.0} MB/s is {:.0} % of the link's practical ceiling ({label}: {:.0} MB/s): the disk may \
                     be faster than the link lets it show",
                    r.name,
                    d.mb_s,
                    100.0 * share,
                    ceiling / 1e6
                );
                if zone == stats::margin::Zone::Given {
                    out.push((codes::LINK_BOUND, msg));
                } else {
                    near.push((share, msg));
                }
            }
        }
        // Inside the margin band: borderline, given only where the last comparable run gave it.
        for (share, msg) in near {
            doc.place(stats::margin::Zone::Band, &stats::margin::LINK, share, msg);
        }
    }
    out
}

pub use stats::StartupBurst as Burst;

type Rate = fn(&stats::SeriesPoint) -> f64;

/// Find a startup burst in `r`'s per-second series; when found, the headline IOPS and MB/s of
/// that direction become the rest's (ops, bytes and seconds without the first interval), and
/// the burst is returned for the warning. Needs three intervals or more.
pub fn startup_burst(r: &mut JobResult) -> Vec<Burst> {
    let mut out = Vec::new();
    // A window already cut to whole bursts has left out a larger first burst.
    if r.series.len() < 3 || r.spec.rate_iops.is_some() || r.whole_bursts.is_some() {
        return out;
    }
    let first_len = r.series[0].t_s;
    if first_len.is_nan() || first_len <= 0.0 {
        return out;
    }
    let total = r.series.last().map_or(0.0, |p| p.t_s);
    let rest_len = total - first_len;
    if rest_len < 1.5 {
        return out;
    }
    for read in [true, false] {
        let (iops_of, mbs_of): (Rate, Rate) =
            if read { (|p| p.read_iops, |p| p.read_mb_s) } else { (|p| p.write_iops, |p| p.write_mb_s) };
        let first = iops_of(&r.series[0]);
        let first_mb = mbs_of(&r.series[0]);
        let mut prev = first_len;
        let (mut ops, mut mb) = (0.0, 0.0);
        for p in &r.series[1..] {
            let dt = p.t_s - prev;
            prev = p.t_s;
            ops += iops_of(p) * dt;
            mb += mbs_of(p) * dt;
        }
        let rest = ops / rest_len;
        let rest_mb = mb / rest_len;
        if rest <= 0.0 || first < rest * (1.0 + BURST_FIRST_PCT / 100.0) {
            continue;
        }
        // A sample taken late moves I/Os from the second interval into the first: the first
        // looks high and the second low by as much. A burst's excess stays: the first two
        // intervals together must still be half as far above the intervals after them.
        if r.series.len() >= 4 {
            let mut tail: Vec<f64> = r.series[2..].iter().map(iops_of).collect();
            tail.sort_by(f64::total_cmp);
            let median = tail[tail.len() / 2];
            let pair = (first + iops_of(&r.series[1])) / 2.0;
            if pair < median * (1.0 + BURST_FIRST_PCT / 200.0) {
                continue;
            }
        }
        let d = if read { r.read.as_mut() } else { r.write.as_mut() };
        let Some(d) = d else { continue };
        if d.iops < rest * (1.0 + BURST_WHOLE_PCT / 100.0) {
            continue;
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (first_ops, first_bytes) = (
            ((first * first_len).round() as u64).min(d.ops),
            ((first_mb * 1e6 * first_len).round() as u64).min(d.bytes),
        );
        let mut burst = Burst {
            direction: if read { "read" } else { "write" }.into(),
            first_s: first_len,
            first_iops: first,
            first_ops,
            first_bytes,
            sustained_iops: rest,
            sustained_mb_s: rest_mb,
            whole_iops: d.iops,
            whole_mb_s: d.mb_s,
        };
        // The headline without the first interval: one window, so iops = ops / seconds holds.
        d.rewindow(d.ops - first_ops, d.bytes - first_bytes, (d.seconds - first_len).max(f64::MIN_POSITIVE));
        (burst.sustained_iops, burst.sustained_mb_s) = (d.iops, d.mb_s);
        out.push(burst);
    }
    out
}

/// The `startup-burst` warning's text.
pub fn burst_message(job: &str, b: &Burst) -> String {
    let pct = 100.0 * (b.first_iops / b.sustained_iops - 1.0);
    let whole_pct = 100.0 * (b.whole_iops / b.sustained_iops - 1.0);
    format!(
        "{job}: the first {:.1} s ran {pct:.1} % above the rest ({} against {} {} IOPS; burst credits or a \
         throttle's slice); the headline is the sustained {} IOPS ({:.1} MB/s) without it, the whole window read \
         {} IOPS (+{whole_pct:.1} %); latency figures cover the whole window",
        b.first_s,
        grouped(b.first_iops),
        grouped(b.sustained_iops),
        b.direction,
        grouped(b.sustained_iops),
        b.sustained_mb_s,
        grouped(b.whole_iops),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::SeriesPoint;

    fn job(series: &[(f64, f64)]) -> JobResult {
        let mut r = JobResult::new(spec::JobSpec::default());
        let ops: f64 = {
            let mut prev = 0.0;
            series
                .iter()
                .map(|(t, i)| {
                    let d = t - prev;
                    prev = *t;
                    d * i
                })
                .sum()
        };
        let secs = series.last().unwrap().0;
        r.read = Some(DirStats {
            ops: ops as u64,
            bytes: ops as u64 * 4096,
            seconds: secs,
            iops: ops / secs,
            mb_s: ops * 4096.0 / 1e6 / secs,
            ..DirStats::default()
        });
        r.series = series
            .iter()
            .map(|(t, i)| SeriesPoint { t_s: *t, read_iops: *i, read_mb_s: i * 4096.0 / 1e6, ..Default::default() })
            .collect();
        r
    }

    #[test]
    fn a_first_second_above_the_rest_becomes_the_sustained_headline() {
        let mut r = job(&[(1.0, 11_000.0), (2.0, 10_000.0), (3.0, 10_000.0), (4.0, 10_000.0)]);
        let b = startup_burst(&mut r);
        assert_eq!(b.len(), 1);
        let d = r.read.as_ref().unwrap();
        assert!((d.iops - 10_000.0).abs() < 1e-6, "{}", d.iops);
        assert_eq!(d.ops, 30_000);
        assert!((b[0].whole_iops - 10_250.0).abs() < 1e-6);
        assert!(burst_message("j", &b[0]).contains("10 000"));
    }

    #[test]
    fn a_late_sample_is_not_a_burst() {
        // Measured: a tick 6 % late moved ~600 I/Os from the second interval into the first.
        let mut r = job(&[(1.0, 10_659.0), (2.0, 9_491.0), (3.0, 9_989.0), (4.0, 9_973.0)]);
        assert!(startup_burst(&mut r).is_empty());
        let mut real = job(&[(1.0, 10_738.0), (2.0, 10_000.0), (3.0, 10_000.0), (4.0, 10_000.0)]);
        assert_eq!(startup_burst(&mut real).len(), 1);
        assert!((real.read.as_ref().unwrap().iops - 10_000.0).abs() < 1e-6);
    }

    #[test]
    fn a_steady_run_or_a_short_one_is_left_alone() {
        let mut steady = job(&[(1.0, 10_200.0), (2.0, 10_000.0), (3.0, 10_000.0), (4.0, 10_000.0)]);
        assert!(startup_burst(&mut steady).is_empty());
        assert!((steady.read.as_ref().unwrap().iops - 10_050.0).abs() < 1e-6);
        let mut short = job(&[(1.0, 20_000.0), (2.0, 10_000.0)]);
        assert!(startup_burst(&mut short).is_empty());
        // A slow start (cold cache) is not a burst.
        let mut slow = job(&[(1.0, 5_000.0), (2.0, 10_000.0), (3.0, 10_000.0)]);
        assert!(startup_burst(&mut slow).is_empty());
    }
}
