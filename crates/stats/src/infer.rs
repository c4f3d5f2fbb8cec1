//! Statistical inference for `compare`: confidence intervals of a mean (Student t),
//! Welch's unequal-variance t-test, the Mann-Whitney U test and a confidence interval for
//! a ratio of means. Pure functions on slices; no dependencies besides `std`.
//!
//! The Student t distribution is computed for real (non-integer) degrees of freedom through
//! the regularized incomplete beta function (Lentz continued fraction, as in Numerical
//! Recipes), accurate to ~1e-12 in the range that matters here; its inverse is found by
//! bracketing and bisection on the CDF. Infinite degrees of freedom give the standard
//! normal distribution.
//!
//! Robustness: no function here panics. Non-finite inputs are not filtered here (the
//! callers in [`crate::compare_docs`] drop them) and simply propagate as NaN.

use std::cmp::Ordering;

// ---------------------------------------------------------------------------------------
// Special functions

/// Natural logarithm of the gamma function for `x > 0` (Lanczos, g = 7, n = 9; ~1e-15).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let s = (std::f64::consts::PI * x).sin().abs();
        return std::f64::consts::PI.ln() - s.ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    const MAX_ITER: usize = 20_000;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=MAX_ITER {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Regularized incomplete beta function I_x(a, b), given both `x` and `1 − x` so that the
/// caller can supply the complement without cancellation. `a, b > 0`, `x` in [0, 1].
fn inc_beta_split(a: f64, b: f64, x: f64, one_minus_x: f64) -> f64 {
    if x.is_nan() || one_minus_x.is_nan() || a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if one_minus_x <= 0.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * one_minus_x.ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        (front * beta_cf(a, b, x) / a).clamp(0.0, 1.0)
    } else {
        (1.0 - front * beta_cf(b, a, one_minus_x) / b).clamp(0.0, 1.0)
    }
}

/// Regularized incomplete beta function I_x(a, b) for `a, b > 0`, `x` in [0, 1].
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    inc_beta_split(a, b, x, 1.0 - x)
}

/// Complementary error function through the upper incomplete gamma function,
/// erfc(x) = Q(1/2, x²) (series / continued fraction; relative accuracy ~1e-15, also in
/// the far tail).
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    // erfc(x) = Q(1/2, x²), the upper regularized incomplete gamma function.
    upper_inc_gamma_half(x * x)
}

/// Q(1/2, z) for z ≥ 0: series for small z, Lentz continued fraction otherwise.
fn upper_inc_gamma_half(z: f64) -> f64 {
    const A: f64 = 0.5;
    const EPS: f64 = 1e-16;
    const TINY: f64 = 1e-300;
    if z <= 0.0 {
        return 1.0;
    }
    if z.is_infinite() {
        return 0.0;
    }
    let gln = ln_gamma(A);
    if z < A + 1.0 {
        // P(a, z) by its series.
        let mut ap = A;
        let mut sum = 1.0 / A;
        let mut del = sum;
        for _ in 0..10_000 {
            ap += 1.0;
            del *= z / ap;
            sum += del;
            if del.abs() < sum.abs() * EPS {
                break;
            }
        }
        let p = sum * (-z + A * z.ln() - gln).exp();
        (1.0 - p).clamp(0.0, 1.0)
    } else {
        let mut b = z + 1.0 - A;
        let mut c = 1.0 / TINY;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - A);
            b += 2.0;
            d = an * d + b;
            if d.abs() < TINY {
                d = TINY;
            }
            c = b + an / c;
            if c.abs() < TINY {
                c = TINY;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < EPS {
                break;
            }
        }
        ((-z + A * z.ln() - gln).exp() * h).clamp(0.0, 1.0)
    }
}

/// Standard normal CDF Φ(z).
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// Survival function of the standard normal, 1 − Φ(z), without cancellation for large z.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Degrees of freedom from which the t tail is computed by Fisher's asymptotic expansion
/// around the normal distribution (the incomplete-beta route loses digits there through
/// the ln Γ differences; the expansion's error is O(ν⁻³) < 1e-14).
const DF_LARGE: f64 = 1e5;

