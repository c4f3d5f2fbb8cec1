//! Several ranks under `mpirun` (built with `--features mpi`; CI runs
//! `cargo test -p diskmeter --features mpi --test cli_mpi`): merged figures against the
//! ranks' own, `merge` against the MPI run's document, and faults on one rank.
#![cfg(feature = "mpi")]

mod common;
use common::*;
use serde_json::Value;
use stats::LatHist;
use std::path::Path;
use std::process::Command as Std;
use std::time::{Duration, Instant};

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("diskmeter")
}

/// `mpirun -np N` of a shell line (`$R` is the rank) in `dir`.
fn mpirun(dir: &Path, n: u32, line: &str) -> std::process::Output {
    let script = format!("R=$OMPI_COMM_WORLD_RANK; DM={}; {line}", bin().display());
    Std::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &n.to_string(), "sh", "-c", &script])
        .current_dir(dir)
        .envs(home_env())
        .env("NO_COLOR", "1")
        .env("DISKMETER_HISTORY", "off")
        .output()
        .expect("mpirun runs (apt-get install openmpi-bin)")
}

fn load(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("result written")).expect("valid JSON")
}

fn hist(v: &Value) -> LatHist {
    match v.as_str() {
        Some(s) => LatHist::from_base64_v2(s).expect("a V2 histogram"),
        None => LatHist::new(),
    }
}

#[test]
fn three_ranks_merge_to_the_sum_and_the_union() {
    let d = tempdir();
    let o = mpirun(
        d.path(),
        3,
        "exec $DM run --rw randrw --mix 70 --bs 4k --qd 4 --runtime 2s --size 32M --no-ceiling-check \
         --target dm.{rank}.test -o r.{rank}.json --json > merged.$R.json",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let merged = load(&d.path().join("merged.0.json"));
    assert_eq!(std::fs::read_to_string(d.path().join("merged.1.json")).unwrap(), "", "only rank 0 prints");
    let ranks: Vec<Value> = (0..3).map(|r| load(&d.path().join(format!("r.{r}.json")))).collect();
    let m = &merged["results"][0];
    for dir in ["read", "write"] {
        let sum: f64 = ranks.iter().map(|r| r["results"][0][dir]["iops"].as_f64().unwrap()).sum();
        assert_close(m[dir]["iops"].as_f64().unwrap(), sum, "merged IOPS = the sum of the ranks'");
        let mut union = LatHist::new();
        for r in &ranks {
            union.add(&hist(&r["results"][0]["histograms"][dir]));
        }
        let lat = &m[dir]["lat_ns"];
        for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999)] {
            assert_eq!(lat[key].as_u64().unwrap(), union.quantile(q), "{dir} {key}: the union's percentile");
        }
        assert_eq!(lat["max"].as_u64().unwrap(), union.max());
        let qd: f64 = ranks.iter().map(|r| r["results"][0][dir]["qd_mean"].as_f64().unwrap()).sum();
        assert_close(m[dir]["qd_mean"].as_f64().unwrap(), qd, "queue depth is summed");
    }
    let job = &merged["cluster"]["jobs"][0];
    assert_eq!(job["hosts"].as_array().unwrap().len(), 3);
    let skew = job["start_skew_s"].as_f64().expect("the start skew is reported");
    assert!((0.0..0.5).contains(&skew), "ranks start together: {skew}");
    assert!(job["stonewall"]["iops"].as_f64().unwrap() > 0.0);
    assert!(!job["timeline"].as_array().unwrap().is_empty());
    for h in job["hosts"].as_array().unwrap() {
        assert!(h["start_offset_s"].as_f64().is_some(), "every rank records its offset from the release");
    }
    assert!(!entries(d.path()).iter().any(|e| e.ends_with(".test")), "no test file left: {:?}", entries(d.path()));

    // `merge` of the three saved results gives the MPI run's own figures.
    let again = run_json(dm_in(d.path()).args(["merge", "r.0.json", "r.1.json", "r.2.json"]));
    for dir in ["read", "write"] {
        assert_eq!(again["results"][0][dir]["lat_ns"], m[dir]["lat_ns"], "{dir} latency");
        assert_eq!(again["results"][0][dir]["iops"], m[dir]["iops"], "{dir} IOPS");
        assert_eq!(again["results"][0][dir]["mb_s"], m[dir]["mb_s"], "{dir} MB/s");
    }
    assert_eq!(again["cluster"]["jobs"][0]["timeline"], job["timeline"]);
    assert_eq!(again["cluster"]["jobs"][0]["stonewall"], job["stonewall"]);
    assert_eq!(again["cluster"]["source"], "merge");
    assert_eq!(merged["cluster"]["source"], "mpi");
}

