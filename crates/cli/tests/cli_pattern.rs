//! fio's access-pattern options, end to end: each job file's effect is measured in the
//! result (the block-size histogram, bytes per direction) and, where fio is installed,
//! compared with what fio itself does with the same job (`norandommap`, which is how
//! diskmeter always draws random offsets).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// Run `body` as a job file in `dir` and return the JSON document.
fn run_job(dir: &Path, body: &str, extra: &[&str]) -> Value {
    std::fs::write(dir.join("jobs.fio"), body).expect("write job file");
    run_json(dm_in(dir).args(["run", "jobs.fio", "--no-ceiling-check"]).args(extra))
}

/// `(bs, reads, writes)` of a result's block-size histogram.
fn histogram(r: &Value) -> Vec<(u64, u64, u64)> {
    r["block_sizes"]
        .as_array()
        .unwrap_or_else(|| panic!("no block_sizes in {r}"))
        .iter()
        .map(|e| (u64_at(e, "bs"), u64_at(e, "reads"), u64_at(e, "writes")))
        .collect()
}

/// Bytes per I/O of one direction of fio's JSON output for `body`, or `None` (with a note)
/// when fio is not installed.
fn fio_bytes_per_io(dir: &Path, body: &str, dir_name: &str) -> Option<f64> {
    let Some(fio) = find_tool("fio") else {
        eprintln!("note: fio is not installed; the comparison with fio is skipped");
        return None;
    };
    std::fs::write(dir.join("fio.fio"), body).expect("write fio job file");
    let o = std::process::Command::new(fio)
        .current_dir(dir)
        .args(["--output-format=json", "fio.fio"])
        .output()
        .expect("run fio");
    assert!(o.status.success(), "fio failed: {}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("fio JSON");
    let d = &v["jobs"][0][dir_name];
    Some(u64_at(d, "io_bytes") as f64 / u64_at(d, "total_ios") as f64)
}

#[test]
fn bssplit_sends_each_size_its_share_as_fio_does() {
    let dir = tempdir();
    let job = "[split]\nioengine=null\nrw=randread\nsize=256m\nnorandommap\nbssplit=4k/10:64k/50:32k/40\n";
    let doc = run_job(dir.path(), job, &[]);
    let r = &results(&doc)[0];
    let h = histogram(r);
    assert_eq!(h.iter().map(|e| e.0).collect::<Vec<_>>(), [4096, 32768, 65536], "smallest first");
    let ops = u64_at(&r["read"], "ops");
    assert_eq!(h.iter().map(|e| e.1).sum::<u64>(), ops, "every read is in the histogram");
    assert!(h.iter().all(|e| e.2 == 0), "no writes");
    for ((bs, reads, _), pct) in h.iter().zip([10.0, 40.0, 50.0]) {
        let share = *reads as f64 * 100.0 / ops as f64;
        assert!((share - pct).abs() < 1.5, "{bs}: {share:.2} % of reads, want {pct} %");
    }
    let bytes = u64_at(&r["read"], "bytes");
    assert_eq!(bytes, h.iter().map(|e| e.0 * e.1).sum::<u64>(), "bytes are the real lengths");
    assert!((256 << 20..(256 << 20) + 65536).contains(&bytes), "the region once: {bytes}");
    let ours = bytes as f64 / ops as f64;
    let want = 0.1 * 4096.0 + 0.5 * 65536.0 + 0.4 * 32768.0;
    assert!((ours / want - 1.0).abs() < 0.03, "{ours:.0} bytes per read, want about {want}");
    if let Some(fio) = fio_bytes_per_io(dir.path(), job, "read") {
        assert!((ours / fio - 1.0).abs() < 0.04, "diskmeter {ours:.0} vs fio {fio:.0} bytes per read");
    }
    let text = String::from_utf8_lossy(
        &expect_code(dm_in(dir.path()).args(["run", "jobs.fio", "--no-ceiling-check"]), 0).stdout,
    )
    .to_string();
    assert!(text.contains("bssplit 4K/10:64K/50:32K/40"), "{text}");
    assert!(text.contains("block sizes: 4K ") && text.contains(" % · 64K "), "{text}");
}

#[test]
fn per_direction_block_sizes_and_splits() {
    let dir = tempdir();
    let job = "[rw]\nioengine=null\nrw=randrw\nsize=64m\nnorandommap\nbs=4k,64k\n";
    let doc = run_job(dir.path(), job, &[]);
    let r = &results(&doc)[0];
    let (rops, wops) = (u64_at(&r["read"], "ops"), u64_at(&r["write"], "ops"));
    assert_eq!(u64_at(&r["read"], "bytes"), rops * 4096, "reads are 4 KiB");
    assert_eq!(u64_at(&r["write"], "bytes"), wops * 65536, "writes are 64 KiB");
    assert_eq!(histogram(r), [(4096, rops, 0), (65536, 0, wops)]);
    assert_eq!(r["spec"]["bs"], 65536, "bs is the largest size, what buffers hold");
    if let Some(f) = fio_bytes_per_io(dir.path(), job, "write") {
        assert_eq!(f, 65536.0, "fio's writes are 64 KiB too");
    }

    // Reads split 2k/4k evenly, writes 4k (90 %) and 8k (the remaining 10 %).
    let job = "[split]\nioengine=null\nrw=randrw\nsize=64m\nbssplit=2k/50:4k/50,4k/90:8k/\n";
    let doc = run_job(dir.path(), job, &[]);
    let r = &results(&doc)[0];
    let h = histogram(r);
    assert_eq!(h.iter().map(|e| e.0).collect::<Vec<_>>(), [2048, 4096, 8192]);
    let (rops, wops) = (u64_at(&r["read"], "ops") as f64, u64_at(&r["write"], "ops") as f64);
    let share = |n: u64, of: f64| n as f64 * 100.0 / of;
    assert!((share(h[0].1, rops) - 50.0).abs() < 2.0 && h[0].2 == 0, "{h:?}");
    assert!((share(h[1].2, wops) - 90.0).abs() < 2.0, "{h:?}");
    assert!((share(h[2].2, wops) - 10.0).abs() < 2.0 && h[2].1 == 0, "{h:?}");
}

#[test]
fn bsrange_sizes_are_uniform_multiples_of_the_minimum_on_a_file() {
    let dir = tempdir();
    let job = "[range]\nioengine=psync\ndirect=0\nfilename=data.bin\nrw=write\nsize=4m\nbsrange=4k-16k\n";
    let doc = run_job(dir.path(), job, &[]);
    let r = &results(&doc)[0];
    let h = histogram(r);
    assert_eq!(h.iter().map(|e| e.0).collect::<Vec<_>>(), [4096, 8192, 12288, 16384]);
    let ops = u64_at(&r["write"], "ops");
    for (bs, _, w) in &h {
        let share = *w as f64 * 100.0 / ops as f64;
        assert!((share - 25.0).abs() < 6.0, "{bs}: {share:.1} % of {ops} writes");
    }
    let bytes = u64_at(&r["write"], "bytes");
    assert!((4 << 20..(4 << 20) + 16384).contains(&bytes), "the file once: {bytes}");
    assert_eq!(r["spec"]["size"], 4 << 20);
    if let Some(fio) =
        fio_bytes_per_io(dir.path(), "[range]\nioengine=null\nrw=write\nsize=64m\nbsrange=4k-16k\n", "write")
    {
        let ours = bytes as f64 / ops as f64;
        assert!((ours / fio - 1.0).abs() < 0.1, "diskmeter {ours:.0} vs fio {fio:.0} bytes per write");
    }
}

#[test]
fn bs_unaligned_sizes_are_not_multiples_of_the_minimum() {
    let dir = tempdir();
    // The null engine has no direct-I/O unit: sizes go by the byte.
    let job = "[u]\nioengine=null\nrw=randread\nsize=16m\nbsrange=1k-2k\nbs_unaligned\nblockalign=512\n";
    let doc = run_job(dir.path(), job, &[]);
    let h = histogram(&results(&doc)[0]);
    assert!(h.len() > 100, "many sizes between 1k and 2k: {}", h.len());
    assert!(h.iter().all(|e| (1024..=2048).contains(&e.0)));
    assert!(h.iter().any(|e| e.0 % 512 != 0));
    // Without bs_unaligned only the multiples of 1k.
    let doc = run_job(dir.path(), "[a]\nioengine=null\nrw=randread\nsize=16m\nbsrange=1k-2k\n", &[]);
    assert_eq!(histogram(&results(&doc)[0]).iter().map(|e| e.0).collect::<Vec<_>>(), [1024, 2048]);
}

#[test]
fn variable_sizes_run_on_the_mem_engine() {
    let dir = tempdir();
    let job = "[m]\nrw=randrw\nsize=16m\nbssplit=4k/50:64k/50\nruntime=200ms\ntime_based\n";
    let doc = run_job(dir.path(), job, &["--engine", "mem"]);
    let r = &results(&doc)[0];
    assert_eq!(r["spec"]["engine"], "mem");
    let h = histogram(r);
    let bytes = u64_at(&r["read"], "bytes") + u64_at(&r["write"], "bytes");
    assert_eq!(bytes, h.iter().map(|e| e.0 * (e.1 + e.2)).sum::<u64>());
    assert!(h.len() == 2 && h.iter().all(|e| e.1 > 0 && e.2 > 0), "{h:?}");
}

#[test]
fn single_size_jobs_carry_no_histogram() {
    let dir = tempdir();
    let doc = run_job(dir.path(), "[one]\nioengine=null\nrw=randread\nsize=4m\nbs=8k,8k\n", &[]);
    let r = &results(&doc)[0];
    assert!(r.get("block_sizes").is_none(), "{r}");
    assert!(r["spec"].get("block_sizes").is_none());
    assert_eq!(u64_at(&r["read"], "bytes"), u64_at(&r["read"], "ops") * 8192);
}

#[test]
fn block_size_errors_name_the_option_and_line() {
    let dir = tempdir();
    for (body, want) in [
        ("[j]\nioengine=null\nbssplit=4k/50:8k/40\n", "jobs.fio:3: invalid value for bssplit"),
        ("[j]\nioengine=null\nbsrange=8k-4k\n", "jobs.fio:3: invalid value for bsrange"),
        (
            "[j]\nioengine=null\nbs=4k,1000\n",
            "jobs.fio:3: invalid value for bs in job [j]: the block size 1000 is not a multiple of 512",
        ),
    ] {
        std::fs::write(dir.path().join("jobs.fio"), body).expect("write job file");
        let o = expect_code(dm_in(dir.path()).args(["run", "jobs.fio"]), 2);
        assert!(stderr_of(&o).contains(want), "{body:?}: {}", stderr_of(&o));
    }
}

#[test]
fn size_and_offset_in_percent_write_only_that_share_of_the_file() {
    let dir = tempdir();
    let mib = 1u64 << 20;
    std::fs::write(dir.path().join("data.bin"), vec![0u8; 8 << 20]).expect("data file");
    let job = "[p]\nioengine=psync\ndirect=0\nfilename=data.bin\nrw=write\nsize=50%\noffset=25%\n";
    let doc = run_job(dir.path(), job, &["--overwrite"]);
    let r = &results(&doc)[0];
    assert_eq!((u64_at(&r["spec"], "offset"), u64_at(&r["spec"], "size")), (2 * mib, 4 * mib));
    assert_eq!(u64_at(&r["write"], "bytes"), 4 * mib);
    let data = std::fs::read(dir.path().join("data.bin")).expect("data file");
    assert_eq!(data.len() as u64, 8 * mib);
    let chunks: Vec<bool> = data.chunks(4096).map(|c| c.iter().any(|&b| b != 0)).collect();
    let (first, last) = ((2 * mib / 4096) as usize, (6 * mib / 4096) as usize);
    assert!(chunks[..first].iter().all(|w| !w), "nothing written before 25 %");
    assert!(chunks[first..last].iter().all(|w| *w), "every block of 25 %..75 % written");
    assert!(chunks[last..].iter().all(|w| !w), "nothing written after 75 %");
}

/// Which 4 KiB blocks of `file` hold anything but zeros.
fn written_blocks(file: &Path) -> Vec<u64> {
    let data = std::fs::read(file).expect("data file");
    data.chunks(4096).enumerate().filter(|(_, c)| c.iter().any(|&b| b != 0)).map(|(i, _)| i as u64).collect()
}

/// The 4 KiB blocks fio's iolog says `body` writes (fio on the null engine), or `None` (with a
/// note) when fio is not installed.
fn fio_written_blocks(dir: &Path, body: &str) -> Option<Vec<u64>> {
    let Some(fio) = find_tool("fio") else {
        eprintln!("note: fio is not installed; the comparison with fio is skipped");
        return None;
    };
    std::fs::write(dir.join("fio.fio"), format!("{body}ioengine=null\nwrite_iolog=fio.log\n")).expect("job");
    let _ = std::fs::remove_file(dir.join("fio.log")); // fio appends to an existing log
    let o =
        std::process::Command::new(fio).current_dir(dir).args(["--output=/dev/null", "fio.fio"]).output().expect("fio");
    assert!(o.status.success(), "fio failed: {}", String::from_utf8_lossy(&o.stderr));
    let log = std::fs::read_to_string(dir.join("fio.log")).expect("fio iolog");
    let mut blocks: Vec<u64> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "write").then(|| f[3].parse::<u64>().expect("offset") / 4096)
        })
        .collect();
    blocks.sort_unstable();
    blocks.dedup();
    Some(blocks)
}

