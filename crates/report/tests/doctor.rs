//! `diskmeter doctor`'s document as human text and as an HTML page: a snapshot of the text
//! for a SATA disk with a slow, error-prone link and a misaligned partition, the text when
//! nothing was found, and the page's structure and escaping.

#![allow(clippy::unwrap_used)]

use diskmeter_report::doctor_text::render;
use diskmeter_report::html::doctor::render_html;
mod common;

use common::doctor_fixtures::{clean_doc, sata_doc};
use doctor::model::{Cause, Evidence, LoadDevice, LoadProcess, LoadView, Severity};

// ---------------------------------------------------------------------------------------
// text

#[test]
fn text_of_a_sata_disk_with_a_slow_link_and_a_misaligned_partition() {
    insta::assert_snapshot!(render(&sata_doc()));
}

#[test]
fn text_is_plain_and_fits_the_width() {
    let mut doc = sata_doc();
    doc.load = Some(LoadView {
        seconds: 10.0,
        devices: vec![LoadDevice {
            name: "sda".into(),
            read_iops: 12.0,
            write_iops: 340.4,
            read_mb_s: 0.05,
            write_mb_s: 41.2,
            util_pct: 87.0,
            await_ms: 4.1,
            aqu_sz: 1.4,
        }],
        io_pressure_some_pct: Some(12.3),
        processes: (0..7)
            .map(|i| LoadProcess { pid: 2345 + i, command: format!("rsync-{i}"), read_bytes: 1 << 30, write_bytes: 0 })
            .collect(),
    });
    doc.causes[0].summary.push_str(" \u{1b}[31mred\u{1b}[0m");
    let text = render(&doc);
    assert!(text.ends_with('\n'));
    assert!(!text.contains('\u{1b}'), "a control character reached the terminal:\n{text}");
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "over 100 columns: {l:?}");
        assert_eq!(l, l.trim_end(), "trailing spaces: {l:?}");
    }
    assert!(text.contains("Load over 10 s; some task waited on I/O 12.3 % of the time (PSI)"), "{text}");
    assert!(text.contains("2345 rsync-0 (read 1 GiB, wrote 0 B)") && text.contains("2 more in the JSON"), "{text}");
    assert!(!text.contains("rsync-5"), "only the busiest five processes are named:\n{text}");
}

#[test]
fn text_when_no_check_found_a_cause() {
    let text = render(&clean_doc());
    let causes = text.split("Causes, most likely first\n").nth(1).unwrap().split("\n\n").next().unwrap();
    // The paragraph as read, whatever its wrapping.
    let causes = causes.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(causes.contains("No check found a cause"), "{text}");
    assert!(causes.contains("the disk's speed is what it is"), "{text}");
    assert!(causes.contains("--probe measures it") && causes.contains("--load 10s watches"), "{text}");
    assert!(causes.contains("1 check did not run (see Checks)"), "{text}");
    assert!(!text.contains("1. ["), "no numbered cause:\n{text}");
    assert!(text.contains("not run as root (some checks need it)"), "{text}");
    assert!(text.contains("  not run  device-errors  media and device errors  (SMART not read (sda: needs root))"));
    assert!(text.contains("2 passed · 0 found · 1 not run"), "{text}");
    // With a probe and a load, there is nothing more to suggest.
    let mut doc = clean_doc();
    doc.probe = sata_doc().probe;
    doc.load = Some(LoadView { seconds: 10.0, devices: Vec::new(), io_pressure_some_pct: None, processes: Vec::new() });
    let text = render(&doc);
    assert!(
        text.contains("No check found a cause")
            && !text.contains("--probe measures")
            && !text.contains("--load 10s watches")
    );
}

// ---------------------------------------------------------------------------------------
// HTML

/// `s` with the numeric character references askama writes (`&#60;`) in their named form
/// (`&lt;`), so the tests read whichever form the escaping uses.
fn named(s: &str) -> String {
    s.replace("&#60;", "&lt;").replace("&#62;", "&gt;").replace("&#38;", "&amp;").replace("&#34;", "&quot;")
}

/// The text between `<… id="id"` and the end of its element `end`.
fn element<'a>(html: &'a str, id: &str, end: &str) -> &'a str {
    let from = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no #{id}"));
    let rest = &html[from..];
    &rest[..rest.find(end).unwrap_or_else(|| panic!("#{id} is not closed by {end}"))]
}

