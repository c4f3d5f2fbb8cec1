//! Replays the `verify_header` fuzz corpus (`fuzz/corpus/verify_header/`) through the same
//! function the fuzz target calls, so plain `cargo test` guards every input the fuzzer was
//! seeded with or found: no panic in `decode_header` or `diagnose`, and no chunk that fails
//! the fast check diagnosed `ok`.
//!
//! The seed corpus is written by the ignored test below:
//!   cargo test -p diskmeter-engine --test fuzz_corpus_verify_header -- --ignored
#![allow(clippy::unwrap_used)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use diskmeter_engine::verify::fuzz_support::exercise;
use diskmeter_engine::verify::{fill_payload, payload_seed, stamp_chunk, CheckKind, HeaderFields};

/// The corpus holds at least this many files (a test over an empty directory proves nothing).
const MIN_FILES: usize = 15;

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/verify_header")
}

#[test]
fn corpus_replays_without_panics() {
    let dir = corpus_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= MIN_FILES, "{} holds {} files, expected at least {MIN_FILES}", dir.display(), files.len());
    let mut failed = Vec::new();
    let (mut valid, mut passed) = (0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        match catch_unwind(AssertUnwindSafe(|| exercise(&bytes))) {
            Ok(s) => {
                valid += usize::from(s.valid_header);
                passed += usize::from(s.passed);
            }
            Err(_) => failed.push(f.file_name().unwrap().to_string_lossy().into_owned()),
        }
    }
    assert!(failed.is_empty(), "verify_header invariants broke on {failed:?} (messages above)");
    // The good chunks are read as good, not just rejected.
    assert!(valid >= 7 && passed >= 7, "only {valid} valid headers and {passed} passing chunks");
}

/// The run seed and pattern `exercise` checks with.
const RUN_SEED: u64 = 7;
const PATTERN: &[u8] = &[0xde, 0xad, 0xbe, 0xef];

fn chunk(len: usize, offset: u64, generation: u32, kind: CheckKind) -> Vec<u8> {
    let mut c = vec![0u8; len];
    let h = HeaderFields {
        offset,
        job: 0,
        generation,
        worker: 1,
        timestamp_ns: 1_790_000_000_000_000_000,
        seed: payload_seed(RUN_SEED, offset, generation),
        run_id: 1,
    };
    stamp_chunk(&mut c, &h, kind, PATTERN).unwrap();
    c
}

/// Sets header byte `at` and recomputes the header CRC, so only that field is wrong.
fn refield(mut c: Vec<u8>, at: usize, value: u8) -> Vec<u8> {
    c[at] = value;
    let crc = crc32c::crc32c(&c[..88]);
    c[88..92].copy_from_slice(&crc.to_le_bytes());
    c
}

#[test]
#[ignore = "writes the seed corpus"]
fn write_seed_corpus() {
    let dir = corpus_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("good_crc32c_4096", chunk(4096, 0, 1, CheckKind::Crc32c)),
        ("good_md5_512", chunk(512, 4096, 2, CheckKind::Md5)),
        ("good_sha1_512", chunk(512, 512, 1, CheckKind::Sha1)),
        ("good_sha256_1024", chunk(1024, 0, 3, CheckKind::Sha256)),
        ("good_xxhash_512", chunk(512, 1 << 20, 1, CheckKind::Xxhash)),
        ("good_meta_512", chunk(512, 0, 9, CheckKind::Meta)),
        ("good_pattern_512", chunk(512, 0, 1, CheckKind::Pattern)),
        ("truncated_header", chunk(512, 0, 1, CheckKind::Crc32c)[..50].to_vec()),
        ("truncated_chunk", chunk(512, 0, 1, CheckKind::Crc32c)[..300].to_vec()),
        ("bad_version", refield(chunk(512, 0, 1, CheckKind::Crc32c), 4, 2)),
        ("unknown_kind", refield(chunk(512, 0, 1, CheckKind::Crc32c), 5, 99)),
        ("zeros_512", vec![0; 512]),
        ("empty", vec![]),
    ];
    let mut bad_magic = chunk(512, 0, 1, CheckKind::Crc32c);
    bad_magic[1] = b'X';
    files.push(("bad_magic", bad_magic));
    let mut bad_crc = chunk(512, 0, 1, CheckKind::Crc32c);
    bad_crc[9] ^= 0x40;
    files.push(("bad_crc", bad_crc));
    let mut reserved = chunk(512, 0, 1, CheckKind::Crc32c);
    reserved[95] = 1;
    files.push(("reserved_nonzero", reserved));
    let mut garbage = vec![0u8; 512];
    fill_payload(0xbad, &mut garbage);
    files.push(("garbage_512", garbage));
    let mut torn = chunk(1024, 0, 2, CheckKind::Crc32c);
    torn[512..].copy_from_slice(&chunk(1024, 0, 1, CheckKind::Crc32c)[512..]);
    files.push(("torn_1024", torn));
    let mut payload_flip = chunk(512, 0, 1, CheckKind::Sha256);
    payload_flip[400] ^= 1;
    files.push(("payload_flip_sha256", payload_flip));
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}
