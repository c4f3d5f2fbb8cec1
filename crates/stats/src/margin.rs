//! Margins of the warnings whose trigger is a measured share or ratio: hysteresis, so that the
//! same device and workload get the same warnings run after run.
//!
//! A threshold alone makes a warning flicker when the figure it reads sits near it: 94.8 % of
//! a CPU in one run and 95.3 % in the next give the warning once in two. Each such warning
//! therefore has two figures: it is **given** at `on` or beyond, **clear** short of `off`, and
//! between the two (the margin band) the device's last comparable run decides: a warning that
//! run gave is held ([`crate::ResultDoc::hold`]), one it did not give stays out. With no earlier run (or no
//! history) a figure in the band gives no warning, as a threshold at `on` would; the document
//! still names it under `borderline`, so nothing measured near a threshold is hidden.
//!
//! The band is wide against the run-to-run spread of its figure, so a device whose figure
//! stays inside it keeps its verdict. Warnings that change a figure (`startup-burst` cuts the
//! first second out of the headline) take no band: a headline must follow from its own
//! measurement, never from an earlier run's. Their thresholds are stated in `docs/METHOD.md`.

use crate::codes;
use serde::{Deserialize, Serialize};

/// Which way a figure crosses into its warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The warning is given at `on` or above (a share of CPU, a ratio of bytes).
    Above,
    /// The warning is given at `on` or below (device requests per I/O for merging).
    Below,
}

/// A warning's trigger with its margin band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margin {
    pub code: &'static str,
    /// The figure it reads, for the documentation.
    pub figure: &'static str,
    pub on: f64,
    pub off: f64,
    pub side: Side,
}

/// Where a figure falls against a [`Margin`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    Given,
    Band,
    Clear,
}

impl Margin {
    pub fn zone(&self, v: f64) -> Zone {
        let (beyond_on, beyond_off) = match self.side {
            Side::Above => (v >= self.on, v >= self.off),
            Side::Below => (v <= self.on, v <= self.off),
        };
        // NaN is no figure; an infinite one (nothing to hold it against) is beyond any band.
        if v.is_nan() || !beyond_off {
            Zone::Clear
        } else if beyond_on {
            Zone::Given
        } else {
            Zone::Band
        }
    }
}

/// `tool-bottleneck`: the busiest worker's CPU, percent of one CPU.
pub const WORKER_CPU: Margin =
    Margin { code: codes::TOOL_BOTTLENECK, figure: "busiest worker's CPU, %", on: 95.0, off: 85.0, side: Side::Above };
/// `tool-bottleneck`: the job's IOPS against the null engine's for the same job.
pub const TOOL_CEILING: Margin = Margin {
    code: codes::TOOL_BOTTLENECK,
    figure: "IOPS / the null engine's IOPS",
    on: 0.80,
    off: 0.70,
    side: Side::Above,
};
/// `link-bound`: MB/s against the link's practical ceiling.
pub const LINK: Margin =
    Margin { code: codes::LINK_BOUND, figure: "MB/s / the link's ceiling", on: 0.97, off: 0.92, side: Side::Above };
/// `split-io`: the device's requests per diskmeter I/O (few merges).
pub const SPLIT: Margin =
    Margin { code: codes::SPLIT_IO, figure: "device requests per I/O", on: 1.05, off: 1.02, side: Side::Above };
/// `merged-io`: the device's requests per diskmeter I/O (merges of 5 % or more).
pub const MERGED: Margin =
    Margin { code: codes::MERGED_IO, figure: "device requests per I/O", on: 0.95, off: 0.98, side: Side::Below };
/// `device-saw-less`: bytes the device read against diskmeter's.
pub const SAW_LESS: Margin = Margin {
    code: codes::DEVICE_SAW_LESS,
    figure: "device read bytes / diskmeter's",
    on: 0.90,
    off: 0.95,
    side: Side::Below,
};
/// `device-saw-more` (a file) and `foreign-io` (the device itself): bytes the device wrote, or
/// read, against diskmeter's.
pub const SAW_MORE: Margin = Margin {
    code: codes::DEVICE_SAW_MORE,
    figure: "device bytes / diskmeter's",
    on: 1.10,
    off: 1.05,
    side: Side::Above,
};
/// `foreign-io` on the device itself: as [`SAW_MORE`].
pub const FOREIGN: Margin = Margin { code: codes::FOREIGN_IO, ..SAW_MORE };
/// `async-punt`: the share of the job's bytes io_uring's kernel workers moved.
pub const HANDOFF: Margin =
    Margin { code: codes::ASYNC_PUNT, figure: "share of bytes handed off", on: 0.05, off: 0.02, side: Side::Above };
/// `exceeds-memory-bandwidth`: MB/s against memory's for the same shape.
pub const MEMORY: Margin = Margin {
    code: codes::EXCEEDS_MEMORY_BANDWIDTH,
    figure: "MB/s / memory's MB/s",
    on: 1.10,
    off: 1.00,
    side: Side::Above,
};

/// Every margin, in the order `docs/METHOD.md` lists them.
pub const ALL: [Margin; 10] =
    [WORKER_CPU, TOOL_CEILING, LINK, SPLIT, MERGED, SAW_LESS, SAW_MORE, FOREIGN, HANDOFF, MEMORY];

/// A figure inside its warning's margin band: the warning that would be given, with the figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Borderline {
    pub code: String,
    pub message: String,
    pub value: f64,
    pub on: f64,
    pub off: f64,
    /// Set when the warning was held: the id of the run in the history that gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<i64>,
}

/// The warning codes a document gave, its jobs' included.
pub fn given_codes(doc: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let lists = std::iter::once(doc.get("warnings"))
        .chain(doc.get("results").and_then(|r| r.as_array()).into_iter().flatten().map(|r| r.get("warnings")));
    for w in lists.flatten().filter_map(|w| w.as_array()).flatten() {
        if let Some(c) = w.get("code").and_then(|c| c.as_str()) {
            if !out.iter().any(|o| o == c) {
                out.push(c.to_string());
            }
        }
    }
    out
}

/// A band's figure as its note prints it: up to three decimals, no trailing zeros.
pub(crate) fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_figure_is_given_beyond_on_clear_short_of_off_and_in_the_band_between() {
        assert_eq!(WORKER_CPU.zone(95.0), Zone::Given);
        assert_eq!(WORKER_CPU.zone(90.0), Zone::Band);
        assert_eq!(WORKER_CPU.zone(85.0), Zone::Band);
        assert_eq!(WORKER_CPU.zone(84.9), Zone::Clear);
        assert_eq!(MERGED.zone(0.90), Zone::Given);
        assert_eq!(MERGED.zone(0.97), Zone::Band);
        assert_eq!(MERGED.zone(0.99), Zone::Clear);
        assert_eq!(WORKER_CPU.zone(f64::NAN), Zone::Clear);
        assert_eq!(HANDOFF.zone(f64::INFINITY), Zone::Given, "a job run on threads for a hand-off");
        for m in ALL {
            // Every band lies on the near side of its threshold.
            match m.side {
                Side::Above => assert!(m.off < m.on, "{}", m.code),
                Side::Below => assert!(m.off > m.on, "{}", m.code),
            }
        }
    }

    #[test]
    fn the_codes_a_document_gave_include_its_jobs() {
        let v = serde_json::json!({"warnings": [{"code": "a", "message": ""}],
            "results": [{"warnings": [{"code": "b", "message": ""}, {"code": "a", "message": ""}]}, {}]});
        assert_eq!(given_codes(&v), ["a", "b"]);
    }
}
