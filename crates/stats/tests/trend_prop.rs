//! `stats::trend` on synthetic series with a known change and known noise: passes drawn from
//! N(μ, σ) with fixed seeds, the later run either the earlier one scaled by (1 + δ) (the
//! change is then exact) or drawn independently around μ · (1 + δ).

use diskmeter_stats::trend::{
    change, trend, Basis, Change, Run, Series, Verdict, NOISE_THRESHOLD_PCT, SINGLE_PASS_FLOOR_PCT,
};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// SplitMix64: a tiny, fixed, seedable generator (the stats crate has no `rand`).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }
    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// `n` passes around `mu` with a relative standard deviation `cv` (0.02 = 2 %).
fn passes(rng: &mut Rng, n: usize, mu: f64, cv: f64) -> Vec<f64> {
    (0..n).map(|_| mu * (1.0 + cv * rng.normal())).collect()
}

fn scaled(a: &[f64], delta: f64) -> Vec<f64> {
    a.iter().map(|x| x * (1.0 + delta)).collect()
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 64, rng_seed: RngSeed::Fixed(31), failure_persistence: None, ..ProptestConfig::default() }
}

fn contains(c: &Change, pct: f64) -> bool {
    c.ci_low_pct - 1e-9 <= pct && pct <= c.ci_high_pct + 1e-9
}

fn well_formed(c: &Change) {
    for x in [c.pct, c.ci_low_pct, c.ci_high_pct] {
        assert!(x.is_finite(), "{c:?}");
    }
    assert!(c.ci_low_pct <= c.pct && c.pct <= c.ci_high_pct, "{c:?}");
    assert!(c.ci_low_pct >= -100.0, "{c:?}");
}

/// A mirrored verdict: the same change seen from the other side.
fn mirrored(v: Verdict) -> Verdict {
    match v {
        Verdict::Faster => Verdict::Slower,
        Verdict::Slower => Verdict::Faster,
        other => other,
    }
}

/// Passes in the range of real figures: IOPS of a slow USB stick to an NVMe array.
fn mu() -> impl Strategy<Value = f64> {
    1.0f64..2e6
}

