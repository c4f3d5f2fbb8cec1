//! The figures of `diskmeter top` against sysstat's formulas, from two real /proc/diskstats
//! captures of this project's build machine (vda under a 4k random-read load) taken 1.01 s
//! apart by /proc/uptime. The expected values are computed by hand from the deltas as
//! iostat 12.6 computes them (S_VALUE(Δ, itv) = Δ / itv · 100 with itv in 1/100 s).
#![allow(clippy::unwrap_used)]

use diskmeter_monitor::devices::Filter;
use diskmeter_monitor::sample::{parse_uptime_cs, Sample};
use diskmeter_monitor::{Monitor, Options};

fn sample(n: u32) -> Sample {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let ds = std::fs::read_to_string(format!("{dir}/diskstats.{n}")).unwrap();
    let up = std::fs::read_to_string(format!("{dir}/uptime.{n}")).unwrap();
    Sample {
        t: 1_795_333_000.0 + f64::from(n),
        uptime_cs: parse_uptime_cs(&up).unwrap(),
        diskstats: ds.lines().map(str::to_string).collect(),
        psi: None,
        procs: None,
        devices: vec![],
    }
}

fn close(got: f64, want: f64) {
    // The report rounds to 4 decimals.
    assert!((got - want).abs() <= 5e-5 + want.abs() * 1e-12, "got {got}, want {want}");
}

#[test]
fn vda_matches_sysstat_formulas() {
    let mut m = Monitor::new(Options {
        filter: Filter { names: vec!["vda".into()], ..Filter::default() },
        ..Options::default()
    });
    assert!(m.push(&sample(1)).is_none(), "the first sample is the baseline");
    let r = m.push(&sample(2)).unwrap();
    // uptime 18755.75 → 18756.76: itv = 101 cs.
    assert_eq!(r.interval_s, 1.01);
    assert_eq!(r.devices.len(), 1);
    let d = &r.devices[0];
    assert_eq!(d.name, "vda");
    let m = &d.iostat;
    // Δreads = 339348779 − 339240177 = 108602; Δms_reading = 108536902 − 108533924 = 2978;
    // Δsectors = 3815117544 − 3814248728 = 868816; Δio_ticks = 4059640 − 4058712 = 928;
    // Δtime_in_queue = 119146793 − 119143815 = 2978; no writes, discards or flushes.
    close(m.r_s, 108602.0 / 101.0 * 100.0); // 107526.7327
    close(m.r_s, 107526.7327);
    close(m.rkb_s, 430106.9307); // 868816 / 101 · 100 / 2
    close(m.r_await, 0.0274); // 2978 / 108602
    close(m.rareq_sz, 4.0); // 868816 / 108602 / 2
    close(m.aqu_sz, 2.9485); // 2978 / 101 · 100 / 1000
    close(m.util, 91.8812); // 928 / 101 · 100 / 10
    close(m.rrqm_s, 0.0);
    close(m.rrqm_pct, 0.0);
    close(m.w_s, 0.0);
    close(m.w_await, 0.0); // no writes: 0, not NaN
    close(m.f_await, 0.0);
    assert_eq!(d.inflight, 4);
    assert_eq!(d.perfmon.current_queue, 4);
    close(d.perfmon.transfers_sec, 107526.7327);
    close(d.perfmon.bytes_per_transfer, 4096.0);
    close(d.perfmon.sec_per_transfer * 1000.0, 0.0274);
    close(d.perfmon.idle_pct, 100.0 - 91.8812); // perfmon's % Idle Time: the rest of %util
}

#[test]
fn unused_devices_are_not_listed_and_partitions_never_join_their_disk() {
    let mut m = Monitor::new(Options {
        filter: Filter { all_devices: true, partitions: true, ..Filter::default() },
        ..Options::default()
    });
    m.push(&sample(1));
    let r = m.push(&sample(2)).unwrap();
    let names: Vec<&str> = r.devices.iter().map(|d| d.name.as_str()).collect();
    // loop3..7 and zram0 never did I/O; iostat hides them too.
    assert_eq!(names, ["loop0", "loop1", "loop2", "vda"]);
}

/// The 14- and 18-column layouts (older kernels, partitions) give the same read figures.
#[test]
fn fourteen_and_eighteen_columns_agree_on_reads() {
    for cols in [14usize, 18] {
        let cut = |s: Sample| Sample {
            diskstats: s
                .diskstats
                .iter()
                .map(|l| l.split_whitespace().take(cols).collect::<Vec<_>>().join(" "))
                .collect(),
            ..s
        };
        let mut m = Monitor::new(Options {
            filter: Filter { names: vec!["vda".into()], ..Filter::default() },
            ..Options::default()
        });
        m.push(&cut(sample(1)));
        let r = m.push(&cut(sample(2))).unwrap();
        close(r.devices[0].iostat.r_s, 107526.7327);
        close(r.devices[0].iostat.r_await, 0.0274);
        assert_eq!(r.devices[0].iostat.f_s, 0.0);
    }
}

#[test]
fn since_boot_uses_the_whole_uptime() {
    let mut m = Monitor::new(Options {
        filter: Filter { names: vec!["vda".into()], ..Filter::default() },
        since_boot: true,
        ..Options::default()
    });
    let r = m.push(&sample(1)).unwrap();
    close(r.interval_s, 18755.75);
    close(r.devices[0].iostat.r_s, 339240177.0 / 1875575.0 * 100.0);
    close(r.devices[0].iostat.r_await, 108533924.0 / 339240177.0);
}

#[test]
fn a_device_re_added_reports_reset_not_garbage() {
    let mut m = Monitor::new(Options {
        filter: Filter { names: vec!["vda".into()], ..Filter::default() },
        ..Options::default()
    });
    m.push(&sample(1));
    let mut s = sample(2);
    s.diskstats = vec!["254 0 vda 10 0 80 3 0 0 0 0 0 5 3 0 0 0 0 0 0".into()];
    let r = m.push(&s).unwrap();
    let d = &r.devices[0];
    assert!(d.reset);
    assert_eq!(d.verdict.state.as_str(), "reset");
    assert_eq!(d.iostat.r_s, 0.0);
    // The next interval is normal again, from the new counters.
    let mut s3 = sample(2);
    s3.uptime_cs += 100;
    s3.diskstats = vec!["254 0 vda 110 0 880 13 0 0 0 0 0 105 13 0 0 0 0 0 0".into()];
    let r = m.push(&s3).unwrap();
    assert!(!r.devices[0].reset);
    close(r.devices[0].iostat.r_s, 100.0);
    close(r.devices[0].iostat.r_await, 0.1);
}
