//! Round trips, every diagnosis class built by hand, properties, and the state file.
#![allow(clippy::unwrap_used)]

use super::diagnose::DUMP_BYTES;
use super::state::parse_state;
use super::*;
use proptest::prelude::*;

const RUN: u64 = 0x0123_4567_89ab_cdef;
const SEED: u64 = 0x5eed;
const JOB: u32 = 2;
const PAT: &[u8] = &[0xde, 0xad, 0xbe, 0xef, 0x42];
const SIZES: [usize; 3] = [512, 4096, 65536];
/// Kinds with a payload digest (every single-bit flip is caught).
const DIGEST_KINDS: [CheckKind; 6] =
    [CheckKind::Crc32c, CheckKind::Md5, CheckKind::Sha1, CheckKind::Sha256, CheckKind::Xxhash, CheckKind::Pattern];

fn ctx(kind: CheckKind) -> Context<'static> {
    Context { run_seed: SEED, kind, pattern: PAT }
}

fn fields(offset: u64, generation: u32, run_id: u64) -> HeaderFields {
    HeaderFields {
        offset,
        job: JOB,
        generation,
        worker: 3,
        timestamp_ns: 1_790_000_000_123_456_789,
        seed: payload_seed(SEED, offset, generation),
        run_id,
    }
}

fn stamped_run(len: usize, offset: u64, generation: u32, kind: CheckKind, run_id: u64) -> Vec<u8> {
    let mut c = vec![0u8; len];
    stamp_chunk(&mut c, &fields(offset, generation, run_id), kind, PAT).unwrap();
    c
}

fn stamped(len: usize, offset: u64, generation: u32, kind: CheckKind) -> Vec<u8> {
    stamped_run(len, offset, generation, kind, RUN)
}

fn expect(len: usize, offset: u64, generation: u32) -> Expect {
    Expect { offset, generation, job: JOB, run_id: RUN, len: len as u32 }
}

fn diag(found: &[u8], e: &Expect, kind: CheckKind) -> Finding {
    assert!(!check_chunk(found, e, &ctx(kind)), "the fast check passed");
    let f = diagnose(found, e, &ctx(kind));
    assert!(f.is_failure() || f.kind == FindingKind::Newer, "{f:?}");
    assert!(!f.summary().contains('\n'));
    f
}

#[test]
fn stamp_then_check_passes_for_every_kind_and_size() {
    for kind in CheckKind::ALL {
        for len in SIZES {
            let c = stamped(len, 1 << 20, 7, kind);
            assert!(check_chunk(&c, &expect(len, 1 << 20, 7), &ctx(kind)), "{kind} {len}");
            let h = decode_header(&c).unwrap();
            assert_eq!(h.fields, fields(1 << 20, 7, RUN));
            assert_eq!((h.kind(), h.chunk_len), (Some(kind), len as u32));
            assert_eq!(diagnose(&c, &expect(len, 1 << 20, 7), &ctx(kind)).kind, FindingKind::Ok);
        }
    }
}

#[test]
fn chunks_differ_by_offset_generation_and_seed() {
    let a = stamped(4096, 0, 1, CheckKind::Crc32c);
    assert_ne!(a[96..], stamped(4096, 4096, 1, CheckKind::Crc32c)[96..]);
    assert_ne!(a[96..], stamped(4096, 0, 2, CheckKind::Crc32c)[96..]);
    let mut other_seed = vec![0u8; 4096];
    let mut f = fields(0, 1, RUN);
    f.seed = payload_seed(SEED + 1, 0, 1);
    stamp_chunk(&mut other_seed, &f, CheckKind::Crc32c, PAT).unwrap();
    assert_ne!(a[96..], other_seed[96..]);
    // Pattern payloads are the pattern, whatever the generation; headers still differ.
    let p = stamped(4096, 0, 1, CheckKind::Pattern);
    assert_eq!(p[96..101], PAT[..]);
    assert_ne!(p, stamped(4096, 0, 2, CheckKind::Pattern));
}

