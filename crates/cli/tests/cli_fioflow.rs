//! fio's run-flow options in job files, on the null engine: when jobs start and stop
//! (`startdelay`, `wait_for`, `new_group`, `exitall`, steady state), errors (`continue_on_error`),
//! rates (`rate`, `rate_process`, `rate_iops_min`) and fio's log files. Each test measures the
//! effect from the result document or the files written.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

const GLOBAL: &str = "[global]\nioengine=null\nsize=64m\ntime_based\n";

fn write_job(dir: &Path, text: &str) {
    std::fs::write(dir.join("jobs.fio"), format!("{GLOBAL}{text}")).expect("write the job file");
}

fn run_file(dir: &Path, text: &str) -> Value {
    write_job(dir, text);
    run_json(dm_in(dir).args(["run", "jobs.fio"]))
}

fn by_name<'a>(doc: &'a Value, name: &str) -> &'a Value {
    results(doc).iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no result {name}: {doc}"))
}

fn read_ops(r: &Value) -> u64 {
    u64_at(&r["read"], "ops")
}

#[test]
fn new_group_starts_a_reporting_group_not_a_stonewall() {
    let dir = tempdir();
    let t = std::time::Instant::now();
    let doc = run_file(dir.path(), "rate_iops=1000\nruntime=500ms\ngroup_reporting\n[a]\n[b]\n[c]\nnew_group\n[d]\n");
    // One run group (all four run together, ~0.5 s), reported as two merged reporting groups.
    assert!(t.elapsed() < std::time::Duration::from_millis(1500), "{:?}", t.elapsed());
    assert_eq!(result_names(&doc), ["a", "c"]);
    for n in ["a", "c"] {
        let r = by_name(&doc, n);
        assert_eq!(u64_at(&r["spec"], "threads"), 2);
        assert!(read_ops(r).abs_diff(1000) <= 20, "two jobs × 500 I/Os: {}", read_ops(r));
    }
}

#[test]
fn startdelay_and_wait_for_start_jobs_late() {
    let dir = tempdir();
    let doc = run_file(
        dir.path(),
        "rate_iops=1000\n\
         [a]\nruntime=800ms\n\
         [b]\nruntime=400ms\nstartdelay=300ms\n\
         [c]\nruntime=300ms\nwait_for=a\n",
    );
    assert_eq!(result_names(&doc), ["a", "b", "c"]);
    let start = |n: &str| by_name(&doc, n)["start_s"].as_f64();
    assert_eq!(start("a"), None, "[a] starts with the group");
    let b = start("b").expect("b starts late");
    assert!((0.30..0.40).contains(&b), "startdelay=300ms: {b}");
    let c = start("c").expect("c starts late");
    assert!((0.80..0.95).contains(&c), "wait_for=a: [c] starts when [a] (800 ms) has finished: {c}");
    // Each job still runs its own runtime at 1000 IOPS once started.
    for (n, ms) in [("a", 800), ("b", 400), ("c", 300)] {
        let ops = read_ops(by_name(&doc, n));
        assert!(ops.abs_diff(ms) <= 15, "[{n}] moved {ops} I/Os in {ms} ms at 1000 IOPS");
    }
}

#[test]
fn wait_for_names_an_earlier_job() {
    let dir = tempdir();
    write_job(dir.path(), "runtime=1s\n[a]\nwait_for=b\n[b]\n");
    let o = expect_code(dm_in(dir.path()).args(["run", "jobs.fio"]), 2);
    assert!(stderr_of(&o).contains("jobs.fio:7: wait_for=b: no job named b comes before [a]"), "{}", stderr_of(&o));
}

#[test]
fn exitall_stops_the_group_when_one_job_ends() {
    let dir = tempdir();
    let t = std::time::Instant::now();
    let doc = run_file(dir.path(), "rate_iops=1000\n[short]\nruntime=300ms\nexitall\n[long]\nruntime=20s\n");
    assert!(t.elapsed() < std::time::Duration::from_secs(10), "{:?}", t.elapsed());
    let long = read_ops(by_name(&doc, "long"));
    assert!((280..=400).contains(&long), "[long] stopped with [short] after ~300 ms: {long} I/Os");
    assert_eq!(doc["partial"], false, "an exitall stop is no interruption");
}

