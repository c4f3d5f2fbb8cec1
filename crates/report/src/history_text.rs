//! The sentences of the history: a change between two stored runs of the same device and
//! workload ("RND4K Q1T1 read −18.2 % since 2026-03-02 (95 % CI −21.0…−15.1 %): slower"), from
//! the numbers of `stats::trend`.

use stats::trend::{Basis, Change, CONFIDENCE};

/// The real minus sign, as in "−18.2 %".
const MINUS: char = '\u{2212}';

/// A percentage with one decimal and its sign ("−18.2", "+0.4"; "0.0" when it rounds to 0).
pub fn signed(x: f64) -> String {
    let abs = format!("{:.1}", x.abs());
    if abs.bytes().all(|c| c == b'0' || c == b'.') {
        abs
    } else if x < 0.0 {
        format!("{MINUS}{abs}")
    } else {
        format!("+{abs}")
    }
}

/// Why a change could not be computed, from its pass counts.
fn undefined_reason(c: &Change) -> &'static str {
    if c.n_a == 0 || c.n_b == 0 {
        "a run has no usable passes"
    } else {
        "the earlier figure is 0"
    }
}

/// The trend line of one cell: "RND4K Q1T1 read −18.2 % since 2026-03-02 (95 % CI
/// −21.0…−15.1 %): slower". `since` is the earlier run's date as it should be shown.
pub fn describe(name: &str, c: &Change, since: &str) -> String {
    let pct = signed(c.pct);
    match c.basis {
        Basis::Interval => format!(
            "{name} {pct} % since {since} ({:.0} % CI {}…{} %): {}",
            CONFIDENCE * 100.0,
            signed(c.ci_low_pct),
            signed(c.ci_high_pct),
            c.verdict.name()
        ),
        Basis::SinglePass => {
            let passes =
                if c.n_a == c.n_b { format!("{} pass each", c.n_a) } else { format!("{} and {} passes", c.n_a, c.n_b) };
            format!("{name} {pct} % since {since} (no CI: {passes}): {}", c.verdict.name())
        }
        Basis::Undefined => format!("{name} since {since}: no comparison ({})", undefined_reason(c)),
    }
}

/// The short form for the line after `mark` and `run` ("vs 2026-10-01 (same device, same
/// workload): RND4K Q1T1 read −3.1 %, within noise"): "RND4K Q1T1 read −3.1 %, within noise".
pub fn describe_short(name: &str, c: &Change) -> String {
    match c.basis {
        Basis::Undefined => format!("{name}: no comparison ({})", undefined_reason(c)),
        _ => format!("{name} {} %, {}", signed(c.pct), c.verdict.name()),
    }
}

/// Where the history keeps the result and its change since the last comparable run: "kept as
/// run 42; vs 2026-10-01 (run 41, same device, same workload): RND4K Q1T1 read −3.1 %, within
/// noise; …".
pub fn history_line(h: &stats::HistoryNote) -> String {
    let mut s = format!("kept as run {}", h.id);
    match &h.vs {
        None => s.push_str("; no earlier run of this device with the same workload"),
        Some(v) => {
            let day = v.started_at.get(..10).unwrap_or(&v.started_at);
            s.push_str(&format!("; vs {day} (run {}, same device, same workload): ", v.id));
            if v.cells.is_empty() {
                s.push_str("no figure to compare");
            }
            let cells: Vec<String> = v
                .cells
                .iter()
                .map(|c| format!("{} {} {} %, {}", c.job, c.direction, signed(c.pct), c.verdict.name()))
                .collect();
            s.push_str(&cells.join("; "));
        }
    }
    s
}