/// Run `job` (psync, buffered) writing to a zeroed 64 KiB or 1 MiB file and return the
/// blocks it wrote.
fn run_on_zero_file(dir: &Path, job: &str, size: usize) -> Vec<u64> {
    std::fs::write(dir.join("data.bin"), vec![0u8; size]).expect("data file");
    let body = format!("[w]\nioengine=psync\ndirect=0\nfilename=data.bin\nbs=4k\n{job}");
    run_job(dir, &body, &["--overwrite"]);
    written_blocks(&dir.join("data.bin"))
}

#[test]
fn sequential_offset_modifiers_skip_and_walk_backwards_as_fio_does() {
    let dir = tempdir();
    // rw=write:4k: every other block (fio writes 0, 8k, … 56k, then again from 0).
    let holes = run_on_zero_file(dir.path(), "rw=write:4k\nsize=64k\n", 64 << 10);
    assert_eq!(holes, [0, 2, 4, 6, 8, 10, 12, 14]);
    if let Some(f) = fio_written_blocks(dir.path(), "[w]\nbs=4k\nrw=write:4k\nsize=64k\n") {
        assert_eq!(holes, f, "the same blocks as fio");
    }
    // rw=write:-8k, 8 writes: 0, then backwards from the end: 56k, 52k, … 32k.
    let back = run_on_zero_file(dir.path(), "rw=write:-8k\nsize=64k\nio_size=32k\n", 64 << 10);
    assert_eq!(back, [0, 8, 9, 10, 11, 12, 13, 14]);
    if let Some(f) = fio_written_blocks(dir.path(), "[w]\nbs=4k\nrw=write:-8k\nsize=64k\nio_size=32k\n") {
        assert_eq!(back, f, "the same blocks as fio");
    }
}

