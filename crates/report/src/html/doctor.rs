//! `diskmeter doctor` as a standalone HTML page, in the look of the HTML report: the same
//! page shell (Content-Security-Policy, header, footer) and `report.css`, with a
//! `<section id="doctor">` holding the stack, the ranked causes, the probe's and the load's
//! figures and every check. No scripts, nothing fetched; askama escapes every string taken
//! from the document.

use askama::Template;
use doctor::model::{Cause, Check, DoctorDoc, Status};

use super::view::escape;
use crate::doctor_text as words;
use crate::fmt;

struct StackRow {
    role: String,
    name: String,
    detail: String,
}

struct EvidenceItem {
    /// `name = value`.
    what: String,
    /// `(source)`, or "".
    source: String,
}

struct CauseRow {
    rank: usize,
    /// `critical`, `high`, …: the text and the CSS class (`sev-high`).
    severity: &'static str,
    code: String,
    check: String,
    device: String,
    summary: String,
    cost: String,
    evidence: Vec<EvidenceItem>,
    fix: String,
}

struct CheckRow {
    /// `passed`, `found`, `not run`.
    status: &'static str,
    /// CSS class of the status tag: `ok`, `bad` or "".
    class: &'static str,
    code: String,
    title: String,
    reason: String,
}

struct LoadPart {
    heading: String,
    cols: [&'static str; 8],
    devices: Vec<[String; 8]>,
    processes: Vec<String>,
    more: String,
}

struct ProbePart {
    heading: String,
    rows: Vec<(String, String)>,
    warnings: String,
}

#[derive(Template)]
#[template(
    ext = "html",
    source = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{{ generator }}">
<title>{{ title }}</title>
<style>
{% include "report.css" %}
.tag.sev-critical { background: var(--bad); color: #fff; }
.tag.sev-high { background: var(--err-bg); color: var(--bad); }
.tag.sev-medium { background: var(--warn-bg); color: #8a5a00; }
.tag.sev-low { background: #e3ecf7; color: var(--accent); }
.tag.sev-info { background: var(--soft); color: var(--muted); }
#doctor-causes tr.sev-critical td:first-child, #doctor-causes tr.sev-high td:first-child { box-shadow: inset 4px 0 var(--bad); }
#doctor-causes tr.sev-medium td:first-child { box-shadow: inset 4px 0 var(--warn-line); }
#doctor-causes td.finding { width: 62%; }
#doctor-causes td.name .muted { font-weight: 400; font-size: 12px; }
#doctor-causes .summary { margin: 0 0 4px; font-weight: 600; }
#doctor-causes .cost { margin: 0 0 6px; color: var(--muted); }
#doctor-causes ul.evidence { margin: 0 0 6px; padding-left: 18px; }
#doctor-causes code.fix {
  display: block; white-space: pre-wrap; word-break: break-word; padding: 6px 10px; margin-top: 2px;
  background: var(--soft); border: 1px solid var(--line); border-radius: 6px;
}
</style>
</head>
<body>
<main>
<header class="top">
<h1>{{ title }}</h1>
<p class="sub">{% for s in subtitle %}<span>{{ s }}</span>{% endfor %}</p>
</header>
<section class="card" id="doctor">
<h2>Why is this disk slow?</h2>
<p class="verdict{% if alarm %} miss{% endif %}" id="doctor-verdict">{{ verdict }}</p>
{%- if !not_run.is_empty() %}
<p class="note">{{ not_run }}</p>
{%- endif %}
<h3>Stack, top first</h3>
<div class="scroll">
<table id="doctor-stack">
<thead><tr><th class="l">layer</th><th class="l">name</th><th class="l">what it is</th></tr></thead>
<tbody>
{%- for l in stack %}
<tr><td class="l">{{ l.role }}</td><td class="name">{{ l.name }}</td><td class="l">{{ l.detail }}</td></tr>
{%- endfor %}
{%- if stack.is_empty() %}
<tr><td class="l muted" colspan="3">No block device under the target.</td></tr>
{%- endif %}
</tbody>
</table>
</div>
<h3>Causes, most likely first</h3>
{%- if causes.is_empty() %}
<p class="muted" id="doctor-no-causes">{{ no_cause }}</p>
{%- else %}
<div class="scroll">
<table id="doctor-causes">
<thead><tr><th>#</th><th class="l">severity</th><th class="l">cause</th><th class="l">device</th><th class="l">what, what it costs, the evidence and the fix</th></tr></thead>
<tbody>
{%- for c in causes %}
<tr class="sev-{{ c.severity }}"><td>{{ c.rank }}</td><td class="l"><span class="tag sev-{{ c.severity }}">{{ c.severity }}</span></td><td class="name"><code>{{ c.code }}</code><div class="muted">check {{ c.check }}</div></td><td class="l">{{ c.device }}</td>
<td class="l finding"><p class="summary">{{ c.summary }}</p>
{%- if !c.cost.is_empty() %}<p class="cost">cost: {{ c.cost }}</p>{% endif %}
{%- if !c.evidence.is_empty() %}<ul class="evidence">{% for e in c.evidence %}<li>{{ e.what }}{% if !e.source.is_empty() %} <span class="muted">{{ e.source }}</span>{% endif %}</li>{% endfor %}</ul>{% endif %}
<code class="fix">{{ c.fix }}</code></td></tr>
{%- endfor %}
</tbody>
</table>
</div>
{%- endif %}
{%- if let Some(p) = probe %}
<h3>{{ p.heading }}</h3>
<dl id="doctor-probe">
{%- for (k, v) in p.rows %}
<dt>{{ k }}</dt><dd>{{ v }}</dd>
{%- endfor %}
{%- if !p.warnings.is_empty() %}
<dt>warnings</dt><dd>{{ p.warnings }}</dd>
{%- endif %}
</dl>
{%- endif %}
{%- if let Some(l) = load %}
<h3>{{ l.heading }}</h3>
<div class="scroll">
<table id="doctor-load">
<thead><tr>{% for c in l.cols %}{% if loop.first %}<th class="l">{{ c }}</th>{% else %}<th>{{ c }}</th>{% endif %}{% endfor %}</tr></thead>
<tbody>
{%- for row in l.devices %}
<tr>{% for c in row %}{% if loop.first %}<td class="name">{{ c }}</td>{% else %}<td>{{ c }}</td>{% endif %}{% endfor %}</tr>
{%- endfor %}
{%- if l.devices.is_empty() %}
<tr><td class="l muted" colspan="8">No device counters.</td></tr>
{%- endif %}
</tbody>
</table>
</div>
{%- if l.processes.is_empty() %}
<p class="note">No process did I/O in the window.</p>
{%- else %}
<p class="note">Busiest processes:</p>
<ul id="doctor-processes">
{%- for p in l.processes %}
<li>{{ p }}</li>
{%- endfor %}
</ul>
{%- if !l.more.is_empty() %}
<p class="note">{{ l.more }}</p>
{%- endif %}
{%- endif %}
{%- endif %}
<h3>Checks</h3>
<div class="scroll">
<table id="doctor-checks">
<thead><tr><th class="l">status</th><th class="l">check</th><th class="l">what it looks at</th><th class="l">seen, or why it did not run</th></tr></thead>
<tbody>
{%- for c in checks %}
<tr><td class="l"><span class="tag {{ c.class }}">{{ c.status }}</span></td><td class="name"><code>{{ c.code }}</code></td><td class="l">{{ c.title }}</td><td class="l muted">{{ c.reason }}</td></tr>
{%- endfor %}
{%- if checks.is_empty() %}
<tr><td class="l muted" colspan="4">No check ran.</td></tr>
{%- endif %}
</tbody>
</table>
</div>
<p class="note">{{ tally }}</p>
</section>
<section class="card" id="environment">
<h2>Run</h2>
<dl>
{%- for (k, v) in facts %}
<dt>{{ k }}</dt><dd>{{ v }}</dd>
{%- endfor %}
</dl>
</section>
<footer>{{ generator }} · this file is self-contained: no scripts, no network requests</footer>
</main>
</body>
</html>
"##
)]
struct DoctorPage {
    generator: String,
    title: String,
    subtitle: Vec<String>,
    /// A cause of severity high or above was found (the exit status is 1).
    alarm: bool,
    verdict: String,
    not_run: String,
    no_cause: String,
    stack: Vec<StackRow>,
    causes: Vec<CauseRow>,
    probe: Option<ProbePart>,
    load: Option<LoadPart>,
    checks: Vec<CheckRow>,
    tally: String,
    facts: Vec<(String, String)>,
}

/// `diskmeter doctor`'s document as a complete, self-contained HTML page (ends in a
/// newline). Never panics.
pub fn render_html(doc: &DoctorDoc) -> String {
    match page(doc).render() {
        Ok(mut s) => {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s
        }
        Err(e) => fallback(doc, &e.to_string()),
    }
}

/// A minimal page for the (unexpected) case that the template fails to render.
fn fallback(doc: &DoctorDoc, why: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>diskmeter doctor</title></head><body><h1>diskmeter doctor: {}</h1>\
         <p>The page could not be rendered: {}</p></body></html>\n",
        escape(&doc.target),
        escape(why)
    )
}

