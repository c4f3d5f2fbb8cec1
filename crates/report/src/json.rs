//! Pretty JSON of the document.

use stats::ResultDoc;

pub(crate) fn render(doc: &ResultDoc) -> String {
    match serde_json::to_string_pretty(doc) {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // Not reachable for this model (all map keys are strings); still emit valid JSON.
        Err(e) => {
            let msg = serde_json::Value::String(e.to_string());
            format!(
                "{{\"schema\": \"{}\", \"partial\": true, \"error\": {{\"kind\": \"io\", \"message\": {msg}, \"offset\": null, \"job\": null}}}}\n",
                stats::SCHEMA
            )
        }
    }
}
