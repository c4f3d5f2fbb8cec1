//! The checks that read the target, the device under it and the finished figures: what the
//! device's counters say, the request-size limit, the page cache and RAM, the device cache,
//! the data written, and the doctor's cheap checks (`cgroup-limit`, `faster-than-medium`,
//! `link-bound`). Which of them a command gets is decided by the matrix in [`super`].

use crate::session::Observer;
use engine::measure::{self, OpenTarget, TargetKind};
use spec::{DataPattern, JobSpec};
use stats::{codes, ResultDoc};

/// What the device's own counters say against diskmeter's (split, merged, less, more,
/// foreign I/O), one warning per code, naming the first result it was seen in; a figure in a
/// warning's margin band is noted as borderline ([`stats::margin`]).
pub(super) fn device_warnings(doc: &mut ResultDoc, target: Option<&OpenTarget>) {
    let raw = target.is_some_and(|t| t.probe.kind == TargetKind::Block);
    let mut found: Vec<stats::device::Finding> = Vec::new();
    for r in &doc.results {
        if let Some(v) = &r.device_view {
            for mut f in v.judged(raw) {
                let code = f.margin.code;
                if doc.warnings.iter().any(|w| w.code == code) {
                    continue;
                }
                f.message = format!("{}: {}", r.name, f.message);
                match found.iter_mut().find(|o| o.margin.code == code) {
                    // A warning given in a later job outranks a borderline figure in an earlier one.
                    Some(o) if o.zone != stats::margin::Zone::Given && f.zone == stats::margin::Zone::Given => *o = f,
                    Some(_) => {}
                    None => found.push(f),
                }
            }
        }
    }
    for f in found {
        doc.place(f.zone, &f.margin, f.value, f.message);
    }
}

/// The kernel name the doctor's checks look the target's device up by.
fn device_name(t: &OpenTarget) -> Option<&str> {
    t.probe.device.as_deref().or(t.probe.disk.as_deref())
}

/// Said before the run starts: a cgroup limit on the device (the `cgroup-limit` warning
/// itself comes with the figures).
pub(super) fn cgroup_notice(t: &OpenTarget, obs: &mut dyn Observer) {
    let Some(name) = device_name(t) else { return };
    let ctx = doctor::bench::context(&platform::block::Roots::default(), name);
    for l in &ctx.cgroup {
        obs.notice(&format!(
            "warning[{}]: this process's cgroup limits {name} to {} {} ({}): figures at the limit are the limit's, \
             not the disk's",
            codes::CGROUP_LIMIT,
            l.value,
            l.kind.replace('_', " "),
            l.source
        ));
    }
}

/// A `bs` above the device's request-size limit (`max_sectors_kb`) is split before it reaches
/// the device: said before the run starts, naming the limit.
pub(super) fn split_limit_warning(doc: &mut ResultDoc, jobs: &[&JobSpec], t: &OpenTarget, obs: &mut dyn Observer) {
    let Some(disk) = t.probe.disk.as_deref().or(t.probe.device.as_deref()) else { return };
    let Some(kb) =
        platform::block::Topology::default().device(disk).and_then(|d| d.queue.max_sectors_kb).map(u64::from)
    else {
        return;
    };
    let limit = kb * 1024;
    if let Some(j) = jobs.iter().filter(|j| j.bs > limit).max_by_key(|j| j.bs) {
        let msg = format!(
            "--bs {} is above {disk}'s request-size limit (max_sectors_kb {kb} KiB): each I/O reaches the device as \
             {} requests; use --bs {} KiB or less to measure whole requests",
            spec::units::format_size(j.bs),
            j.bs.div_ceil(limit),
            kb
        );
        obs.notice(&format!("warning[{}]: {msg}", codes::SPLIT_IO));
        doc.warn(codes::SPLIT_IO, msg);
    }
}