#[test]
fn random_offset_modifiers_follow_or_repeat_the_random_offset() {
    let dir = tempdir();
    // 64 writes, a new random offset every 8: runs of 8 consecutive blocks.
    let seq = run_on_zero_file(dir.path(), "rw=randwrite:8\nsize=1m\nio_size=256k\n", 1 << 20);
    let runs = seq.windows(2).filter(|w| w[1] != w[0] + 1).count() + 1;
    assert!(seq.len() > 32 && runs <= 8, "{} blocks in {runs} runs: {seq:?}", seq.len());
    // rw_sequencer=identical: each random offset written 8 times, so at most 8 blocks.
    let same = run_on_zero_file(dir.path(), "rw=randwrite:8\nrw_sequencer=identical\nsize=1m\nio_size=256k\n", 1 << 20);
    assert!(!same.is_empty() && same.len() <= 8, "{same:?}");
    // percentage_random=0: a random job that is fully sequential after its first offset.
    let seq0 = run_on_zero_file(dir.path(), "rw=randwrite\npercentage_random=0\nsize=1m\nio_size=128k\n", 1 << 20);
    assert_eq!(seq0.len(), 32);
    assert!(seq0.windows(2).filter(|w| w[1] != w[0] + 1).count() <= 1, "one run, or two around the end: {seq0:?}");
}

