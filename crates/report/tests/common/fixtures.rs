//! Hand-made, deterministic result documents for the snapshot tests.

use std::time::Duration;

use spec::{DataPattern, Distribution, JobSpec, RwMode, Zone};
use stats::{
    codes, Aggregate, ClusterJob, ClusterResult, ClusterSource, CpuUsage, DirStats, ErrorInfo, HostFigures, HostInfo,
    JobResult, LatSummary, PassResult, RankInfo, ResultDoc, Stonewall, TargetInfo, TargetKind, TimelinePoint,
};

fn host() -> HostInfo {
    HostInfo {
        kernel: "6.8.0-45-generic".into(),
        cpus: 8,
        memory_bytes: 16 << 30,
        cpu_model: Some("AMD Ryzen 7 5800X".into()),
        hostname: Some("bench".into()),
        ..HostInfo::default()
    }
}

fn u(x: f64) -> u64 {
    x.round() as u64
}

/// Figures for one direction from throughput and depth (latency by Little's law).
pub fn dir(bs: u64, mb_s: f64, outstanding: f64, seconds: f64) -> DirStats {
    let bytes = ((mb_s * 1e6 * seconds) as u64 / bs) * bs;
    let ops = bytes / bs;
    let iops = ops as f64 / seconds;
    let mean = (outstanding / iops * 1e9).round();
    DirStats {
        bound: None,
        ops,
        bytes,
        seconds,
        iops,
        mb_s: bytes as f64 / 1e6 / seconds,
        mib_s: bytes as f64 / 1_048_576.0 / seconds,
        lat_ns: LatSummary {
            min: u(mean * 0.31),
            mean,
            stddev: (mean * 0.22).round(),
            p50: u(mean * 0.93),
            p90: u(mean * 1.21),
            p99: u(mean * 1.68),
            p99_9: u(mean * 2.9),
            p99_99: u(mean * 5.3),
            max: u(mean * 11.0),
        },
        qd_mean: (outstanding * 0.98 * 100.0).round() / 100.0,
        lat_cdf: Vec::new(),
    }
}

fn mark_spec(name: &str, rw: RwMode, bs: u64, qd: u32, threads: u32) -> JobSpec {
    JobSpec {
        name: name.into(),
        rw,
        bs,
        qd,
        threads,
        size: Some(1 << 30),
        runtime: Duration::from_secs(5),
        ..JobSpec::default()
    }
}

/// `mark --profile default`: 4 tests × 3 passes, aggregated as CrystalDiskMark 9 does.
pub fn mark_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("mark", "2025-01-15T10:30:00Z", host());
    doc.tool.version = "0.1.0".into();
    let mut t = TargetInfo::new("/home/user/diskmeter.test", TargetKind::File, 1 << 30);
    t.device = Some("nvme0n1".into());
    t.model = Some("Samsung SSD 980 PRO 1TB".into());
    t.rotational = Some(false);
    t.scheduler = Some("none".into());
    t.physical_block = 4096;
    t.filesystem = Some("ext4".into());
    t.created_by_diskmeter = true;
    doc.target = Some(t);

    // (label, rw pair, bs, qd, threads, read MB/s, write MB/s)
    let tests = [
        ("SEQ1M Q8T1", false, 1 << 20, 8, 1, 7012.34, 5123.45),
        ("SEQ1M Q1T1", false, 1 << 20, 1, 1, 3105.77, 2987.01),
        ("RND4K Q32T1", true, 4096, 32, 1, 812.90, 402.30),
        ("RND4K Q1T1", true, 4096, 1, 1, 78.41, 251.20),
    ];
    // Pass-to-pass variation: pass 2 has the best MB/s, pass 3 the lowest mean latency.
    let tp = [0.981, 1.0, 0.993];
    let lat = [1.04, 1.01, 0.97];
    for (label, random, bs, qd, threads, rd, wr) in tests {
        let rw = if random { RwMode::RandRead } else { RwMode::Read };
        let mut r = JobResult::new(mark_spec(label, rw, bs, qd, threads));
        let out = f64::from(qd * threads);
        let passes = (0..3)
            .map(|i| {
                let mut rd = dir(bs, rd * tp[i], out, 5.0);
                let mut wr = dir(bs, wr * tp[i], out, 5.0);
                rd.lat_ns.mean = (rd.lat_ns.mean * lat[i]).round();
                wr.lat_ns.mean = (wr.lat_ns.mean * lat[i]).round();
                PassResult { pass: i as u32 + 1, read: Some(rd), write: Some(wr), ..PassResult::default() }
            })
            .collect();
        r.set_passes(passes, Aggregate::Max);
        r.cpu = CpuUsage { user_pct: 1.2, sys_pct: 6.8, max_worker_pct: 31.0, poll_us: 0 };
        doc.results.push(r);
    }
    doc.warn(
        codes::SMALL_TEST_AREA,
        "test area 1 GiB is smaller than RAM (16 GiB); use --size 32G to measure past caches",
    );
    doc
}