#[test]
fn stamp_refuses_bad_lengths_and_empty_patterns() {
    let f = fields(0, 1, RUN);
    assert_eq!(stamp_chunk(&mut [0u8; 500], &f, CheckKind::Crc32c, PAT), Err(StampError::BadChunkLen(500)));
    assert_eq!(stamp_chunk(&mut [0u8; 1000], &f, CheckKind::Crc32c, PAT), Err(StampError::BadChunkLen(1000)));
    assert_eq!(stamp_chunk(&mut [0u8; 512], &f, CheckKind::Pattern, &[]), Err(StampError::NoPattern));
    let c = ctx(CheckKind::Crc32c);
    let s = BlockStamp::default();
    assert!(stamp_block(&mut [0u8; 4096], 0, 1536, &s, &c, |_| 1).is_err());
}

#[test]
fn blocks_of_several_chunks_with_their_own_generations() {
    let c = ctx(CheckKind::Xxhash);
    let gen_of = |off: u64| (off / 4096 % 3) as u32 + 1;
    let s = BlockStamp { run_id: RUN, job: JOB, worker: 3, timestamp_ns: 5 };
    let mut block = vec![0u8; 32768];
    stamp_block(&mut block, 65536, 4096, &s, &c, gen_of).unwrap();
    let exp = |off: u64| expect(4096, off, gen_of(off));
    let mut bad = Vec::new();
    assert_eq!(check_block(&block, 65536, 4096, &c, exp, |e, _| bad.push(e.offset)), Ok(0));
    for (i, chunk) in block.chunks(4096).enumerate() {
        let h = decode_header(chunk).unwrap();
        assert_eq!((h.fields.offset, h.fields.generation), (65536 + i as u64 * 4096, gen_of(65536 + i as u64 * 4096)));
    }
    block[5 * 4096 + 1000] ^= 4;
    assert_eq!(check_block(&block, 65536, 4096, &c, exp, |e, _| bad.push(e.offset)), Ok(1));
    assert_eq!(bad, [65536 + 5 * 4096]);
}

#[test]
fn payload_bit_flip_is_corrupt_and_dumped() {
    for kind in DIGEST_KINDS {
        for len in SIZES {
            let mut c = stamped(len, 8192, 4, kind);
            let at = len - 200;
            c[at] ^= 0x10;
            let f = diag(&c, &expect(len, 8192, 4), kind);
            assert_eq!(f.kind, FindingKind::Corrupt, "{kind} {len}: {f:?}");
            assert_eq!(f.header_error, None);
            assert_eq!(f.first_bad_byte, Some(at as u64), "{kind} {len}");
            assert!(f.note.as_deref().unwrap().contains("digest"), "{f:?}");
            let rows = (DUMP_BYTES.min(len - (at & !15)) / 16) * 2;
            assert_eq!(f.hexdump.len(), rows);
            assert!(f.hexdump[0].starts_with(&format!("exp {:010x}:", 8192 + (at & !15))), "{:?}", f.hexdump);
            assert!(f.summary().starts_with("corrupt at 8192"), "{}", f.summary());
        }
    }
}

#[test]
fn header_bit_flip_is_corrupt_with_the_header_error() {
    for len in SIZES {
        let mut c = stamped(len, 8192, 4, CheckKind::Crc32c);
        c[25] ^= 0x01; // the generation field
        let f = diag(&c, &expect(len, 8192, 4), CheckKind::Crc32c);
        assert_eq!(f.kind, FindingKind::Corrupt);
        assert!(f.header_error.as_deref().unwrap().contains("header checksum mismatch"), "{f:?}");
        assert_eq!(f.first_bad_byte, Some(25));
        assert_eq!(f.found_generation, Some(4 ^ 0x100));
        assert!(
            f.hexdump[0].starts_with("exp 0000002010:") && f.hexdump[1].starts_with("got 0000002010:"),
            "{:?}",
            f.hexdump
        );
        // Row 16..32: byte 25 is the 10th byte; expected 04, found 04 with bit 8 set → 05.
        assert_eq!(&f.hexdump[0][16 + 27..16 + 29], "00", "{}", f.hexdump[0]);
        assert_eq!(&f.hexdump[1][16 + 27..16 + 29], "01", "{}", f.hexdump[1]);
        assert!(f.summary().contains("header checksum mismatch"), "{}", f.summary());
    }
    // A flipped magic bit: no header any more, but the payload is this chunk's.
    let mut c = stamped(4096, 0, 1, CheckKind::Crc32c);
    c[0] ^= 0x80;
    let f = diag(&c, &expect(4096, 0, 1), CheckKind::Crc32c);
    assert_eq!((f.kind, f.first_bad_byte), (FindingKind::Corrupt, Some(0)));
    assert!(f.header_error.unwrap().contains("no diskmeter header"));
    // The reserved bytes lie outside the header CRC: checked on their own.
    let mut c = stamped(4096, 0, 1, CheckKind::Crc32c);
    c[94] = 1;
    let f = diag(&c, &expect(4096, 0, 1), CheckKind::Crc32c);
    assert_eq!((f.kind, f.first_bad_byte), (FindingKind::Corrupt, Some(94)));
    assert!(f.header_error.unwrap().contains("reserved"));
}

