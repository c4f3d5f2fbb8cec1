//! Pretty JSON of the document.

use stats::ResultDoc;

pub(crate) fn render(doc: &ResultDoc) -> String {
    match try_render(doc) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // Not reachable for this model (all map keys are strings, paths lossy); still emit valid
        // JSON. Callers that must not report success on it use `try_render`.
        Err(e) => {
            let msg = serde_json::Value::String(e);
            format!(
                "{{\"schema\": \"{}\", \"partial\": true, \"error\": {{\"kind\": \"io\", \"message\": {msg}, \"offset\": null, \"job\": null}}}}\n",
                stats::SCHEMA
            )
        }
    }
}

/// Pretty JSON of the document, or why it cannot be serialised.
pub(crate) fn try_render(doc: &ResultDoc) -> Result<String, String> {
    serde_json::to_string_pretty(doc)
        .map(|mut s| {
            s.push('\n');
            s
        })
        .map_err(|e| e.to_string())
}
