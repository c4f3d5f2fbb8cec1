//! Every sample under `tests/jobs/valid` parses (and validates); every sample under
//! `tests/jobs/invalid` fails with `FILE:LINE:` where LINE is given by the file's first
//! line, `# expect-error-line: N`.
#![allow(clippy::unwrap_used)]

use diskmeter_spec::fiojob::read_jobfile;
use diskmeter_spec::validate::validate_plan;
use diskmeter_spec::{JobSpec, RunPlan, RwMode, SpecError};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn samples(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jobs").join(kind);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no samples in {}", dir.display());
    v
}

fn load(name: &str) -> RunPlan {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jobs/valid").join(name);
    read_jobfile(&p, &JobSpec::default()).unwrap()
}

#[test]
fn valid_samples_parse_and_validate() {
    for path in samples("valid") {
        let plan =
            read_jobfile(&path, &JobSpec::default()).unwrap_or_else(|e| panic!("{} should parse: {e}", path.display()));
        validate_plan(&plan).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

#[test]
fn invalid_samples_fail_at_the_expected_line() {
    for path in samples("invalid") {
        let text = std::fs::read_to_string(&path).unwrap();
        let expected: usize = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect-error-line:"))
            .unwrap_or_else(|| panic!("{}: first line must be # expect-error-line: N", path.display()))
            .trim()
            .parse()
            .unwrap();
        let err =
            read_jobfile(&path, &JobSpec::default()).err().unwrap_or_else(|| panic!("{} should fail", path.display()));
        let SpecError::JobFile { file, line, .. } = &err else { panic!("{}: {err}", path.display()) };
        assert_eq!(*line, expected, "{}: {err}", path.display());
        let shown = err.to_string();
        let want_prefix = format!("{}:{expected}: ", path.display());
        assert!(shown.starts_with(&want_prefix), "{shown}");
        assert_eq!(file, &path.display().to_string());
    }
}

#[test]
fn crystaldiskmark_sample_structure() {
    let plan = load("crystaldiskmark.fio");
    assert_eq!(plan.groups.len(), 4);
    assert!(plan.groups.iter().all(|g| g.group_reporting && g.jobs.len() == 1));
    let first = &plan.groups[0].jobs[0];
    assert_eq!(first.name, "SEQ1M-Q8T1-read");
    assert_eq!((first.rw, first.bs, first.qd), (RwMode::Read, 1 << 20, 8));
    assert_eq!(first.runtime, Duration::from_secs(5));
    assert_eq!(first.ramp, Duration::from_secs(1));
    assert!(first.time_based && first.direct);
    let last = &plan.groups[3].jobs[0];
    assert_eq!((last.rw, last.bs, last.qd), (RwMode::RandRead, 4096, 1));
}

#[test]
fn mixed_sample_structure() {
    let plan = load("mixed-concurrent.fio");
    let names: Vec<Vec<&str>> = plan.groups.iter().map(|g| g.jobs.iter().map(|j| j.name.as_str()).collect()).collect();
    assert_eq!(names, vec![vec!["oltp", "log"], vec!["backup"]]);
    let oltp = &plan.groups[0].jobs[0];
    assert_eq!(oltp.threads, 4);
    // fio's rate_iops paces reads and writes each: 2k of each per worker x 4 workers.
    assert_eq!((oltp.rate_iops, oltp.mix), (Some(16000), 50));
    assert_eq!(plan.notes.iter().filter(|n| n.code == diskmeter_spec::PlanNote::RATE_SETS_MIX).count(), 1);
    assert_eq!(plan.groups[1].jobs[0].bs, 128 << 10);
    assert_eq!(plan.groups[0].jobs[1].fsync, 1);
}

#[test]
fn fill_sample_runs_until_done() {
    let plan = load("fill-until-done.fio");
    let j = &plan.groups[0].jobs[0];
    assert!(!j.time_based);
    assert_eq!(j.runtime, Duration::ZERO);
    assert_eq!(j.size, Some(256 << 20));
    assert!(!j.direct);
}

#[test]
fn missing_file_is_line_zero() {
    let err = read_jobfile(Path::new("/definitely/not/here.fio"), &JobSpec::default()).unwrap_err();
    assert!(matches!(err, SpecError::JobFile { line: 0, .. }), "{err}");
    assert!(err.to_string().starts_with("/definitely/not/here.fio: cannot read the job file"));
}