#[test]
fn a_rank_with_a_missing_target_ends_every_rank_within_seconds() {
    let d = tempdir();
    let t0 = Instant::now();
    let o = mpirun(
        d.path(),
        3,
        "if [ $R = 1 ]; then T=missing/dir/x.test; else T=dm.$R.test; fi; \
         exec $DM run --rw randread --qd 4 --runtime 60s --size 32M --target $T",
    );
    assert!(t0.elapsed() < Duration::from_secs(20), "every rank ended in {:?}", t0.elapsed());
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rank 1") && err.contains("missing/dir"), "rank 0 names the failed rank: {err}");
    assert!(!entries(d.path()).iter().any(|e| e.ends_with(".test")), "no test file left: {:?}", entries(d.path()));
}

#[test]
fn an_io_error_on_one_rank_stops_all_with_the_others_partial_results() {
    let d = tempdir();
    let t0 = Instant::now();
    let o = mpirun(
        d.path(),
        3,
        "if [ $R = 2 ]; then export DISKMETER_NULL_FAULT=enospc@300000; fi; \
         exec $DM run --engine null --rw randwrite --qd 4 --runtime 60s --size 32M --no-ceiling-check \
         --json > out.$R.json",
    );
    assert!(t0.elapsed() < Duration::from_secs(30), "every rank ended in {:?}", t0.elapsed());
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = load(&d.path().join("out.0.json"));
    assert_eq!(doc["partial"], true);
    assert_eq!(doc["cluster"]["failed_rank"], 2);
    let msg = doc["error"]["message"].as_str().unwrap();
    assert!(msg.contains("rank 2") && msg.contains("write failed"), "{msg}");
    assert_eq!(doc["error"]["kind"], "enospc");
    let hosts = doc["cluster"]["jobs"][0]["hosts"].as_array().unwrap();
    assert!(hosts.iter().filter(|h| h["iops"].as_f64().unwrap() > 0.0).count() >= 2, "partial figures kept");
    assert_eq!(doc["cluster"]["ranks"][1]["error"]["kind"], "stopped");
}

#[test]
fn mark_runs_on_every_rank_and_merges_per_pass() {
    let d = tempdir();
    let o = mpirun(d.path(), 2, "exec $DM mark --quick --engine null --json > m.$R.json");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = load(&d.path().join("m.0.json"));
    assert_eq!(doc["command"], "mark");
    let tests = doc["results"].as_array().unwrap();
    assert!(!tests.is_empty());
    for t in tests {
        let hosts =
            &doc["cluster"]["jobs"].as_array().unwrap().iter().find(|j| j["name"] == t["name"]).unwrap()["hosts"];
        for dir in ["read", "write"] {
            let sum: f64 = hosts.as_array().unwrap().iter().map(|h| h["iops"].as_f64().unwrap()).sum();
            let total = t["read"]["iops"].as_f64().unwrap_or(0.0) + t["write"]["iops"].as_f64().unwrap_or(0.0);
            assert!(total > 0.0 && sum > 0.0, "{dir}");
        }
    }
}

#[test]
fn commands_that_run_on_one_host_refuse_under_several_ranks() {
    let d = tempdir();
    let o = mpirun(d.path(), 2, "exec $DM sla --engine null --latency 1ms");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("under mpirun only `run` and `mark`"));
    let o = mpirun(d.path(), 2, "exec $DM steady x.img --matrix quick");
    assert_eq!(o.status.code(), Some(2));
    for line in ["exec $DM mark --sustained --quick", "exec $DM run --sustained --size 8M"] {
        let o = mpirun(d.path(), 2, line);
        assert_eq!(o.status.code(), Some(2), "{line}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("runs on one host"), "{line}");
    }
}