#[test]
fn normal_and_zoned_abs_distributions_place_the_writes() {
    let dir = tempdir();
    // normal:5 around the middle: 4 KiB writes into a 4 MiB file (1024 blocks) stay within
    // about three deviations (15 %) of the center.
    let blocks =
        run_on_zero_file(dir.path(), "rw=randwrite\nrandom_distribution=normal:5\nsize=4m\nio_size=1m\n", 4 << 20);
    let near = blocks.iter().filter(|&&b| (358..666).contains(&b)).count();
    assert!(!blocks.is_empty() && near == blocks.len(), "{} of {} blocks near the middle", near, blocks.len());
    assert!(blocks.iter().any(|&b| b < 460) && blocks.iter().any(|&b| b > 564), "spread around the center");
    // zoned_abs: every write within the first 256 KiB (64 blocks) of the 1 MiB file.
    let blocks = run_on_zero_file(
        dir.path(),
        "rw=randwrite\nrandom_distribution=zoned_abs:100/256k\nsize=1m\nio_size=512k\n",
        1 << 20,
    );
    assert!(blocks.len() > 40 && blocks.iter().all(|&b| b < 64), "{blocks:?}");
}

#[test]
fn randrepeat_repeats_the_offsets_and_randrepeat_0_does_not() {
    let dir = tempdir();
    let job = |repeat: u8| format!("rw=randwrite\nsize=4m\nio_size=128k\nrandrepeat={repeat}\n");
    let a = run_on_zero_file(dir.path(), &job(1), 4 << 20);
    let b = run_on_zero_file(dir.path(), &job(1), 4 << 20);
    assert_eq!(a, b, "randrepeat=1: the same blocks each run");
    let c = run_on_zero_file(dir.path(), &job(0), 4 << 20);
    let d = run_on_zero_file(dir.path(), &job(0), 4 << 20);
    assert!(c != d && c != a, "randrepeat=0: other blocks each run");
}