/// `run` with two jobs, interrupted by Ctrl-C.
pub fn run_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("run", "2025-01-15T10:30:00Z", host());
    doc.tool.version = "0.1.0".into();
    let mut t = TargetInfo::new("/dev/nvme1n1", TargetKind::Block, 1_000_204_886_016);
    t.device = Some("nvme1n1".into());
    t.model = Some("WD Black SN850X 1TB".into());
    t.rotational = Some(false);
    t.scheduler = Some("none".into());
    t.physical_block = 4096;
    t.dio_mem_align = Some(4);
    t.dio_offset_align = Some(512);
    doc.target = Some(t);

    let mut a = JobResult::new(JobSpec {
        name: "randread-4k".into(),
        rw: RwMode::RandRead,
        bs: 4096,
        qd: 32,
        threads: 1,
        runtime: Duration::from_secs(30),
        ramp: Duration::from_secs(2),
        ..JobSpec::default()
    });
    a.read = Some(dir(4096, 304.38, 32.0, 30.0));
    a.cpu = CpuUsage { user_pct: 4.1, sys_pct: 22.5, max_worker_pct: 26.6, poll_us: 0 };

    let mut b = JobResult::new(JobSpec {
        name: "oltp".into(),
        rw: RwMode::RandRw,
        mix: 70,
        bs: 8192,
        qd: 16,
        threads: 4,
        runtime: Duration::from_secs(60),
        size: Some(64 << 30),
        dist: Distribution::Zoned {
            zones: vec![Zone { ops_pct: 90.0, area_pct: 10.0 }, Zone { ops_pct: 10.0, area_pct: 90.0 }],
        },
        data: DataPattern::Compress { pct: 50 },
        fsync: 64,
        rate_iops: Some(150_000),
        ..JobSpec::default()
    });
    b.read = Some(dir(8192, 611.2, 44.8, 12.5));
    b.write = Some(dir(8192, 262.0, 25.6, 12.5));
    b.cpu = CpuUsage { user_pct: 9.4, sys_pct: 41.0, max_worker_pct: 17.9, poll_us: 0 };
    b.fsyncs = 6_250;
    b.error = Some(ErrorInfo::new("interrupted", "stopped after 12.5 s of 60 s"));

    doc.results.push(a);
    doc.results.push(b);
    doc.warn(codes::ZERO_DATA, "job oltp writes 50% compressible data; compressing devices will look faster");
    doc.warn(codes::RATE_NOT_MET, "job oltp: requested 150,000 IOPS, achieved 111,816");
    doc.partial = true;
    doc.error = Some(ErrorInfo::new("interrupted", "Ctrl-C"));
    doc
}

/// One rank's headline figures (reads only) from its throughput, depth and start.
fn host_figures(rank: u32, host: &str, mb_s: f64, start_offset_s: f64) -> HostFigures {
    let d = dir(4096, mb_s, 32.0, 30.0);
    HostFigures {
        rank,
        host: host.into(),
        iops: d.iops,
        mb_s: d.mb_s,
        lat_mean_ns: d.lat_ns.mean,
        lat_p99_ns: d.lat_ns.p99,
        lat_max_ns: d.lat_ns.max,
        qd_mean: d.qd_mean,
        seconds: d.seconds,
        start_unix_ns: 1_736_937_002_000_000_000 + (start_offset_s * 1e9).round() as u64,
        start_offset_s: Some(start_offset_s),
    }
}

fn rank_info(rank: u32, host: &str) -> RankInfo {
    RankInfo {
        rank,
        host: host.into(),
        target: Some(format!("/scratch/{host}/diskmeter.{rank}.test")),
        started_at: "2025-01-15T10:30:00Z".into(),
        partial: false,
        error: None,
    }
}

