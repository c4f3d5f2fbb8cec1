//! The streamed commands give exactly what the commands gave when they held the whole trace:
//! `reference` below is that earlier implementation (load into a `Vec`, one replay per
//! policy, `Opt` over the slice, the footprint by sort and dedup, the curve over the slice),
//! and every field of the results but the timings must be equal.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::config::{KIB, MIB};
use crate::Preset;
use std::io::Write as _;
use trace::{ReadOptions, TraceFormat};

/// The earlier implementation, kept as the reference.
mod reference {
    use super::*;
    use crate::Opt;

    pub struct Loaded {
        pub requests: Vec<Request>,
        pub summary: TraceSummary,
        pub cut: Option<Cut>,
    }

    pub fn load(input: &TraceInput) -> Loaded {
        let format = trace_format(input).unwrap();
        let mut reader = trace::open(&input.path, &format, &input.opts).unwrap();
        let mut requests = Vec::new();
        let mut cut = None;
        for r in reader.by_ref() {
            match r {
                Ok(r) => requests.push(r),
                Err(e) => {
                    assert!(!requests.is_empty(), "bad from the start: {e}");
                    cut = Some(Cut::Trace(format!(
                        "{} is cut short after {} requests: {e}; the results cover the requests before it",
                        input.path.display(),
                        requests.len()
                    )));
                    break;
                }
            }
        }
        let mut s = TraceSummary {
            path: input.path.display().to_string(),
            format: format.summary_name(),
            devices: reader.devices().to_vec(),
            skipped_lines: reader.skipped(),
            ..TraceSummary::default()
        };
        for r in &requests {
            stream::count(&mut s, r);
        }
        let first = requests.iter().map(|r| r.t_ns).min().unwrap_or(0);
        let last = requests.iter().map(|r| r.t_ns).max().unwrap_or(0);
        s.span_s = (last - first) as f64 / 1e9;
        Loaded { requests, summary: s, cut }
    }

    pub fn simulate(input: &TraceInput, cfg: &SimulateConfig) -> Outcome {
        let loaded = load(input);
        let reqs = &loaded.requests;
        let ssd_bytes = cfg.ssd_bytes.unwrap_or(cfg.cache.capacity_bytes);
        let mut out = CacheResult {
            action: "simulate".into(),
            trace: Some(loaded.summary.clone()),
            config: Some(CacheSetup {
                preset: cfg.preset.clone(),
                capacity_bytes: cfg.cache.capacity_bytes,
                block_bytes: cfg.cache.block_bytes,
                sub_block_bytes: cfg.cache.sub_block_bytes,
                por: cfg.cache.por,
                pow: cfg.cache.pow,
                mode: cfg.cache.mode.name().to_string(),
                seq_cutoff_bytes: cfg.cache.seq_cutoff,
                ssd_bytes,
            }),
            ..CacheResult::default()
        };
        for &k in &cfg.policies {
            let mut p: Box<dyn Policy> = match k {
                PolicyKind::Qsan => match cfg.counter_limit {
                    Some(n) => Box::new(QsanCache::with_counter_limit(cfg.cache, n).unwrap()),
                    None => Box::new(QsanCache::new(cfg.cache).unwrap()),
                },
                PolicyKind::Lru => Box::new(Lru::new(cfg.cache.capacity_bytes, cfg.unit_bytes).unwrap()),
                PolicyKind::Nhit => Box::new(Nhit::new(cfg.cache.capacity_bytes, cfg.unit_bytes).unwrap()),
                PolicyKind::S3Fifo => Box::new(S3Fifo::new(cfg.cache.capacity_bytes, cfg.unit_bytes).unwrap()),
                PolicyKind::Opt => Box::new(Opt::new(reqs, cfg.cache.capacity_bytes, cfg.unit_bytes).unwrap()),
            };
            // One request at a time, as the earlier replay did (no `access_all`).
            let series = one_by_one(p.as_mut(), reqs, cfg.interval_ns);
            out.policies.push(policy_result(p.name(), p.stats(), &series, ssd_bytes, &cfg.profile));
        }
        if let Some(t) = out.trace.as_mut() {
            let unit = cfg.cache.block_bytes.max(1);
            let mut keys: Vec<u64> = reqs.iter().flat_map(|r| mrc::keys(r, unit)).collect();
            keys.sort_unstable();
            keys.dedup();
            t.footprint_bytes = keys.len() as u64 * unit;
        }
        Outcome { result: out, cut: loaded.cut }
    }

