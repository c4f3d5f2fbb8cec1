//! The verify state file (`--verify-state FILE`, fio's verify_state_save/load): what a
//! later `--verify` run needs to check a target written by an earlier one.
//!
//! Format, little-endian: magic `DMVS`, version u8 (1), three zero bytes, JSON header length
//! u32, the JSON header ([`VerifyState`] without the generation arrays, plus each region's
//! chunk count), every region's generations as u32, and a CRC-32C of everything before it.
//! Written atomically: a temporary file in the same directory, fsync, rename, fsync of the
//! directory.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::checksum::CheckKind;

/// Magic of a state file.
pub const STATE_MAGIC: [u8; 4] = *b"DMVS";
/// State file version written and read.
pub const STATE_VERSION: u8 = 1;
/// Largest JSON header accepted (it holds a path and one line per region).
const MAX_JSON: usize = 16 << 20;
/// Magic, version, padding, JSON length.
const PREFIX: usize = 12;

/// The target a state belongs to, so a state is not applied to another device or file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetId {
    /// Path as given.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Device number: `st_rdev` of a block device, `st_dev` of a file.
    pub dev: u64,
    /// Inode of a file (0 for a block device).
    pub ino: u64,
}

/// A contiguous range of chunks and their generations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Byte offset of the first chunk.
    pub start: u64,
    /// Generation of each chunk (0 = never written); chunk i is at `start + i * interval`.
    pub generations: Vec<u32>,
}

/// Everything a later run needs to verify what this one wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyState {
    /// The run's random id (in every chunk header).
    pub run_id: u64,
    /// The run's payload seed.
    pub run_seed: u64,
    /// Checksum kind.
    pub kind: CheckKind,
    /// Verify chunk length in bytes.
    pub interval: u64,
    /// The target written.
    pub target: TargetId,
    /// The regions written.
    pub regions: Vec<Region>,
}

/// The JSON header: the state with each region's chunk count in place of its array.
#[derive(Serialize, Deserialize)]
struct JsonHeader {
    run_id: u64,
    run_seed: u64,
    kind: CheckKind,
    interval: u64,
    target: TargetId,
    regions: Vec<JsonRegion>,
}

#[derive(Serialize, Deserialize)]
struct JsonRegion {
    start: u64,
    chunks: u64,
}

/// Writes `state` to `path` atomically (see the module doc). One-line errors.
pub fn save_state(path: &Path, state: &VerifyState) -> Result<(), String> {
    let tmp = temp_path(path);
    let result = write_file(&tmp, state).and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|e| format!("{}: cannot rename into place: {e}", path.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // The rename is durable only once the directory is.
    let dir = parent(path);
    platform::fs::sync_dir(&dir).map_err(|e| format!("{}: cannot sync: {e}", dir.display()))
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A temporary name in the same directory (same filesystem, so the rename is atomic).
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    parent(path).join(format!(".{name}.tmp.{}", std::process::id()))
}

fn write_file(tmp: &Path, state: &VerifyState) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", tmp.display());
    let header = JsonHeader {
        run_id: state.run_id,
        run_seed: state.run_seed,
        kind: state.kind,
        interval: state.interval,
        target: state.target.clone(),
        regions: state
            .regions
            .iter()
            .map(|r| JsonRegion { start: r.start, chunks: r.generations.len() as u64 })
            .collect(),
    };
    let json = serde_json::to_vec(&header).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let json_len = u32::try_from(json.len()).map_err(|_| format!("{}: state header too large", tmp.display()))?;
    let file = File::create(tmp).map_err(err)?;
    let mut w = CrcWriter { inner: BufWriter::with_capacity(1 << 20, file), crc: 0 };
    w.put(&STATE_MAGIC).map_err(err)?;
    w.put(&[STATE_VERSION, 0, 0, 0]).map_err(err)?;
    w.put(&json_len.to_le_bytes()).map_err(err)?;
    w.put(&json).map_err(err)?;
    let mut buf = [0u8; 4096];
    for r in &state.regions {
        for words in r.generations.chunks(buf.len() / 4) {
            for (b, g) in buf.chunks_exact_mut(4).zip(words) {
                b.copy_from_slice(&g.to_le_bytes());
            }
            w.put(&buf[..words.len() * 4]).map_err(err)?;
        }
    }
    let crc = w.crc;
    let mut inner = w.inner;
    inner.write_all(&crc.to_le_bytes()).map_err(err)?;
    let file = inner.into_inner().map_err(|e| err(e.into_error()))?;
    file.sync_all().map_err(err)
}