#[test]
fn continue_on_error_counts_and_goes_on() {
    let dir = tempdir();
    write_job(dir.path(), "runtime=300ms\nrate_iops=1000\n[j]\ncontinue_on_error=io\n");
    let o =
        expect_code(dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "eio@100").args(["run", "jobs.fio", "--json"]), 0);
    let doc = json_of(&o);
    let r = by_name(&doc, "j");
    let (ok, errors) = (read_ops(r), u64_at(r, "errors"));
    assert_eq!(ok, 100, "the first 100 I/Os succeed");
    assert!((180..=210).contains(&errors), "every later I/O failed and was counted: {errors}");
    assert_eq!(r["first_error"]["kind"], "eio");
    assert!(r["error"].is_null() && doc["error"].is_null(), "{doc}");
    // continue_on_error=write does not cover reads: the first read error stops the run (exit 1).
    write_job(dir.path(), "runtime=300ms\nrate_iops=1000\n[j]\ncontinue_on_error=write\nexitall_on_error\n");
    let o =
        expect_code(dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "eio@100").args(["run", "jobs.fio", "--json"]), 1);
    assert_eq!(json_of(&o)["error"]["kind"], "eio");
}

/// Per-window I/O counts of a log file's direction-0 rows: (times, values).
fn log_rows(path: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| {
            l.split(',').map(|c| c.trim().parse::<u64>().unwrap_or_else(|_| panic!("{l:?} is not ints"))).collect()
        })
        .collect()
}

/// Mean and variance of the per-window counts (`iops` rows × window length). The variance is
/// the robust one (1.4826 × the median absolute deviation, squared): a stall of the shared
/// machine that moves a burst of I/Os into the next window does not count.
fn window_counts(rows: &[Vec<u64>], window_ms: u64) -> (f64, f64) {
    let xs: Vec<f64> = rows.iter().map(|r| (r[1] * window_ms) as f64 / 1000.0).collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let med = median(&mut xs.clone());
    let mad = median(&mut xs.iter().map(|x| (x - med).abs()).collect());
    (mean, (1.4826 * mad).powi(2))
}

#[test]
fn rate_and_poisson_hold_the_mean_with_exponential_gaps() {
    let dir = tempdir();
    // rate is bytes/s per direction: 8 MiB/s of 4k writes = 2048 IOPS.
    let doc = run_file(
        dir.path(),
        "runtime=4s\nrw=write\nbs=4k\nrate=8m\nwrite_iops_log=x\nlog_avg_msec=100\n\
         [linear]\n[poisson]\nrate_process=poisson\n",
    );
    for n in ["linear", "poisson"] {
        let iops = f64_at(&by_name(&doc, n)["write"], "iops");
        assert!((iops / 2048.0 - 1.0).abs() < 0.03, "[{n}] {iops} IOPS for 2048");
    }
    // Counts per 100 ms window: a Poisson process has variance = mean (dispersion ≈ 1, the gaps'
    // coefficient of variation 1); evenly spaced I/Os have almost none (what a busy machine
    // adds by reaping late moves a few I/Os between windows, for both).
    let (m_lin, v_lin) = window_counts(&log_rows(&dir.path().join("x_iops.1.log"))[1..], 100);
    let (m_poi, v_poi) = window_counts(&log_rows(&dir.path().join("x_iops.2.log"))[1..], 100);
    assert!((m_lin / 204.8 - 1.0).abs() < 0.03 && (m_poi / 204.8 - 1.0).abs() < 0.05, "means {m_lin} {m_poi}");
    let (d_lin, d_poi) = (v_lin / m_lin, v_poi / m_poi);
    assert!((0.4..2.0).contains(&d_poi), "poisson dispersion {d_poi}");
    assert!(d_lin < 0.2, "linear dispersion {d_lin}");
}