#[test]
fn older_generation_is_stale() {
    for len in SIZES {
        let c = stamped(len, 4096, 3, CheckKind::Sha256);
        let f = diag(&c, &expect(len, 4096, 4), CheckKind::Sha256);
        assert_eq!((f.kind, f.found_generation, f.expected_generation), (FindingKind::Stale, Some(3), 4));
        assert!(!f.other_run);
        assert_eq!(f.first_bad_byte, Some(24));
        assert_eq!(f.summary(), "stale at 4096: generation 3 found, 4 expected (a write was lost)");
    }
}

#[test]
fn chunk_for_another_offset_is_misdirected() {
    let c = stamped(4096, 1 << 30, 2, CheckKind::Md5);
    let f = diag(&c, &expect(4096, 1 << 20, 5), CheckKind::Md5);
    assert_eq!((f.kind, f.found_offset, f.found_generation), (FindingKind::Misdirected, Some(1 << 30), Some(2)));
    assert_eq!(f.first_bad_byte, Some(10));
    assert!(f.summary().contains("offset 1073741824"), "{}", f.summary());
}

/// Sectors `0..split` from generation `a`, the rest from generation `b`.
fn torn(len: usize, offset: u64, a: u32, b: u32, split: usize) -> Vec<u8> {
    let mut c = stamped(len, offset, a, CheckKind::Crc32c);
    let old = stamped(len, offset, b, CheckKind::Crc32c);
    c[split * 512..].copy_from_slice(&old[split * 512..]);
    c
}

#[test]
fn mixed_generations_are_torn() {
    let c = torn(4096, 1 << 20, 5, 4, 4);
    let f = diag(&c, &expect(4096, 1 << 20, 5), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Torn);
    assert_eq!(f.summary(), "torn at 1048576: sectors 0-3 generation 5, sectors 4-7 generation 4 (expected 5)");
    assert_eq!(f.first_bad_byte, Some(2048));
    // The reverse: the header sector is old, the tail new.
    let c = torn(65536, 0, 4, 5, 1);
    let f = diag(&c, &expect(65536, 0, 5), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Torn);
    assert_eq!(
        f.sectors,
        [SectorRun { first: 0, last: 0, generation: Some(4) }, SectorRun { first: 1, last: 127, generation: Some(5) }]
    );
    // A tear over data from before the run: the tail is of no generation.
    let mut c = stamped(4096, 0, 1, CheckKind::Crc32c);
    fill_payload(99, &mut c[3072..]);
    let f = diag(&c, &expect(4096, 0, 1), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Torn, "{f:?}");
    assert!(f.summary().contains("sectors 6-7 of no known generation"), "{}", f.summary());
    // Meta checks only the header: a torn tail goes unnoticed (fio's meta does the same),
    // but a torn chunk whose header is old is stale.
    let mut c = stamped(4096, 0, 3, CheckKind::Meta);
    c[512..].copy_from_slice(&stamped(4096, 0, 2, CheckKind::Meta)[512..]);
    assert!(check_chunk(&c, &expect(4096, 0, 3), &ctx(CheckKind::Meta)));
}

#[test]
fn foreign_sector_in_the_middle_is_corrupt_not_torn() {
    let mut c = stamped(4096, 0, 2, CheckKind::Crc32c);
    fill_payload(99, &mut c[1024..1536]);
    let f = diag(&c, &expect(4096, 0, 2), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Corrupt);
}

