//! diskmeter exporters: pure functions from a [`ResultDoc`] to text — human tables and
//! the CrystalDiskMark-style card, JSON, CSV and Markdown. No colour codes, no I/O.
//! `doctor`'s document has its own: [`doctor_text::render`] and [`html::doctor::render_html`].

use std::path::Path;

use stats::ResultDoc;

mod cache_text;
mod cluster_text;
mod compare_text;
mod csv_out;
pub mod doctor_text;
pub mod fmt;
/// Only with the `fuzz` feature: for the fuzz target and its corpus replay test.
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz_support;
pub mod history_text;
pub mod html;
mod human;
mod json;
mod markdown;
mod profile_text;
mod replay_text;
mod sla_text;
mod steady_text;
mod surface_text;
mod verify_text;

pub use cache_text::trace_summary;
pub use compare_text::compare_error;
pub use html::render_html;
pub use profile_text::{capture_json, capture_text, capture_warnings, profile_fio_job, profile_job_notes};
pub use sla_text::{sla_verdict, SlaAnswer};
pub use surface_text::verdict as surface_verdict;

/// The `sla` and `compare` documents of the section snapshot tests (shared with the
/// integration tests in `tests/`).
#[cfg(test)]
#[path = "../tests/common/text_fixtures.rs"]
mod text_fixtures;

/// Output format of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Csv,
    Markdown,
    /// A self-contained HTML report with inline SVG charts.
    Html,
}

impl Format {
    /// Format implied by a file name: `.json`, `.csv`, `.md`/`.markdown`, `.txt` (human),
    /// `.html`/`.htm`.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Self::from_name(&ext)
    }

    /// Format by name (`human`/`text`/`txt`, `json`, `csv`, `md`/`markdown`).
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name.to_ascii_lowercase().as_str() {
            "json" => Format::Json,
            "csv" => Format::Csv,
            "md" | "markdown" => Format::Markdown,
            "txt" | "text" | "human" => Format::Human,
            "html" | "htm" => Format::Html,
            _ => return None,
        })
    }
}

/// Render a result document in `format`, failing (instead of a stand-in error document) when it
/// cannot be serialised: a caller writing results must never report success on it.
pub fn try_render(doc: &ResultDoc, format: Format) -> Result<String, String> {
    match format {
        Format::Json => json::try_render(doc),
        other => Ok(render(doc, other)),
    }
}

/// Render a result document in `format`. Always returns text ending in a newline. Each
/// format's renderer dispatches once on the document's [`kind`](stats::ResultDoc::kind).
pub fn render(doc: &ResultDoc, format: Format) -> String {
    match format {
        Format::Human => human::render(doc),
        Format::Json => json::render(doc),
        Format::Csv => csv_out::render(doc),
        Format::Markdown => markdown::render(doc),
        Format::Html => html::render_html(doc),
    }
}