#[test]
fn rate_iops_min_fails_a_job_below_its_floor() {
    let dir = tempdir();
    write_job(dir.path(), "runtime=2s\n[slow]\nrate_iops=200\nrate_iops_min=500\n");
    let o = expect_code(dm_in(dir.path()).args(["run", "jobs.fio", "--json"]), 1);
    let doc = json_of(&o);
    assert_eq!(doc["error"]["kind"], "rate-min", "{doc}");
    assert!(warning_codes(&doc).contains(&"rate-min-not-met".to_string()));
    assert_eq!(results(&doc)[0]["error"]["kind"], "rate-min");
    // Above the floor: no error.
    run_file(dir.path(), "runtime=2s\n[ok]\nrate_iops=1000\nrate_iops_min=500\nratecycle=1000\n");
}

#[test]
fn fio_logs_have_fios_names_columns_and_steps() {
    let dir = tempdir();
    let d = dir.path();
    let job = "runtime=1s\nrw=randrw\nbs=4k\nrate_iops=2000,1000\n\
               write_bw_log=nm\nwrite_lat_log=nm\nwrite_iops_log=nm\nlog_avg_msec=100\n[j1]\nnumjobs=2\n[j2]\n";
    let doc = run_file(d, job);
    let mut want: Vec<String> = Vec::new();
    for t in ["bw", "clat", "iops", "lat", "slat"] {
        for n in 1..=3 {
            want.push(format!("nm_{t}.{n}.log"));
        }
    }
    want.push("jobs.fio".into());
    want.sort();
    assert_eq!(entries(d), want, "fio numbers the threads of the file from 1");
    let files = by_name(&doc, "j1")["log_files"].as_array().expect("log_files").len();
    assert_eq!(files, 10, "j1's two threads × five logs");

    let bw = log_rows(&d.join("nm_bw.3.log"));
    assert!(bw.iter().all(|r| r.len() == 5 && r[3] == 0 && r[4] == 0), "time, value, dir, bs 0, offset 0");
    let reads: Vec<&Vec<u64>> = bw.iter().filter(|r| r[2] == 0).collect();
    let times: Vec<u64> = reads.iter().map(|r| r[0]).collect();
    assert_eq!(times, (1..=10).map(|i| i * 100).collect::<Vec<u64>>(), "a row per 100 ms window");
    // The log's mean read bandwidth (KiB/s) is the result's (MB/s) within a few %.
    let log_kib = reads.iter().map(|r| r[1] as f64).sum::<f64>() / reads.len() as f64;
    let result_kib = f64_at(&by_name(&doc, "j2")["read"], "mb_s") * 1e6 / 1024.0;
    assert!((log_kib / result_kib - 1.0).abs() < 0.03, "log {log_kib} KiB/s, result {result_kib}");
    // Each direction at its own rate, as fio paces them: 2000 reads and 1000 writes a second.
    let iops = log_rows(&d.join("nm_iops.3.log"));
    let mean = |dir: u64| {
        let v: Vec<f64> = iops.iter().filter(|r| r[2] == dir).map(|r| r[1] as f64).collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!((mean(0) / 2000.0 - 1.0).abs() < 0.05 && (mean(1) / 1000.0 - 1.0).abs() < 0.05);
    let lat = log_rows(&d.join("nm_lat.1.log"));
    assert!(!lat.is_empty() && lat.iter().all(|r| r[1] > 0), "mean latencies in ns");
    assert_eq!(std::fs::read_to_string(d.join("nm_slat.1.log")).expect("slat"), "", "no submission latency");
    assert!(warning_codes(&doc).contains(&"rate-sets-mix".to_string()), "{}", doc["warnings"]);

    // fio itself, on the same job: the same files, the same columns.
    let Some(fio) = find_tool("fio") else {
        return skip_note("fio is not installed: the log format is not compared with fio's");
    };
    let fdir = tempdir();
    std::fs::write(fdir.path().join("jobs.fio"), format!("{GLOBAL}{job}")).expect("job");
    let o = std::process::Command::new(fio)
        .current_dir(fdir.path())
        .args(["jobs.fio", "--output=/dev/null"])
        .output()
        .expect("run fio");
    assert!(o.status.success(), "fio: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(entries(fdir.path()), want, "fio writes the same files");
    let theirs = log_rows(&fdir.path().join("nm_bw.3.log"));
    assert!(theirs.iter().all(|r| r.len() == bw[0].len()), "same number of columns as fio");
    let first = theirs.iter().find(|r| r[2] == 0).map_or(0, |r| r[0]);
    assert!((100..200).contains(&first), "fio's first window ends after 100 ms too (fio stamps it late): {first}");
}

#[test]
fn per_job_logs_0_gathers_the_threads_in_one_file_and_the_text_says_what_happened() {
    let dir = tempdir();
    write_job(
        dir.path(),
        "runtime=1s\nrate_iops=1000\nwrite_bw_log=b\nlog_avg_msec=250\nper_job_logs=0\ncontinue_on_error=all\n\
         [a]\nnumjobs=2\n[late]\nstartdelay=200ms\n",
    );
    let o = expect_code(dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "eio@500").args(["run", "jobs.fio"]), 0);
    assert_eq!(entries(dir.path()), ["b_bw.log", "jobs.fio"]);
    let rows = log_rows(&dir.path().join("b_bw.log"));
    // Three fio threads, four 250 ms windows each (the late one's after its start), one file.
    assert_eq!(rows.len(), 12, "{rows:?}");
    // Each worker's I/Os fail from the 500th on (counted, not moved): 4000 KiB/s (1000 IOPS of
    // 4 KiB) in the first two windows, nothing in the last.
    // (An I/O may complete just across a window's edge on a busy machine: each window within
    // 2 %, and each thread's 500 I/Os all land before the last window, the 500th possibly just
    // past the second window's edge: 3 984 + 16 KiB/s seen under CI's load.)
    for t in rows.chunks(4) {
        let w: Vec<u64> = t.iter().map(|r| r[1]).collect();
        assert!(w[..2].iter().all(|&v| v.abs_diff(4000) <= 80), "{rows:?}");
        assert_eq!((w[0] + w[1] + w[2], w[3]), (8000, 0), "{rows:?}");
    }
    let text = stdout_of(&o);
    assert!(text.contains("started 0.2") && text.contains("after its group"), "{text}");
    assert!(text.contains("fio logs: b_bw.log"), "{text}");
    assert!(text.contains("I/O errors counted and gone on after (continue_on_error)"), "{text}");
}

#[test]
fn fio2gnuplot_reads_the_bw_log() {
    let Some(tool) = find_tool("fio2gnuplot") else {
        return skip_note("fio2gnuplot is not installed: the bw log is not parsed by it");
    };
    let dir = tempdir();
    let doc = run_file(dir.path(), "runtime=2s\nrate_iops=1000\n[j]\nwrite_bw_log=nm\nlog_avg_msec=250\n");
    let out = dir.path().join("plots");
    let o = std::process::Command::new(tool)
        .current_dir(dir.path())
        .args(["-b", "-d"])
        .arg(&out)
        .output()
        .expect("run fio2gnuplot");
    let said = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("nm_bw.1.log"), "fio2gnuplot found the per-job log: {said}");
    // Its time column steps by 0.25 s, and its average is the result's bandwidth.
    let temp = std::fs::read_to_string(out.join("gnuplot_temp_file.0")).expect("fio2gnuplot's data");
    let times: Vec<f64> = temp
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().nth(1).and_then(|t| t.parse().ok()).expect("a time"))
        .collect();
    assert_eq!(times, (1..=8).map(|i| f64::from(i) * 0.25).collect::<Vec<f64>>());
    let global = std::fs::read_to_string(out.join("result.global")).expect("fio2gnuplot's summary");
    let avg: f64 =
        global.lines().find_map(|l| l.strip_prefix("avg=")).and_then(|v| v.trim().parse().ok()).expect("avg=");
    let result_kib = f64_at(&by_name(&doc, "j")["read"], "mb_s") * 1e6 / 1024.0;
    assert!((avg / result_kib - 1.0).abs() < 0.03, "fio2gnuplot {avg} KiB/s, result {result_kib}");
}

