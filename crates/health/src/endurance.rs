//! The endurance forecast: years left from the rated TBW and the measured write rate,
//! and from the wear slope, with the arithmetic shown in words (`docs/METHOD.md`, "health"):
//! "80 TB rated at 20 GB/day ≈ 4000 days ≈ 11 years".
//!
//! TBW = DWPD × capacity × 365 × warranty years. Days left = (rated − written) / bytes
//! per day, or (100 − % used) / % per day. A year is 365 days, as in the DWPD formula.

use crate::state::Sample;
use crate::units::{dec_bytes, in_unit, one_decimal, unit_for};
use serde::Serialize;

pub const DAYS_PER_YEAR: f64 = 365.0;
/// Shortest history that gives a write rate (shorter spans are mostly noise).
pub const MIN_RATE_SPAN_S: u64 = 3600;
/// Shortest history for a wear slope (wear moves in whole percent).
pub const MIN_WEAR_SPAN_S: u64 = 86_400;

/// What the user said the disk is rated for.
#[derive(Debug, Clone, PartialEq)]
pub enum RatedSpec {
    /// `--tbw`, in bytes, with the text the user typed.
    Tbw(u64, String),
    /// `--dwpd N [--warranty-years Y]`.
    Dwpd { dwpd: f64, years: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rated {
    pub bytes: u64,
    pub source: String,
}

impl RatedSpec {
    /// The rating in bytes; DWPD needs the capacity.
    pub fn resolve(&self, capacity: Option<u64>) -> Result<Rated, String> {
        match self {
            RatedSpec::Tbw(b, text) => Ok(Rated { bytes: *b, source: format!("--tbw {text}") }),
            RatedSpec::Dwpd { dwpd, years } => {
                let cap = capacity.ok_or("--dwpd needs the disk's capacity, which smartctl did not report")?;
                let bytes = dwpd * cap as f64 * DAYS_PER_YEAR * years;
                Ok(Rated {
                    bytes: bytes.round() as u64,
                    source: format!(
                        "{} DWPD × {} × 365 × {} years = {}",
                        one_decimal(*dwpd),
                        dec_bytes(cap as f64),
                        one_decimal(*years),
                        in_unit(bytes, unit_for(bytes))
                    ),
                })
            }
        }
    }
}

/// A write rate and how it was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rate {
    pub bytes_per_day: f64,
    /// "history" (the state file), "since_boot" (diskstats), "lifetime" (SMART / power-on time).
    pub source: String,
    pub span_days: f64,
    pub note: String,
}

/// The rate over the history of this disk: SMART bytes written between the oldest
/// usable sample and now, else diskstats sectors within the current boot.
pub fn rate_from_history(history: &[Sample], now: &Sample) -> Option<Rate> {
    if let Some(cur) = now.smart_written {
        if let Some(old) =
            history.iter().find(|s| s.smart_written.is_some_and(|w| w <= cur) && now.t >= s.t + MIN_RATE_SPAN_S)
        {
            let days = (now.t - old.t) as f64 / 86_400.0;
            let bytes = (cur - old.smart_written.unwrap_or(cur)) as f64;
            return Some(Rate {
                bytes_per_day: bytes / days,
                source: "history".into(),
                span_days: days,
                note: format!(
                    "SMART bytes written, {} over {} between runs (state file)",
                    dec_bytes(bytes),
                    span_text(days)
                ),
            });
        }
    }
    let (cur, boot) = (now.sectors_written?, now.boot?);
    let old = history.iter().find(|s| {
        s.boot.is_some_and(|b| b.abs_diff(boot) <= 60)
            && s.sectors_written.is_some_and(|w| w <= cur)
            && now.t >= s.t + MIN_RATE_SPAN_S
    })?;
    let days = (now.t - old.t) as f64 / 86_400.0;
    let bytes = (cur - old.sectors_written.unwrap_or(cur)) as f64 * 512.0;
    Some(Rate {
        bytes_per_day: bytes / days,
        source: "history".into(),
        span_days: days,
        note: format!(
            "kernel sectors written, {} over {} between runs (state file)",
            dec_bytes(bytes),
            span_text(days)
        ),
    })
}

/// Diskstats since boot: sectors written × 512 / uptime.
pub fn rate_since_boot(sectors: u64, uptime_s: f64) -> Option<Rate> {
    if uptime_s < MIN_RATE_SPAN_S as f64 {
        return None;
    }
    let days = uptime_s / 86_400.0;
    let bytes = sectors as f64 * 512.0;
    Some(Rate {
        bytes_per_day: bytes / days,
        source: "since_boot".into(),
        span_days: days,
        note: format!(
            "kernel diskstats since boot, {} in {}; only this boot, so bursts and idle days skew it — \
             run diskmeter health again later for a rate between runs",
            dec_bytes(bytes),
            span_text(days)
        ),
    })
}

/// SMART's lifetime writes over power-on time (a last resort: a disk that is off half
/// the time writes twice this per calendar day).
pub fn rate_lifetime(written: u64, power_on_hours: u64) -> Option<Rate> {
    if power_on_hours < 24 {
        return None;
    }
    let days = power_on_hours as f64 / 24.0;
    Some(Rate {
        bytes_per_day: written as f64 / days,
        source: "lifetime".into(),
        span_days: days,
        note: format!(
            "lifetime average: {} written in {} power-on hours (per powered-on day)",
            dec_bytes(written as f64),
            power_on_hours
        ),
    })
}

fn span_text(days: f64) -> String {
    if days < 2.0 {
        format!("{} h", one_decimal(days * 24.0))
    } else {
        format!("{} days", one_decimal(days))
    }
}

/// "≈ 4000 days ≈ 11 years".
pub fn days_years(days: f64) -> String {
    format!("≈ {:.0} days ≈ {} years", days, one_decimal(days / DAYS_PER_YEAR))
}

/// Life left from the rating: the arithmetic in words and the days.
pub fn life_from_tbw(rated: u64, written: Option<u64>, per_day: f64) -> (String, Option<f64>) {
    let unit = unit_for(rated as f64);
    let rate = format!("{}/day", dec_bytes(per_day));
    let rated_s = format!("{} rated", in_unit(rated as f64, unit));
    let (head, left) = match written {
        Some(w) if w >= rated => {
            return (
                format!(
                    "{rated_s} − {} written: the rated endurance is used up ({} beyond it)",
                    in_unit(w as f64, unit),
                    in_unit((w - rated) as f64, unit)
                ),
                Some(0.0),
            );
        }
        Some(w) => {
            let left = (rated - w) as f64;
            (format!("{rated_s} − {} written = {} left", in_unit(w as f64, unit), in_unit(left, unit)), left)
        }
        None => (rated_s, rated as f64),
    };
    if per_day.is_nan() || per_day <= 0.0 {
        return (format!("{head}; no writes measured, so no forecast"), None);
    }
    let days = left / per_day;
    let tail = if written.is_none() { " (bytes written so far unknown: this is the whole rated life)" } else { "" };
    (format!("{head} at {rate} {}{tail}", days_years(days)), Some(days))
}

/// A forecast from the wear indicator's slope.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WearForecast {
    pub used_percent: f64,
    pub percent_per_day: f64,
    /// "history" (between runs) or "lifetime" (over power-on time).
    pub source: String,
    pub days_left: Option<f64>,
    pub years_left: Option<f64>,
    pub arithmetic: String,
}