fn page(doc: &DoctorDoc) -> DoctorPage {
    let mut subtitle = vec![doc.target.clone()];
    if let Some(d) = &doc.device {
        subtitle.push(d.clone());
    }
    subtitle.push(words::root_words(doc).to_string());
    if !doc.started_at.is_empty() {
        subtitle.push(fmt::date(&doc.started_at));
    }
    let generator = format!("{} {}", doc.tool.name, doc.tool.version);
    subtitle.push(generator.clone());
    let verdict = match doc.causes.first() {
        None => "No check found a cause.".to_string(),
        Some(c) => {
            let n = doc.causes.len();
            let of = if n == 1 { "1 cause found".to_string() } else { format!("{n} causes found") };
            format!("{of}; the most likely: {}", c.summary)
        }
    };
    DoctorPage {
        title: format!("{} doctor report", doc.tool.name),
        subtitle,
        alarm: doc.exit_code() != 0,
        verdict,
        not_run: words::not_run_note(doc),
        no_cause: words::no_cause_text(doc),
        stack: doc
            .stack
            .iter()
            .map(|l| StackRow { role: l.role.clone(), name: l.name.clone(), detail: l.detail.clone() })
            .collect(),
        causes: doc.causes.iter().enumerate().map(|(i, c)| cause_row(i + 1, c)).collect(),
        probe: doc.probe.as_ref().map(|p| ProbePart {
            heading: words::probe_heading(p),
            rows: words::probe_rows(p)
                .into_iter()
                .map(|[what, rate, lat]| (what, if lat.is_empty() { rate } else { format!("{rate} · {lat}") }))
                .collect(),
            warnings: p.warnings.join(", "),
        }),
        load: doc.load.as_ref().map(|l| LoadPart {
            heading: words::load_heading(l),
            cols: words::LOAD_COLS,
            devices: l.devices.iter().map(words::load_cells).collect(),
            processes: l.processes.iter().take(words::PROCESSES).map(words::process_text).collect(),
            more: if l.processes.len() > words::PROCESSES {
                format!("{} more processes are in the JSON document.", l.processes.len() - words::PROCESSES)
            } else {
                String::new()
            },
        }),
        checks: doc.checks.iter().map(check_row).collect(),
        tally: words::checks_tally(doc),
        facts: vec![
            ("target".to_string(), doc.target.clone()),
            ("device".to_string(), doc.device.clone().unwrap_or_else(|| "none found".to_string())),
            ("as root".to_string(), if doc.root { "yes" } else { "no" }.to_string()),
            ("started".to_string(), fmt::date(&doc.started_at)),
            ("tool".to_string(), generator.clone()),
            ("schema".to_string(), doc.schema.clone()),
        ],
        generator,
    }
}

fn cause_row(rank: usize, c: &Cause) -> CauseRow {
    CauseRow {
        rank,
        severity: c.severity.as_str(),
        code: c.code.clone(),
        check: c.check.clone(),
        device: c.device.clone().unwrap_or_else(|| "–".to_string()),
        summary: c.summary.clone(),
        cost: c.cost.clone().unwrap_or_default(),
        evidence: c
            .evidence
            .iter()
            .map(|e| {
                let (what, source) = words::evidence_parts(e);
                EvidenceItem { what, source }
            })
            .collect(),
        fix: c.fix.clone(),
    }
}

fn check_row(c: &Check) -> CheckRow {
    let (status, class) = match c.status {
        Status::Passed => ("passed", "ok"),
        Status::Found => ("found", "bad"),
        Status::NotRun => ("not run", ""),
    };
    CheckRow {
        status,
        class,
        code: c.code.clone(),
        title: c.title.clone(),
        reason: c.reason.clone().unwrap_or_default(),
    }
}