#[test]
fn a_foreign_file_in_a_logs_place_is_kept_without_force() {
    let dir = tempdir();
    std::fs::write(dir.path().join("nm_iops.1.log"), "1, 2, 0, 0, 0\n").expect("foreign file");
    write_job(dir.path(), "runtime=200ms\n[j]\nwrite_iops_log=nm\nlog_avg_msec=100\n");
    let o = expect_code(dm_in(dir.path()).args(["run", "jobs.fio"]), 2);
    assert!(stderr_of(&o).contains("write_iops_log nm_iops.1.log already exists"), "{}", stderr_of(&o));
    assert_eq!(std::fs::read_to_string(dir.path().join("nm_iops.1.log")).expect("kept"), "1, 2, 0, 0, 0\n");
    // --force replaces it; a second run replaces diskmeter's own log without it.
    expect_code(dm_in(dir.path()).args(["run", "jobs.fio", "--force"]), 0);
    expect_code(dm_in(dir.path()).args(["run", "jobs.fio"]), 0);
    assert_eq!(log_rows(&dir.path().join("nm_iops.1.log")).len(), 2);
}

#[test]
fn fio_logs_without_log_avg_msec_log_each_io() {
    // fio's default: every I/O its own line (here ~500 paced reads in 0.5 s, one file per log).
    let dir = tempdir();
    let doc = run_file(dir.path(), "runtime=500ms\nrate_iops=1000\n[j]\nwrite_bw_log=x\n");
    assert_eq!(entries(dir.path()), ["jobs.fio", "x_bw.1.log"]);
    let rows = log_rows(&dir.path().join("x_bw.1.log"));
    assert_eq!(rows.len() as u64, read_ops(&results(&doc)[0]), "one line per measured I/O");
    assert!(rows.iter().all(|r| r.len() == 5 && r[3] == 4096), "{:?}", &rows[..3]);
    assert!(!warning_codes(&doc).contains(&"fio-log-cut".to_string()));
}