/// P(T > t) for t ≥ 0 and large ν (Fisher 1925):
/// Q(t) + φ(t) · [(t³ + t) / (4ν) + (5t⁵ + 16t³ + 3t) / (96ν²)].
fn t_upper_tail_large_df(t: f64, df: f64) -> f64 {
    if df.is_infinite() {
        return normal_sf(t);
    }
    let phi = (-0.5 * t * t).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let t2 = t * t;
    let t3 = t2 * t;
    let t5 = t3 * t2;
    let corr = (t3 + t) / (4.0 * df) + (5.0 * t5 + 16.0 * t3 + 3.0 * t) / (96.0 * df * df);
    (normal_sf(t) + phi * corr).clamp(0.0, 0.5)
}

/// Two-sided tail probability P(|T| ≥ |t|) of Student's t with `df` > 0 degrees of
/// freedom (real-valued; `f64::INFINITY` = normal). NaN for `df ≤ 0` or NaN input.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    if df >= DF_LARGE {
        return (2.0 * t_upper_tail_large_df(t.abs(), df)).clamp(0.0, 1.0);
    }
    let t2 = t * t;
    // P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2).
    let x = df / (df + t2);
    let one_minus_x = t2 / (df + t2);
    inc_beta_split(df / 2.0, 0.5, x, one_minus_x).clamp(0.0, 1.0)
}

/// CDF of Student's t with `df` > 0 degrees of freedom (real-valued; infinity = normal).
/// NaN for `df ≤ 0` or NaN input.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t == f64::INFINITY {
        return 1.0;
    }
    if t == f64::NEG_INFINITY {
        return 0.0;
    }
    let tail = 0.5 * t_two_sided_p(t, df);
    if t > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Quantile (inverse CDF) of Student's t: the `t` with `t_cdf(t, df) = p`. Returns
/// ∓infinity for `p` = 0 / 1 and NaN for `p` outside [0, 1], `df ≤ 0` or NaN input.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() || df <= 0.0 || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    if p == 0.5 {
        return 0.0;
    }
    // Work in the upper half: q = P(T > t) < 0.5, t > 0; the lower half by symmetry.
    let (upper, q) = if p > 0.5 { (true, 1.0 - p) } else { (false, p) };
    let tail = |t: f64| 0.5 * t_two_sided_p(t, df); // P(T > t) for t ≥ 0, decreasing
    let mut lo = 0.0;
    let mut hi = 1.0;
    let mut guard = 0;
    while tail(hi) > q {
        lo = hi;
        hi *= 2.0;
        guard += 1;
        if guard > 1100 || !hi.is_finite() {
            return if upper { f64::INFINITY } else { f64::NEG_INFINITY };
        }
    }
    for _ in 0..300 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if tail(mid) > q {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let t = 0.5 * (lo + hi);
    if upper {
        t
    } else {
        -t
    }
}

/// Two-sided critical value t_{(1+confidence)/2, df}: the half-width multiplier of a
/// `confidence` interval. `confidence` is clamped into [0, 1); NaN confidence is 0.95.
pub fn t_critical(confidence: f64, df: f64) -> f64 {
    let c = if confidence.is_nan() { 0.95 } else { confidence.clamp(0.0, 1.0 - 1e-15) };
    t_quantile(0.5 + c / 2.0, df)
}

// ---------------------------------------------------------------------------------------
// Descriptive statistics