#[test]
fn zeros_and_foreign_data() {
    for len in SIZES {
        let z = vec![0u8; len];
        let f = diag(&z, &expect(len, 0, 1), CheckKind::Crc32c);
        assert_eq!((f.kind, f.first_bad_byte), (FindingKind::Zeroed, Some(0)));
        assert_eq!(f.hexdump.len(), 8);
        let mut r = vec![0u8; len];
        fill_payload(12345, &mut r);
        let f = diag(&r, &expect(len, 0, 3), CheckKind::Crc32c);
        assert_eq!(f.kind, FindingKind::Unwritten);
        assert!(f.header_error.as_deref().unwrap().contains("no diskmeter header"));
        assert_eq!(f.summary(), "unwritten at 0: no diskmeter data (expected generation 3)");
    }
}

#[test]
fn newer_and_other_runs() {
    let c = stamped(4096, 0, 6, CheckKind::Crc32c);
    let f = diag(&c, &expect(4096, 0, 5), CheckKind::Crc32c);
    assert_eq!((f.kind, f.is_failure(), f.found_generation), (FindingKind::Newer, false, Some(6)));
    let c = stamped_run(4096, 0, 5, CheckKind::Crc32c, 77);
    let f = diag(&c, &expect(4096, 0, 5), CheckKind::Crc32c);
    assert_eq!((f.kind, f.other_run, f.found_run_id), (FindingKind::Stale, true, Some(77)));
    assert!(f.summary().contains("another run"), "{}", f.summary());
}

#[test]
fn never_written_chunks() {
    let c = ctx(CheckKind::Crc32c);
    let mut r = vec![0u8; 4096];
    fill_payload(5, &mut r);
    for ok in [r.clone(), vec![0; 4096], stamped_run(4096, 0, 9, CheckKind::Crc32c, 77)] {
        assert!(check_chunk(&ok, &expect(4096, 0, 0), &c));
        assert_eq!(diagnose(&ok, &expect(4096, 0, 0), &c).kind, FindingKind::Ok);
    }
    let f = diag(&stamped(4096, 0, 1, CheckKind::Crc32c), &expect(4096, 0, 0), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Newer);
    let f = diag(&stamped(4096, 8192, 1, CheckKind::Crc32c), &expect(4096, 0, 0), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Misdirected);
}

#[test]
fn fields_that_differ_are_named() {
    let c = stamped(4096, 0, 1, CheckKind::Crc32c);
    let f = diag(&c, &Expect { job: 9, ..expect(4096, 0, 1) }, CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Corrupt);
    assert_eq!(f.note.as_deref(), Some("written by job 2, expected job 9"));
    let f = diag(&c, &expect(4096, 0, 1), CheckKind::Sha256);
    assert_eq!(f.note.as_deref(), Some("checksum kind crc32c, expected sha256"));
    let f = diag(&c, &expect(8192, 0, 1), CheckKind::Crc32c);
    assert_eq!(f.kind, FindingKind::Corrupt);
    assert!(f.note.unwrap().contains("4096 bytes, expected 8192"));
}

#[test]
fn pattern_payload_must_be_the_pattern() {
    let mut c = stamped(4096, 0, 1, CheckKind::Pattern);
    c[3000] = 0;
    let f = diag(&c, &expect(4096, 0, 1), CheckKind::Pattern);
    assert_eq!((f.kind, f.first_bad_byte), (FindingKind::Corrupt, Some(3000)));
    // A run with another pattern reads this chunk as not its own.
    let c = stamped(4096, 0, 1, CheckKind::Pattern);
    let other = Context { pattern: b"xyz", ..ctx(CheckKind::Pattern) };
    assert!(!check_chunk(&c, &expect(4096, 0, 1), &other));
}

#[test]
fn finding_serializes_with_lowercase_kind() {
    let f = diag(&torn(4096, 0, 2, 1, 2), &expect(4096, 0, 2), CheckKind::Crc32c);
    let v: serde_json::Value = serde_json::to_value(&f).unwrap();
    assert_eq!(v["kind"], "torn");
    assert_eq!(v["sectors"][1]["generation"], 1);
    assert!(v["hexdump"].as_array().unwrap().iter().all(|l| l.is_string()));
    let back: Finding = serde_json::from_value(v).unwrap();
    assert_eq!(back, f);
}

