//! The checksum kinds of fio's `verify=` and the payload digests they produce.

use md5::{Digest as _, Md5};
use sha1::Sha1;
use sha2::Sha256;

/// Bytes reserved in the header for a payload digest (the longest, SHA-256).
pub const DIGEST_LEN: usize = 32;

/// How a chunk's payload is checked (fio's `verify=` names).
///
/// The header's kind byte is [`CheckKind::code`]; codes are part of the on-disk format and
/// never reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// CRC-32C (Castagnoli) of the payload; the default (fio's `crc32c`, `crc32c-intel`).
    #[default]
    Crc32c,
    /// MD5 of the payload.
    Md5,
    /// SHA-1 of the payload.
    Sha1,
    /// SHA-256 of the payload.
    Sha256,
    /// XXH64 of the payload (fio's `xxhash` is XXH32: the name is shared, the digest is not).
    Xxhash,
    /// No payload digest: only the header fields are checked.
    Meta,
    /// The payload is the `verify_pattern` repeated; the digest is its CRC-32C.
    Pattern,
}

/// Every kind, in the order the error message lists them.
const ALL: [CheckKind; 7] = [
    CheckKind::Crc32c,
    CheckKind::Md5,
    CheckKind::Sha1,
    CheckKind::Sha256,
    CheckKind::Xxhash,
    CheckKind::Meta,
    CheckKind::Pattern,
];

impl CheckKind {
    /// Every supported kind.
    pub const ALL: [CheckKind; 7] = ALL;

    /// The canonical name, as `spec::VerifyKind` parses and names it.
    pub fn name(self) -> &'static str {
        match self {
            CheckKind::Crc32c => "crc32c",
            CheckKind::Md5 => "md5",
            CheckKind::Sha1 => "sha1",
            CheckKind::Sha256 => "sha256",
            CheckKind::Xxhash => "xxhash",
            CheckKind::Meta => "meta",
            CheckKind::Pattern => "pattern",
        }
    }

    /// The header's kind byte.
    pub fn code(self) -> u8 {
        match self {
            CheckKind::Crc32c => 1,
            CheckKind::Md5 => 2,
            CheckKind::Sha1 => 3,
            CheckKind::Sha256 => 4,
            CheckKind::Xxhash => 5,
            CheckKind::Meta => 6,
            CheckKind::Pattern => 7,
        }
    }

    /// The kind of a header's kind byte, if known.
    pub fn from_code(code: u8) -> Option<CheckKind> {
        ALL.iter().copied().find(|k| k.code() == code)
    }

    /// Digest length in bytes (0 for `meta`); the rest of the header's 32 bytes is zero.
    pub fn digest_len(self) -> usize {
        match self {
            CheckKind::Crc32c | CheckKind::Pattern => 4,
            CheckKind::Md5 => 16,
            CheckKind::Sha1 => 20,
            CheckKind::Sha256 => 32,
            CheckKind::Xxhash => 8,
            CheckKind::Meta => 0,
        }
    }

    /// The digest of `payload`, zero-padded to [`DIGEST_LEN`]. No allocation.
    pub fn digest(self, payload: &[u8]) -> [u8; DIGEST_LEN] {
        let mut out = [0u8; DIGEST_LEN];
        match self {
            CheckKind::Crc32c | CheckKind::Pattern => out[..4].copy_from_slice(&crc32c::crc32c(payload).to_le_bytes()),
            CheckKind::Md5 => out[..16].copy_from_slice(&Md5::digest(payload)),
            CheckKind::Sha1 => out[..20].copy_from_slice(&Sha1::digest(payload)),
            CheckKind::Sha256 => out.copy_from_slice(&Sha256::digest(payload)),
            CheckKind::Xxhash => out[..8].copy_from_slice(&xxhash_rust::xxh64::xxh64(payload, 0).to_le_bytes()),
            CheckKind::Meta => {}
        }
        out
    }
}

/// The command line's or a job file's kind (parsed once, by `spec::VerifyKind::parse`).
impl From<spec::VerifyKind> for CheckKind {
    fn from(k: spec::VerifyKind) -> Self {
        use spec::VerifyKind as V;
        match k {
            V::Crc32c => CheckKind::Crc32c,
            V::Md5 => CheckKind::Md5,
            V::Sha1 => CheckKind::Sha1,
            V::Sha256 => CheckKind::Sha256,
            V::Xxhash => CheckKind::Xxhash,
            V::Meta => CheckKind::Meta,
            V::Pattern => CheckKind::Pattern,
        }
    }
}

impl std::fmt::Display for CheckKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_codes_are_unique() {
        for k in CheckKind::ALL {
            // The engine's kind of the spec's kind of the same name: one list of names.
            assert_eq!(CheckKind::from(spec::VerifyKind::parse(k.name()).unwrap()), k);
            assert_eq!(spec::VerifyKind::parse(k.name()).unwrap().name(), k.name());
            assert_eq!(CheckKind::from_code(k.code()), Some(k));
        }
        let mut codes: Vec<u8> = CheckKind::ALL.iter().map(|k| k.code()).collect();
        codes.dedup();
        assert_eq!(codes.len(), CheckKind::ALL.len());
        assert_eq!(CheckKind::from_code(0), None);
        // fio's aliases of the same checksum.
        for (alias, k) in
            [("crc32c-intel", CheckKind::Crc32c), ("crc32c-arm64", CheckKind::Crc32c), ("xxh64", CheckKind::Xxhash)]
        {
            assert_eq!(spec::VerifyKind::parse(alias).map(CheckKind::from), Some(k), "{alias}");
        }
        assert_eq!(spec::VerifyKind::parse("crc7"), None);
    }

    #[test]
    fn digests_have_their_length_and_differ() {
        let a = [7u8; 1000];
        let mut b = a;
        b[999] ^= 1;
        for k in CheckKind::ALL {
            let d = k.digest(&a);
            assert!(d[k.digest_len()..].iter().all(|&x| x == 0), "{k}");
            if k != CheckKind::Meta {
                assert_ne!(d, k.digest(&b), "{k}");
            }
        }
        // Known answer: CRC-32C of "123456789".
        assert_eq!(CheckKind::Crc32c.digest(b"123456789")[..4], 0xE306_9283u32.to_le_bytes());
    }
}
