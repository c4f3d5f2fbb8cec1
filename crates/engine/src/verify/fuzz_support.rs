//! The checks of the `verify_header` fuzz target, shared with the corpus replay test
//! (`crates/engine/tests/fuzz_corpus_verify_header.rs`) so plain `cargo test` runs them.

use super::chunk::{check_chunk, Context, Expect};
use super::diagnose::{diagnose, FindingKind};
use super::header::decode_header;
use super::CheckKind;

/// What [`exercise`] saw, for the replay test's "not all rejected" check.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seen {
    /// The bytes held a valid header.
    pub valid_header: bool,
    /// The chunk passed the fast check against what its own header claims.
    pub passed: bool,
}

/// Decodes `data` as a chunk and diagnoses it against several expectations (the one its own
/// header claims, if any, and fixed ones) under every checksum kind. Panics — the fuzzer's
/// finding — only if an invariant breaks: a chunk that fails [`check_chunk`] must never be
/// diagnosed `ok`, and one that passes always is.
pub fn exercise(data: &[u8]) -> Seen {
    let header = decode_header(data);
    let _ = header.map(|h| h.kind());
    let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
    let mut expects = vec![
        Expect { offset: 0, generation: 1, job: 0, run_id: 0, len },
        Expect { offset: 4096, generation: 0, job: 0, run_id: 1, len },
        Expect { offset: 0, generation: 20, job: 1, run_id: 1, len: len.wrapping_add(512) },
    ];
    let mut seen = Seen::default();
    if let Ok(h) = header {
        seen.valid_header = true;
        let f = h.fields;
        expects.push(Expect { offset: f.offset, generation: f.generation, job: f.job, run_id: f.run_id, len });
        expects.push(Expect {
            offset: f.offset,
            generation: f.generation.wrapping_add(1),
            job: f.job,
            run_id: f.run_id,
            len,
        });
    }
    let pattern = [0xde, 0xad, 0xbe, 0xef];
    for kind in CheckKind::ALL {
        let ctx = Context { run_seed: 7, kind, pattern: &pattern };
        for e in &expects {
            let good = check_chunk(data, e, &ctx);
            let finding = diagnose(data, e, &ctx);
            assert_eq!(
                good,
                finding.kind == FindingKind::Ok,
                "check {good} but diagnosed {:?} for {e:?} {kind}",
                finding.kind
            );
            let _ = finding.summary();
            seen.passed |= good && e.generation > 0;
        }
    }
    seen
}