#[test]
fn strided_zones_write_the_blocks_fio_writes() {
    let dir = tempdir();
    let zones = "zonemode=strided\nzonesize=16k\nzonerange=64k\nzoneskip=64k\n";
    let blocks = run_on_zero_file(dir.path(), &format!("rw=write\nsize=1m\nio_size=128k\n{zones}"), 1 << 20);
    let want: Vec<u64> = (0..8).flat_map(|z| (0..4).map(move |i| z * 32 + i)).collect();
    assert_eq!(blocks, want, "4 blocks at the start of every 128 KiB");
    if let Some(f) = fio_written_blocks(dir.path(), &format!("[w]\nbs=4k\nrw=write\nsize=1m\nio_size=128k\n{zones}")) {
        assert_eq!(blocks, f, "the same blocks as fio");
    }
}

#[test]
fn fill_device_ends_successfully_when_the_target_is_full() {
    let dir = tempdir();
    // Null engine: every write after the 300th fails with ENOSPC.
    std::fs::write(dir.path().join("jobs.fio"), "[fill]\nioengine=null\nrw=write\nsize=64m\nfill_device=1\n")
        .expect("job");
    let doc = run_json(dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "enospc@300").args(["run", "jobs.fio"]));
    let r = &results(&doc)[0];
    assert!(doc.get("error").is_none_or(Value::is_null), "a full target ends a fill: {}", doc["error"]);
    assert!(r.get("error").is_none_or(Value::is_null));
    assert_eq!(u64_at(&r["write"], "ops"), 300);
    // The same without fill_device is a fault (exit 1).
    std::fs::write(dir.path().join("jobs.fio"), "[w]\nioengine=null\nrw=write\nsize=64m\n").expect("job");
    expect_code(dm_in(dir.path()).env("DISKMETER_NULL_FAULT", "enospc@300").args(["run", "jobs.fio", "--json"]), 1);
    // fill_fs needs sequential writes.
    std::fs::write(dir.path().join("jobs.fio"), "[r]\nioengine=null\nrw=randwrite\nfill_fs=1\n").expect("job");
    let o = expect_code(dm_in(dir.path()).args(["run", "jobs.fio"]), 2);
    assert!(
        stderr_of(&o).contains("jobs.fio:4: invalid value for fill_device in job [r]: fill_device fills"),
        "{}",
        stderr_of(&o)
    );
}

