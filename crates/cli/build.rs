//! `diskmeter --version` names the commit the binary was built from.
//!
//! The commit comes from `DISKMETER_COMMIT` (a packager building from a source tarball sets
//! it, e.g. `DISKMETER_COMMIT=1a2b3c4d5e6f`), else from `git` in the source tree, else it is
//! "unknown". Its date (`DISKMETER_COMMIT_DATE`, else git's committer date) dates the man
//! pages, so a rebuild of the same commit gives the same pages.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=DISKMETER_COMMIT");
    println!("cargo:rerun-if-env-changed=DISKMETER_COMMIT_DATE");
    // HEAD moves (commit, checkout, reset) show in HEAD's reflog and in HEAD itself.
    for what in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", what]) {
            let p = std::path::Path::new(&p);
            let p = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let commit = std::env::var("DISKMETER_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    let date = std::env::var("DISKMETER_COMMIT_DATE")
        .ok()
        .filter(|d| !d.is_empty())
        .or_else(|| git(&["log", "-1", "--format=%cs", "HEAD"]))
        .unwrap_or_default();
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let line = if date.is_empty() {
        format!("{version} (commit {commit})")
    } else {
        format!("{version} (commit {commit}, {date})")
    };
    // `--version`'s second line: what was built, for a bug report (the linkage is the crate's
    // own cfg, in cmd/mod.rs).
    let target = std::env::var("TARGET").unwrap_or_default();
    let features = if std::env::var_os("CARGO_FEATURE_MPI").is_some() { "mpi" } else { "none" };
    println!("cargo:rustc-env=DISKMETER_COMMIT={commit}");
    println!("cargo:rustc-env=DISKMETER_COMMIT_DATE={date}");
    println!("cargo:rustc-env=DISKMETER_VERSION_LINE={line}");
    println!("cargo:rustc-env=DISKMETER_TARGET={target}");
    println!("cargo:rustc-env=DISKMETER_FEATURES={features}");
}
