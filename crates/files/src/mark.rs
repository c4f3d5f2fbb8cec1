//! How diskmeter knows a file is its own: an extended attribute it sets on every output file, or
//! the unmistakable start of one of its formats (for copies and file systems without xattrs).

use std::fs::File;
use std::io::Read;
use std::path::Path;

const XATTR: &str = "user.diskmeter";
const OUTPUT: &[u8] = b"output";

/// Marks `file` as a diskmeter output. Failure (no user xattrs on this file system) only means
/// the file is later recognised by its contents, or not at all, which is the safe side.
pub fn set_output_mark(file: &File) {
    let _ = platform::mark::set(file, XATTR, OUTPUT);
}

/// What kind of diskmeter file `path` is, or `None` when nothing says it is diskmeter's.
pub fn is_ours(path: &Path) -> Option<&'static str> {
    if platform::mark::get(path, XATTR, 16).is_some_and(|v| v == OUTPUT) {
        return Some("a diskmeter output");
    }
    let mut head = Vec::with_capacity(2048);
    File::open(path).ok()?.take(2048).read_to_end(&mut head).ok()?;
    recognise(&head)
}

/// Recognises the start of a diskmeter format.
pub fn recognise(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start();
    if head.starts_with(b"DMTRACE") {
        Some("a diskmeter trace")
    } else if t.starts_with('{') && (t.contains("\"schema\": \"diskmeter.") || t.contains("\"schema\":\"diskmeter.")) {
        Some("a diskmeter result")
    } else if t.starts_with("<!DOCTYPE html>") && t.contains("<meta name=\"generator\" content=\"diskmeter") {
        Some("a diskmeter report")
    } else if t.starts_with("# diskmeter ") {
        Some("a diskmeter Markdown report")
    } else if t.starts_with("diskmeter ") && t.lines().next().is_some_and(|l| l.contains(" · ")) {
        Some("a diskmeter text report")
    } else if t.starts_with(".ie \\n(.g .ds Aq") && t.contains("\n.TH diskmeter") {
        Some("a diskmeter manual page")
    } else if t.starts_with("time_us,op,offset,size\n") {
        Some("a diskmeter CSV trace")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_each_format_and_nothing_else() {
        assert!(recognise(b"{\n  \"schema\": \"diskmeter.result.v1\",").is_some());
        assert!(recognise(b"{\"schema\":\"diskmeter.top-record.v1\"}").is_some());
        assert!(recognise(b"DMTRACE1\x01\x00").is_some());
        assert!(recognise(b"<!DOCTYPE html>\n<html>\n<meta name=\"generator\" content=\"diskmeter 0.1.0\">").is_some());
        assert!(recognise(b"# diskmeter run \xe2\x80\x94 null\n").is_some());
        assert!(recognise("diskmeter 0.1.0 · run · 2026".as_bytes()).is_some());
        assert!(recognise(b"time_us,op,offset,size\n0,R,0,4096\n").is_some());
        assert!(recognise(b".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH diskmeter-mark 1 \"2026-11-28\"").is_some());
        for foreign in [
            &b"{\"schema\": \"other.v1\"}"[..],
            b"<!DOCTYPE html><title>mine</title>",
            b"# my notes about diskmeter\n",
            b"diskmeter is great\n",
            b".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH rg 1\n",
            b"1234\n5678\n",
            b"",
        ] {
            assert!(recognise(foreign).is_none(), "{:?}", String::from_utf8_lossy(foreign));
        }
    }
}