#[test]
fn fill_fs_writes_a_small_file_system_full_like_fio() {
    if !is_root() {
        skip_note("not root; the fill_fs test on a small tmpfs is skipped");
        return;
    }
    let work = tempdir();
    let mnt = work.path().join("mnt");
    let Some(guard) = Tmpfs::mount(&mnt, "8m") else {
        skip_note("cannot mount a tmpfs here; skipped");
        return;
    };
    let job = format!(
        "[fill]\nioengine=psync\ndirect=0\nfilename={}/f\nrw=write\nbs=64k\nsize=1m\nfill_fs=1\n",
        mnt.display()
    );
    let doc = run_job(work.path(), &job, &[]);
    let r = &results(&doc)[0];
    assert!(doc.get("error").is_none_or(Value::is_null), "{}", doc["error"]);
    let bytes = u64_at(&r["write"], "bytes");
    assert!((7 << 20..=8 << 20).contains(&bytes), "wrote {bytes} bytes to an 8 MiB file system");
    if let Some(fio) = find_tool("fio") {
        let _ = std::fs::remove_file(mnt.join("f"));
        let fjob =
            format!("[fill]\nioengine=psync\ndirect=0\nfilename={}/g\nrw=write\nbs=64k\nfill_fs=1\n", mnt.display());
        std::fs::write(work.path().join("fio.fio"), fjob).expect("job");
        let v = fio_json(&fio, work.path(), "fio.fio");
        let fio_bytes = u64_at(&v["jobs"][0]["write"], "io_bytes");
        assert!(bytes.abs_diff(fio_bytes) <= 1 << 20, "diskmeter {bytes} vs fio {fio_bytes} bytes");
    } else {
        eprintln!("note: fio is not installed; the comparison with fio is skipped");
    }
    drop(guard);
}

#[test]
fn offset_increment_gives_each_worker_its_own_region() {
    let dir = tempdir();
    // 4 workers, 16 KiB each, 256 KiB apart: blocks 0-3, 64-67, 128-131, 192-195 of the file.
    let blocks = run_on_zero_file(dir.path(), "rw=write\nnumjobs=4\nsize=16k\noffset_increment=256k\n", 1 << 20);
    let want: Vec<u64> = (0..4).flat_map(|w| (0..4).map(move |i| w * 64 + i)).collect();
    assert_eq!(blocks, want);
    let dir2 = tempdir();
    std::fs::write(dir2.path().join("data.bin"), vec![0u8; 1 << 20]).expect("data file");
    std::fs::write(
        dir2.path().join("jobs.fio"),
        "[w]\nioengine=psync\ndirect=0\nfilename=data.bin\nrw=write\nnumjobs=4\noffset_increment=512k\n",
    )
    .expect("job");
    let o = expect_code(dm_in(dir2.path()).args(["run", "jobs.fio", "--overwrite"]), 2);
    assert!(stderr_of(&o).contains("offset_increment=524288 puts the last of 4 workers"), "{}", stderr_of(&o));
}
