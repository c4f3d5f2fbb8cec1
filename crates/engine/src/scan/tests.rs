//! The scan loop against image files, with injected faults. What `app::surface` adds (the
//! verdict, the bad-block list, the document) is tested there.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::error::EngineError;
use crate::io::buffers::fill_pattern;
use spec::DataPattern;
use stats::codes;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

const MIB: u64 = 1 << 20;

fn image(dir: &Path, name: &str, size: u64) -> PathBuf {
    let p = dir.join(name);
    let mut f = File::create(&p).unwrap();
    let mut rng = crate::io::offsets::worker_rng(42, 0, 0);
    let mut buf = vec![0u8; size as usize];
    fill_pattern(&mut buf, DataPattern::Random, &mut rng);
    f.write_all(&buf).unwrap();
    p
}

fn cfg() -> SurfaceConfig {
    // A floor of 1 s: no noise on a busy machine is ever flagged in tests that do not look
    // for slow blocks.
    SurfaceConfig { block: 256 << 10, access: 20, slow_floor: Duration::from_secs(1), ..SurfaceConfig::default() }
}

fn run(path: &Path, c: &SurfaceConfig, faults: &str) -> Scanned {
    let stop = AtomicBool::new(false);
    scan_with(path, c, &stop, &mut Quiet, Hook::parse(faults).unwrap()).unwrap()
}

fn surf(d: &Scanned) -> &SurfaceResult {
    &d.surface
}

#[test]
fn block_offsets_cover_or_sample_the_span() {
    assert_eq!(block_offsets(0, 4096, 1024, None), vec![0, 1024, 2048, 3072]);
    assert_eq!(block_offsets(100, 2500, 1000, None), vec![100, 1100, 2100]);
    assert_eq!(block_offsets(0, 10_000, 1000, Some(3)), vec![0, 4000, 9000]);
    assert_eq!(block_offsets(0, 10_000, 1000, Some(1)), vec![0]);
    assert_eq!(block_offsets(0, 3000, 1000, Some(50)).len(), 3);
}

#[test]
fn read_scan_covers_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 8 * MIB);
    let d = run(&p, &SurfaceConfig { zones: 10, ..cfg() }, "");
    let s = surf(&d);
    assert!(d.error.is_none());
    assert_eq!(s.scanned_bytes, 8 * MIB);
    assert_eq!(s.blocks, 32);
    assert_eq!(s.zones.len(), 10);
    assert_eq!(s.zones.iter().map(|z| z.size).sum::<u64>(), 8 * MIB);
    assert!(s.zones.iter().all(|z| z.mb_s.is_some_and(|x| x > 0.0)));
    assert_eq!(s.access.as_ref().unwrap().count, 20);
    assert_eq!(s.latency_map.as_ref().unwrap().max_ns.len(), 32);
    assert!(s.bad_sectors.is_empty() && s.slow_blocks.is_empty());
    assert!(s.seconds > 0.0);
    assert!(s.verdict.is_empty() && s.badblocks.is_none(), "the caller's");
}

#[test]
fn sample_mode_reads_n_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 8 * MIB);
    let d = run(&p, &SurfaceConfig { sample: Some(5), access: 0, ..cfg() }, "");
    let s = surf(&d);
    assert_eq!(s.blocks, 5);
    assert!(s.access.is_none());
    assert_eq!(s.latency_map.as_ref().unwrap().offsets[4], 8 * MIB - (256 << 10));
}

#[test]
fn eio_is_narrowed_to_the_sector() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 4 * MIB);
    let at = 3 * MIB + 5 * 512;
    let d = run(&p, &SurfaceConfig { access: 0, ..cfg() }, &format!("eio@{at}+512,read"));
    let s = surf(&d);
    assert!(d.error.is_none());
    assert_eq!(s.bad_sectors.len(), 1, "{:?}", s.bad_sectors);
    assert_eq!(s.bad_sectors[0].offset, at);
    assert_eq!(s.bad_sectors[0].error, "EIO");
    assert_eq!(s.bad_sectors[0].phase, "read");
    assert_eq!(s.bad_sectors[0].bytes, 512);
    // The failing block is left out of the rates; the others are there.
    assert_eq!(s.blocks, 15);
}

