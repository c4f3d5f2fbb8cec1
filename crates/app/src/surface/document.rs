//! The result document of a scan: the engine's figures ([`engine::scan::Scanned`]) with the
//! bad-block list in `--fs-block` units, `report`'s one-sentence verdict, the stop reason and
//! the warnings.

use crate::session;
use engine::scan::Scanned;
use stats::surface::{self as sm, BadBlockList};
use stats::ResultDoc;

/// The `surface` document of `scanned`; its bad-block list counts blocks of `fs_block` bytes
/// (the file `--badblocks-out` writes is named later, once written).
pub fn document(scanned: Scanned, fs_block: u64) -> ResultDoc {
    let Scanned { started, target, mut surface, error, warnings } = scanned;
    let mut doc = session::new_doc_at("surface", started);
    doc.target = Some(target);
    let blocks = sm::badblock_numbers(&surface.bad_sectors, fs_block);
    surface.badblocks = Some(BadBlockList { fs_block, blocks, file: None });
    if let Some(e) = error {
        doc.partial = true;
        doc.error = Some(e);
    }
    surface.verdict = report::surface_verdict(&surface, doc.partial);
    for (code, msg) in warnings {
        doc.warn(&code, msg);
    }
    doc.surface = Some(surface);
    doc
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use engine::measure::FaultHook as Hook;
    use engine::scan::{scan_with, Quiet, SurfaceConfig};
    use std::path::Path;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    const MIB: u64 = 1 << 20;

    fn image(dir: &Path, size: u64) -> std::path::PathBuf {
        let p = dir.join("t.img");
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8 + 1).collect();
        std::fs::write(&p, data).unwrap();
        p
    }

    fn scan(path: &Path, stop: bool, faults: &str) -> Scanned {
        let c = SurfaceConfig { block: 256 << 10, access: 0, slow_floor: Duration::from_secs(1), ..Default::default() };
        scan_with(path, &c, &AtomicBool::new(stop), &mut Quiet, Hook::parse(faults).unwrap()).unwrap()
    }

    #[test]
    fn a_clean_scan() {
        let dir = tempfile::tempdir().unwrap();
        let p = image(dir.path(), 4 * MIB);
        let d = document(scan(&p, false, ""), 4096);
        assert!(!d.partial && d.error.is_none());
        assert_eq!(d.command, "surface");
        assert!(d.target.is_some());
        let s = d.surface.as_ref().unwrap();
        assert!(s.verdict.starts_with("no bad sectors, no slow blocks, "), "{}", s.verdict);
        let list = s.badblocks.as_ref().unwrap();
        assert_eq!((list.fs_block, list.blocks.len(), list.file.as_deref()), (4096, 0, None));
    }

    #[test]
    fn bad_sectors_make_the_list_and_the_verdict() {
        let dir = tempfile::tempdir().unwrap();
        let p = image(dir.path(), 4 * MIB);
        let at = 3 * MIB + 5 * 512;
        let d = document(scan(&p, false, &format!("eio@{at}+512,read")), 1024);
        assert!(!d.partial);
        let s = d.surface.as_ref().unwrap();
        assert_eq!(s.badblocks.as_ref().unwrap().blocks, vec![at / 1024]);
        assert!(s.verdict.starts_with("1 bad sector"), "{}", s.verdict);
        let codes: Vec<&str> = d.warnings.iter().map(|w| w.code.as_str()).collect();
        assert_eq!(codes, ["fault-injection"], "the target's warnings, then the scan's");
    }

    #[test]
    fn a_stopped_scan_is_partial() {
        let dir = tempfile::tempdir().unwrap();
        let p = image(dir.path(), 4 * MIB);
        let d = document(scan(&p, true, ""), 4096);
        assert!(d.partial);
        assert_eq!(d.error.as_ref().unwrap().kind, "interrupted");
        let d = document(scan(&p, false, &format!("enodev@{}+1", 2 * MIB)), 4096);
        assert!(d.partial);
        assert_eq!(d.error.as_ref().unwrap().kind, "vanished");
        assert!(d.surface.as_ref().unwrap().verdict.ends_with("(partial scan)"));
    }
}