#[test]
fn steady_state_ends_a_steady_job_and_reports_one_that_is_not() {
    let dir = tempdir();
    let t = std::time::Instant::now();
    let doc = run_file(dir.path(), "runtime=30s\nrate_iops=1000\n[steady]\nss=iops:5%\nss_dur=2s\nss_ramp=1s\n");
    assert!(t.elapsed() < std::time::Duration::from_secs(15), "ended early: {:?}", t.elapsed());
    let r = by_name(&doc, "steady");
    let ss = &r["steadystate"];
    assert_eq!((ss["attained"].as_bool(), ss["criterion"].as_str()), (Some(true), Some("iops:5%")));
    assert_eq!(ss["attained_at_s"].as_f64(), Some(3.0), "ss_ramp 1 s + ss_dur 2 s");
    let secs = u64_at(&r["read"], "ops") as f64 / 1000.0;
    // Each second is judged as soon as the worker has sent it: the job ends when fio's would.
    assert!((2.9..3.5).contains(&secs), "the job ran 3 s, not 30: {secs}");
    assert_eq!(doc["partial"], false);

    // A limit of 0 % can never be met: the job runs its whole runtime and says so.
    let doc = run_file(dir.path(), "runtime=2s\nrate_iops=1000\n[never]\nss=iops_slope:0%\nss_dur=1s\n");
    let r = by_name(&doc, "never");
    assert_eq!(r["steadystate"]["attained"], false);
    assert!(r["steadystate"]["attained_at_s"].is_null());
    assert!(read_ops(r).abs_diff(2000) <= 10, "ran the full 2 s: {}", read_ops(r));
}