/// A writer that keeps a running CRC-32C of what it wrote.
struct CrcWriter {
    inner: BufWriter<File>,
    crc: u32,
}

impl CrcWriter {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, b);
        self.inner.write_all(b)
    }
}

/// Reads a state file. One-line errors (not a state file, truncated, wrong version,
/// damaged); never panics, and allocates no more than the file's size, whatever it claims.
pub fn load_state(path: &Path) -> Result<VerifyState, String> {
    let p = path.display();
    let mut bytes = Vec::new();
    File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| format!("{p}: {e}"))?;
    parse_state(&bytes).map_err(|e| format!("{p}: {e}"))
}

/// Parses the bytes of a state file (see [`load_state`]).
pub fn parse_state(bytes: &[u8]) -> Result<VerifyState, String> {
    if bytes.get(..4) != Some(&STATE_MAGIC[..]) {
        return Err("not a diskmeter verify state file (no DMVS magic)".to_string());
    }
    let Some(prefix) = bytes.get(..PREFIX) else { return Err(truncated(bytes.len())) };
    if prefix[4] != STATE_VERSION {
        return Err(format!("verify state version {}, this diskmeter reads version {STATE_VERSION}", prefix[4]));
    }
    let json_len = u32::from_le_bytes([prefix[8], prefix[9], prefix[10], prefix[11]]) as usize;
    if json_len > MAX_JSON {
        return Err(format!("damaged verify state file (header length {json_len})"));
    }
    let Some(body_end) = bytes.len().checked_sub(4) else { return Err(truncated(bytes.len())) };
    let json_end = PREFIX + json_len;
    if json_end > body_end {
        return Err(truncated(bytes.len()));
    }
    let stored = u32::from_le_bytes([bytes[body_end], bytes[body_end + 1], bytes[body_end + 2], bytes[body_end + 3]]);
    if crc32c::crc32c(&bytes[..body_end]) != stored {
        return Err("damaged or truncated verify state file (checksum mismatch)".to_string());
    }
    let header: JsonHeader = serde_json::from_slice(&bytes[PREFIX..json_end])
        .map_err(|e| format!("damaged verify state file (header: {e})"))?;
    read_regions(header, &bytes[json_end..body_end])
}

fn truncated(len: usize) -> String {
    format!("truncated verify state file ({len} bytes)")
}

/// Splits the array bytes into the regions the header counts; they must add up exactly.
fn read_regions(h: JsonHeader, mut arrays: &[u8]) -> Result<VerifyState, String> {
    let total: u64 = h.regions.iter().try_fold(0u64, |t, r| t.checked_add(r.chunks)).unwrap_or(u64::MAX);
    if total.checked_mul(4) != Some(arrays.len() as u64) {
        return Err(format!(
            "damaged verify state file ({total} chunks counted, {} bytes of generations)",
            arrays.len()
        ));
    }
    let mut regions = Vec::with_capacity(h.regions.len());
    for r in &h.regions {
        let (mine, rest) = arrays.split_at(r.chunks as usize * 4);
        arrays = rest;
        let generations = mine.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
        regions.push(Region { start: r.start, generations });
    }
    Ok(VerifyState {
        run_id: h.run_id,
        run_seed: h.run_seed,
        kind: h.kind,
        interval: h.interval,
        target: h.target,
        regions,
    })
}