/// `run` under `mpirun` on three hosts: the merged job, and per rank its figures, a
/// stonewall window and a timeline of three seconds. Rank 2 (node03) is the slowest.
pub fn cluster_doc() -> ResultDoc {
    let mut doc = ResultDoc::new("run", "2025-01-15T10:30:00Z", host());
    doc.tool.version = "0.1.0".into();
    doc.host.hostname = Some("node01".into());
    let mut t = TargetInfo::new("/scratch/node01/diskmeter.0.test", TargetKind::File, 16 << 30);
    t.device = Some("nvme0n1".into());
    t.model = Some("Samsung SSD 990 PRO 2TB".into());
    t.rotational = Some(false);
    t.scheduler = Some("none".into());
    t.physical_block = 4096;
    t.filesystem = Some("xfs".into());
    t.created_by_diskmeter = true;
    doc.target = Some(t);

    let hosts = vec![
        host_figures(0, "node01", 310.52, 0.000_012),
        host_figures(1, "node02", 305.11, 0.000_031),
        host_figures(2, "node03", 268.40, 0.000_214),
    ];
    let mut job = JobResult::new(JobSpec {
        name: "randread-4k".into(),
        rw: RwMode::RandRead,
        bs: 4096,
        qd: 32,
        threads: 1,
        runtime: Duration::from_secs(30),
        ..JobSpec::default()
    });
    let total: f64 = hosts.iter().map(|h| h.mb_s).sum();
    job.read = Some(dir(4096, total, 96.0, 30.0));
    job.cpu = CpuUsage { user_pct: 4.3, sys_pct: 23.1, max_worker_pct: 27.9, poll_us: 0 };
    doc.results.push(job);

    let timeline = [(1.0, 214_870.0, 760_000), (2.0, 216_012.0, 741_000), (3.0, 215_402.0, 802_000)]
        .into_iter()
        .map(|(t_s, iops, p99)| TimelinePoint {
            t_s,
            unix_s: 1_736_937_002.0 + t_s,
            iops,
            mb_s: iops * 4096.0 / 1e6,
            lat_p99_ns: p99,
            ranks: 3,
        })
        .collect();
    let stonewall = Stonewall { seconds: 29.9998, iops: 215_377.4, mb_s: 882.19 };
    doc.cluster = Some(ClusterResult {
        source: ClusterSource::Mpi,
        ranks: vec![rank_info(0, "node01"), rank_info(1, "node02"), rank_info(2, "node03")],
        jobs: vec![ClusterJob {
            name: "randread-4k".into(),
            hosts,
            slowest_rank: Some(2),
            start_skew_s: 0.000_202,
            stonewall: Some(stonewall),
            timeline,
        }],
        failed_rank: None,
    });
    doc.warn(
        codes::HOST_IMBALANCE,
        "randread-4k: node03 (rank 2) did 65527 IOPS, -12% from the median of the ranks (74490): the merged \
         figure hides an uneven share",
    );
    doc
}

/// [`cluster_doc`] in which rank 2 (node03) failed before it had figures: ranks 0 and 1
/// were stopped, the merged figures are theirs and partial.
pub fn cluster_failed_doc() -> ResultDoc {
    let mut doc = cluster_doc();
    doc.warnings.clear();
    let c = doc.cluster.as_mut().expect("cluster section");
    c.source = ClusterSource::Merge;
    c.failed_rank = Some(2);
    c.ranks[2].partial = true;
    let mut e = ErrorInfo::new("eio", "read at offset 81920: Input/output error (os error 5)");
    e.offset = Some(81_920);
    c.ranks[2].error = Some(e.clone());
    for r in &mut c.ranks[..2] {
        r.partial = true;
        r.error = Some(ErrorInfo::new("stopped", "stopped: rank 2 failed"));
    }
    let job = &mut c.jobs[0];
    job.hosts.truncate(2);
    job.slowest_rank = Some(1);
    job.start_skew_s = 0.000_019;
    job.stonewall = Some(Stonewall { seconds: 11.42, iops: 149_580.2, mb_s: 612.68 });
    for p in &mut job.timeline {
        p.ranks = 2;
    }
    let total: f64 = job.hosts.iter().map(|h| h.mb_s).sum();
    let r = &mut doc.results[0];
    r.read = Some(dir(4096, total, 64.0, 11.5));
    doc.partial = true;
    e.message = format!("rank 2 (node03) failed: {}", e.message);
    doc.error = Some(e);
    doc
}
