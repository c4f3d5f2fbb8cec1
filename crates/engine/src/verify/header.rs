//! The 96-byte little-endian header that starts every verify chunk.
//!
//! | bytes  | field |
//! |--------|-------|
//! | 0..4   | magic `DMVF` |
//! | 4      | version (1) |
//! | 5      | checksum kind ([`CheckKind::code`]) |
//! | 6..8   | header length u16 (96) |
//! | 8..16  | offset of this chunk on the target, u64 |
//! | 16..20 | chunk length u32 |
//! | 20..24 | job index u32 |
//! | 24..28 | generation u32 (1 = first write of the chunk in the run; never 0) |
//! | 28..32 | worker index u32 |
//! | 32..40 | write time, ns since the Unix epoch (CLOCK_REALTIME) |
//! | 40..48 | payload seed u64 |
//! | 48..56 | run id u64 |
//! | 56..88 | payload digest (zero-padded; all zero for `meta`) |
//! | 88..92 | CRC-32C of bytes 0..88 |
//! | 92..96 | reserved (0) |
//!
//! The header checks itself (its own CRC), so a damaged header is told apart from a damaged
//! payload.

use super::checksum::{CheckKind, DIGEST_LEN};

/// The magic that opens every chunk.
pub const MAGIC: [u8; 4] = *b"DMVF";
/// The format version written and read.
pub const VERSION: u8 = 1;
/// Header length in bytes; the payload is `chunk[HEADER_LEN..]`.
pub const HEADER_LEN: usize = 96;
/// Byte range of the header CRC (it covers everything before it).
pub const CRC_AT: usize = 88;

/// The fields a writer chooses (everything but magic, version, lengths, digest and CRC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeaderFields {
    /// Byte offset of this chunk on the target.
    pub offset: u64,
    /// Job index.
    pub job: u32,
    /// Generation: 1 for the first write of this chunk in the run.
    pub generation: u32,
    /// Worker index within the job.
    pub worker: u32,
    /// Write time, ns since the Unix epoch.
    pub timestamp_ns: u64,
    /// Payload seed ([`super::payload_seed`]); unused by `pattern` payloads but still recorded.
    pub seed: u64,
    /// The run's random id.
    pub run_id: u64,
}

/// Every field of a header as read, whether or not it is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Format version byte.
    pub version: u8,
    /// Checksum kind byte ([`Header::kind`] decodes it).
    pub kind_code: u8,
    /// Header length field.
    pub header_len: u16,
    /// Chunk length field.
    pub chunk_len: u32,
    /// The writer's fields.
    pub fields: HeaderFields,
    /// Payload digest, zero-padded.
    pub digest: [u8; DIGEST_LEN],
    /// Stored header CRC.
    pub crc: u32,
}

impl Header {
    /// The checksum kind, if the kind byte is known.
    pub fn kind(&self) -> Option<CheckKind> {
        CheckKind::from_code(self.kind_code)
    }
}

/// Why a chunk's header is not valid. Errors past the magic carry the raw header for the
/// report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than [`HEADER_LEN`] bytes.
    TooShort {
        /// Bytes available.
        len: usize,
    },
    /// The chunk does not start with `DMVF`: no diskmeter header.
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// The header's CRC does not match its bytes: the header is damaged.
    CrcMismatch {
        /// The fields as read (not to be trusted).
        raw: Header,
        /// CRC-32C of bytes 0..88 as found.
        computed: u32,
    },
    /// A version this build does not read.
    UnknownVersion {
        /// The fields as read.
        raw: Header,
    },
    /// A checksum kind byte this build does not know.
    UnknownKind {
        /// The fields as read.
        raw: Header,
    },
    /// The reserved bytes 92..96 (outside the header CRC) are not zero.
    Reserved {
        /// The fields as read.
        raw: Header,
        /// The reserved bytes.
        found: [u8; 4],
    },
    /// Header or chunk length fields disagree with the format or with the bytes given.
    BadLength {
        /// The fields as read.
        raw: Header,
        /// Bytes given.
        actual: usize,
    },
}

impl HeaderError {
    /// The raw header, for errors found after the magic.
    pub fn raw(&self) -> Option<&Header> {
        match self {
            HeaderError::TooShort { .. } | HeaderError::BadMagic { .. } => None,
            HeaderError::CrcMismatch { raw, .. }
            | HeaderError::UnknownVersion { raw }
            | HeaderError::UnknownKind { raw }
            | HeaderError::Reserved { raw, .. }
            | HeaderError::BadLength { raw, .. } => Some(raw),
        }
    }
}