proptest! {
    #![proptest_config(config())]

    /// δ = −20 %, σ = 2 %, 5 passes, b = a · 0.8: slower, and the interval holds −20 %.
    #[test]
    fn minus_twenty_percent_is_slower(seed in any::<u64>(), mu in mu()) {
        let a = passes(&mut Rng(seed), 5, mu, 0.02);
        let c = change(&a, &scaled(&a, -0.20), true);
        well_formed(&c);
        prop_assert_eq!(c.verdict, Verdict::Slower);
        prop_assert_eq!(c.basis, Basis::Interval);
        prop_assert!((c.pct + 20.0).abs() < 1e-9, "{:?}", c);
        prop_assert!(contains(&c, -20.0), "{:?}", c);
    }

    /// The same with the later run drawn on its own (both runs noisy): still slower, and the
    /// interval lies around −20 % (far from the threshold at these sizes).
    #[test]
    fn independent_minus_twenty_percent_is_slower(seed in any::<u64>(), mu in mu(), n in 3usize..8) {
        let mut rng = Rng(seed);
        let a = passes(&mut rng, n, mu, 0.02);
        let b = passes(&mut rng, n, mu * 0.8, 0.02);
        let c = change(&a, &b, true);
        well_formed(&c);
        prop_assert_eq!(c.verdict, Verdict::Slower);
        prop_assert!(c.ci_high_pct < -NOISE_THRESHOLD_PCT && c.ci_low_pct > -40.0, "{:?}", c);
    }

    /// Symmetric cases: +20 % is faster; for latency (lower is better) +20 % is slower and
    /// −20 % faster; swapping the runs mirrors the verdict.
    #[test]
    fn symmetric(seed in any::<u64>(), mu in mu(), n in 3usize..8, delta in 0.1f64..0.5) {
        let a = passes(&mut Rng(seed), n, mu, 0.01);
        let up = scaled(&a, delta);
        let down = scaled(&a, -delta);
        prop_assert_eq!(change(&a, &up, true).verdict, Verdict::Faster);
        prop_assert_eq!(change(&a, &down, true).verdict, Verdict::Slower);
        prop_assert_eq!(change(&a, &up, false).verdict, Verdict::Slower);
        prop_assert_eq!(change(&a, &down, false).verdict, Verdict::Faster);
        for b in [&up, &down] {
            for hib in [true, false] {
                let there = change(&a, b, hib);
                let back = change(b, &a, hib);
                well_formed(&there);
                well_formed(&back);
                prop_assert_eq!(back.verdict, mirrored(there.verdict));
                prop_assert!(there.pct.signum() == -back.pct.signum(), "{:?} {:?}", there, back);
                // The same ratio inverted: (1 + p)(1 + q) = 1.
                prop_assert!(((1.0 + there.pct / 100.0) * (1.0 + back.pct / 100.0) - 1.0).abs() < 1e-9);
            }
        }
    }

    /// No change and small noise: within noise, for 3 passes (a card) and more.
    #[test]
    fn no_change_is_within_noise(seed in any::<u64>(), mu in mu(), n in 3usize..10, cv in 0.001f64..0.005, hib in any::<bool>()) {
        let mut rng = Rng(seed);
        let a = passes(&mut rng, n, mu, cv);
        let b = passes(&mut rng, n, mu, cv);
        let c = change(&a, &b, hib);
        well_formed(&c);
        prop_assert_eq!(c.verdict, Verdict::WithinNoise, "{:?}", c);
        prop_assert!(c.pct.abs() < NOISE_THRESHOLD_PCT, "{:?}", c);
    }

    /// A change below the threshold (+1 %) is never called faster or slower, however tight
    /// the passes and however many.
    #[test]
    fn below_threshold_is_never_a_verdict(seed in any::<u64>(), mu in mu(), n in 1usize..12, cv in 0.0f64..0.2, hib in any::<bool>(), sign in any::<bool>()) {
        let a = passes(&mut Rng(seed), n, mu, cv);
        let delta = if sign { 0.01 } else { -0.01 };
        let c = change(&a, &scaled(&a, delta), hib);
        well_formed(&c);
        prop_assert!(!matches!(c.verdict, Verdict::Faster | Verdict::Slower), "{:?}", c);
        prop_assert!((c.pct - delta * 100.0).abs() < 1e-9);
    }

    /// One pass a side: no interval; a verdict only beyond the single-pass floor.
    #[test]
    fn single_pass(mu in mu(), delta in -0.6f64..0.6, n_b in 1usize..4) {
        let a = [mu];
        let b = vec![mu * (1.0 + delta); n_b];
        let c = change(&a, &b, true);
        well_formed(&c);
        prop_assert_eq!(c.basis, Basis::SinglePass);
        prop_assert_eq!(c.ci_low_pct, c.pct);
        prop_assert_eq!(c.ci_high_pct, c.pct);
        let expect = if c.pct > SINGLE_PASS_FLOOR_PCT {
            Verdict::Faster
        } else if c.pct < -SINGLE_PASS_FLOOR_PCT {
            Verdict::Slower
        } else {
            Verdict::Inconclusive
        };
        prop_assert_eq!(c.verdict, expect);
    }

    /// Any input at all (zeros, empty sides, NaN, infinities, negatives, huge values): a
    /// well-formed change, never a panic; an empty side is undefined and inconclusive.
    #[test]
    fn never_nan(
        a in proptest::collection::vec(prop_oneof![
            Just(0.0), Just(f64::NAN), Just(f64::INFINITY), Just(-1.0), Just(f64::MAX), Just(f64::MIN_POSITIVE), 0.0f64..1e7
        ], 0..7),
        b in proptest::collection::vec(prop_oneof![
            Just(0.0), Just(f64::NAN), Just(f64::NEG_INFINITY), Just(f64::MAX), 0.0f64..1e7
        ], 0..7),
        hib in any::<bool>(),
    ) {
        let c = change(&a, &b, hib);
        well_formed(&c);
        if c.n_a == 0 || c.n_b == 0 {
            prop_assert_eq!(c.basis, Basis::Undefined);
            prop_assert_eq!(c.verdict, Verdict::Inconclusive);
        }
        let s = Series {
            higher_is_better: hib,
            runs: vec![
                Run { started_at: "1".into(), samples: a.clone() },
                Run { started_at: "2".into(), samples: b.clone() },
            ],
        };
        let t = trend(&s);
        for p in &t.points {
            prop_assert!(p.low <= p.median && p.median <= p.high && p.mean.is_finite(), "{:?}", p);
        }
        if let Some(c) = t.since_last {
            well_formed(&c);
        }
    }

    /// The timeline: one point per run with passes; since_first is the newest against the
    /// first, since_last against the one before it.
    #[test]
    fn timeline(seed in any::<u64>(), mu in mu(), deltas in proptest::collection::vec(-0.3f64..0.3, 0..6)) {
        let mut rng = Rng(seed);
        let mut runs = vec![Run { started_at: "r0".into(), samples: passes(&mut rng, 3, mu, 0.01) }];
        for (i, d) in deltas.iter().enumerate() {
            runs.push(Run { started_at: format!("r{}", i + 1), samples: passes(&mut rng, 3, mu * (1.0 + d), 0.01) });
        }
        let s = Series { higher_is_better: true, runs: runs.clone() };
        let t = trend(&s);
        prop_assert_eq!(t.points.len(), runs.len());
        prop_assert_eq!(t.first_at.as_deref(), Some("r0"));
        let last = runs.len() - 1;
        prop_assert_eq!(t.last_at, Some(format!("r{last}")));
        if last == 0 {
            prop_assert!(t.since_first.is_none() && t.since_last.is_none() && t.previous_at.is_none());
        } else {
            prop_assert_eq!(t.since_first, Some(change(&runs[0].samples, &runs[last].samples, true)));
            prop_assert_eq!(t.since_last, Some(change(&runs[last - 1].samples, &runs[last].samples, true)));
            prop_assert_eq!(t.previous_at, Some(format!("r{}", last - 1)));
        }
    }
}