fn wear_text(used: f64, per_day: f64, what: &str) -> (String, Option<f64>) {
    let left = (100.0 - used).max(0.0);
    if per_day <= 0.0 {
        return (format!("{}% used, {what}: no wear measured yet", one_decimal(used)), None);
    }
    let days = left / per_day;
    (format!("{} % left at {:.3} %/day ({what}) {}", one_decimal(left), per_day, days_years(days)), Some(days))
}

/// Wear slope between runs (whole-percent steps need a day or more and a change).
pub fn wear_from_history(history: &[Sample], now: &Sample) -> Option<WearForecast> {
    let cur = now.wear_used_percent?;
    let old = history.iter().find(|s| s.wear_used_percent.is_some() && now.t >= s.t + MIN_WEAR_SPAN_S)?;
    let d_pct = cur - old.wear_used_percent?;
    if d_pct <= 0.0 {
        return None;
    }
    let days = (now.t - old.t) as f64 / 86_400.0;
    let per_day = d_pct / days;
    let (text, left) =
        wear_text(cur, per_day, &format!("+{} % in {} between runs", one_decimal(d_pct), span_text(days)));
    Some(WearForecast {
        used_percent: cur,
        percent_per_day: per_day,
        source: "history".into(),
        days_left: left,
        years_left: left.map(|d| d / DAYS_PER_YEAR),
        arithmetic: text,
    })
}

