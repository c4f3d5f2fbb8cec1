//! Number formatting shared by the exporters (plain text, no colour).

use spec::{DataPattern, Distribution, JobSpec, RwMode};
use stats::{Aggregate, TargetInfo, TargetKind};

/// Latency with an adaptive unit and three significant figures:
/// `850 ns`, `87.3 µs`, `1.24 ms`, `2.10 s`.
pub fn lat(ns: f64) -> String {
    if !ns.is_finite() || ns <= 0.0 {
        return "0 ns".to_string();
    }
    if ns < 999.5 {
        return format!("{ns:.0} ns");
    }
    let (v, unit) = if ns < 999_500.0 {
        (ns / 1e3, "µs")
    } else if ns < 999_500_000.0 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if v < 9.995 {
        format!("{v:.2} {unit}")
    } else if v < 99.95 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// Latency for the `sla` answer sentence: `850 ns`, `5.5 µs`, `850 µs`, `1.20 ms`, `12.0 ms`,
/// `2.00 s`. It rounds differently from [`lat`] (`5.5 µs` there `5.50 µs`, `150.0 ms` there
/// `150 ms`): the sentence is stored in results (`sla.verdict`) and keeps its wording.
pub fn lat_sentence(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        let us = ns / 1e3;
        if us < 10.0 {
            format!("{us:.1} µs")
        } else {
            format!("{us:.0} µs")
        }
    } else if ns < 1e9 {
        let ms = ns / 1e6;
        if ms < 10.0 {
            format!("{ms:.2} ms")
        } else {
            format!("{ms:.1} ms")
        }
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// Integer with `,` between groups of three digits: `74,312`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    // Digits are ASCII, so byte indices are char boundaries.
    let head = match s.len() % 3 {
        0 => 3.min(s.len()),
        r => r,
    };
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    out.push_str(&s[..head]);
    let mut i = head;
    while i + 3 <= s.len() {
        out.push(',');
        out.push_str(&s[i..i + 3]);
        i += 3;
    }
    out
}

/// IOPS: grouped integer from 1000 up (`74,312`), one decimal below (`187.4`).
pub fn iops(x: f64) -> String {
    if !x.is_finite() || x <= 0.0 {
        "0".to_string()
    } else if x >= 999.95 {
        group(x.round() as u64)
    } else {
        format!("{x:.1}")
    }
}

/// Throughput with two decimals (`1234.56`); the unit is added by the caller.
pub fn rate(x: f64) -> String {
    if !x.is_finite() {
        return "0.00".to_string();
    }
    format!("{x:.2}")
}

/// `512.3`, `98.1`, `7.25`: MB/s with one decimal, two below 10 (the surface scan's figures).
pub fn rate_text(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Byte size with binary units: `4 KiB`, `1 GiB`, `931.51 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut i = 0;
    let mut scale = 1u64;
    while i + 1 < UNITS.len() && n >= scale * 1024 {
        scale *= 1024;
        i += 1;
    }
    if n / scale * scale == n {
        format!("{} {}", n / scale, UNITS[i])
    } else {
        format!("{:.2} {}", n as f64 / scale as f64, UNITS[i])
    }
}

/// Duration in seconds: `5 s`, `1.5 s`, `500 ms`.
pub fn secs(s: f64) -> String {
    if !s.is_finite() || s <= 0.0 {
        "0 s".to_string()
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if (s - s.round()).abs() < 1e-9 {
        format!("{:.0} s", s)
    } else {
        format!("{s:.1} s")
    }
}

/// `2025-01-15T10:30:00Z` → `2025-01-15 10:30:00 UTC`; anything else unchanged.
pub fn date(rfc3339: &str) -> String {
    let b = rfc3339.as_bytes();
    let utc = rfc3339.ends_with('Z') || rfc3339.ends_with("+00:00");
    if b.len() >= 19 && b[10] == b'T' && rfc3339.is_char_boundary(19) {
        let base = rfc3339[..19].replacen('T', " ", 1);
        if utc {
            return format!("{base} UTC");
        }
        return format!("{base} {}", rfc3339[19..].trim_start_matches(|c: char| c == '.' || c.is_ascii_digit()));
    }
    rfc3339.to_string()
}

/// Offset distribution as on the command line: `uniform`, `zipf:1.2`, `zoned:90/10,10/90`.
pub fn dist(d: &Distribution) -> String {
    match d {
        Distribution::Uniform => "uniform".to_string(),
        Distribution::Zipf { theta } => format!("zipf:{theta}"),
        Distribution::Pareto { h } => format!("pareto:{h}"),
        Distribution::Zoned { zones } => {
            let z: Vec<String> = zones.iter().map(|z| format!("{}/{}", z.ops_pct, z.area_pct)).collect();
            format!("zoned:{}", z.join(","))
        }
        Distribution::Normal { dev_pct, center } => format!("normal:{dev_pct}:{center}"),
        Distribution::ZonedAbs { zones } => {
            let z: Vec<String> =
                zones.iter().map(|z| format!("{}/{}", z.ops_pct, spec::units::format_bs_label(z.bytes))).collect();
            format!("zoned_abs:{}", z.join(":"))
        }
    }
}

pub fn data(d: &DataPattern) -> String {
    match d {
        DataPattern::Random => "random data".to_string(),
        DataPattern::Zeros => "zero-filled data".to_string(),
        DataPattern::Compress { pct } => format!("{pct}% compressible data"),
    }
}

/// Data pattern as on the command line: `random`, `zeros`, `compress:50`.
pub fn data_arg(d: &DataPattern) -> String {
    match d {
        DataPattern::Random => "random".to_string(),
        DataPattern::Zeros => "zeros".to_string(),
        DataPattern::Compress { pct } => format!("compress:{pct}"),
    }
}

/// `randrw 70% read` for mixed modes, else the mode name.
pub fn rw(spec: &JobSpec) -> String {
    match spec.rw {
        RwMode::RandRw | RwMode::ReadWrite => {
            format!("{} {}% read", spec.rw.name(), spec.rw.read_pct(spec.mix))
        }
        m => m.name().to_string(),
    }
}

/// What a result ran: its workload when the spec cannot say it (a replayed trace), else
/// [`rw`] of its spec.
pub fn workload(r: &stats::JobResult) -> String {
    r.workload.clone().unwrap_or_else(|| rw(&r.spec))
}

/// The pieces of a result's job line: [`job_parts`], or for a result with a `workload` (a
/// replayed trace) that workload, the depth and the time — the spec's block size, distribution
/// and data pattern describe no job there.
pub fn result_parts(r: &stats::JobResult) -> Vec<String> {
    match &r.workload {
        Some(w) => vec![w.clone(), depth(&r.spec), secs(r.spec.runtime.as_secs_f64())],
        None => job_parts(&r.spec),
    }
}

/// `QD 32 × 1 thread`.
pub fn depth(spec: &JobSpec) -> String {
    let t = if spec.threads == 1 { "thread" } else { "threads" };
    format!("QD {} × {} {t}", spec.qd, spec.threads)
}

/// The job line: `randread · bs 4 KiB · QD 32 × 1 thread · 5 s · uniform · random data`.
pub fn job_line(spec: &JobSpec) -> String {
    job_parts(spec).join(" · ")
}

/// The pieces of [`job_line`].
pub fn job_parts(spec: &JobSpec) -> Vec<String> {
    let bs = match &spec.block_sizes {
        None => format!("bs {}", bytes(spec.bs)),
        Some(b) => block_sizes(b),
    };
    let mut parts = vec![rw(spec), bs, depth(spec)];
    let mut time = secs(spec.runtime.as_secs_f64());
    if !spec.ramp.is_zero() {
        time.push_str(&format!(" (+{} ramp)", secs(spec.ramp.as_secs_f64())));
    }
    parts.push(time);
    match (spec.size, &spec.files) {
        (Some(size), Some(f)) => parts.push(format!("area {} × {}", bytes(size), files(f, spec.threads))),
        (Some(size), None) => parts.push(format!("area {}", bytes(size))),
        _ => {}
    }
    if spec.rw.is_random() {
        parts.push(dist(&spec.dist));
    }
    if spec.rw.read_pct(spec.mix) < 100 {
        parts.push(data(&spec.data));
    }
    if let Some(r) = spec.rate_iops {
        parts.push(format!("rate {} IOPS", group(r)));
    }
    if spec.fsync > 0 {
        parts.push(format!("fsync every {}", spec.fsync));
    }
    parts
}

/// A job's files: `4 files, roundrobin`, `2 files per thread, random:8`.
fn files(f: &spec::FileSet, threads: u32) -> String {
    use spec::FileServiceKind as K;
    let n = f.files_per_clone();
    let each = if f.per_clone > 0 && threads > 1 { " per thread" } else { "" };
    let s = if n == 1 { "" } else { "s" };
    let every = |name: &str| {
        if f.service.switch_every > 1 {
            format!("{name}:{}", f.service.switch_every)
        } else {
            name.to_string()
        }
    };
    let service = match &f.service.kind {
        K::RoundRobin => every("roundrobin"),
        K::Random => every("random"),
        K::Sequential => "sequential".to_string(),
        K::Skewed { dist: d } => format!("files {}", dist(d)),
    };
    format!("{n} file{s}{each}, {service}")
}

/// Variable block sizes in fio's notation: `bs 4K,64K`, `bssplit 4K/10:64K/90`,
/// `bsrange 1K-16K` (read,write when they differ), with the alignment when one is set.
fn block_sizes(b: &spec::BlockSizes) -> String {
    use spec::SizeChoice;
    let label = spec::units::format_bs_label;
    let one = |d: &spec::DirSizes| match &d.sizes {
        SizeChoice::Fixed { bs } => label(*bs),
        SizeChoice::Split { parts } => {
            parts.iter().map(|p| format!("{}/{}", label(p.bs), p.pct)).collect::<Vec<_>>().join(":")
        }
        SizeChoice::Range { min, max } => format!("{}-{}", label(*min), label(*max)),
    };
    let kind = |d: &spec::DirSizes| match d.sizes {
        SizeChoice::Fixed { .. } => "bs",
        SizeChoice::Split { .. } => "bssplit",
        SizeChoice::Range { .. } => "bsrange",
    };
    let mut s = if b.read == b.write {
        format!("{} {}", kind(&b.read), one(&b.read))
    } else if kind(&b.read) == kind(&b.write) {
        format!("{} {},{}", kind(&b.read), one(&b.read), one(&b.write))
    } else {
        format!("read {} {}, write {} {}", kind(&b.read), one(&b.read), kind(&b.write), one(&b.write))
    };
    if b.read.align.is_some() || b.write.align.is_some() {
        let a = |d: &spec::DirSizes| label(d.align());
        if a(&b.read) == a(&b.write) {
            s.push_str(&format!(" (ba {})", a(&b.read)));
        } else {
            s.push_str(&format!(" (ba {},{})", a(&b.read), a(&b.write)));
        }
    }
    if b.unaligned {
        s.push_str(" unaligned");
    }
    s
}

/// What share of a job's I/Os had each block size: `4K 10.0 % · 64K 90.0 %`; more than
/// eight sizes are summed up as their count, smallest, largest and mean.
pub fn block_size_split(counts: &[stats::BsCount]) -> String {
    let total: u64 = counts.iter().map(|c| c.reads + c.writes).sum();
    if total == 0 {
        return "no I/O completed".to_string();
    }
    let label = spec::units::format_bs_label;
    if counts.len() > 8 {
        let moved: u128 = counts.iter().map(|c| u128::from(c.bs) * u128::from(c.reads + c.writes)).sum();
        let (lo, hi) = (counts.first().map_or(0, |c| c.bs), counts.last().map_or(0, |c| c.bs));
        return format!(
            "{} sizes from {} to {}, mean {} per I/O",
            counts.len(),
            label(lo),
            label(hi),
            bytes((moved / u128::from(total)) as u64)
        );
    }
    counts
        .iter()
        .map(|c| format!("{} {:.1} %", label(c.bs), (c.reads + c.writes) as f64 * 100.0 / total as f64))
        .collect::<Vec<_>>()
        .join(" · ")
}

pub fn io_mode(spec: &JobSpec) -> String {
    if spec.engine == spec::EngineKind::Mem {
        return "mem · memcpy to and from a memory region (no device)".to_string();
    }
    let d = match (spec.direct, spec.engine) {
        (true, spec::EngineKind::Iocp) => "unbuffered I/O (FILE_FLAG_NO_BUFFERING)",
        (true, _) => "direct I/O (O_DIRECT)",
        (false, spec::EngineKind::Iocp) => "buffered I/O (the system cache)",
        (false, _) => "buffered I/O (page cache)",
    };
    format!("{} · {d}", spec.engine.name())
}

pub fn kind(k: TargetKind) -> &'static str {
    match k {
        TargetKind::File => "file",
        TargetKind::Block => "block device",
        TargetKind::Null => "null target",
    }
}

/// What the target is, for a facts line: `file, 1 GiB` — with the folder named, when the user
/// named a folder and diskmeter made its test file there.
pub fn target_what(t: &TargetInfo) -> String {
    let mut what = match &t.folder {
        Some(f) => format!("{} in the folder {f}, {}", kind(t.kind), known_bytes(t.size_bytes)),
        None => format!("{}, {}", kind(t.kind), known_bytes(t.size_bytes)),
    };
    if t.created_by_diskmeter {
        what.push_str(", created by diskmeter");
    }
    what
}

pub fn media(t: &TargetInfo) -> String {
    // Virtio and Xen disks report `rotational` by default whatever the host stores them on, and a
    // loop device passes on a flag of its own: for them the flag says nothing about the medium.
    let virtual_disk = t.device.as_deref().is_some_and(|d| ["vd", "xvd", "loop"].iter().any(|p| d.starts_with(p)));
    // The JSON keeps the kernel's flag as it is.
    if virtual_disk {
        return "virtual disk, medium unknown".to_string();
    }
    match t.rotational {
        Some(true) => "rotational (HDD)".to_string(),
        Some(false) => "non-rotational (SSD)".to_string(),
        None => "media unknown".to_string(),
    }
}

/// `nvme0n1 · Example NVMe 1TB`, or `unknown`.
pub fn device(t: &TargetInfo) -> String {
    let parts: Vec<&str> = [t.device.as_deref(), t.model.as_deref()].into_iter().flatten().collect();
    if parts.is_empty() {
        "unknown".to_string()
    } else {
        parts.join(" · ")
    }
}

/// Why a result is partial, as every format says it: the error's kind and message ("I/O error:
/// read failed at offset 0"), or just the message when it already names the kind ("interrupted by
/// the user", not "interrupted: interrupted by the user").
pub fn partial_why(doc: &stats::ResultDoc) -> String {
    match &doc.error {
        Some(e) if !e.kind.is_empty() && e.message.to_lowercase().contains(&e.kind.to_lowercase()) => e.message.clone(),
        Some(e) => format!("{}: {}", e.kind, e.message),
        None => "interrupted or failed before completion".to_string(),
    }
}

/// `512 B logical / 4 KiB physical`; `unknown` when the result does not say (0: an imported
/// result, whose tool does not report block sizes).
pub fn blocks(t: &TargetInfo) -> String {
    if t.logical_block == 0 && t.physical_block == 0 {
        return "unknown".to_string();
    }
    format!(
        "{} logical / {} physical",
        known_bytes(u64::from(t.logical_block)),
        known_bytes(u64::from(t.physical_block))
    )
}

/// A size a result reports, `unknown` when it is 0 (no disk, memory or block of size 0 exists:
/// a 0 is a figure the result did not have).
pub fn known_bytes(n: u64) -> String {
    if n == 0 {
        "unknown".to_string()
    } else {
        bytes(n)
    }
}

/// A count a result reports (CPUs), `unknown` when it is 0.
pub fn known_count(n: impl Into<u64>) -> String {
    match n.into() {
        0 => "unknown".to_string(),
        n => n.to_string(),
    }
}

/// `max of 3 passes (CrystalDiskMark 9): highest MB/s, lowest mean latency`.
pub fn aggregation(how: Option<Aggregate>, passes: usize) -> String {
    match how {
        Some(Aggregate::Max) if passes > 1 => {
            format!("max of {passes} passes (CrystalDiskMark 9): highest MB/s, lowest mean latency")
        }
        Some(Aggregate::Mean) if passes > 1 => {
            format!("mean of {passes} passes (KDiskMark style)")
        }
        _ => "single pass".to_string(),
    }
}

/// Greedy wrap of `pieces` joined by `sep` into lines of at most `width` characters (a
/// single over-long piece stays whole). The first line starts with `first`, later lines
/// with `cont`.
pub fn wrap(first: &str, cont: &str, pieces: &[String], sep: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = first.to_string();
    let mut empty = true;
    for p in pieces {
        let len = cur.chars().count();
        if empty {
            cur.push_str(p);
            empty = false;
        } else if len + sep.chars().count() + p.chars().count() <= width {
            cur.push_str(sep);
            cur.push_str(p);
        } else {
            lines.push(std::mem::replace(&mut cur, format!("{cont}{p}")));
        }
    }
    lines.push(cur);
    lines
}

/// Wrap free text at spaces.
pub fn wrap_text(first: &str, cont: &str, text: &str, width: usize) -> Vec<String> {
    let words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    wrap(first, cont, &words, " ", width)
}

/// The figures of one direction in table order (IOPS, MB/s, MiB/s, mean, p50, p99, p99.9,
/// max, mean depth): the human and Markdown tables share it so they cannot drift apart.
pub fn dir_cells(d: &stats::DirStats) -> [String; 9] {
    let l = &d.lat_ns;
    [
        iops(d.iops),
        rate(d.mb_s),
        rate(d.mib_s),
        lat(l.mean),
        lat(l.p50 as f64),
        lat(l.p99 as f64),
        lat(l.p99_9 as f64),
        lat(l.max as f64),
        format!("{:.1}", d.qd_mean),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentence_latency() {
        let got: Vec<String> =
            [850.0, 5_500.0, 850_000.0, 1.2e6, 12e6, 150e6, 2e9].iter().map(|&n| lat_sentence(n)).collect();
        assert_eq!(got, ["850 ns", "5.5 µs", "850 µs", "1.20 ms", "12.0 ms", "150.0 ms", "2.00 s"]);
    }

    #[test]
    fn media_of_virtual_disks_is_not_taken_from_the_rotational_flag() {
        let mut t = TargetInfo::new("/dev/x", stats::TargetKind::Block, 1 << 30);
        t.rotational = Some(true);
        t.device = Some("sda".into());
        assert_eq!(media(&t), "rotational (HDD)");
        for dev in ["vda", "vdb1", "xvda", "loop3"] {
            t.device = Some(dev.into());
            for flag in [Some(true), Some(false), None] {
                t.rotational = flag;
                assert_eq!(media(&t), "virtual disk, medium unknown", "{dev} {flag:?}");
            }
        }
        t.rotational = None;
        t.device = Some("nvme0n1".into());
        assert_eq!(media(&t), "media unknown");
    }

    #[test]
    fn latency_units() {
        assert_eq!(lat(0.0), "0 ns");
        assert_eq!(lat(850.0), "850 ns");
        assert_eq!(lat(999.4), "999 ns");
        assert_eq!(lat(999.6), "1.00 µs");
        assert_eq!(lat(87_300.0), "87.3 µs");
        assert_eq!(lat(873_000.0), "873 µs");
        assert_eq!(lat(999_700.0), "1.00 ms");
        assert_eq!(lat(1_240_000.0), "1.24 ms");
        assert_eq!(lat(12_400_000.0), "12.4 ms");
        assert_eq!(lat(2_100_000_000.0), "2.10 s");
        assert_eq!(lat(f64::NAN), "0 ns");
    }

    #[test]
    fn numbers() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(74_312), "74,312");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(iops(187.44), "187.4");
        assert_eq!(iops(999.96), "1,000");
        assert_eq!(iops(74_312.4), "74,312");
        assert_eq!(rate(1234.5678), "1234.57");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(4096), "4 KiB");
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(bytes(1_000_204_886_016), "931.51 GiB");
        assert_eq!(secs(5.0), "5 s");
        assert_eq!(secs(0.5), "500 ms");
        assert_eq!(secs(1.5), "1.5 s");
        assert_eq!(date("2025-01-15T10:30:00Z"), "2025-01-15 10:30:00 UTC");
        assert_eq!(date("2025-01-15T10:30:00.123Z"), "2025-01-15 10:30:00 UTC");
        assert_eq!(date("yesterday"), "yesterday");
    }

    #[test]
    fn wrapping() {
        let p: Vec<String> = ["aaaa", "bbbb", "cccc"].iter().map(|s| s.to_string()).collect();
        assert_eq!(wrap("> ", "  ", &p, " · ", 13), ["> aaaa · bbbb", "  cccc"]);
        assert_eq!(wrap("> ", "  ", &p, " · ", 12), ["> aaaa", "  bbbb", "  cccc"]);
        assert_eq!(wrap_text("w: ", "   ", "one two three", 9), ["w: one", "   two", "   three"]);
        assert_eq!(wrap_text("w: ", "   ", "", 9), ["w: "]);
    }
}
