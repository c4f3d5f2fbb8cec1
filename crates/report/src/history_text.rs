//! The words of a change between two results — the one wording every surface uses
//! ([`change_figure`], [`change_words`]: `compare`, `history diff`, `history trend`, the line
//! after a run, the web pages) — and the sentences of the history ("RND4K Q1T1 read since run 3
//! (2026-03-02 10:04): −18.2 % (95 % CI −21.0…−15.1 %): slower"), from the numbers of the one
//! rule, `stats::verdict`.

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

/// The figure of a change, as every surface shows it: "−18.2 % (95 % CI −21.0…−15.1 %)";
/// without an interval "+64.7 % (no interval: 1 pass each)"; "no comparison (…)" when there is
/// none. `compare`'s table, `history diff`, `history trend`, the line after a run and the web
/// pages all word a change with this and [`change_words`].
pub fn change_figure(c: &Change) -> String {
    let pct = signed(c.pct);
    match c.basis {
        Basis::Interval => {
            format!("{pct} % ({:.0} % CI {}…{} %)", CONFIDENCE * 100.0, signed(c.ci_low_pct), signed(c.ci_high_pct))
        }
        Basis::SinglePass => {
            let passes = match (c.n_a, c.n_b) {
                (a, b) if a == b && a == 1 => "1 pass each".to_string(),
                (a, b) if a == b => format!("{a} passes each"),
                (1, b) => format!("1 pass and {b}"),
                (a, 1) => format!("{a} passes and 1"),
                (a, b) => format!("{a} and {b} passes"),
            };
            format!("{pct} % (no interval: {passes})")
        }
        Basis::Undefined => format!("no comparison ({})", undefined_reason(c)),
    }
}

/// A change and its verdict: "−18.2 % (95 % CI −21.0…−15.1 %): slower", "+64.7 % (no
/// interval: 1 pass each): faster", "no comparison (a run has no usable passes)".
pub fn change_words(c: &Change) -> String {
    match c.basis {
        Basis::Undefined => change_figure(c),
        _ => format!("{}: {}", change_figure(c), c.verdict.name()),
    }
}

/// The trend line of one cell: "RND4K Q1T1 read since run 3 (2026-03-02 10:04): −18.2 % (95 % CI
/// −21.0…−15.1 %): slower". `since` names the earlier run as it should be shown.
pub fn describe(name: &str, c: &Change, since: &str) -> String {
    let name = if name.is_empty() { String::new() } else { format!("{name} ") };
    format!("{name}since {since}: {}", change_words(c))
}

/// The short form, for the line after `mark` and `run`: "RND4K Q1T1 read −3.1 % (95 % CI
/// −4.0…−2.2 %): within noise".
pub fn describe_short(name: &str, c: &Change) -> String {
    format!("{name} {}", change_words(c))
}

/// When a run started, to the minute: "2026-10-01 08:00" (the stored RFC 3339 time, UTC).
pub fn run_time(started_at: &str) -> String {
    match (started_at.get(..10), started_at.get(11..16)) {
        (Some(day), Some(hm)) => format!("{day} {hm}"),
        _ => started_at.to_string(),
    }
}

/// A run as the history names it: "run 41 (2026-10-01 08:00)".
pub fn run_name(id: i64, started_at: &str) -> String {
    format!("run {id} ({})", run_time(started_at))
}

