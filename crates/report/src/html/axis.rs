//! Axis arithmetic for the charts: every range and tick is computed here, so plotters never
//! sees a NaN, an empty range or a value it would have to guess ticks for.

/// Largest magnitude a chart accepts; beyond it values are clamped (plotters maps to i32
/// pixels, and ranges must stay finite).
const LIMIT: f64 = 1e15;

/// A finite, clamped copy of `x` (NaN and infinities become 0).
pub(crate) fn clean(x: f64) -> f64 {
    if x.is_finite() {
        x.clamp(-LIMIT, LIMIT)
    } else {
        0.0
    }
}

/// log10 of a latency in ns, clamped to [1 ns, 10^13 ns] (zero and NaN become 1 ns).
pub(crate) fn log_ns(ns: f64) -> f64 {
    let v = if ns.is_finite() { ns } else { 1.0 };
    v.clamp(1.0, 1e13).log10()
}

/// An axis: the drawn range and the labelled tick positions (both in plot space).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
    pub minor: Vec<f64>,
}

/// Round to four significant digits, so 10^3 prints as 1000 and not 999.9999999.
fn snap(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let p = 10f64.powf(x.abs().log10().floor() - 3.0);
    (x / p).round() * p
}

/// The first of 1, 2, 2.5, 5, 10 (times a power of ten) not below `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = if raw.is_finite() && raw > 1e-9 { raw } else { 1e-9 };
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * p
}

