//! Live progress on a terminal (stderr): phase, elapsed/ETA, live IOPS and MB/s.
//! Silent when stderr is not a terminal or with --quiet.

use app::session::Observer;
use engine::runner::Tick;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

pub struct Progress {
    enabled: bool,
    bar: Option<ProgressBar>,
    label: String,
    timed: bool,
    /// Multi-step commands: "step 3/12, ETA 1m05s" shown with every phase.
    overall: String,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Self {
            enabled: !quiet && std::io::stderr().is_terminal(),
            bar: None,
            label: String::new(),
            timed: false,
            overall: String::new(),
        }
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
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

impl Observer for Progress {
    fn phase(&mut self, label: &str, planned: Option<Duration>) {
        self.finish();
        if !self.enabled {
            return;
        }
        self.label = label.to_string();
        let bar = match planned {
            Some(d) => {
                self.timed = true;
                let b = ProgressBar::with_draw_target(Some(d.as_millis() as u64), ProgressDrawTarget::stderr());
                b.set_style(
                    ProgressStyle::with_template("{prefix:.bold} [{bar:24.cyan/blue}] {elapsed}/{duration} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                b
            }
            None => {
                self.timed = false;
                let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                b.set_style(
                    ProgressStyle::with_template("{spinner} {prefix:.bold} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
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
        let line = format!("note: {}", crate::sanitize(message));
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn steps(&mut self, done: usize, total: usize, elapsed: Duration) {
        let total = total.max(done);
        self.overall = if done == 0 || total == 0 {
            format!("step {}/{total}", done + 1)
        } else {
            let left = elapsed.as_secs_f64() / done as f64 * (total - done) as f64;
            format!("step {}/{total} ETA {}", (done + 1).min(total), hms(left))
        };
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