#[test]
fn html_page_has_the_doctor_section_with_every_cause_and_check() {
    let mut doc = sata_doc();
    doc.causes.push(Cause {
        code: "cgroup-limit".into(),
        check: "stacking".into(),
        severity: Severity::Critical,
        device: None,
        summary: "a <script>alert(1)</script> & \"quoted\" summary".into(),
        evidence: vec![Evidence::new("io.max", "8:0 rbps=<b>1048576</b>", "/sys/fs/cgroup/user.slice/io.max")],
        cost: None,
        fix: "systemctl set-property user.slice IOReadBandwidthMax=".into(),
        weight: 90,
    });
    doc.rank();
    doc.causes.push(Cause { code: "virtual-disk".into(), severity: Severity::Info, ..doc.causes[3].clone() });
    doc.causes.push(Cause { code: "scheduler-choice".into(), severity: Severity::Low, ..doc.causes[3].clone() });
    let html = named(&render_html(&doc));
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>") && html.ends_with('\n'));

    let section = element(&html, "doctor", "</section>");
    assert!(section
        .contains("<p class=\"verdict miss\" id=\"doctor-verdict\">6 causes found; the most likely: a &lt;script&gt;"));
    let causes = element(section, "doctor-causes", "</table>");
    for c in &doc.causes {
        assert!(causes.contains(&format!("<code>{}</code>", c.code)), "cause {} missing", c.code);
        assert!(!c.fix.contains(['<', '>', '&', '"', '\'']), "the fixture's fixes need no escaping");
        assert!(causes.contains(&format!("<code class=\"fix\">{}</code>", c.fix)), "fix of {} missing", c.code);
    }
    // Ranked: the critical one first; one class per severity, on the row and the tag.
    let order: Vec<usize> =
        doc.causes.iter().map(|c| causes.find(&format!("<code>{}</code>", c.code)).unwrap()).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "causes out of rank order");
    assert!(causes.find("cgroup-limit").unwrap() < causes.find("sata-link-slow").unwrap());
    for sev in ["critical", "high", "medium", "low", "info"] {
        assert!(causes.contains(&format!("<tr class=\"sev-{sev}\">")), "no row of severity {sev}");
        assert!(causes.contains(&format!("<span class=\"tag sev-{sev}\">{sev}</span>")), "no {sev} tag");
    }
    assert!(causes.contains("cost: at most 300 MB/s instead of 600 MB/s"));
    assert!(
        causes.contains("<li>sata_spd = 3 Gbps <span class=\"muted\">(/sys/class/ata_link/link1/sata_spd)</span></li>")
    );

    // Everything from the document is escaped: no markup gets through.
    assert!(!html.to_ascii_lowercase().contains("<script"), "a script tag in the page");
    assert!(!html.contains("<b>1048576"));
    assert!(causes.contains("a &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; summary"), "{causes}");
    assert!(causes.contains("rbps=&lt;b&gt;1048576&lt;/b&gt;"));

    // The stack, the checks and the probe; nothing fetched from anywhere.
    let stack = element(section, "doctor-stack", "</table>");
    assert!(stack
        .contains("<td class=\"name\">sda1</td><td class=\"l\">partition 1 of sda, 1000.2 GB, non-rotational</td>"));
    let checks = element(section, "doctor-checks", "</table>");
    assert_eq!(checks.matches("<tr><td").count(), doc.checks.len());
    assert!(checks.contains("<span class=\"tag ok\">passed</span></td><td class=\"name\"><code>write-cache</code>"));
    assert!(checks.contains("<span class=\"tag bad\">found</span></td><td class=\"name\"><code>alignment</code>"));
    assert!(checks.contains("<span class=\"tag \">not run</span></td><td class=\"name\"><code>pcie-link</code>"));
    assert!(checks.contains("no PCIe link under the target (sda is sata)"));
    let probe = element(section, "doctor-probe", "</dl>");
    assert!(probe.contains("<dt>4 KiB random read, QD1</dt><dd>8,412 IOPS · mean 118 µs · p99 245 µs</dd>"), "{probe}");
    assert!(!html.contains("id=\"doctor-load\""), "no load section without --load");
    for external in ["src=", "href=", "http://", "https://", "@import", "url("] {
        assert!(!html.contains(external), "the page refers to something outside it: {external}");
    }
}

#[test]
fn html_page_without_causes_says_so_and_shows_the_load() {
    let mut doc = clean_doc();
    doc.load = Some(LoadView {
        seconds: 10.0,
        devices: vec![LoadDevice {
            name: "sda".into(),
            read_iops: 3.0,
            write_iops: 0.0,
            read_mb_s: 0.01,
            write_mb_s: 0.0,
            util_pct: 0.4,
            await_ms: 0.2,
            aqu_sz: 0.0,
        }],
        io_pressure_some_pct: None,
        processes: vec![LoadProcess { pid: 1, command: "systemd<1>".into(), read_bytes: 4096, write_bytes: 0 }],
    });
    let html = named(&render_html(&doc));
    let section = element(&html, "doctor", "</section>");
    assert!(!section.contains("id=\"doctor-causes\""));
    assert!(element(section, "doctor-no-causes", "</p>").contains("No check found a cause"));
    assert!(section.contains("<p class=\"verdict\" id=\"doctor-verdict\">No check found a cause.</p>"));
    assert!(element(section, "doctor-load", "</table>").contains("<td class=\"name\">sda</td><td>3.0</td>"));
    assert!(
        element(section, "doctor-processes", "</ul>").contains("<li>1 systemd&lt;1&gt; (read 4 KiB, wrote 0 B)</li>")
    );
}