/// Mean and sample variance (n − 1) by two passes with the compensation term. A constant
/// sample returns its value exactly and zero variance. `(NaN, 0)` for an empty slice;
/// variance 0 for one value.
fn mean_var(xs: &[f64]) -> (f64, f64) {
    let Some(&first) = xs.first() else {
        return (f64::NAN, 0.0);
    };
    if xs.iter().all(|&x| x == first) {
        return (first, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let (ss, comp) = xs.iter().fold((0.0, 0.0), |(ss, c), &x| {
        let d = x - mean;
        (ss + d * d, c + d)
    });
    let var = ((ss - comp * comp / n) / (n - 1.0)).max(0.0);
    (mean, var)
}

/// Sample statistics with a confidence interval of the mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 when n < 2.
    pub stddev: f64,
    /// Student-t confidence interval of the mean; both equal to the mean when n < 2.
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Sample {
    /// Statistics of `xs` with a `confidence` interval (see [`mean_ci`]).
    pub fn new(xs: &[f64], confidence: f64) -> Sample {
        let (mean, stddev, ci_low, ci_high) = mean_ci(xs, confidence);
        Sample { n: xs.len(), mean, stddev, ci_low, ci_high }
    }

    /// Standard error of the mean, sd / √n (0 when n < 2).
    pub fn se(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            self.stddev / (self.n as f64).sqrt()
        }
    }
}

/// `(mean, sd, lo, hi)`: the mean, the sample standard deviation (n − 1) and the
/// `confidence` (e.g. 0.95) interval of the mean, mean ± t_{(1+c)/2, n−1} · sd / √n.
/// With n < 2: sd = 0 and lo = hi = mean (the mean of an empty slice is NaN).
pub fn mean_ci(xs: &[f64], confidence: f64) -> (f64, f64, f64, f64) {
    let (mean, var) = mean_var(xs);
    if xs.len() < 2 {
        return (mean, 0.0, mean, mean);
    }
    let sd = var.sqrt();
    let n = xs.len() as f64;
    let half = if sd == 0.0 { 0.0 } else { t_critical(confidence, n - 1.0) * sd / n.sqrt() };
    (mean, sd, mean - half, mean + half)
}

// ---------------------------------------------------------------------------------------
// Welch's t-test

/// Welch–Satterthwaite degrees of freedom from the squared standard errors of two means.
/// Sides with zero error (or fewer than 2 values) contribute nothing; infinity when both
/// errors are zero. Scaled so it neither overflows nor underflows.
pub fn welch_df(se2_a: f64, n_a: usize, se2_b: f64, n_b: usize) -> f64 {
    let total = se2_a + se2_b;
    if total.is_nan() || total <= 0.0 {
        return f64::INFINITY;
    }
    let term = |se2: f64, n: usize| {
        if se2 > 0.0 && n >= 2 {
            let r = se2 / total;
            r * r / (n as f64 - 1.0)
        } else {
            0.0
        }
    };
    let denom = term(se2_a, n_a) + term(se2_b, n_b);
    if denom > 0.0 {
        1.0 / denom
    } else {
        f64::INFINITY
    }
}

/// Result of Welch's unequal-variance t-test of `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WelchResult {
    /// t = (mean(b) − mean(a)) / √(s²_a/n_a + s²_b/n_b). Note the sign: SciPy's
    /// `ttest_ind(a, b, equal_var=False)` reports −t.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (real-valued).
    pub df: f64,
    /// Two-sided p-value.
    pub p_two_sided: f64,
    /// Confidence interval of mean(b) − mean(a) at the requested confidence.
    pub diff_ci_low: f64,
    pub diff_ci_high: f64,
}

/// Welch's t-test of `b` against `a` with a 95 % interval of the difference; see
/// [`welch_with`].
pub fn welch(a: &[f64], b: &[f64]) -> Option<WelchResult> {
    welch_with(a, b, 0.95)
}

/// Welch's t-test of `b` against `a`, with a `confidence` interval of mean(b) − mean(a).
/// `None` when either side has fewer than 2 values.
///
/// Degenerate cases:
/// * both sides have zero variance (constant samples): the difference is known exactly,
///   so p = 1 (t = 0) when the means are equal and p = 0 (t = ±∞) when they differ; df is
///   n_a + n_b − 2 and the interval is the difference itself;
/// * one side has zero variance: the usual formulas apply (df = n − 1 of the other side).
pub fn welch_with(a: &[f64], b: &[f64], confidence: f64) -> Option<WelchResult> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len(), b.len());
    let se2_a = va / na as f64;
    let se2_b = vb / nb as f64;
    let diff = mb - ma;
    let se = (se2_a + se2_b).sqrt();
    if se == 0.0 {
        let df = (na + nb - 2) as f64;
        let (t, p) = match diff.partial_cmp(&0.0) {
            Some(Ordering::Equal) => (0.0, 1.0),
            Some(Ordering::Greater) => (f64::INFINITY, 0.0),
            Some(Ordering::Less) => (f64::NEG_INFINITY, 0.0),
            None => (f64::NAN, f64::NAN),
        };
        return Some(WelchResult { t, df, p_two_sided: p, diff_ci_low: diff, diff_ci_high: diff });
    }
    let df = welch_df(se2_a, na, se2_b, nb);
    let t = diff / se;
    let p = t_two_sided_p(t, df);
    let half = t_critical(confidence, df) * se;
    Some(WelchResult { t, df, p_two_sided: p, diff_ci_low: diff - half, diff_ci_high: diff + half })
}

