//! Live progress on stderr for every command: the phases of a run (elapsed/ETA, live IOPS and
//! MB/s), a surface scan's bytes and rate, a self-test's percentage, and `top`'s warnings.
//! Bars only on a terminal and without --quiet; notices and warnings always.

use app::health::WaitObserver;
use app::session::Observer;
use app::top::TopObserver;
use engine::measure::Tick;
use engine::scan::SurfaceObserver;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

use app::output::sanitize;

pub struct Progress {
    quiet: bool,
    tty: bool,
    bar: Option<ProgressBar>,
    label: String,
    timed: bool,
    /// Multi-step commands: "step 3/12, ETA 1m05s" shown with every phase.
    overall: String,
    /// Multi-step commands: the planned length of all steps (the ETA before one has finished).
    planned: Option<Duration>,
    /// A self-test's last percentage (a line per change when stderr is not a terminal).
    last_percent: Option<u64>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Self {
            quiet,
            tty: std::io::stderr().is_terminal(),
            bar: None,
            label: String::new(),
            timed: false,
            overall: String::new(),
            planned: None,
            last_percent: None,
        }
    }

    /// Bars are drawn.
    fn enabled(&self) -> bool {
        !self.quiet && self.tty
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    fn styled(total: Option<u64>, template: &str, fallback: fn() -> ProgressStyle) -> ProgressBar {
        let b = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template(template).unwrap_or_else(|_| fallback()));
        b
    }
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn hms(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// run, mark, sla, compare: timed phases with live figures.
impl Observer for Progress {
    fn phase(&mut self, label: &str, planned: Option<Duration>) {
        self.finish();
        if !self.enabled() {
            return;
        }
        self.label = label.to_string();
        let bar = match planned {
            Some(d) => {
                self.timed = true;
                Self::styled(
                    Some(d.as_millis() as u64),
                    "{prefix:.bold} [{bar:24.cyan/blue}] {elapsed}/{duration} {msg}",
                    ProgressStyle::default_bar,
                )
            }
            None => {
                self.timed = false;
                let b = Self::styled(None, "{spinner} {prefix:.bold} {msg}", ProgressStyle::default_spinner);
                b.enable_steady_tick(Duration::from_millis(120));
                b
            }
        };
        if self.overall.is_empty() {
            bar.set_prefix(self.label.clone());
        } else {
            bar.set_prefix(format!("{} · {}", self.overall, self.label));
        }
        self.bar = Some(bar);
    }

    fn fill(&mut self, done: u64, total: u64) {
        if let Some(b) = &self.bar {
            let pct = if total > 0 { done as f64 * 100.0 / total as f64 } else { 100.0 };
            b.set_message(format!("writing test data {pct:.0}% of {} MiB", total >> 20));
        }
    }

    fn tick(&mut self, t: &Tick) {
        if let Some(b) = &self.bar {
            if self.timed {
                b.set_position(t.elapsed.as_millis() as u64);
            }
            let mut msg = String::new();
            if t.ramping {
                msg.push_str("ramp ");
            }
            if t.read_iops > 0.0 {
                msg.push_str(&format!("R {} IOPS {:.1} MB/s ", si(t.read_iops), t.read_mb_s));
            }
            if t.write_iops > 0.0 {
                msg.push_str(&format!("W {} IOPS {:.1} MB/s", si(t.write_iops), t.write_mb_s));
            }
            b.set_message(msg);
        }
    }

    fn phase_done(&mut self) {
        self.finish();
    }

    /// Always shown (also with --quiet or without a terminal): it explains a wait.
    fn notice(&mut self, message: &str) {
        let line = format!("note: {}", sanitize(message));
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn planned(&mut self, total: Duration) {
        self.planned = Some(total);
    }

    fn written(&mut self, done: u64, total: u64, elapsed: Duration, mb_s: f64) {
        if let Some(b) = &self.bar {
            let pct = if total > 0 { done as f64 * 100.0 / total as f64 } else { 100.0 };
            let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
            let eta = if rate > 0.0 && total > done { hms((total - done) as f64 / rate) } else { "-".into() };
            b.set_message(format!("{pct:.0}% of {} MiB, {mb_s:.0} MB/s, ETA {eta}", total >> 20));
        }
    }

    fn steps(&mut self, done: usize, total: usize, elapsed: Duration) {
        let total = total.max(done);
        self.overall = if total == 0 {
            format!("step {}/{total}", done + 1)
        } else if done == 0 {
            match self.planned {
                Some(p) => format!("step 1/{total} ETA {}", hms(p.saturating_sub(elapsed).as_secs_f64())),
                None => format!("step 1/{total}"),
            }
        } else {
            let left = elapsed.as_secs_f64() / done as f64 * (total - done) as f64;
            format!("step {}/{total} ETA {}", (done + 1).min(total), hms(left))
        };
    }
}

/// surface: bytes, MB/s and ETA of each phase.
impl SurfaceObserver for Progress {
    fn phase(&mut self, label: &str, total: u64) {
        self.finish();
        if !self.enabled() {
            return;
        }
        let b = Self::styled(
            Some(total),
            "{prefix:.bold} [{bar:28.cyan/blue}] {decimal_bytes}/{decimal_total_bytes} \
             {decimal_bytes_per_sec} ETA {eta}",
            ProgressStyle::default_bar,
        );
        b.set_prefix(label.to_string());
        self.bar = Some(b);
    }

    fn progress(&mut self, done: u64) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
    }

    fn phase_done(&mut self) {
        self.finish();
    }
}

/// health --self-test --wait: a bar on a terminal, a line per change otherwise.
impl WaitObserver for Progress {
    fn progress(&mut self, done: Option<u64>, status: &str) {
        if self.bar.is_none() && self.enabled() {
            let b = ProgressBar::with_draw_target(Some(100), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("self-test [{bar:30}] {pos:>3}% {msg}") {
                b.set_style(style.progress_chars("=> "));
            }
            self.bar = Some(b);
        }
        if let Some(b) = &self.bar {
            b.set_position(done.unwrap_or(0));
            b.set_message(app::health::clean(status));
        } else if !self.quiet && !self.tty && done != self.last_percent {
            eprintln!("self-test: {}", app::health::clean(status));
        }
        self.last_percent = done;
    }

    fn done(&mut self) {
        self.finish();
    }
}

/// top: warnings before the reports start.
impl TopObserver for Progress {
    fn warning(&mut self, message: &str) {
        eprintln!("warning: {message}");
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
