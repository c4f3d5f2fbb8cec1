//! `/proc/pressure/io`: the share of time tasks stalled on I/O (kernel ≥ 4.20 with PSI on).

use serde::{Deserialize, Serialize};

/// One line (`some` or `full`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiLine {
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// Cumulative stall time, µs.
    pub total: u64,
}

/// The whole file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiTotals {
    pub some: PsiLine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<PsiLine>,
}

/// Parse the file's text; `None` when it holds no `some` line.
pub fn parse(text: &str) -> Option<PsiTotals> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let which = it.next()?;
        let mut l = PsiLine::default();
        for kv in it {
            let (k, v) = kv.split_once('=')?;
            match k {
                "avg10" => l.avg10 = v.parse().ok()?,
                "avg60" => l.avg60 = v.parse().ok()?,
                "avg300" => l.avg300 = v.parse().ok()?,
                "total" => l.total = v.parse().ok()?,
                _ => {}
            }
        }
        match which {
            "some" => some = Some(l),
            "full" => full = Some(l),
            _ => {}
        }
    }
    Some(PsiTotals { some: some?, full })
}

/// Read the live file; absent when the kernel lacks PSI (or it is disabled).
pub fn read() -> Option<PsiTotals> {
    platform::host::io_pressure_text().and_then(|t| parse(&t))
}

/// Pressure over one interval, with the kernel's own averages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Psi {
    /// % of the interval in which some task stalled on I/O.
    pub some_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_pct: Option<f64>,
    pub some_avg10: f64,
    pub some_avg60: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_avg10: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_avg60: Option<f64>,
}

/// Interval pressure from two readings `interval_s` apart.
pub fn interval(prev: &PsiTotals, cur: &PsiTotals, interval_s: f64) -> Psi {
    let pct = |p: u64, c: u64| {
        if interval_s > 0.0 {
            (c.saturating_sub(p) as f64 / 1e6 / interval_s * 100.0).min(100.0)
        } else {
            0.0
        }
    };
    let full_pct = match (prev.full, cur.full) {
        (Some(p), Some(c)) => Some(pct(p.total, c.total)),
        _ => None,
    };
    Psi {
        some_pct: pct(prev.some.total, cur.some.total),
        full_pct,
        some_avg10: cur.some.avg10,
        some_avg60: cur.some.avg60,
        full_avg10: cur.full.map(|f| f.avg10),
        full_avg60: cur.full.map(|f| f.avg60),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_some_and_full() {
        let t = "some avg10=0.48 avg60=0.20 avg300=1.53 total=3171584295\nfull avg10=0.36 avg60=0.16 avg300=1.33 total=2970857808\n";
        let p = parse(t).unwrap();
        assert_eq!(p.some.total, 3171584295);
        assert_eq!(p.full.unwrap().avg10, 0.36);
        assert!(parse("").is_none());
        assert!(parse("some avg10=x").is_none());
        let mut c = p;
        c.some.total += 250_000;
        assert!((interval(&p, &c, 1.0).some_pct - 25.0).abs() < 1e-9);
    }
}