    /// The earlier series loop, request by request.
    fn one_by_one(policy: &mut dyn Policy, requests: &[Request], interval_ns: Option<u64>) -> crate::Series {
        let start_ns = requests.first().map_or(0, |r| r.t_ns);
        let end_ns = requests.iter().map(|r| r.t_ns).max().unwrap_or(start_ns);
        let span_ns = end_ns - start_ns;
        let interval = interval_ns.unwrap_or_else(|| default_interval(span_ns)).max(1);
        let mut points = Vec::new();
        let mut bucket_end = start_ns.saturating_add(interval);
        let mut last = *policy.stats();
        let mut pending = false;
        for r in requests {
            if r.t_ns >= bucket_end {
                if pending {
                    let (now, d) = (policy.stats(), policy.stats().since(&last));
                    points.push(crate::SeriesPoint {
                        t_ns: bucket_end,
                        reads: d.reads,
                        read_hits: d.read_hits,
                        cum_hit_ratio: now.read_hit_ratio(),
                        interval_hit_ratio: (d.reads > 0).then(|| d.read_hits as f64 / d.reads as f64),
                        occupancy: now.occupancy(),
                    });
                    last = *policy.stats();
                }
                let k = (r.t_ns - start_ns) / interval;
                bucket_end = start_ns.saturating_add(k.saturating_add(1).saturating_mul(interval));
            }
            policy.access(r);
            pending = true;
        }
        if pending {
            let (now, d) = (policy.stats(), policy.stats().since(&last));
            points.push(crate::SeriesPoint {
                t_ns: bucket_end,
                reads: d.reads,
                read_hits: d.read_hits,
                cum_hit_ratio: now.read_hit_ratio(),
                interval_hit_ratio: (d.reads > 0).then(|| d.read_hits as f64 / d.reads as f64),
                occupancy: now.occupancy(),
            });
        }
        crate::Series { interval_ns: interval, start_ns, span_ns, points }
    }

    pub fn mrc(input: &TraceInput, cfg: &MrcConfig, auto_limit: usize) -> Outcome {
        let loaded = load(input);
        let reqs = &loaded.requests;
        let filter = if cfg.reads_only { OpFilter::ReadsOnly } else { OpFilter::ReadsAndWrites };
        let result = if let Some(base) = cfg.qsan {
            let runs = mrc::sweep(
                &cfg.sizes,
                |size, rs: &[Request]| -> f64 {
                    let mut c = base;
                    c.capacity_bytes = size;
                    let mut q = QsanCache::new(c).unwrap();
                    for r in rs {
                        q.access(r);
                    }
                    1.0 - q.stats().read_hit_ratio()
                },
                reqs,
            );
            let points: Vec<MrcPoint> =
                runs.into_iter().map(|(size, miss)| MrcPoint { cache_bytes: size, miss_ratio: miss }).collect();
            let rec = recommend_points(&points);
            MrcResult {
                method: "simulation".into(),
                policy: "qsan".into(),
                unit_bytes: base.block_bytes,
                sampling_rate: None,
                points,
                recommended: rec,
            }
        } else {
            let refs: usize = reqs.iter().map(|r| mrc::keys(r, cfg.unit_bytes).count()).sum();
            let rate = cfg.shards_rate.or((refs > auto_limit).then_some(0.01));
            let curve = match rate {
                Some(r) => mrc::shards(reqs, cfg.unit_bytes, filter, &ShardsConfig::fixed_rate(r)).unwrap(),
                None => mrc::mattson(reqs, cfg.unit_bytes, filter),
            };
            let u = cfg.unit_bytes;
            let mut points: Vec<MrcPoint> = if cfg.sizes.is_empty() {
                curve.points.iter().map(|&(b, m)| MrcPoint { cache_bytes: b * u, miss_ratio: m }).collect()
            } else {
                cfg.sizes.iter().map(|&s| MrcPoint { cache_bytes: s, miss_ratio: curve.miss_ratio_at(s / u) }).collect()
            };
            thin(&mut points, 400);
            MrcResult {
                method: if rate.is_some() { "shards" } else { "mattson" }.into(),
                policy: "lru".into(),
                unit_bytes: u,
                sampling_rate: rate,
                points,
                recommended: mrc::recommend(&curve).map(|(b, m)| MrcPoint { cache_bytes: b * u, miss_ratio: m }),
            }
        };
        let result = CacheResult {
            action: "mrc".into(),
            trace: Some(loaded.summary),
            mrc: Some(result),
            ..CacheResult::default()
        };
        Outcome { result, cut: loaded.cut }
    }
}

/// A mixed trace: reads, writes, discards, flushes and empty requests, unaligned lengths of
/// 1 to 40 units, three devices, a hot region, times that now and then go backwards.
fn mixed_trace(n: usize) -> Vec<Request> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut t = 5_000_000u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let a = next();
            let op = match a % 100 {
                0..=59 => Op::Read,
                60..=86 => Op::Write,
                87..=93 => Op::Discard,
                _ => Op::Flush,
            };
            let hot = a % 7 < 5;
            let span = if hot { 48 * MIB } else { 2048 * MIB };
            let offset = (next() % span) & !511;
            let len = match (op, next() % 50) {
                (Op::Flush, _) | (_, 0) => 0,
                (_, k) if k < 30 => 4096 * (1 + (k as u32 % 4)),
                (_, k) => (k as u32 * 3331) % (160 * 1024) + 1,
            };
            t = if a % 97 == 0 { t.saturating_sub(3_000_000) } else { t + (next() % 2_000_000) };
            Request { t_ns: t, offset, len, op, dev: (a >> 40) as u32 % 3 }
        })
        .collect()
}