// ---------------------------------------------------------------------------------------
// Mann-Whitney U

/// Result of the Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MwResult {
    /// U of the first sample: the number of pairs (a_i, b_j) with a_i > b_j, ties counting
    /// one half (SciPy's `mannwhitneyu(a, b).statistic`).
    pub u: f64,
    /// Two-sided p-value.
    pub p_two_sided: f64,
    /// True when the p-value is exact (enumerated U distribution), false when it is the
    /// normal approximation.
    pub exact: bool,
}

/// Largest sample size per side for the exact p-value.
const MW_EXACT_MAX: usize = 20;

/// Mann-Whitney U test (two-sided). `None` when either side is empty.
///
/// * No ties and both n ≤ 20: exact p-value, 2 · P(U ≥ max(U₁, U₂)) under H₀ (capped at
///   1), from the enumerated null distribution of U (the coefficients of the Gaussian
///   binomial coefficient; SciPy `method="exact"`).
/// * Otherwise: normal approximation with tie correction and continuity correction
///   (SciPy `method="asymptotic", use_continuity=True`). When every value is tied the
///   variance is zero and p = 1.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MwResult> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // Ranks of the pooled sample, ties averaged.
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).chain(b.iter().map(|&x| (x, false))).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let mut r1 = 0.0;
    let mut tie_sum = 0.0; // Σ (t³ − t)
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0.total_cmp(&pooled[i].0) == Ordering::Equal {
            j += 1;
        }
        let avg_rank = (i + j + 1) as f64 / 2.0; // ranks i+1 ..= j
        let t = (j - i) as f64;
        tie_sum += t * t * t - t;
        r1 += avg_rank * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let u1 = r1 - f1 * (f1 + 1.0) / 2.0;
    let u2 = f1 * f2 - u1;
    let u_max = u1.max(u2);
    if tie_sum == 0.0 && n1 <= MW_EXACT_MAX && n2 <= MW_EXACT_MAX {
        let counts = u_distribution(n1, n2);
        let total: f64 = counts.iter().sum();
        // U is an integer without ties; round away float noise from the rank sums.
        let k = u_max.round().max(0.0) as usize;
        let upper: f64 = counts.iter().skip(k).sum();
        let p = (2.0 * upper / total).clamp(0.0, 1.0);
        return Some(MwResult { u: u1, p_two_sided: p, exact: true });
    }
    let mu = f1 * f2 / 2.0;
    let nf = n as f64;
    let var = f1 * f2 / 12.0 * ((nf + 1.0) - tie_sum / (nf * (nf - 1.0)));
    let p = if var > 0.0 {
        let z = (u_max - mu - 0.5) / var.sqrt();
        (2.0 * normal_sf(z)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    Some(MwResult { u: u1, p_two_sided: p, exact: false })
}

/// Number of arrangements giving each value of U (0 ..= n1·n2) for samples of n1 and n2
/// without ties: the coefficients of the Gaussian binomial [n1 + n2 choose n1]_q, built as
/// Π_{k=1..n1} (1 − q^{n2+k}) / (1 − q^k). Exact in f64 up to n1 = n2 = 20 (C(40, 20) ≈
/// 1.4e11 < 2^53).
fn u_distribution(n1: usize, n2: usize) -> Vec<f64> {
    let len = n1 * n2 + 1;
    let mut c = vec![0.0f64; len];
    c[0] = 1.0;
    for k in 1..=n1 {
        // Multiply by (1 − q^{n2+k}) (downwards so each term uses the old coefficient).
        let m = n2 + k;
        for i in (m..len).rev() {
            c[i] -= c[i - m];
        }
        // Divide by (1 − q^k): running sum with stride k.
        for i in k..len {
            c[i] += c[i - k];
        }
    }
    c
}

// ---------------------------------------------------------------------------------------
// Ratio of means

/// Confidence interval of the ratio mean_b / mean_a by the delta method (first-order
/// Taylor expansion, the two means independent):
///
/// Var(b/a) ≈ se_b² / a² + b² · se_a² / a⁴,  interval = r ± t_{(1+c)/2, df} · √Var.
///
/// This is an approximation: it is symmetric around the point ratio and assumes mean_a
/// is far from zero relative to se_a (Fieller's interval would be exact under normality
/// but can be unbounded). `df` is usually the Welch df ([`welch_df`]); an infinite df
/// uses the normal quantile. Returns `(NaN, NaN)` when mean_a is 0 or any input is not
/// finite (the ratio is undefined); `(r, r)` when both standard errors are 0.
pub fn ratio_ci(mean_a: f64, se_a: f64, mean_b: f64, se_b: f64, df: f64, confidence: f64) -> (f64, f64) {
    if mean_a == 0.0 || !mean_a.is_finite() || !mean_b.is_finite() || !se_a.is_finite() || !se_b.is_finite() {
        return (f64::NAN, f64::NAN);
    }
    let r = mean_b / mean_a;
    let var = (se_b * se_b + r * r * se_a * se_a) / (mean_a * mean_a);
    if var == 0.0 {
        return (r, r);
    }
    let df = if df.is_nan() || df <= 0.0 { f64::INFINITY } else { df };
    let half = t_critical(confidence, df) * var.sqrt();
    (r - half, r + half)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    macro_rules! assert_close {
        ($a:expr, $b:expr, $tol:expr) => {{
            let (a, b): (f64, f64) = ($a, $b);
            assert!(close(a, b, $tol), "{} = {a}, expected {b} ± {}", stringify!($a), $tol);
        }};
    }

    #[test]
    fn t_table_values() {
        // Two-sided 95 % critical values from printed tables (and SciPy t.ppf(0.975, df)).
        // Large df (SciPy): both sides of the switch to the asymptotic expansion.
        for (t, df, p) in [
            (0.5, 1e3, 0.617_185_080_833_874_7),
            (5.0, 1e3, 6.767_256_364_648_635e-7),
            (2.0, 99_999.0, 0.045_502_963_484_502_446),
            (0.5, 1e5, 0.617_076_177_654_417_9),
            (2.0, 1e5, 0.045_502_963_457_506_51),
            (5.0, 1e5, 5.742_701_678_641_679e-7),
            (2.0, 1e7, 0.045_500_290_891_842_96),
            (0.5, 1e9, 0.617_075_077_561_994_3),
            (5.0, 1e9, 5.733_032_403_951_619e-7),
        ] {
            assert_close!(t_two_sided_p(t, df), p, 1e-10);
        }
        for (df, q) in [
            (1.0, 12.7062),
            (2.0, 4.3027),
            (4.0, 2.7764),
            (10.0, 2.2281),
            (30.0, 2.0423),
            (1e9, 1.95996),
            (f64::INFINITY, 1.95996),
        ] {
            assert_close!(t_quantile(0.975, df), q, 1e-3);
            assert_close!(t_critical(0.95, df), q, 1e-3);
        }
        // Non-integer df (SciPy).
        assert_close!(t_quantile(0.975, 2.5), 3.574_654_842, 1e-6);
        assert_close!(t_quantile(0.975, 7.3), 2.345_066_737, 1e-6);
        assert_close!(t_quantile(0.975, 0.5), 164.557_673_48, 1e-4);
        assert_close!(t_quantile(0.995, 3.0), 5.840_909_310, 1e-6);
        assert_close!(t_quantile(0.05, 8.4), -1.848_133_216, 1e-6);
        assert_close!(t_quantile(0.9, 100.0), 1.290_074_761, 1e-6);
        assert_eq!(t_quantile(0.5, 3.0), 0.0);
        assert_eq!(t_quantile(1.0, 3.0), f64::INFINITY);
        assert_eq!(t_quantile(0.0, 3.0), f64::NEG_INFINITY);
        assert!(t_quantile(1.5, 3.0).is_nan());
        assert!(t_quantile(0.5, 0.0).is_nan());
    }

    #[test]
    fn t_cdf_values() {
        // SciPy stats.t.cdf(t, df).
        for (t, df, p) in [
            (2.0, 5.0, 0.949_030_260_585_070_8),
            (1.5, 3.7, 0.893_200_915_398_993_3),
            (-0.7, 12.0, 0.248_637_076_895_353_78),
            (3.2, 1.0, 0.903_588_752_020_770_4),
            (0.3, 0.5, 0.577_570_423_934_754_6),
            (10.0, 2.2, 0.996_447_768_144_870_8),
        ] {
            assert_close!(t_cdf(t, df), p, 1e-9);
        }
        assert_close!(t_cdf(1.959_963_984_540_054, f64::INFINITY), 0.975, 1e-12);
        assert_close!(normal_cdf(-1.0), 0.158_655_253_931_457_05, 1e-14);
        assert_close!(normal_sf(6.0), 9.865_876_450_376_98e-10, 1e-20);
        assert_eq!(t_cdf(f64::INFINITY, 3.0), 1.0);
        assert_eq!(t_cdf(0.0, 3.0), 0.5);
        assert!(t_cdf(1.0, -1.0).is_nan());
    }

    #[test]
    fn gamma_and_beta() {
        assert_close!(ln_gamma(1.0), 0.0, 1e-14);
        assert_close!(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-14);
        assert_close!(ln_gamma(10.0), 362_880f64.ln(), 1e-12);
        assert_close!(ln_gamma(0.1), 2.252_712_651_734_206, 1e-12);
        // I_x(1, 1) = x; I_x(2, 3) = 6x²/2 − 8x³/3·… closed form: x²(6 − 8x + 3x²).
        assert_close!(inc_beta(1.0, 1.0, 0.3), 0.3, 1e-14);
        let x: f64 = 0.4;
        assert_close!(inc_beta(2.0, 3.0, x), x * x * (6.0 - 8.0 * x + 3.0 * x * x), 1e-13);
        assert_eq!(inc_beta(2.0, 3.0, 0.0), 0.0);
        assert_eq!(inc_beta(2.0, 3.0, 1.0), 1.0);
    }

    #[test]
    fn mean_ci_matches_scipy() {
        let (m, sd, lo, hi) = mean_ci(&[3.0, 4.0, 5.0, 6.0], 0.95);
        assert_close!(m, 4.5, 1e-12);
        assert_close!(sd, 1.290_994_448_735_805_6, 1e-12);
        assert_close!(lo, 2.445_739_743_239_479_4, 1e-9);
        assert_close!(hi, 6.554_260_256_760_521, 1e-9);
        assert_eq!(mean_ci(&[7.0], 0.95), (7.0, 0.0, 7.0, 7.0));
        let (m, sd, lo, hi) = mean_ci(&[], 0.95);
        assert!(m.is_nan() && lo.is_nan() && hi.is_nan());
        assert_eq!(sd, 0.0);
        // Constant sample: exact mean, zero width.
        assert_eq!(mean_ci(&[0.1, 0.1, 0.1], 0.95), (0.1, 0.0, 0.1, 0.1));
        let s = Sample::new(&[3.0, 4.0, 5.0, 6.0], 0.95);
        assert_eq!(s.n, 4);
        assert_close!(s.se(), 1.290_994_448_735_805_6 / 2.0, 1e-12);
    }

    #[test]
    fn welch_matches_scipy() {
        let a = [10.1, 9.8, 10.3, 10.0, 9.9];
        let b = [10.9, 11.2, 10.7, 11.0, 11.4];
        let w = welch(&a, &b).expect("n >= 2");
        assert_close!(w.t, 6.876_838_597_125_062_5, 1e-9);
        assert_close!(w.df, 7.226_037_623_171_093, 1e-9);
        assert_close!(w.p_two_sided, 2.044_181_967_071_206_4e-4, 1e-10);
        assert_close!(w.diff_ci_low, 0.671_481_395_535_212_2, 1e-8);
        assert_close!(w.diff_ci_high, 1.368_518_604_464_787, 1e-8);

        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [2.5, 3.1, 4.8, 9.0];
        let w = welch(&a, &b).expect("n >= 2");
        assert_close!(w.t, 0.816_434_364_553_884, 1e-9);
        assert_close!(w.df, 4.643_030_662_803_476, 1e-9);
        assert_close!(w.p_two_sided, 0.454_082_778_916_627_57, 1e-9);
        assert_close!(w.diff_ci_low, -3.000_736_535_416_361, 1e-7);
        assert_close!(w.diff_ci_high, 5.700_736_535_416_36, 1e-7);
    }

    #[test]
    fn welch_degenerate() {
        assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
        assert!(welch(&[1.0, 2.0], &[]).is_none());
        let same = welch(&[5.0, 5.0, 5.0], &[5.0, 5.0]).expect("n >= 2");
        assert_eq!((same.t, same.p_two_sided, same.df), (0.0, 1.0, 3.0));
        assert_eq!((same.diff_ci_low, same.diff_ci_high), (0.0, 0.0));
        let differ = welch(&[5.0, 5.0, 5.0], &[6.0, 6.0]).expect("n >= 2");
        assert_eq!((differ.t, differ.p_two_sided), (f64::INFINITY, 0.0));
        assert_eq!((differ.diff_ci_low, differ.diff_ci_high), (1.0, 1.0));
        // One side constant: df = n − 1 of the other side.
        let one = welch(&[5.0, 5.0, 5.0], &[6.0, 7.0, 8.0, 9.0]).expect("n >= 2");
        assert_close!(one.df, 3.0, 1e-12);
        let se = (1.666_666_666_666_666_7f64 / 4.0).sqrt();
        assert_close!(one.t, 2.5 / se, 1e-9);
        assert_close!(one.p_two_sided, t_two_sided_p(2.5 / se, 3.0), 1e-12);
    }

    #[test]
    fn mann_whitney_exact() {
        let r = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).expect("non-empty");
        assert_eq!(r.u, 0.0);
        assert!(r.exact);
        assert_close!(r.p_two_sided, 0.1, 1e-12);
        let r = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).expect("non-empty");
        assert_close!(r.p_two_sided, 0.007_936_507_936_507_936, 1e-12);
        let r = mann_whitney(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]).expect("non-empty");
        assert_eq!(r.u, 25.0);
        assert_close!(r.p_two_sided, 0.007_936_507_936_507_936, 1e-12);
        // SciPy mannwhitneyu(x, y, method="exact").
        let x = [1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7];
        let y = [2.0, 3.0, 8.0, 9.0, 10.0, 11.0];
        let r = mann_whitney(&x, &y).expect("non-empty");
        assert_eq!(r.u, 11.0);
        assert_close!(r.p_two_sided, 0.180_652_680_652_680_64, 1e-12);
        // Identical single values: p = 1.
        let r = mann_whitney(&[1.0], &[2.0]).expect("non-empty");
        assert_eq!(r.p_two_sided, 1.0);
        assert!(mann_whitney(&[], &[1.0]).is_none());
        // The null distribution sums to C(n1 + n2, n1) and is symmetric.
        let c = u_distribution(20, 20);
        assert_eq!(c.iter().sum::<f64>(), 137_846_528_820.0);
        assert!(c.iter().zip(c.iter().rev()).all(|(a, b)| a == b));
        assert!(c.iter().all(|&v| v >= 1.0));
    }

    #[test]
    fn mann_whitney_asymptotic() {
        // Ties: SciPy method="asymptotic", use_continuity=True.
        let x = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 5.0];
        let y = [3.0, 4.0, 5.0, 6.0, 6.0, 7.0, 8.0];
        let r = mann_whitney(&x, &y).expect("non-empty");
        assert!(!r.exact);
        assert_eq!(r.u, 9.5);
        assert_close!(r.p_two_sided, 0.034_890_019_321_681_41, 1e-9);
        // Large samples (n1 > 20), no ties.
        let x: Vec<f64> = (0..25).map(f64::from).collect();
        let y: Vec<f64> = (0..22).map(|v| f64::from(v) + 7.5).collect();
        let r = mann_whitney(&x, &y).expect("non-empty");
        assert_eq!(r.u, 153.0);
        assert_close!(r.p_two_sided, 0.009_586_761_541_013_657, 1e-9);
        // Everything tied: no evidence.
        let r = mann_whitney(&[3.0; 25], &[3.0; 4]).expect("non-empty");
        assert_eq!(r.p_two_sided, 1.0);
    }

    #[test]
    fn ratio_ci_delta_method() {
        // r = 2; Var = (0.1² + 4 · 0.05²) / 1 = 0.02; normal quantile.
        let (lo, hi) = ratio_ci(1.0, 0.05, 2.0, 0.1, f64::INFINITY, 0.95);
        let half = 1.959_963_984_540_054 * 0.02f64.sqrt();
        assert_close!(lo, 2.0 - half, 1e-9);
        assert_close!(hi, 2.0 + half, 1e-9);
        assert_eq!(ratio_ci(4.0, 0.0, 2.0, 0.0, 3.0, 0.95), (0.5, 0.5));
        let (nlo, nhi) = ratio_ci(0.0, 1.0, 2.0, 1.0, 3.0, 0.95);
        assert!(nlo.is_nan() && nhi.is_nan());
        // Small df widens the interval.
        let (lo3, hi3) = ratio_ci(1.0, 0.05, 2.0, 0.1, 3.0, 0.95);
        assert!(lo3 < lo && hi3 > hi);
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        // Half-integers: shifting by an integer is exact, so only the arithmetic differs.
        proptest::collection::vec((-2000i32..2000).prop_map(|v| f64::from(v) * 0.5), 2..30)
    }

    proptest! {
        #[test]
        fn p_values_in_unit_interval(a in sample(), b in sample()) {
            let w = welch(&a, &b).expect("n >= 2");
            prop_assert!((0.0..=1.0).contains(&w.p_two_sided), "welch p {}", w.p_two_sided);
            let m = mann_whitney(&a, &b).expect("non-empty");
            prop_assert!((0.0..=1.0).contains(&m.p_two_sided), "mw p {}", m.p_two_sided);
        }

        #[test]
        fn tests_are_symmetric(a in sample(), b in sample()) {
            let ab = welch(&a, &b).expect("n >= 2");
            let ba = welch(&b, &a).expect("n >= 2");
            prop_assert_eq!(ab.p_two_sided, ba.p_two_sided);
            prop_assert_eq!(ab.t, -ba.t);
            let mab = mann_whitney(&a, &b).expect("non-empty");
            let mba = mann_whitney(&b, &a).expect("non-empty");
            prop_assert!(close(mab.p_two_sided, mba.p_two_sided, 1e-12));
            prop_assert!(close(mab.u + mba.u, (a.len() * b.len()) as f64, 1e-9));
        }

        #[test]
        fn shift_leaves_p_unchanged(a in sample(), b in sample(), c in -100_000i32..100_000) {
            let c = f64::from(c);
            let sa: Vec<f64> = a.iter().map(|x| x + c).collect();
            let sb: Vec<f64> = b.iter().map(|x| x + c).collect();
            let w = welch(&a, &b).expect("n >= 2");
            let ws = welch(&sa, &sb).expect("n >= 2");
            prop_assert!(close(w.p_two_sided, ws.p_two_sided, 1e-7), "{} vs {}", w.p_two_sided, ws.p_two_sided);
            let m = mann_whitney(&a, &b).expect("non-empty");
            let ms = mann_whitney(&sa, &sb).expect("non-empty");
            prop_assert_eq!(m.p_two_sided, ms.p_two_sided);
        }

        #[test]
        fn ci_contains_mean(xs in proptest::collection::vec(-1e6f64..1e6, 1..50), conf in 0.5f64..0.999) {
            let (m, sd, lo, hi) = mean_ci(&xs, conf);
            prop_assert!(lo <= m && m <= hi, "{lo} <= {m} <= {hi}");
            prop_assert!(sd >= 0.0);
            let (m2, _, lo2, hi2) = mean_ci(&xs, conf.min(0.9) - 0.1);
            prop_assert_eq!(m2, m);
            prop_assert!(lo2 >= lo && hi2 <= hi, "narrower at lower confidence");
        }

        #[test]
        fn quantile_inverts_cdf(p in 0.001f64..0.999, df in 0.3f64..1e7) {
            let t = t_quantile(p, df);
            prop_assert!(t.is_finite());
            prop_assert!(close(t_cdf(t, df), p, 1e-9), "cdf(q({p}, {df})) = {}", t_cdf(t, df));
        }

        #[test]
        fn cdf_is_monotone(t1 in -50f64..50.0, dt in 0f64..10.0, df in 0.3f64..1e7) {
            let a = t_cdf(t1, df);
            let b = t_cdf(t1 + dt, df);
            prop_assert!((0.0..=1.0).contains(&a));
            prop_assert!(a <= b + 1e-15);
        }

        #[test]
        fn never_panics(a in proptest::collection::vec(proptest::num::f64::ANY, 0..8),
                        b in proptest::collection::vec(proptest::num::f64::ANY, 0..8),
                        conf in proptest::num::f64::ANY) {
            let _ = mean_ci(&a, conf);
            let _ = welch_with(&a, &b, conf);
            let _ = mann_whitney(&a, &b);
            if let (Some(&x), Some(&y)) = (a.first(), b.first()) {
                let _ = ratio_ci(x, y.abs(), y, x.abs(), conf, conf);
                let _ = t_quantile(x, y);
                let _ = t_cdf(x, y);
            }
        }
    }
}
