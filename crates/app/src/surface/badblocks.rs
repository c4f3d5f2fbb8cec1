//! `--badblocks-out`: the bad blocks as `e2fsck -l` / `mke2fs -l` read them.

use crate::error::Result;
use files::output::OutputFile;
use stats::ResultDoc;

/// Names `out` in the document's bad-block list and writes the list there: block numbers in
/// file-system blocks from the start of the target, one per line (an empty file when there are
/// none). A document without a list (the scan did not get that far) writes nothing.
pub fn write(out: &OutputFile, doc: &mut ResultDoc) -> Result<()> {
    let Some(list) = doc.surface.as_mut().and_then(|s| s.badblocks.as_mut()) else { return Ok(()) };
    list.file = Some(out.path().display().to_string());
    out.write(stats::surface::badblock_file(&list.blocks).as_bytes())?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use stats::surface::SurfaceResult;

    #[test]
    fn the_list_is_named_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bb.txt");
        let out = files::output::plan(&path, "--badblocks-out", false).unwrap();
        let mut doc = ResultDoc::new("surface", "2026-01-01T00:00:00Z", stats::HostInfo::default());
        write(&out, &mut doc).unwrap();
        assert!(!path.exists(), "no surface section, no file");
        let surface: SurfaceResult = serde_json::from_value(serde_json::json!({
            "mode": "read", "block_bytes": 4096, "logical_block": 512, "offset": 0, "size": 0, "direct": true,
            "scanned_bytes": 0, "blocks": 0, "seconds": 0.0, "zones": [],
            "slow_rule": {"factor": 5.0, "window": 64, "floor_ns": 1, "rereads": 2},
            "slow_blocks": [], "bad_sectors": [], "verdict": "",
            "badblocks": {"fs_block": 4096, "blocks": [3, 17]},
        }))
        .unwrap();
        doc.surface = Some(surface);
        write(&out, &mut doc).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "3\n17\n");
        let named = doc.surface.unwrap().badblocks.unwrap().file;
        assert_eq!(named, Some(path.display().to_string()));
    }
}