/// Coverage of the interval over many fixed seeds, both runs drawn independently (a check
/// of the method, not only of the arithmetic): the 95 % interval should hold the true
/// change about 95 % of the time. Welch's df keeps it near nominal even at 3 passes.
#[test]
fn interval_coverage_is_near_nominal() {
    for (n, delta) in [(3usize, -0.2), (5, -0.2), (5, 0.0), (8, 0.1)] {
        let mut rng = Rng(2026);
        let trials = 500;
        let mut covered = 0;
        for _ in 0..trials {
            let a = passes(&mut rng, n, 1000.0, 0.02);
            let b = passes(&mut rng, n, 1000.0 * (1.0 + delta), 0.02);
            if contains(&change(&a, &b, true), delta * 100.0) {
                covered += 1;
            }
        }
        let share = covered as f64 / trials as f64;
        assert!((0.92..=0.98).contains(&share), "n = {n}, δ = {delta}: coverage {share}");
    }
}

/// Empty input anywhere: nothing to compare, no panic.
#[test]
fn empty_series() {
    let t = trend(&Series { higher_is_better: true, runs: Vec::new() });
    assert!(t.points.is_empty() && t.since_first.is_none() && t.since_last.is_none());
    assert!(t.first_at.is_none() && t.last_at.is_none());
    let c = change(&[], &[], false);
    assert_eq!((c.verdict, c.basis, c.pct), (Verdict::Inconclusive, Basis::Undefined, 0.0));
    let c = change(&[0.0, 0.0, 0.0], &[0.0, 0.0, 0.0], true);
    assert_eq!((c.verdict, c.basis), (Verdict::Inconclusive, Basis::Undefined));
}

/// From an earlier figure to nothing (the device failed): −100 %, slower, no NaN.
#[test]
fn to_zero_is_minus_hundred() {
    let c = change(&[100.0, 101.0, 99.0], &[0.0, 0.0, 0.0], true);
    well_formed(&c);
    assert_eq!(c.verdict, Verdict::Slower);
    assert!((c.pct + 100.0).abs() < 1e-9);
}

/// Scattered passes: a large point change whose interval spans 0 is inconclusive.
#[test]
fn scattered_is_inconclusive() {
    let c = change(&[100.0, 160.0], &[70.0, 150.0], true);
    well_formed(&c);
    assert!(c.pct < -NOISE_THRESHOLD_PCT);
    assert_eq!(c.verdict, Verdict::Inconclusive);
}