/// A linear axis covering `lo..=hi` with about `n` ticks at round values.
pub(crate) fn linear(lo: f64, hi: f64, n: usize) -> Axis {
    let (mut lo, mut hi) = (clean(lo), clean(hi));
    if hi < lo {
        std::mem::swap(&mut lo, &mut hi);
    }
    if hi - lo < 1e-9 * hi.abs().max(lo.abs()).max(1.0) {
        // A single value: show it in the middle of a range around it (or 0..1).
        let pad = if hi.abs() > 0.0 { hi.abs() } else { 1.0 };
        if lo >= 0.0 {
            lo = if lo == 0.0 { 0.0 } else { lo - pad };
            lo = lo.max(0.0);
            hi += pad;
        } else {
            lo -= pad;
            hi += pad;
        }
    }
    let step = nice_step((hi - lo) / n.max(1) as f64);
    let a = (lo / step).floor() * step;
    let b = (hi / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut i = 0u32;
    while i <= 200 {
        let t = a + f64::from(i) * step;
        if t > b + step * 1e-6 {
            break;
        }
        ticks.push(snap(t));
        i += 1;
    }
    let hi = if b > a { b } else { a + step };
    Axis { lo: a, hi, ticks, minor: Vec::new() }
}

/// A log axis for values whose log10 lies in `lo..=hi`: the range ends on 1-2-5 values;
/// ticks at 1-2-5 steps for narrow ranges, every decade (or every k-th) for wide ones;
/// light lines at 2..9 within each decade while that stays readable.
pub(crate) fn log(lo: f64, hi: f64) -> Axis {
    let (mut lo, mut hi) = (clean(lo).clamp(-3.0, 15.0), clean(hi).clamp(-3.0, 15.0));
    if hi < lo {
        std::mem::swap(&mut lo, &mut hi);
    }
    const STEPS: [f64; 3] = [1.0, 2.0, 5.0];
    // Candidate round values (in log space) from one decade below to one above.
    let first = lo.floor() as i32 - 1;
    let last = hi.ceil() as i32 + 1;
    let mut round: Vec<f64> = Vec::new();
    for d in first..=last {
        for s in STEPS {
            round.push(f64::from(d) + s.log10());
        }
    }
    let eps = 1e-9;
    let a = round.iter().copied().filter(|v| *v <= lo + eps).fold(f64::from(first), f64::max);
    let mut b = round.iter().copied().filter(|v| *v >= hi - eps).fold(f64::from(last + 1), f64::min);
    if b - a < 0.3 {
        // One value: widen to the neighbouring 1-2-5 values on both sides.
        b = round.iter().copied().filter(|v| *v > a + 0.25).fold(f64::from(last + 1), f64::min);
    }
    let span = b - a;
    let ticks: Vec<f64> = if span <= 2.5 {
        round.iter().copied().filter(|v| *v >= a - eps && *v <= b + eps).collect()
    } else {
        let k = (span / 12.0).ceil().max(1.0) as i32;
        (a.ceil() as i32..=b.floor() as i32).filter(|d| d.rem_euclid(k) == 0).map(f64::from).collect()
    };
    let minor = if span <= 7.0 {
        let mut m = Vec::new();
        for d in first..=last {
            for s in 2..=9 {
                let v = f64::from(d) + f64::from(s).log10();
                if v > a + eps && v < b - eps {
                    m.push(v);
                }
            }
        }
        m
    } else {
        Vec::new()
    };
    Axis { lo: a, hi: b, ticks, minor }
}

/// log2 of a byte count, clamped to [1 B, 2^60 B] (zero becomes 1 B).
pub(crate) fn log2_bytes(b: f64) -> f64 {
    let v = if b.is_finite() { b } else { 1.0 };
    v.clamp(1.0, 2f64.powi(60)).log2()
}

/// A log axis for byte sizes whose log2 lies in `lo..=hi`: the range ends on powers of
/// two, ticks at every k-th power of two (k from 1, 2, 3, 5, 10, 20, so at most about a
/// dozen labels), light lines at the other powers of two while there are few of them.
pub(crate) fn log2(lo: f64, hi: f64) -> Axis {
    let (mut lo, mut hi) = (clean(lo).clamp(0.0, 60.0), clean(hi).clamp(0.0, 60.0));
    if hi < lo {
        std::mem::swap(&mut lo, &mut hi);
    }
    let mut a = (lo + 1e-9).floor();
    let mut b = (hi - 1e-9).ceil().max(a);
    if b - a < 2.0 {
        // One size (or two neighbours): a power of two either side.
        a = (a - 1.0).max(0.0);
        b = a + 3.0;
    }
    let span = b - a;
    let k = [1.0, 2.0, 3.0, 5.0, 10.0, 20.0].into_iter().find(|k| span / k <= 12.0).unwrap_or(20.0);
    let mut ticks = Vec::new();
    let mut minor = Vec::new();
    let mut e = a;
    while e <= b + 1e-9 {
        if (e / k).round() * k == e {
            ticks.push(e);
        } else if span <= 40.0 {
            minor.push(e);
        }
        e += 1.0;
    }
    if ticks.is_empty() {
        ticks.push(a);
    }
    Axis { lo: a, hi: b, ticks, minor }
}

/// Tick label of a log2 byte axis: `64 MiB`, `1 GiB`, `1.5 TiB`.
pub(crate) fn bytes_label(log2: f64) -> String {
    let b = 2f64.powf(clean(log2).clamp(0.0, 60.0)).round();
    crate::fmt::bytes(b as u64).replace(".00 ", " ")
}

/// Short latency label for ticks: `500 ns`, `10 µs`, `2.5 ms`, `1 s`.
pub(crate) fn short_lat(ns: f64) -> String {
    let ns = snap(clean(ns));
    if ns <= 0.0 {
        return "0".to_string();
    }
    let (v, unit) = if ns < 999.5 {
        (ns, "ns")
    } else if ns < 999_500.0 {
        (ns / 1e3, "µs")
    } else if ns < 999_500_000.0 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{} {unit}", trim(v))
}

/// A number with at most three significant digits and no trailing zeros: `2.5`, `250`, `0.25`.
pub(crate) fn trim(v: f64) -> String {
    let v = snap(v);
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Compact count for ticks: `950`, `12.5k`, `1.2M`.
pub(crate) fn compact(x: f64) -> String {
    let x = clean(x);
    let a = x.abs();
    if a < 999.5 {
        trim(x)
    } else if a < 999_500.0 {
        format!("{}k", trim(x / 1e3))
    } else if a < 999_500_000.0 {
        format!("{}M", trim(x / 1e6))
    } else {
        format!("{}G", trim(x / 1e9))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks() {
        let a = linear(0.0, 97.0, 5);
        assert_eq!((a.lo, a.hi), (0.0, 100.0));
        assert_eq!(a.ticks, [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let a = linear(0.0, 0.0, 5);
        assert!(a.hi > a.lo);
        let a = linear(f64::NAN, f64::INFINITY, 5);
        assert!(a.hi > a.lo && a.ticks.len() >= 2);
        let a = linear(5.0, 5.0, 4);
        assert!(a.lo <= 5.0 && a.hi >= 5.0 && a.hi > a.lo);
        let a = linear(-1e300, 1e300, 4);
        assert!(a.ticks.len() <= 201);
    }

    #[test]
    fn log_ticks() {
        // 40 µs .. 3 ms: ends on 1-2-5 values, ticks every 1-2-5 step.
        let a = log(log_ns(40_000.0), log_ns(3_000_000.0));
        assert_eq!(short_lat(10f64.powf(a.lo)), "20 µs");
        assert_eq!(short_lat(10f64.powf(a.hi)), "5 ms");
        let labels: Vec<String> = a.ticks.iter().map(|t| short_lat(10f64.powf(*t))).collect();
        assert_eq!(labels, ["20 µs", "50 µs", "100 µs", "200 µs", "500 µs", "1 ms", "2 ms", "5 ms"]);
        // Wide: decades only.
        let a = log(log_ns(1.0), log_ns(1e10));
        let labels: Vec<String> = a.ticks.iter().map(|t| short_lat(10f64.powf(*t))).collect();
        assert_eq!(
            labels,
            ["1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms", "100 ms", "1 s", "10 s"]
        );
        // Degenerate.
        let a = log(log_ns(0.0), log_ns(0.0));
        assert!(a.hi > a.lo && !a.ticks.is_empty());
        let a = log(f64::NAN, f64::NAN);
        assert!(a.hi > a.lo);
    }

    #[test]
    fn labels() {
        assert_eq!(short_lat(1000.0), "1 µs");
        assert_eq!(short_lat(10f64.powf(3.0)), "1 µs");
        assert_eq!(short_lat(2_500_000.0), "2.5 ms");
        assert_eq!(short_lat(0.0), "0");
        assert_eq!(compact(12_500.0), "12.5k");
        assert_eq!(compact(950.0), "950");
        assert_eq!(compact(1_200_000.0), "1.2M");
        assert_eq!(compact(0.25), "0.25");
        assert_eq!(compact(f64::NAN), "0");
    }

    #[test]
    fn log2_ticks() {
        // 64 MiB .. 1 TiB: powers of two, labelled in binary units.
        let a = log2(log2_bytes(64.0 * 1048576.0), log2_bytes(1099511627776.0));
        assert_eq!(bytes_label(a.lo), "64 MiB");
        assert_eq!(bytes_label(a.hi), "1 TiB");
        assert!(a.ticks.len() <= 13 && a.ticks.len() >= 3);
        assert!(a.ticks.iter().any(|t| bytes_label(*t) == "1 GiB"));
        // Degenerate: one size, zero, NaN, huge.
        for (lo, hi) in [(30.0, 30.0), (0.0, 0.0), (f64::NAN, f64::NAN), (64.0, 64.0), (-5.0, 1e300)] {
            let a = log2(lo, hi);
            assert!(a.hi > a.lo && !a.ticks.is_empty(), "{lo} {hi}: {a:?}");
        }
        assert_eq!(log2_bytes(0.0), 0.0);
        assert_eq!(log2_bytes(f64::MAX), 60.0);
        assert_eq!(bytes_label(20.0), "1 MiB");
    }
}