#[test]
fn slow_blocks_confirmed_and_transient() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 8 * MIB);
    let c = SurfaceConfig { access: 0, slow_floor: Duration::from_millis(100), ..cfg() };
    let d = run(&p, &c, &format!("slow@{}+1:300ms,read", 6 * MIB));
    let s = surf(&d);
    assert_eq!(s.slow_blocks.len(), 1, "{:?}", s.slow_blocks);
    assert_eq!(s.slow_blocks[0].offset, 6 * MIB);
    assert_eq!(s.slow_blocks[0].status, "confirmed");
    assert_eq!(s.slow_blocks[0].reread_ns.len(), 2);
    let d = run(&p, &c, &format!("slow@{}+1:300ms,read,first=1", 6 * MIB));
    let s = surf(&d);
    assert_eq!(s.slow_blocks.len(), 1);
    assert_eq!(s.slow_blocks[0].status, "transient");
}

#[test]
fn nondestructive_restores_and_detects_faults() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 4 * MIB);
    let before = std::fs::read(&p).unwrap();
    let c = SurfaceConfig { mode: Mode::NonDestructive, overwrite: true, access: 0, ..cfg() };
    let bad_w = MIB + 4096;
    let bad_v = 2 * MIB + 512;
    let d = run(&p, &c, &format!("eio@{bad_w}+512,write,first=2;corrupt@{bad_v}+16,write,first=1"));
    assert!(d.error.is_none(), "{:?}", d.error);
    let s = surf(&d);
    let found: Vec<(u64, &str)> = s.bad_sectors.iter().map(|b| (b.offset, b.phase.as_str())).collect();
    assert_eq!(found, vec![(bad_w, "write"), (bad_v, "verify")]);
    assert!(s.restore_failures.is_empty());
    // One zone per block here; the block whose write failed has no write rate.
    assert_eq!(s.zones.iter().filter(|z| z.write_mb_s.is_some()).count(), 15);
    assert_eq!(std::fs::read(&p).unwrap(), before, "the content must be unchanged");
    // Random pattern too.
    let d = run(&p, &SurfaceConfig { pattern: Pattern::Random, ..c }, "");
    assert!(surf(&d).bad_sectors.is_empty());
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn a_failed_restore_is_loud() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", MIB);
    let c = SurfaceConfig { mode: Mode::NonDestructive, overwrite: true, access: 0, ..cfg() };
    let d = run(&p, &c, &format!("eio@{}+512,write", 512 * 1024));
    let e = d.error.as_ref().unwrap();
    assert_eq!(e.kind, "restore");
    assert!(e.message.contains("COULD NOT RESTORE"), "{}", e.message);
    assert_eq!(surf(&d).restore_failures, vec![512 * 1024]);
}

#[test]
fn destructive_writes_every_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 2 * MIB);
    let c = SurfaceConfig { mode: Mode::Destructive, overwrite: true, access: 0, ..cfg() };
    let d = run(&p, &c, &format!("corrupt@{}+1,write,first=2", MIB));
    let s = surf(&d);
    let pats: Vec<&str> = s.passes.iter().map(|x| x.pattern.as_str()).collect();
    assert_eq!(pats, vec!["0xaa", "0x55", "0xff", "0x00"]);
    assert!(s.passes.iter().all(|x| x.write_bytes == 2 * MIB && x.read_bytes == 2 * MIB && !x.partial));
    // The corrupted byte shows in the first two passes, as one bad sector.
    assert_eq!(s.passes.iter().map(|x| x.bad_sectors).collect::<Vec<_>>(), vec![1, 1, 0, 0]);
    assert_eq!(s.bad_sectors.len(), 1);
    assert_eq!(s.bad_sectors[0].phase, "verify 0xaa");
    assert!(std::fs::read(&p).unwrap().iter().all(|&b| b == 0));
}