#[test]
fn offload_submits_through_the_sq_polling_thread() {
    // fio's io_submit_mode=offload: a thread other than the worker submits. Here it is io_uring's
    // SQ polling kernel thread, which shows in the process's tasks as iou-sqp-PID while it runs.
    let dir = tempdir();
    std::fs::write(
        dir.path().join("o.fio"),
        "[o]\nioengine=io_uring\nrw=randread\nbs=4k\nsize=8m\niodepth=8\nruntime=2\ntime_based\nio_submit_mode=offload\n",
    )
    .expect("job");
    let s = spawn(dir.path(), &["run", "o.fio", "--json"]);
    let pid = s.child.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut seen = false;
    while !seen && std::time::Instant::now() < deadline {
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            seen = tasks
                .flatten()
                .any(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.starts_with("iou-sqp")));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (code, out, err) = wait_exit(s, std::time::Duration::from_secs(30));
    assert_eq!(code, Some(0), "{err}");
    let doc: Value = serde_json::from_slice(&out).expect("json");
    assert!(read_ops(&results(&doc)[0]) > 1000, "{doc}");
    assert!(seen, "no iou-sqp thread in the process while the job ran");
    assert!(!warning_codes(&doc).contains(&"submit-inline".to_string()));
}

#[test]
fn latency_target_runs_as_the_sla_search() {
    let dir = tempdir();
    let doc =
        run_file(dir.path(), "runtime=1s\n[j]\nrw=randread\niodepth=8\nlatency_target=1ms\nlatency_percentile=99\n");
    assert_eq!(doc["command"], "sla", "the job ran as sla: {}", doc["warnings"]);
    assert!(warning_codes(&doc).contains(&"latency-target-as-sla".to_string()), "{}", doc["warnings"]);
    let sla = &doc["sla"];
    assert_eq!(u64_at(sla, "latency_ns"), 1_000_000);
    let best = &sla["best"];
    assert!(best["feasible"].as_bool() == Some(true) && f64_at(best, "metric_ns") < 1e6, "{best}");
    // fio searches the depth up to iodepth: no point beyond 8 in flight.
    let qds: Vec<u64> = sla["points"].as_array().expect("points").iter().map(|p| u64_at(p, "qd")).collect();
    assert!(!qds.is_empty() && qds.iter().all(|&q| q <= 8), "{qds:?}");
    // Only on its own: with another job it is refused.
    write_job(dir.path(), "runtime=1s\n[j]\nlatency_target=1ms\n[k]\n");
    let o = expect_code(dm_in(dir.path()).args(["run", "jobs.fio"]), 2);
    assert!(
        stderr_of(&o).contains("latency_target in job [j] runs the job as diskmeter's sla search"),
        "{}",
        stderr_of(&o)
    );
}

#[test]
fn flow_keeps_jobs_in_the_ratio_of_their_weights() {
    // fio's flow: jobs of one flow_id do I/O in the ratio of their flow weights; another
    // flow_id is not held back by them.
    let dir = tempdir();
    let doc = run_file(
        dir.path(),
        "[global]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\nruntime=0.5\ntime_based\nflow_sleep=100\n\
         [one]\nflow=1\n[three]\nflow=3\n[free]\nflow_id=7\nflow=1\n",
    );
    let (one, three, free) =
        (read_ops(by_name(&doc, "one")), read_ops(by_name(&doc, "three")), read_ops(by_name(&doc, "free")));
    let ratio = three as f64 / one as f64;
    assert!((ratio - 3.0).abs() < 0.15, "flow=3 against flow=1: {three} / {one} = {ratio:.3}");
    // (free and three both run flat out, so which is faster depends on the scheduler on a busy
    // machine; free is never held to one's share.)
    assert!(
        free > 2 * one,
        "a job alone in its flow_id runs unregulated: {free} vs {one} (held to a third of {three})"
    );
}

#[test]
fn directory_and_filesize_place_and_size_the_jobs_file() {
    // fio's directory: the job's file is DIR/JOB.0.0; filesize is the file, size the bytes moved.
    let dir = tempdir();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).expect("mkdir");
    std::fs::write(
        dir.path().join("d.fio"),
        format!(
            "[global]\ndirectory={}\nfilesize=1m\nsize=4m\nbs=64k\n[w]\nrw=write\nioengine=psync\n",
            data.display()
        ),
    )
    .expect("job");
    let doc = run_json(dm_in(dir.path()).env_remove("DISKMETER_FAULTS").args(["run", "d.fio"]));
    assert_eq!(doc["target"]["path"], data.join("w.0.0").display().to_string(), "{}", doc["target"]);
    assert_eq!(doc["target"]["size_bytes"], 1 << 20);
    let w = &results(&doc)[0]["write"];
    assert_eq!(u64_at(w, "bytes"), 4 << 20, "size=4m moved over the 1 MiB file");
    assert!(!data.join("w.0.0").exists(), "diskmeter's own test file is removed afterwards");
}