fn write_binary(path: &std::path::Path, reqs: &[Request]) {
    let mut w = trace::BinaryWriter::buffered(std::fs::File::create(path).unwrap(), path).unwrap();
    for r in reqs {
        w.push(*r).unwrap();
    }
    w.finish().unwrap();
}

fn input(path: &std::path::Path) -> TraceInput {
    TraceInput { path: path.to_path_buf(), format: None, opts: ReadOptions::default() }
}

fn sim_config(policies: &str, capacity: u64, interval_ns: Option<u64>) -> SimulateConfig {
    let mut cache = Preset::Database.config(capacity);
    cache.block_bytes = 256 * KIB;
    cache.sub_block_bytes = 16 * KIB;
    SimulateConfig {
        preset: "database (custom)".into(),
        cache,
        policies: PolicyKind::parse_list(policies).unwrap(),
        unit_bytes: 4 * KIB,
        interval_ns,
        ssd_bytes: None,
        profile: DeviceProfile {
            hdd_iops: 150.0,
            hdd_latency_ns: 8e6,
            hdds: 4,
            raid_write_penalty: 2.0,
            ssd_iops: 50_000.0,
            ssd_latency_ns: 1e5,
            ssds: 1,
            ssd_write_penalty: 1.0,
        },
        counter_limit: None,
    }
}

/// The result with the timings (the only figures that may differ) zeroed.
fn untimed(o: Outcome) -> (CacheResult, Option<Cut>) {
    let mut r = o.result;
    for p in &mut r.policies {
        p.sim_seconds = 0.0;
        p.sim_requests_per_s = 0.0;
    }
    (r, o.cut)
}

fn assert_same(streamed: Outcome, reference: Outcome) {
    let (a, cut_a) = untimed(streamed);
    let (b, cut_b) = untimed(reference);
    assert_eq!(cut_a, cut_b);
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.config, b.config);
    assert_eq!(a.mrc, b.mrc);
    assert_eq!(a.policies.len(), b.policies.len());
    for (p, q) in a.policies.iter().zip(&b.policies) {
        assert_eq!(p, q, "policy {}", q.name);
    }
    assert_eq!(a, b);
}

#[test]
fn streamed_simulate_equals_the_loaded_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.dmt");
    let reqs = mixed_trace(30_000);
    write_binary(&path, &reqs);
    let stop = AtomicBool::new(false);
    // Two reads (the default interval and opt need the whole trace first), then one read.
    for cfg in [
        sim_config("all", 64 * MIB, None),
        sim_config("lru,nhit,s3fifo,qsan", 16 * MIB, Some(2_000_000_000)),
        sim_config("opt,lru", 8 * MIB, Some(500_000_000)),
        SimulateConfig { counter_limit: Some(300), ..sim_config("qsan", 32 * MIB, None) },
    ] {
        let streamed = simulate(&input(&path), &cfg, &stop).unwrap();
        let reference = reference::simulate(&input(&path), &cfg);
        let hits = streamed.result.policies.iter().map(|p| p.requests.read_hits).sum::<u64>();
        assert!(hits > 500, "the caches hit: {hits}");
        assert_same(streamed, reference);
    }
}

#[test]
fn streamed_results_equal_on_a_text_trace_and_a_cut_one() {
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    // CSV: the two reads parse the text twice.
    let csv = dir.path().join("mixed.csv");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    writeln!(f, "time_ns,op,offset,size,dev").unwrap();
    for r in mixed_trace(20_000) {
        let op = match r.op {
            Op::Read => "R",
            Op::Write => "W",
            Op::Discard => "D",
            Op::Flush => "F",
        };
        writeln!(f, "{},{op},{},{},d{}", r.t_ns, r.offset, r.len, r.dev).unwrap();
    }
    drop(f);
    let format = TraceFormat::parse("csv:time=0:ns,op=1,offset=2,size=3,device=4,header").unwrap();
    let text = TraceInput { format: Some(format), ..input(&csv) };
    let cfg = sim_config("all", 32 * MIB, None);
    assert_same(simulate(&text, &cfg, &stop).unwrap(), reference::simulate(&text, &cfg));
    // A binary trace cut in the middle of a record: partial results over the same requests.
    let cut = dir.path().join("cut.dmt");
    write_binary(&cut, &mixed_trace(30_000));
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3 + 5]).unwrap();
    let streamed = simulate(&input(&cut), &cfg, &stop).unwrap();
    assert!(matches!(&streamed.cut, Some(Cut::Trace(m)) if m.contains("cut short after")));
    assert_same(streamed, reference::simulate(&input(&cut), &cfg));
    let mrc_cfg = MrcConfig { unit_bytes: 4 * KIB, shards_rate: None, reads_only: false, qsan: None, sizes: vec![] };
    assert_same(mrc(&input(&cut), &mrc_cfg, &stop).unwrap(), reference::mrc(&input(&cut), &mrc_cfg, AUTO_SHARDS_REFS));
}