/// `buffered-io`, and `small-test-area` for a buffered area smaller than RAM.
pub(super) fn buffered(doc: &mut ResultDoc, jobs: &[&JobSpec], region: u64) {
    if !jobs.iter().any(|j| !j.direct) {
        return;
    }
    doc.warn(
        codes::BUFFERED_IO,
        "buffered I/O (--buffered): the page cache (RAM) serves and absorbs I/O, so figures describe memory as much \
         as the device; drop --buffered to measure the device",
    );
    let ram = measure::page_cache_relevant_ram();
    if region < ram {
        doc.warn(
            codes::SMALL_TEST_AREA,
            format!(
                "test area ({}) is smaller than RAM ({}): with buffered I/O much of it is served from the page cache; \
                 use --size larger than RAM or drop --buffered",
                spec::units::format_size(region),
                spec::units::format_size(ram)
            ),
        );
    }
}

/// `ram-backed`: the target lives in RAM. True when it does.
pub(super) fn ram_backed(doc: &mut ResultDoc, t: &OpenTarget) -> bool {
    if t.probe.backing_is_ram {
        doc.warn(
            codes::RAM_BACKED,
            format!("{} is backed by RAM (tmpfs or a RAM disk): figures describe memory, not a disk", t.path.display()),
        );
    }
    t.probe.backing_is_ram
}

/// `small-test-area` against 10× the device cache, or `device-cache-unknown`, for direct I/O.
pub(super) fn device_cache(doc: &mut ResultDoc, jobs: &[&JobSpec], t: &OpenTarget, region: u64) {
    if !jobs.iter().any(|j| j.direct) {
        return;
    }
    match t.probe.device_cache_bytes {
        Some(c) if region < 10 * c => doc.warn(
            codes::SMALL_TEST_AREA,
            format!(
                "test area ({}) is smaller than 10x the device cache ({}): the cache, not the media, answers much of \
                 it; use --size of at least {}",
                spec::units::format_size(region),
                spec::units::format_size(c),
                spec::units::format_size(10 * c)
            ),
        ),
        Some(_) => {}
        None => doc.warn(
            codes::DEVICE_CACHE_UNKNOWN,
            format!(
                "device cache size unknown: cannot confirm the test area ({}) is at least 10x every cache in the \
                 path; for worst-case figures use a larger --size (a desktop: the whole disk)",
                spec::units::format_size(region)
            ),
        ),
    }
}

/// What opening the target found (`unwritten-read`, `compressed-target`).
pub(super) fn target_findings(doc: &mut ResultDoc, t: &OpenTarget) {
    for (code, msg) in &t.warnings {
        doc.warn(code, msg.clone());
    }
}

/// `compressible-data`: a job writes data a device could compress or deduplicate.
pub(super) fn compressible(doc: &mut ResultDoc, jobs: &[&JobSpec]) {
    if jobs.iter().any(|j| j.rw.read_pct(j.mix) < 100 && !matches!(j.data, DataPattern::Random)) {
        doc.warn(
            codes::ZERO_DATA,
            "write data is compressible (--data zeros/compress): compressing or deduplicating devices will look \
             faster than with real data",
        );
    }
}

/// The doctor's cheap checks on a finished run (`docs/doctor.md`, "Checks inside every
/// benchmark") whose codes `keep` lets through: a cgroup limit on the device (first in the
/// list), latency faster than the medium, throughput at the link's ceiling. Each code once.
pub(super) fn cheap_checks(doc: &mut ResultDoc, t: &OpenTarget, keep: &dyn Fn(&str) -> bool) {
    let Some(name) = device_name(t) else { return };
    let ctx = doctor::bench::context(&platform::block::Roots::default(), name);
    for (code, msg) in doctor::bench::warnings(&ctx, doc) {
        if keep(code) && !doc.warnings.iter().any(|w| w.code == code) {
            doc.warn(code, msg);
            // A cgroup limit undoes every figure at it: it leads the list.
            if code == codes::CGROUP_LIMIT && doc.warnings.last().is_some_and(|w| w.code == code) {
                if let Some(w) = doc.warnings.pop() {
                    doc.warnings.insert(0, w);
                }
            }
        }
    }
}