/// Wear slope over the disk's life: % used / power-on days.
pub fn wear_lifetime(used: f64, power_on_hours: u64) -> Option<WearForecast> {
    if used < 1.0 || power_on_hours < 24 * 7 {
        return None;
    }
    let days = power_on_hours as f64 / 24.0;
    let per_day = used / days;
    let (text, left) =
        wear_text(used, per_day, &format!("{} % in {} power-on hours", one_decimal(used), power_on_hours));
    Some(WearForecast {
        used_percent: used,
        percent_per_day: per_day,
        source: "lifetime".into(),
        days_left: left,
        years_left: left.map(|d| d / DAYS_PER_YEAR),
        arithmetic: format!("{text}, per powered-on day"),
    })
}

/// The whole forecast of one disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Forecast {
    pub rated: Option<Rated>,
    pub written_bytes: Option<u64>,
    pub rate: Option<Rate>,
    pub days_left: Option<f64>,
    pub years_left: Option<f64>,
    /// "600 TB rated − 42.1 TB written = 557.9 TB left at 35.2 GB/day ≈ 15849 days ≈ 43.4 years".
    pub arithmetic: Option<String>,
    pub wear: Option<WearForecast>,
    pub notes: Vec<String>,
}

/// Put the pieces together.
pub fn forecast(
    rated: Option<Rated>,
    written: Option<u64>,
    rate: Option<Rate>,
    wear: Option<WearForecast>,
    mut notes: Vec<String>,
) -> Forecast {
    let (arithmetic, days) = match (&rated, &rate) {
        (Some(r), Some(rt)) => {
            let (t, d) = life_from_tbw(r.bytes, written, rt.bytes_per_day);
            (Some(t), d)
        }
        (Some(r), None) => {
            notes.push("no write rate yet: run diskmeter health again later (it keeps a history)".into());
            let (t, d) = life_from_tbw(r.bytes, written, f64::NAN);
            (Some(t), d)
        }
        (None, _) => {
            notes.push(
                "rated endurance unknown: give --tbw from the spec sheet (such as --tbw 600TB) or --dwpd N \
                 [--warranty-years 5]"
                    .into(),
            );
            (None, None)
        }
    };
    Forecast {
        rated,
        written_bytes: written,
        rate,
        days_left: days,
        years_left: days.map(|d| d / DAYS_PER_YEAR),
        arithmetic,
        wear,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn methodology_example_80tb_at_20gb_per_day() {
        let (t, d) = life_from_tbw(80_000_000_000_000, None, 20e9);
        assert_eq!(d, Some(4000.0));
        assert!(t.starts_with("80 TB rated at 20 GB/day ≈ 4000 days ≈ 11 years"), "{t}");
    }

    #[test]
    fn methodology_example_40tb_at_9gb_per_day() {
        let (t, d) = life_from_tbw(40_000_000_000_000, None, 9e9);
        let years = d.unwrap() / DAYS_PER_YEAR;
        assert_eq!(years.round(), 12.0, "{t}");
        assert!(t.contains("≈ 4444 days ≈ 12.2 years"), "{t}");
    }

    #[test]
    fn brief_example_with_written() {
        let (t, _) = life_from_tbw(600_000_000_000_000, Some(42_100_000_000_000), 35.2e9);
        assert_eq!(t, "600 TB rated − 42.1 TB written = 557.9 TB left at 35.2 GB/day ≈ 15849 days ≈ 43.4 years");
    }

    #[test]
    fn used_up_and_no_rate() {
        let (t, d) = life_from_tbw(100_000_000_000_000, Some(150_000_000_000_000), 1e9);
        assert_eq!(d, Some(0.0));
        assert!(t.contains("used up (50 TB beyond it)"), "{t}");
        let (t, d) = life_from_tbw(100_000_000_000_000, Some(1), 0.0);
        assert_eq!(d, None);
        assert!(t.contains("no writes measured"), "{t}");
    }

    #[test]
    fn dwpd_arithmetic() {
        let r = RatedSpec::Dwpd { dwpd: 1.0, years: 5.0 }.resolve(Some(1_000_000_000_000)).unwrap();
        assert_eq!(r.bytes, 1_825_000_000_000_000);
        assert_eq!(r.source, "1 DWPD × 1 TB × 365 × 5 years = 1.8 PB");
        assert!(RatedSpec::Dwpd { dwpd: 1.0, years: 5.0 }.resolve(None).is_err());
    }

    fn s(t: u64, w: Option<u64>, sectors: Option<u64>, boot: Option<u64>, wear: Option<f64>) -> Sample {
        Sample { t, smart_written: w, sectors_written: sectors, boot, wear_used_percent: wear, power_on_hours: None }
    }

    #[test]
    fn history_rate_prefers_smart() {
        let hist = [s(0, Some(0), None, None, None), s(86_400, Some(10), None, None, None)];
        let now = s(2 * 86_400, Some(40_000_000_000), None, None, None);
        let r = rate_from_history(&hist, &now).unwrap();
        assert_eq!(r.bytes_per_day, 20e9);
        assert_eq!(r.span_days, 2.0);
    }

    #[test]
    fn history_rate_from_sectors_only_within_a_boot() {
        let hist = [s(0, None, Some(0), Some(100), None)];
        let now = s(86_400, None, Some(1_000_000), Some(101), None);
        assert_eq!(rate_from_history(&hist, &now).unwrap().bytes_per_day, 512e6);
        let other_boot = s(86_400, None, Some(1_000_000), Some(50_000), None);
        assert_eq!(rate_from_history(&hist, &other_boot), None);
    }

    #[test]
    fn too_short_spans_give_nothing() {
        let hist = [s(0, Some(0), None, None, Some(1.0))];
        assert_eq!(rate_from_history(&hist, &s(600, Some(5), None, None, Some(2.0))), None);
        assert_eq!(rate_since_boot(100, 60.0), None);
        assert_eq!(wear_from_history(&hist, &s(3600, None, None, None, Some(2.0))), None);
    }

    #[test]
    fn wear_slopes() {
        let hist = [s(0, None, None, None, Some(10.0))];
        let w = wear_from_history(&hist, &s(100 * 86_400, None, None, None, Some(12.0))).unwrap();
        assert!((w.percent_per_day - 0.02).abs() < 1e-12);
        assert_eq!(w.days_left.map(f64::round), Some(4400.0));
        let l = wear_lifetime(19.0, 14551).unwrap();
        assert_eq!(l.source, "lifetime");
        assert!(l.arithmetic.contains("81 % left"), "{}", l.arithmetic);
    }

    proptest! {
        #[test]
        fn days_times_rate_is_what_is_left(rated in 1u64..10_000, written in 0u64..10_000, rate in 1u64..1_000_000) {
            let rated_b = rated * 1_000_000_000_000;
            let written_b = written * 1_000_000_000;
            let per_day = rate as f64 * 1e6;
            let (_, d) = life_from_tbw(rated_b, Some(written_b), per_day);
            let d = d.unwrap();
            if written_b >= rated_b {
                prop_assert_eq!(d, 0.0);
            } else {
                let back = d * per_day;
                prop_assert!((back - (rated_b - written_b) as f64).abs() <= 1e-6 * rated_b as f64);
            }
        }
    }
}