#[test]
fn streamed_mrc_equals_the_loaded_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.dmt");
    write_binary(&path, &mixed_trace(40_000));
    let stop = AtomicBool::new(false);
    let base = MrcConfig { unit_bytes: 4 * KIB, shards_rate: None, reads_only: false, qsan: None, sizes: vec![] };
    let mut qsan = Preset::Database.config(MIB);
    qsan.block_bytes = 256 * KIB;
    qsan.sub_block_bytes = 16 * KIB;
    for cfg in [
        base.clone(),
        MrcConfig { reads_only: true, sizes: vec![MIB, 8 * MIB, 64 * MIB], ..base.clone() },
        MrcConfig { shards_rate: Some(0.1), ..base.clone() },
        MrcConfig { qsan: Some(qsan), sizes: vec![4 * MIB, 16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB], ..base.clone() },
    ] {
        let streamed = mrc(&input(&path), &cfg, &stop).unwrap();
        assert_same(streamed, reference::mrc(&input(&path), &cfg, AUTO_SHARDS_REFS));
    }
}

/// The automatic switch to SHARDS above a number of references: the curve built while
/// streaming is the exact one below it and the 1 % sample above it, as over the whole slice.
#[test]
fn the_automatic_shards_switch_is_the_same_streamed() {
    let reqs = mixed_trace(30_000);
    let unit = 4 * KIB;
    let refs: u64 = reqs.iter().map(|r| mrc::key_count(r, unit)).sum();
    for limit in [refs + 1, refs - 1, refs / 3] {
        let mut curve = Curve {
            unit,
            limit,
            exact: Some(Mattson::new(unit, OpFilter::ReadsAndWrites)),
            sampled: Some(Shards::new(unit, OpFilter::ReadsAndWrites, &ShardsConfig::fixed_rate(0.01)).unwrap()),
            refs: 0,
        };
        for batch in reqs.chunks(stream::BATCH) {
            curve.batch(batch);
        }
        let (got, sampled) = curve.finish(Some(0.01));
        let want = if refs > limit {
            mrc::shards(&reqs, unit, OpFilter::ReadsAndWrites, &ShardsConfig::fixed_rate(0.01)).unwrap()
        } else {
            mrc::mattson(&reqs, unit, OpFilter::ReadsAndWrites)
        };
        assert_eq!(sampled.is_some(), refs > limit, "limit {limit}");
        assert_eq!(got, want, "limit {limit}");
    }
}

#[test]
fn a_trace_that_changes_between_reads_is_an_error() {
    let pass = |requests: u64, fingerprint: u64| Pass {
        summary: TraceSummary { requests, ..TraceSummary::default() },
        first_ns: 0,
        max_ns: 0,
        cut: None,
        fingerprint,
    };
    let input = input(std::path::Path::new("t.dmt"));
    assert!(same_trace(&input, &pass(10, 7), &pass(10, 7)).is_ok());
    let e = same_trace(&input, &pass(10, 7), &pass(10, 8)).unwrap_err().to_string();
    assert!(e.starts_with("t.dmt changed while it was read"), "{e}");
    assert!(same_trace(&input, &pass(10, 7), &pass(12, 9)).is_err());
    let interrupted = Pass { cut: Some(Cut::Interrupted), ..pass(3, 1) };
    assert!(same_trace(&input, &pass(10, 7), &interrupted).is_ok());
}

#[test]
fn series_in_batches_equal_the_series_over_the_slice() {
    let reqs = mixed_trace(20_000);
    for interval in [None, Some(1), Some(37_000_000), Some(u64::MAX)] {
        let mut a = Lru::new(8 * MIB, 4 * KIB).unwrap();
        let whole = crate::simulate(&mut a, &reqs, interval);
        for size in [1, 3, 1000, stream::BATCH] {
            let mut b = Lru::new(8 * MIB, 4 * KIB).unwrap();
            let mut s = SeriesBuilder::new(whole.interval_ns, b.stats());
            for chunk in reqs.chunks(size) {
                s.feed(&mut b, chunk);
            }
            assert_eq!(s.finish(b.stats()), whole, "interval {interval:?}, batches of {size}");
        }
    }
}