/// A name from a stored document with its control characters replaced, so it cannot drive the
/// terminal.
fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// `history trend`: per cell a timeline (the mean of the passes, their range and count per run)
/// and the change since the first run and since the previous one.
pub fn trend_text(t: &stats::trend::DeviceTrend) -> String {
    let mut out = format!(
        "history of {} (MB/s, the mean of each run's passes; a change whose {:.0} % interval lies within ±{} % is noise)\n",
        clean(&t.device),
        CONFIDENCE * 100.0,
        t.threshold_pct
    );
    if t.cells.is_empty() {
        out.push_str("no complete run with figures to follow\n");
    }
    for c in &t.cells {
        let name = format!("{} {}", clean(&c.job), c.direction);
        let n = c.trend.points.len();
        out.push_str(&format!("\n{name} · {} · {n} run{}\n", c.command, if n == 1 { "" } else { "s" }));
        for (p, id) in c.trend.points.iter().zip(&c.run_ids) {
            let day = p.started_at.get(..10).unwrap_or(&p.started_at);
            let spread =
                if p.n > 1 { format!("  ({:.1}…{:.1}, {} passes)", p.low, p.high, p.n) } else { String::new() };
            out.push_str(&format!("  {day}  {:>10.1}{spread}  run {id}\n", p.mean));
        }
        let day = |d: &Option<String>| d.as_deref().map(|s| s.get(..10).unwrap_or(s).to_string()).unwrap_or_default();
        if let Some(ch) = &c.trend.since_first {
            out.push_str(&format!("  {}\n", describe(&name, ch, &day(&c.trend.first_at))));
        }
        if n > 2 {
            if let Some(ch) = &c.trend.since_last {
                out.push_str(&format!("  {} (the previous run)\n", describe(&name, ch, &day(&c.trend.previous_at))));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::trend::{change, Verdict};

    fn with(pct: f64, lo: f64, hi: f64, verdict: Verdict, basis: Basis, n: u32) -> Change {
        Change { pct, ci_low_pct: lo, ci_high_pct: hi, verdict, basis, n_a: n, n_b: n }
    }

    #[test]
    fn describe_slower_as_in_the_issue() {
        let c = with(-18.2, -21.0, -15.1, Verdict::Slower, Basis::Interval, 5);
        assert_eq!(
            describe("RND4K Q1T1 read", &c, "2026-03-02"),
            "RND4K Q1T1 read −18.2 % since 2026-03-02 (95 % CI −21.0…−15.1 %): slower"
        );
    }

    #[test]
    fn describe_within_noise_and_faster() {
        let c = with(0.4, -1.2, 2.04, Verdict::WithinNoise, Basis::Interval, 3);
        assert_eq!(
            describe("SEQ1M Q8T1 write", &c, "2026-03-02"),
            "SEQ1M Q8T1 write +0.4 % since 2026-03-02 (95 % CI −1.2…+2.0 %): within noise"
        );
        let c = with(12.345, 9.96, 14.76, Verdict::Faster, Basis::Interval, 3);
        assert_eq!(describe("x", &c, "d"), "x +12.3 % since d (95 % CI +10.0…+14.8 %): faster");
    }

    #[test]
    fn describe_rounds_tiny_changes_to_unsigned_zero() {
        let c = with(-0.04, -0.049, 0.03, Verdict::WithinNoise, Basis::Interval, 3);
        assert_eq!(describe("x", &c, "d"), "x 0.0 % since d (95 % CI 0.0…0.0 %): within noise");
        assert_eq!(describe_short("x", &c), "x 0.0 %, within noise");
    }

    #[test]
    fn describe_single_pass_and_undefined() {
        let c = with(-25.0, -25.0, -25.0, Verdict::Slower, Basis::SinglePass, 1);
        assert_eq!(
            describe("RND4K Q1T1 read", &c, "2026-03-02"),
            "RND4K Q1T1 read −25.0 % since 2026-03-02 (no CI: 1 pass each): slower"
        );
        let c = Change { n_b: 3, verdict: Verdict::Inconclusive, pct: 4.0, ci_low_pct: 4.0, ci_high_pct: 4.0, ..c };
        assert_eq!(describe("x", &c, "d"), "x +4.0 % since d (no CI: 1 and 3 passes): inconclusive");
        let u = change(&[], &[1.0], true);
        assert_eq!(describe("x", &u, "d"), "x since d: no comparison (a run has no usable passes)");
        let u = change(&[0.0, 0.0], &[1.0, 2.0], true);
        assert_eq!(describe_short("x", &u), "x: no comparison (the earlier figure is 0)");
    }

    #[test]
    fn describe_short_as_in_the_issue() {
        let c = with(-3.1, -4.0, -2.2, Verdict::WithinNoise, Basis::Interval, 3);
        assert_eq!(describe_short("RND4K Q1T1 read", &c), "RND4K Q1T1 read −3.1 %, within noise");
    }

    #[test]
    fn the_line_after_a_run_names_the_earlier_run_and_each_cell() {
        let vs = stats::VsLast {
            id: 41,
            started_at: "2026-10-01T08:00:00Z".into(),
            metric: "mb_s".into(),
            threshold_pct: 5.0,
            cells: vec![stats::VsCell {
                job: "RND4K Q1T1".into(),
                direction: "read".into(),
                pct: -3.12,
                ci_low_pct: -4.0,
                ci_high_pct: -2.2,
                verdict: Verdict::WithinNoise,
            }],
        };
        let h = stats::HistoryNote { id: 43, vs: Some(vs) };
        assert_eq!(
            history_line(&h),
            "kept as run 43; vs 2026-10-01 (run 41, same device, same workload): RND4K Q1T1 read −3.1 %, within noise"
        );
        let first = stats::HistoryNote { id: 1, vs: None };
        assert_eq!(history_line(&first), "kept as run 1; no earlier run of this device with the same workload");
    }
}
