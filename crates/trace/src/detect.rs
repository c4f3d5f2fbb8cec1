//! Format detection: which [`TraceFormat`] a file is in, from its name and first bytes.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use crate::binary::MAGIC;
use crate::error::TraceError;
use crate::format::TraceFormat;
use crate::parse::{blkparse, csvlike, fields};

/// First bytes of a gzip'd file.
pub(crate) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl TraceFormat {
    /// Guesses the format from the file name and its first bytes (already decompressed if the
    /// file is gzip'd). Recognises the binary magic, fio iolog headers, blkparse event lines
    /// and the MSR, Alibaba and Tencent CSV layouts, past blank and comment lines (`#…`,
    /// dash rules); `None` when unsure (generic CSV is never guessed: its mapping cannot be).
    pub fn detect(path: &Path, first_bytes: &[u8]) -> Option<TraceFormat> {
        if first_bytes.starts_with(MAGIC) {
            return Some(TraceFormat::Binary);
        }
        // Only complete lines are judged (the sample may cut the last one), unless the sample
        // holds no newline at all.
        let text = match memchr::memrchr(b'\n', first_bytes) {
            Some(i) => first_bytes.get(..i).unwrap_or_default(),
            None => first_bytes,
        };
        let mut judged = 0;
        for line in text.split(|&c| c == b'\n') {
            let t = fields::trim(line.strip_suffix(b"\r").unwrap_or(line));
            // Blank lines, blkparse's `Input file` lines and comments (`#…`, `----` rules)
            // say nothing about the format.
            if t.is_empty() || t.starts_with(b"Input file ") || blkparse::is_comment(t) {
                continue;
            }
            if t == b"fio version 2 iolog" || t == b"fio version 3 iolog" {
                return Some(TraceFormat::FioLog);
            }
            if blkparse::looks_like_event(t) {
                return Some(TraceFormat::Blkparse { action: 'Q' });
            }
            if let Some(f) = csvlike::guess(t) {
                return Some(f);
            }
            // A header line may precede the data; give up after that.
            judged += 1;
            if judged >= 2 {
                break;
            }
        }
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".dmtrace") || name.ends_with(".dmt") {
            return Some(TraceFormat::Binary);
        }
        if name.ends_with(".iolog") {
            return Some(TraceFormat::FioLog);
        }
        None
    }
}

/// Guesses a file's format from its name and first (decompressed) bytes; see
/// [`TraceFormat::detect`].
pub fn detect_file(path: &Path) -> Result<Option<TraceFormat>, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    detect_reader(path, BufReader::new(file))
}

/// [`detect_file`] for a trace already open: `input` is read from its start (at most 4 KiB
/// of it, decompressed if gzip'd); `path` is only a name, used as a hint and in errors.
pub fn detect_reader(path: &Path, input: impl BufRead) -> Result<Option<TraceFormat>, TraceError> {
    let mut input: Box<dyn BufRead + '_> = Box::new(input);
    if input.fill_buf().map_err(|e| TraceError::io(path, e))?.starts_with(&GZIP_MAGIC) {
        input = Box::new(BufReader::new(MultiGzDecoder::new(input)));
    }
    let mut head = Vec::with_capacity(4096);
    input.take(4096).read_to_end(&mut head).map_err(|e| TraceError::io(path, e))?;
    Ok(TraceFormat::detect(path, &head))
}