/// Where the history keeps the result and its change since the last comparable run: "kept as
/// run 42; vs run 41 (2026-10-01 08:00, same device, same workload): RND4K Q1T1 read −3.1 %
/// (95 % CI −4.0…−2.2 %): within noise; …".
pub fn history_line(h: &stats::HistoryNote) -> String {
    let mut s = format!("kept as run {}", h.id);
    match &h.vs {
        None => s.push_str("; no earlier run of this device with the same workload"),
        Some(v) => {
            s.push_str(&format!("; vs run {} ({}, same device, same workload): ", v.id, run_time(&v.started_at)));
            if v.cells.is_empty() {
                s.push_str("no figure to compare");
            }
            let cells: Vec<String> =
                v.cells.iter().map(|c| describe_short(&format!("{} {}", c.job, c.direction), &c.change())).collect();
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
            let day = run_time(&p.started_at);
            let spread =
                if p.n > 1 { format!("  ({:.1}…{:.1}, {} passes)", p.low, p.high, p.n) } else { String::new() };
            out.push_str(&format!("  {day}  {:>10.1}{spread}  run {id}\n", p.mean));
        }
        // The earlier run by number and time: on one day "since 2026-11-29" would say nothing.
        let named = |at: &Option<String>, idx: usize| match (at, c.run_ids.get(idx)) {
            (Some(at), Some(id)) => run_name(*id, at),
            (Some(at), None) => run_time(at),
            _ => String::new(),
        };
        if let Some(ch) = &c.trend.since_first {
            out.push_str(&format!("  {}\n", describe(&name, ch, &named(&c.trend.first_at, 0))));
        }
        if n > 2 {
            if let Some(ch) = &c.trend.since_last {
                out.push_str(&format!(
                    "  {} (the previous run)\n",
                    describe(&name, ch, &named(&c.trend.previous_at, n - 2))
                ));
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
            describe("RND4K Q1T1 read", &c, "run 3 (2026-03-02 10:04)"),
            "RND4K Q1T1 read since run 3 (2026-03-02 10:04): −18.2 % (95 % CI −21.0…−15.1 %): slower"
        );
    }

    #[test]
    fn describe_within_noise_and_faster() {
        let c = with(0.4, -1.2, 2.04, Verdict::WithinNoise, Basis::Interval, 3);
        assert_eq!(change_words(&c), "+0.4 % (95 % CI −1.2…+2.0 %): within noise");
        let c = with(12.345, 9.96, 14.76, Verdict::Faster, Basis::Interval, 3);
        assert_eq!(describe("x", &c, "d"), "x since d: +12.3 % (95 % CI +10.0…+14.8 %): faster");
    }

    #[test]
    fn describe_rounds_tiny_changes_to_unsigned_zero() {
        let c = with(-0.04, -0.049, 0.03, Verdict::WithinNoise, Basis::Interval, 3);
        assert_eq!(describe_short("x", &c), "x 0.0 % (95 % CI 0.0…0.0 %): within noise");
    }

    #[test]
    fn a_single_pass_has_no_interval_and_says_so() {
        let c = with(64.7, 64.7, 64.7, Verdict::Faster, Basis::SinglePass, 1);
        assert_eq!(change_figure(&c), "+64.7 % (no interval: 1 pass each)");
        assert_eq!(change_words(&c), "+64.7 % (no interval: 1 pass each): faster");
        let c = Change { n_b: 3, verdict: Verdict::Inconclusive, pct: 4.0, ci_low_pct: 4.0, ci_high_pct: 4.0, ..c };
        assert_eq!(change_words(&c), "+4.0 % (no interval: 1 pass and 3): inconclusive");
        let u = change(&[], &[1.0], true);
        assert_eq!(describe("x", &u, "d"), "x since d: no comparison (a run has no usable passes)");
        let u = change(&[0.0, 0.0], &[1.0, 2.0], true);
        assert_eq!(describe_short("x", &u), "x no comparison (the earlier figure is 0)");
    }

    #[test]
    fn runs_are_named_with_their_time() {
        assert_eq!(run_name(3, "2026-11-29T10:04:05.123Z"), "run 3 (2026-11-29 10:04)");
        assert_eq!(run_name(3, "odd"), "run 3 (odd)");
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
                basis: Basis::Interval,
                n_a: 3,
                n_b: 3,
            }],
        };
        let h = stats::HistoryNote { id: 43, vs: Some(vs) };
        assert_eq!(
            history_line(&h),
            "kept as run 43; vs run 41 (2026-10-01 08:00, same device, same workload): RND4K Q1T1 read −3.1 % \
             (95 % CI −4.0…−2.2 %): within noise"
        );
        let first = stats::HistoryNote { id: 1, vs: None };
        assert_eq!(history_line(&first), "kept as run 1; no earlier run of this device with the same workload");
    }
}