#[test]
fn per_io_logs_without_log_avg_msec_hold_every_completion() {
    // fio's default log_avg_msec=0: one line per I/O, `time, value, dir, bs, offset, prio` with
    // log_offset. 512 reads of a 2 MiB io_size: 512 lines in each file, offsets on the 4 KiB grid
    // inside the 4 MiB file, the bw value fio's bytes × 10⁶ / latency of the same line.
    let dir = tempdir();
    let data = dir.path().join("data");
    std::fs::write(&data, vec![7u8; 4 << 20]).expect("data");
    let job = format!(
        "[j]\nfilename={}\nsize=4m\nbs=4k\nrw=randread\nioengine=psync\nio_size=2m\nwrite_lat_log=x\n\
         write_bw_log=x\nwrite_iops_log=x\nlog_offset=1\n",
        data.display()
    );
    std::fs::write(dir.path().join("j.fio"), &job).expect("job");
    let doc = run_json(dm_in(dir.path()).args(["run", "j.fio", "--overwrite"]));
    assert_eq!(u64_at(&results(&doc)[0]["read"], "ops"), 512);
    let mut files = entries(dir.path());
    files.retain(|f| f.ends_with(".log"));
    assert_eq!(files, ["x_bw.1.log", "x_clat.1.log", "x_iops.1.log", "x_lat.1.log", "x_slat.1.log"]);
    let lat = log_rows(&dir.path().join("x_lat.1.log"));
    let bw = log_rows(&dir.path().join("x_bw.1.log"));
    let iops = log_rows(&dir.path().join("x_iops.1.log"));
    assert_eq!((lat.len(), bw.len(), iops.len()), (512, 512, 512));
    assert_eq!(log_rows(&dir.path().join("x_clat.1.log")), lat, "clat is diskmeter's one latency too");
    for ((l, b), i) in lat.iter().zip(&bw).zip(&iops) {
        assert_eq!(l.len(), 6, "{l:?}");
        let (t, ns, d, bs, off) = (l[0], l[1], l[2], l[3], l[4]);
        assert_eq!((d, bs, off % 4096, l[5]), (0, 4096, 0, 0), "{l:?}");
        assert!(off + 4096 <= 4 << 20 && ns > 0 && t < 60_000, "{l:?}");
        assert_eq!(b[..], [t, 4096 * 1_000_000 / ns, 0, 4096, off, 0], "bw from the same I/O");
        assert_eq!(i[..], [t, 1, 0, 4096, off, 0]);
    }
    assert!(lat.windows(2).all(|w| w[0][0] <= w[1][0]), "in completion order");
    if let Some(fio) = find_tool("fio") {
        // fio's own files for the same job: the same names and line counts.
        let fdir = dir.path().join("fio");
        std::fs::create_dir(&fdir).expect("mkdir");
        let o =
            std::process::Command::new(fio).current_dir(&fdir).arg(dir.path().join("j.fio")).output().expect("run fio");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut theirs = entries(&fdir);
        theirs.retain(|f| f.ends_with(".log"));
        assert_eq!(theirs, files, "fio writes the same files");
        for f in &files {
            let ours = std::fs::read_to_string(dir.path().join(f)).expect("ours");
            let fios = std::fs::read_to_string(fdir.join(f)).expect("fio's");
            assert_eq!(ours.lines().count(), fios.lines().count(), "{f}");
            let cols = |s: &str| s.lines().next().map(|l| l.split(',').count());
            assert_eq!(cols(&ours), cols(&fios), "{f}: the same columns");
        }
    } else {
        skip_note("fio is not installed: per-I/O logs were not compared with fio's");
    }
}
