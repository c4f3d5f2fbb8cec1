//! What every section of the page shares: a chart ([`Figure`]) with its legend, and HTML
//! escaping for text written outside the template (hand-made SVG, the fallback page).

/// Timelines are drawn for at most this many jobs (the report's and the cluster view's).
pub const MAX_TIMELINES: usize = 8;

use super::charts;

/// One chart: `<figure class="chart" id=… data-chart=…>`.
pub(super) struct Figure {
    pub(super) id: String,
    pub(super) kind: &'static str,
    pub(super) title: String,
    pub(super) caption: String,
    /// The `<svg>…</svg>` text; empty when the chart could not be drawn (see `note`).
    pub(super) svg: String,
    pub(super) note: String,
    pub(super) legend: Vec<Legend>,
}

impl Figure {
    pub(super) fn new(
        id: String,
        kind: &'static str,
        title: String,
        caption: String,
        drawn: Result<String, String>,
    ) -> Self {
        let (svg, note) = match drawn {
            Ok(svg) => (svg, String::new()),
            Err(why) => (String::new(), why),
        };
        Figure { id, kind, title, caption, svg, note, legend: Vec::new() }
    }
}

pub(super) struct Legend {
    pub(super) color: String,
    pub(super) label: String,
    /// CSS class of the swatch: `line`, `dot`, `cross`, `ring`, `dash`.
    pub(super) mark: &'static str,
}

pub(super) fn legend(c: plotters::style::RGBColor, label: impl Into<String>, mark: &'static str) -> Legend {
    Legend { color: charts::hex(c), label: label.into(), mark }
}

/// `s` with the five HTML-special characters escaped.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