proptest! {
    #[test]
    fn decode_header_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..700), magic in any::<bool>()) {
        let mut bytes = bytes;
        if magic && bytes.len() >= 4 {
            bytes[..4].copy_from_slice(b"DMVF");
        }
        let _ = decode_header(&bytes);
        #[cfg(feature = "fuzz")]
        fuzz_support::exercise(&bytes);
    }

    #[test]
    fn stamped_chunks_always_check(
        sectors in 1usize..9, offset in any::<u64>(), generation in 1u32.., seed in any::<u64>(),
        kind in proptest::sample::select(CheckKind::ALL.to_vec()),
    ) {
        let len = sectors * 512;
        let mut c = vec![0u8; len];
        let h = HeaderFields { seed: payload_seed(seed, offset, generation), ..fields(offset, generation, RUN) };
        stamp_chunk(&mut c, &h, kind, PAT).unwrap();
        let cx = Context { run_seed: seed, kind, pattern: PAT };
        prop_assert!(check_chunk(&c, &expect(len, offset, generation), &cx));
    }

    #[test]
    fn every_single_bit_flip_is_caught(
        big in any::<bool>(), bit in any::<usize>(), generation in 1u32..40,
        kind in proptest::sample::select(DIGEST_KINDS.to_vec()),
    ) {
        let len = if big { 4096 } else { 512 };
        let mut c = stamped(len, 1 << 40, generation, kind);
        let bit = bit % (len * 8);
        c[bit / 8] ^= 1 << (bit % 8);
        let e = expect(len, 1 << 40, generation);
        prop_assert!(!check_chunk(&c, &e, &ctx(kind)));
        let f = diagnose(&c, &e, &ctx(kind));
        prop_assert!(f.is_failure(), "{:?}", f);
        // The expected header takes worker and timestamp (bytes 28..40) from the found one,
        // so a flip there shows at the CRC; anything else points at the flipped byte.
        let at = if (28..40).contains(&(bit / 8)) { 88 } else { bit / 8 };
        prop_assert_eq!(f.first_bad_byte, Some(at as u64));
    }
}

fn sample_state() -> VerifyState {
    VerifyState {
        run_id: RUN,
        run_seed: SEED,
        kind: CheckKind::Sha256,
        interval: 4096,
        target: TargetId { path: "/dev/loop7".into(), size: 1 << 30, dev: 0x0707, ino: 0 },
        regions: vec![
            Region { start: 0, generations: (0..10_000).map(|i| i % 7).collect() },
            Region { start: 1 << 29, generations: vec![] },
            Region { start: 1 << 20, generations: vec![u32::MAX, 1] },
        ],
    }
}

#[test]
fn state_round_trips_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.state");
    let s = sample_state();
    save_state(&path, &s).unwrap();
    assert_eq!(load_state(&path).unwrap(), s);
    // Saving again replaces it; nothing but the state file is left in the directory.
    let s2 = VerifyState { regions: vec![Region { start: 4096, generations: vec![3; 5] }], ..s };
    save_state(&path, &s2).unwrap();
    assert_eq!(load_state(&path).unwrap(), s2);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["run.state"]);
    // A directory that does not exist: an error, and no temporary file anywhere.
    let e = save_state(&dir.path().join("no/such/run.state"), &s2).unwrap_err();
    assert!(e.contains("no/such") && !e.contains('\n'), "{e}");
}

#[test]
fn bad_state_files_give_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    save_state(&path, &sample_state()).unwrap();
    let good = std::fs::read(&path).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"hello world, not a state".to_vec(), "not a diskmeter verify state"),
        (vec![], "not a diskmeter verify state"),
        (good[..6].to_vec(), "truncated"),
        (good[..good.len() / 2].to_vec(), "truncated"),
        (good[..good.len() - 1].to_vec(), "checksum"),
        ([&good[..4], &[9u8], &good[5..]].concat(), "version 9"),
        ([&good[..good.len() - 4], &[0u8; 4]].concat(), "checksum"),
    ];
    for (bytes, want) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let e = load_state(&path).unwrap_err();
        assert!(e.contains(want) && !e.contains('\n'), "{e} (wanted {want})");
    }
    assert!(load_state(&dir.path().join("missing")).unwrap_err().contains("missing"));
}

proptest! {
    #[test]
    fn state_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), keep in 0usize..200) {
        let _ = parse_state(&bytes);
        let mut b = b"DMVS\x01\0\0\0".to_vec();
        b.extend_from_slice(&(keep as u32).to_le_bytes());
        b.extend_from_slice(&bytes);
        let _ = parse_state(&b);
    }
}
