//! Is a device keeping up? Judged from latency and queue length (`docs/METHOD.md`, "top"), scaled
//! by device class, never from %util: %util is "at least one request in flight", which a
//! device with internal parallelism (SSD, NVMe, arrays, virtual disks) reaches long before
//! it runs out of capacity.
//!
//! The Windows admins' per-disk rules for spinning disks (`docs/METHOD.md`, "top"): mean
//! latency ≤ 10 ms is fine even when busy, > 25 ms means the disk does not keep up, and the
//! queue should stay ≤ 2 per spindle. Flash answers a lone 4 KiB read in ~0.1 ms (NVMe) to ~0.2 ms
//! (SATA), so 25 ms would only flag a device that is already failing; the bounds below sit
//! about one order of magnitude above the unloaded service time, where requests clearly
//! wait on each other: NVMe 1 / 2 ms, SSD 2 / 5 ms. Virtual disks (virtio, loop, dm, md)
//! hide their medium; cloud block storage serves in ~0.5–2 ms, so they get 4 / 10 ms —
//! the HDD "busy but fine" bound is the saturation bound there. The queue rule applies to
//! HDDs only: flash and virtual devices serve many requests at once, so a queue of 2 says
//! nothing about them.

use crate::devices::Class;
use crate::metrics::Iostat;
use serde::{Deserialize, Serialize};

/// Verdict states, from good to bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Idle,
    Ok,
    Busy,
    Saturated,
    /// The counters restarted during the interval (device re-added): nothing to judge.
    Reset,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Idle => "idle",
            State::Ok => "ok",
            State::Busy => "busy",
            State::Saturated => "saturated",
            State::Reset => "reset",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub state: State,
    pub reason: String,
}

/// Latency bounds of a class: (comfortable, saturated) in ms.
pub fn bounds(class: Class) -> (f64, f64) {
    match class {
        Class::Hdd => (10.0, 25.0),
        Class::Ssd => (2.0, 5.0),
        Class::Nvme => (1.0, 2.0),
        Class::Virtual => (4.0, 10.0),
    }
}

/// Queue bound per single disk (HDD only).
pub const HDD_QUEUE: f64 = 2.0;

/// Fewer completions than this in an interval, with a short queue, is "light load": one
/// slow flush must not call a device saturated.
const MIN_IOS: f64 = 10.0;

fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.1} ms")
    }
}

/// Judge one interval. `interval_s` turns rates back into counts for the light-load rule.
pub fn judge(class: Class, m: &Iostat, inflight: u64, interval_s: f64) -> Verdict {
    let (ok_ms, sat_ms) = bounds(class);
    let ios = (m.r_s + m.w_s + m.d_s) * interval_s;
    let c = class.as_str();
    if ios == 0.0 && m.f_s == 0.0 {
        if inflight > 0 {
            return Verdict {
                state: State::Saturated,
                reason: format!(
                    "{inflight} requests in flight and none completed in the interval: the device is stalled"
                ),
            };
        }
        return Verdict { state: State::Idle, reason: "no I/O completed".into() };
    }
    let lat = m.await_ms;
    let q = m.aqu_sz;
    let hdd = class == Class::Hdd;
    let util_note = if m.util >= 90.0 && lat <= ok_ms {
        format!(" (%util {:.0} only means a request was always in flight)", m.util)
    } else {
        String::new()
    };
    if ios < MIN_IOS && q < 1.0 {
        return Verdict { state: State::Ok, reason: format!("light load: {ios:.0} I/Os, mean latency {}", ms(lat)) };
    }
    if lat > sat_ms {
        return Verdict {
            state: State::Saturated,
            reason: format!(
                "mean latency {} > {} for {c}: the device is not keeping up (queue {q:.1})",
                ms(lat),
                ms(sat_ms)
            ),
        };
    }
    if hdd && q > HDD_QUEUE && lat > ok_ms {
        return Verdict {
            state: State::Saturated,
            reason: format!(
                "queue {q:.1} > {HDD_QUEUE:.0} per disk with mean latency {} > {}: requests wait on each other",
                ms(lat),
                ms(ok_ms)
            ),
        };
    }
    if lat > ok_ms {
        return Verdict {
            state: State::Busy,
            reason: format!(
                "mean latency {} above the {} comfort bound for {c}, under {}",
                ms(lat),
                ms(ok_ms),
                ms(sat_ms)
            ),
        };
    }
    if hdd && q > HDD_QUEUE {
        return Verdict {
            state: State::Busy,
            reason: format!("queue {q:.1} > {HDD_QUEUE:.0} per disk; mean latency still {}", ms(lat)),
        };
    }
    Verdict {
        state: State::Ok,
        reason: format!("mean latency {} ≤ {} for {c}, queue {q:.1}{util_note}", ms(lat), ms(ok_ms)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn m(r_s: f64, await_ms: f64, aqu_sz: f64, util: f64) -> Iostat {
        Iostat { r_s, await_ms, r_await: await_ms, aqu_sz, util, ..Iostat::default() }
    }

    #[test]
    fn hdd_thresholds_follow_methodology() {
        assert_eq!(judge(Class::Hdd, &m(100.0, 8.0, 0.8, 80.0), 1, 1.0).state, State::Ok);
        assert_eq!(judge(Class::Hdd, &m(100.0, 15.0, 1.5, 99.0), 1, 1.0).state, State::Busy);
        assert_eq!(judge(Class::Hdd, &m(100.0, 30.0, 3.0, 100.0), 4, 1.0).state, State::Saturated);
        assert_eq!(judge(Class::Hdd, &m(100.0, 12.0, 4.0, 100.0), 4, 1.0).state, State::Saturated);
        assert_eq!(judge(Class::Hdd, &m(100.0, 5.0, 3.0, 100.0), 4, 1.0).state, State::Busy);
    }

    #[test]
    fn util_alone_never_saturates_flash() {
        let v = judge(Class::Nvme, &m(50000.0, 0.1, 5.0, 100.0), 5, 1.0);
        assert_eq!(v.state, State::Ok);
        assert!(v.reason.contains("%util"), "{}", v.reason);
        assert_eq!(judge(Class::Nvme, &m(50000.0, 3.0, 150.0, 100.0), 64, 1.0).state, State::Saturated);
        assert_eq!(judge(Class::Ssd, &m(5000.0, 3.0, 15.0, 100.0), 16, 1.0).state, State::Busy);
    }

    #[test]
    fn idle_light_and_stalled() {
        assert_eq!(judge(Class::Ssd, &Iostat::default(), 0, 1.0).state, State::Idle);
        assert_eq!(judge(Class::Ssd, &Iostat::default(), 3, 1.0).state, State::Saturated);
        assert_eq!(judge(Class::Hdd, &m(2.0, 40.0, 0.1, 8.0), 0, 1.0).state, State::Ok);
    }
}
