//! Synthetic traces: counts, determinism, and the distributions' shapes against theory.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use diskmeter_trace::{parse_dist, Dist, Op, Request, SynthParam, SynthSpec};

fn spec(dist: &str, blocks: u64, requests: u64) -> SynthSpec {
    SynthSpec { dist: parse_dist(dist).unwrap(), blocks, requests, ..SynthSpec::default() }
}

fn counts(reqs: &[Request], block_size: u64) -> HashMap<u64, u64> {
    let mut c = HashMap::new();
    for r in reqs {
        *c.entry(r.offset / block_size).or_insert(0) += 1;
    }
    c
}

#[test]
fn shape_counts_and_timestamps() {
    let s = SynthSpec { read_pct: 70, iops: 4000.0, block_size: 8192, ..spec("uniform", 1000, 100_000) };
    let it = s.iter().unwrap();
    assert_eq!(it.len(), 100_000);
    let reqs: Vec<Request> = it.collect();
    assert_eq!(reqs.len(), 100_000);
    for (i, r) in reqs.iter().enumerate() {
        assert_eq!(r.t_ns, i as u64 * 250_000);
        assert_eq!(r.len, 8192);
        assert_eq!(r.offset % 8192, 0);
        assert!(r.offset < 1000 * 8192);
        assert_eq!(r.dev, 0);
    }
    let reads = reqs.iter().filter(|r| r.op == Op::Read).count() as f64 / 100_000.0;
    assert!((reads - 0.70).abs() < 0.01, "{reads}");
    let c = counts(&reqs, 8192);
    assert_eq!(c.len(), 1000, "every block touched");
    assert!(c.values().all(|n| (50..=160).contains(n)), "uniform spread");
}

#[test]
fn deterministic_by_seed() {
    for dist in ["uniform", "zipf:0.9", "hotset:90/10"] {
        let a: Vec<Request> = spec(dist, 1 << 20, 10_000).iter().unwrap().collect();
        let b: Vec<Request> = spec(dist, 1 << 20, 10_000).iter().unwrap().collect();
        let c: Vec<Request> = SynthSpec { seed: 7, ..spec(dist, 1 << 20, 10_000) }.iter().unwrap().collect();
        assert_eq!(a, b, "{dist}");
        assert_ne!(a, c, "{dist}");
    }
}

#[test]
fn hotset_share_within_one_percent() {
    // The QSAN test: 90 % of the I/O to the first 9.5 GB of a 100 GB area (4 KiB blocks).
    let blocks = 100_000_000_000 / 4096;
    let s = SynthSpec {
        dist: Dist::Hotset { ops_pct: 90.0, area_pct: 9.5 },
        blocks,
        requests: 100_000,
        ..SynthSpec::default()
    };
    let reqs: Vec<Request> = s.iter().unwrap().collect();
    let hot_end = (blocks as f64 * 0.095).round() as u64 * 4096;
    let hot = reqs.iter().filter(|r| r.offset < hot_end).count() as f64 / reqs.len() as f64;
    assert!((hot - 0.90).abs() < 0.01, "hot share {hot}");
    assert!(reqs.iter().all(|r| r.offset < blocks * 4096));
    // The cold part is spread over the rest, not piled at its start.
    let far = reqs.iter().filter(|r| r.offset >= blocks * 4096 / 2).count() as f64 / reqs.len() as f64;
    let want = 0.10 * 0.5 / 0.905;
    assert!((far - want).abs() < 0.01, "far share {far}, want {want}");
}

fn harmonic(n: u64, theta: f64) -> f64 {
    (1..=n).map(|k| (k as f64).powf(-theta)).sum()
}

#[test]
fn zipf_top_blocks_match_theory() {
    let blocks = 1_000_000;
    let n = 400_000u64;
    for theta in [0.9, 1.2] {
        let h = harmonic(blocks, theta);
        for scatter in [false, true] {
            let s = SynthSpec { scatter, ..spec(&format!("zipf:{theta}"), blocks, n) };
            let reqs: Vec<Request> = s.iter().unwrap().collect();
            let c = counts(&reqs, 4096);
            let mut freq: Vec<u64> = c.values().copied().collect();
            freq.sort_unstable_by(|a, b| b.cmp(a));
            let top = freq[0] as f64 / n as f64;
            let want = 1.0 / h;
            assert!((top / want - 1.0).abs() < 0.05, "θ={theta} scatter={scatter}: top {top}, theory {want}");
            let top10: f64 = freq[..10].iter().sum::<u64>() as f64 / n as f64;
            let want10: f64 = (1..=10).map(|k| (k as f64).powf(-theta)).sum::<f64>() / h;
            assert!((top10 / want10 - 1.0).abs() < 0.03, "θ={theta}: top-10 {top10}, theory {want10}");
            if !scatter {
                assert_eq!(c.get(&0).copied(), Some(freq[0]), "rank 1 is block 0 when contiguous");
            }
        }
    }
}

#[test]
fn zipf_scatter_spreads_hot_blocks() {
    let reqs: Vec<Request> = spec("zipf:1.0", 1 << 20, 50_000).iter().unwrap().collect();
    let c = counts(&reqs, 4096);
    let mut hot: Vec<(u64, u64)> = c.into_iter().collect();
    hot.sort_unstable_by_key(|h| std::cmp::Reverse(h.1));
    let top: Vec<u64> = hot.iter().take(8).map(|(b, _)| *b).collect();
    assert!(top.iter().any(|b| *b > 1 << 19), "hot blocks all in the first half: {top:?}");
    assert!(top.iter().any(|b| *b > 64), "hot blocks are the first blocks: {top:?}");
}

#[test]
fn invalid_specs_name_the_parameter() {
    let bad = |s: SynthSpec, want: &str, param: SynthParam| {
        let e = s.iter().err().unwrap().to_string();
        assert!(e.contains(want), "{e}");
        let (p, e2) = s.check().unwrap_err();
        assert_eq!((p, e2.to_string()), (param, e));
    };
    bad(SynthSpec { blocks: 0, ..SynthSpec::default() }, "blocks", SynthParam::Blocks);
    bad(SynthSpec { block_size: 0, ..SynthSpec::default() }, "block size", SynthParam::BlockSize);
    bad(SynthSpec { read_pct: 101, ..SynthSpec::default() }, "read percentage", SynthParam::ReadPct);
    bad(SynthSpec { iops: 0.0, ..SynthSpec::default() }, "iops", SynthParam::Iops);
    bad(SynthSpec { dist: Dist::Zipf(f64::NAN), ..SynthSpec::default() }, "theta", SynthParam::Dist);
    bad(SynthSpec { blocks: u64::MAX, ..SynthSpec::default() }, "exceed 2^64", SynthParam::Blocks);
}

#[test]
fn edge_sizes() {
    for dist in ["uniform", "zipf:0.5", "hotset:50/50", "hotset:100/1", "hotset:0/100"] {
        let reqs: Vec<Request> = spec(dist, 1, 100).iter().unwrap().collect();
        assert!(reqs.iter().all(|r| r.offset == 0), "{dist}");
    }
    let reqs: Vec<Request> = spec("hotset:100/10", 1000, 1000).iter().unwrap().collect();
    assert!(reqs.iter().all(|r| r.offset < 100 * 4096));
    let reqs: Vec<Request> = spec("hotset:0/10", 1000, 1000).iter().unwrap().collect();
    assert!(reqs.iter().all(|r| r.offset >= 100 * 4096));
    assert_eq!(spec("uniform", 10, 0).iter().unwrap().count(), 0);
}
