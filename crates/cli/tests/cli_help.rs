//! Snapshots of the help texts and of the human output's layout (numbers redacted).
//! Update with `INSTA_UPDATE=always cargo test -p diskmeter --test cli_help` after
//! reading the diff.

mod common;

use common::*;

fn help(args: &[&str]) -> String {
    let o = expect_code(dm().args(args), 0);
    assert!(o.stderr.is_empty(), "help writes nothing to stderr: {}", stderr_of(&o));
    stdout_of(&o)
}

#[test]
fn top_level_help() {
    insta::assert_snapshot!("help", help(&["--help"]));
}

#[test]
fn doctor_help() {
    insta::assert_snapshot!("doctor_help", help(&["doctor", "--help"]));
}

#[test]
fn run_help() {
    insta::assert_snapshot!("run_help", help(&["run", "--help"]));
}

#[test]
fn mark_help() {
    insta::assert_snapshot!("mark_help", help(&["mark", "--help"]));
}

#[test]
fn sla_help() {
    insta::assert_snapshot!("sla_help", help(&["sla", "--help"]));
}

#[test]
fn compare_help() {
    insta::assert_snapshot!("compare_help", help(&["compare", "--help"]));
}

#[test]
fn report_help() {
    insta::assert_snapshot!("report_help", help(&["report", "--help"]));
}

#[test]
fn cache_help() {
    insta::assert_snapshot!("cache_help", help(&["cache", "--help"]));
    insta::assert_snapshot!("cache_simulate_help", help(&["cache", "simulate", "--help"]));
}

#[test]
fn capture_and_profile_help() {
    insta::assert_snapshot!("capture_help", help(&["capture", "--help"]));
    insta::assert_snapshot!("profile_help", help(&["profile", "--help"]));
}

#[test]
fn replay_help() {
    insta::assert_snapshot!("replay_help", help(&["replay", "--help"]));
}

#[test]
fn steady_help() {
    insta::assert_snapshot!("steady_help", help(&["steady", "--help"]));
}

#[test]
fn help_subcommand_matches_flag() {
    assert_eq!(help(&["help", "run"]), help(&["run", "--help"]));
}

#[test]
fn version_names_the_commit() {
    let long = help(&["--version"]);
    let first = long.lines().next().unwrap_or_default();
    let prefix = format!("diskmeter {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(first.starts_with(&prefix), "{long}");
    let commit = first[prefix.len()..].split([',', ')']).next().unwrap_or_default();
    assert!(commit == "unknown" || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())), "{long}");
    // Built from a git checkout (CI, a developer): the commit is this tree's HEAD.
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(h) if std::env::var_os("DISKMETER_COMMIT").is_none() => assert_eq!(commit, h, "{long}"),
        _ => eprintln!("note: not a git checkout (or DISKMETER_COMMIT set): the commit is not compared"),
    }
    // The second line says what was built; -V is the first line alone.
    assert!(long.lines().nth(1).is_some_and(|l| l.starts_with("target ") && l.contains("linked")), "{long}");
    assert_eq!(help(&["-V"]), format!("{first}\n"));
}

/// Redact what varies from run to run: the date, every number, latency units and the
/// padding that depends on the width of the numbers.
macro_rules! assert_layout {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}( UTC|Z)?", "[DATE]"),
            (r"\d[\d,.]*", "N"),
            (r"N (ns|µs|ms|s)\b", "N [T]"),
            (r" +", " "),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn human_run_layout() {
    let dir = tempdir();
    let o = expect_code(
        dm_in(dir.path()).args(["run", "--engine", "null", "--rw", "randrw", "--qd", "4", "--runtime", "200ms"]),
        0,
    );
    assert_layout!("human_run_null", stdout_of(&o));
}

#[test]
fn human_mark_card_layout() {
    let dir = tempdir();
    let o = expect_code(dm_in(dir.path()).args(["mark", "--quick", "--engine", "null", "--time", "100ms"]), 0);
    assert_layout!("human_mark_null", stdout_of(&o));
}
