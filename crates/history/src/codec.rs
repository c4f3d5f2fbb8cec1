//! The stored body of a document: its JSON text, zlib-compressed (flate2's pure-Rust
//! backend). Histograms, latency CDFs and interval series are most of a result's bytes and
//! compress well; zlib's checksum also catches a damaged body on the way back.

use std::io::{Read, Write};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `docs.encoding` of bodies written by this build.
pub(crate) const ENCODING: &str = "json+zlib";

/// A document ready to store.
pub(crate) struct Encoded {
    /// Bytes of the JSON text.
    pub raw_len: usize,
    pub body: Vec<u8>,
    /// SHA-256 of the JSON text (first 16 bytes, hex): the same document imported twice has
    /// the same hash. `serde_json::Value` keeps object keys sorted, so the text is canonical.
    pub hash: String,
}

pub(crate) fn encode(doc: &Value) -> Encoded {
    // A Value always serializes (its keys are strings).
    let text = serde_json::to_vec(doc).unwrap_or_default();
    Encoded { raw_len: text.len(), body: compress(&text), hash: hash(&text) }
}

pub(crate) fn hash(text: &[u8]) -> String {
    Sha256::digest(text).iter().take(16).map(|b| format!("{b:02x}")).collect()
}

fn compress(text: &[u8]) -> Vec<u8> {
    let mut enc = ZlibEncoder::new(Vec::with_capacity(text.len() / 4), Compression::default());
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(text);
    enc.finish().unwrap_or_default()
}

/// The document back, or why not.
pub(crate) fn decode(encoding: &str, body: &[u8]) -> Result<Value, String> {
    let text = match encoding {
        ENCODING => {
            let mut text = Vec::with_capacity(body.len() * 4);
            ZlibDecoder::new(body)
                .read_to_end(&mut text)
                .map_err(|e| format!("a stored document does not decompress: {e}"))?;
            text
        }
        "json" => body.to_vec(),
        other => return Err(format!("a stored document has an unknown encoding '{other}'")),
    };
    serde_json::from_slice(&text).map_err(|e| format!("a stored document is not JSON: {e}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let doc = serde_json::json!({"a": [1.0000000000000002, 0.1, 1e-300, u64::MAX, -3], "b": "é"});
        let e = encode(&doc);
        assert_eq!(decode(ENCODING, &e.body).unwrap(), doc);
        assert!(decode(ENCODING, &e.body[..e.body.len() - 2]).is_err());
    }
}