#[test]
fn writing_modes_need_overwrite_for_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", MIB);
    let before = std::fs::read(&p).unwrap();
    for mode in [Mode::NonDestructive, Mode::Destructive] {
        let stop = AtomicBool::new(false);
        let e = scan_with(&p, &SurfaceConfig { mode, ..cfg() }, &stop, &mut Quiet, Hook::default()).unwrap_err();
        assert!(matches!(e, EngineError::Invalid(Invalid::ScanWritesFile { .. })), "{e}");
    }
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn bad_input_against_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", MIB);
    let stop = AtomicBool::new(false);
    let err = |c: SurfaceConfig| match scan_with(&p, &c, &stop, &mut Quiet, Hook::default()) {
        Err(EngineError::Invalid(i)) => i,
        other => panic!("{:?}", other.err()),
    };
    assert!(matches!(err(SurfaceConfig { block: 1000, ..cfg() }), Invalid::ScanBlockUnaligned { block: 1000, .. }));
    assert!(matches!(err(SurfaceConfig { offset: 100, ..cfg() }), Invalid::ScanOffsetUnaligned { offset: 100, .. }));
    let past = err(SurfaceConfig { offset: 2 * MIB, ..cfg() });
    assert!(matches!(past, Invalid::ScanOffsetPastEnd { offset, size: MIB, .. } if offset == 2 * MIB));
    let long = err(SurfaceConfig { size: Some(2 * MIB), ..cfg() });
    assert!(matches!(long, Invalid::ScanSpanPastEnd { end, size: MIB, .. } if end == 2 * MIB));
    let missing = dir.path().join("nope");
    let e = scan_with(&missing, &cfg(), &stop, &mut Quiet, Hook::default()).unwrap_err();
    assert!(e.is_usage() && matches!(e, EngineError::Invalid(Invalid::ScanMissing { .. })));
}

#[test]
fn interrupted_and_vanished_keep_partial_results() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 4 * MIB);
    let stop = AtomicBool::new(true);
    let d = scan_with(&p, &cfg(), &stop, &mut Quiet, Hook::default()).unwrap();
    assert_eq!(d.error.as_ref().unwrap().kind, "interrupted");
    assert_eq!(surf(&d).blocks, 0);
    let d = run(&p, &cfg(), &format!("enodev@{}+1", 2 * MIB));
    assert_eq!(d.error.as_ref().unwrap().kind, "vanished");
    assert_eq!(surf(&d).scanned_bytes, 2 * MIB);
}

#[test]
fn span_offset_and_size() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 4 * MIB);
    let d = run(&p, &SurfaceConfig { offset: MIB, size: Some(MIB + 4096), zones: 4, ..cfg() }, "");
    let s = surf(&d);
    assert_eq!(s.scanned_bytes, MIB + 4096);
    assert_eq!(s.zones[0].offset, MIB);
    assert_eq!(s.zones.iter().map(|z| z.bytes).sum::<u64>(), MIB + 4096);
}

#[test]
fn queue_depth_reads_every_block_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = image(dir.path(), "t.img", 8 * MIB);
    let at = 5 * MIB + 512;
    let d = run(&p, &SurfaceConfig { qd: 4, zones: 8, ..cfg() }, &format!("eio@{at}+512,read"));
    let s = surf(&d);
    assert_eq!(s.qd, 4);
    assert_eq!(s.blocks, 31);
    assert_eq!(s.scanned_bytes, 8 * MIB - (256 << 10));
    assert_eq!(s.bad_sectors.iter().map(|b| b.offset).collect::<Vec<_>>(), vec![at]);
    let stop = AtomicBool::new(false);
    let c = SurfaceConfig { qd: 4, mode: Mode::NonDestructive, overwrite: true, ..cfg() };
    let e = scan_with(&p, &c, &stop, &mut Quiet, Hook::default()).unwrap_err();
    assert!(matches!(e, EngineError::Invalid(Invalid::ScanDepthWrites)), "{e}");
}

#[test]
fn holes_in_a_file_are_called_out() {
    let dir = tempfile::tempdir().unwrap();
    let written = image(dir.path(), "full.img", 2 * MIB);
    let codes_of = |d: &Scanned| d.warnings.iter().map(|w| w.0.clone()).collect::<Vec<_>>();
    assert!(!codes_of(&run(&written, &cfg(), "")).contains(&codes::UNWRITTEN_READ.to_string()));
    let sparse = dir.path().join("sparse.img");
    File::create(&sparse).unwrap().set_len(2 * MIB).unwrap();
    let d = run(&sparse, &cfg(), "");
    assert!(codes_of(&d).contains(&codes::UNWRITTEN_READ.to_string()), "{:?}", d.warnings);
}