impl std::fmt::Display for HeaderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderError::TooShort { len } => write!(f, "only {len} bytes, a header needs {HEADER_LEN}"),
            HeaderError::BadMagic { found } => write!(f, "no diskmeter header (magic {:02x?})", found),
            HeaderError::CrcMismatch { raw, computed } => {
                write!(f, "header checksum mismatch (stored {:08x}, computed {computed:08x})", raw.crc)
            }
            HeaderError::UnknownVersion { raw } => write!(f, "unknown header version {}", raw.version),
            HeaderError::UnknownKind { raw } => write!(f, "unknown checksum kind {}", raw.kind_code),
            HeaderError::Reserved { found, .. } => write!(f, "reserved header bytes are not zero ({found:02x?})"),
            HeaderError::BadLength { raw, actual } => write!(
                f,
                "inconsistent lengths: header {} (expected {HEADER_LEN}), chunk {} (given {actual})",
                raw.header_len, raw.chunk_len
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Reads every field of the first [`HEADER_LEN`] bytes of `h` (which must be that long).
fn read_raw(h: &[u8]) -> Header {
    let mut digest = [0u8; DIGEST_LEN];
    digest.copy_from_slice(&h[56..88]);
    Header {
        version: h[4],
        kind_code: h[5],
        header_len: u16_at(h, 6),
        chunk_len: u32_at(h, 16),
        fields: HeaderFields {
            offset: u64_at(h, 8),
            job: u32_at(h, 20),
            generation: u32_at(h, 24),
            worker: u32_at(h, 28),
            timestamp_ns: u64_at(h, 32),
            seed: u64_at(h, 40),
            run_id: u64_at(h, 48),
        },
        digest,
        crc: u32_at(h, CRC_AT),
    }
}

/// Decodes the header at the start of `chunk` (the whole chunk: its length is checked
/// against the chunk length field). Never panics.
///
/// Checked in this order: length, magic, header CRC, reserved bytes, version, kind, lengths. The CRC comes
/// before the version and kind because a flipped bit in either is far likelier than a
/// header from another format version.
pub fn decode_header(chunk: &[u8]) -> Result<Header, HeaderError> {
    let Some(h) = chunk.get(..HEADER_LEN) else {
        return Err(HeaderError::TooShort { len: chunk.len() });
    };
    if h[..4] != MAGIC {
        return Err(HeaderError::BadMagic { found: [h[0], h[1], h[2], h[3]] });
    }
    let raw = read_raw(h);
    let computed = crc32c::crc32c(&h[..CRC_AT]);
    if computed != raw.crc {
        return Err(HeaderError::CrcMismatch { raw, computed });
    }
    if h[92..96] != [0; 4] {
        return Err(HeaderError::Reserved { raw, found: [h[92], h[93], h[94], h[95]] });
    }
    if raw.version != VERSION {
        return Err(HeaderError::UnknownVersion { raw });
    }
    if raw.kind().is_none() {
        return Err(HeaderError::UnknownKind { raw });
    }
    if usize::from(raw.header_len) != HEADER_LEN || usize::try_from(raw.chunk_len).ok() != Some(chunk.len()) {
        return Err(HeaderError::BadLength { raw, actual: chunk.len() });
    }
    Ok(raw)
}

/// Writes a complete header into `h[..HEADER_LEN]` (`h` must be at least that long).
pub(crate) fn encode_header(
    h: &mut [u8],
    f: &HeaderFields,
    kind: CheckKind,
    chunk_len: u32,
    digest: &[u8; DIGEST_LEN],
) {
    h[0..4].copy_from_slice(&MAGIC);
    h[4] = VERSION;
    h[5] = kind.code();
    h[6..8].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
    h[8..16].copy_from_slice(&f.offset.to_le_bytes());
    h[16..20].copy_from_slice(&chunk_len.to_le_bytes());
    h[20..24].copy_from_slice(&f.job.to_le_bytes());
    h[24..28].copy_from_slice(&f.generation.to_le_bytes());
    h[28..32].copy_from_slice(&f.worker.to_le_bytes());
    h[32..40].copy_from_slice(&f.timestamp_ns.to_le_bytes());
    h[40..48].copy_from_slice(&f.seed.to_le_bytes());
    h[48..56].copy_from_slice(&f.run_id.to_le_bytes());
    h[56..88].copy_from_slice(digest);
    let crc = crc32c::crc32c(&h[..CRC_AT]);
    h[88..92].copy_from_slice(&crc.to_le_bytes());
    h[92..96].fill(0);
}
