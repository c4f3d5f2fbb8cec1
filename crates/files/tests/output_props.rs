//! Property test of the output rules: whatever the destination is, whether `--force` is given,
//! whatever is written and whether the write completes, the destination changes only when the
//! rules allow it, and then holds exactly the new bytes; nothing else is left in the directory.
#![allow(clippy::unwrap_used)]

use diskmeter_files::output;
use diskmeter_files::FileError;
use proptest::prelude::*;
use std::io::Write;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

#[derive(Debug, Clone, Copy)]
enum Dest {
    Missing,
    UserFile,
    OurResult,
    Directory,
    Fifo,
    LinkToUserFile,
    LinkToOurResult,
    DanglingLink,
}

fn dest() -> impl Strategy<Value = Dest> {
    prop_oneof![
        Just(Dest::Missing),
        Just(Dest::UserFile),
        Just(Dest::OurResult),
        Just(Dest::Directory),
        Just(Dest::Fifo),
        Just(Dest::LinkToUserFile),
        Just(Dest::LinkToOurResult),
        Just(Dest::DanglingLink),
    ]
}

const OURS: &[u8] = b"{\n  \"schema\": \"diskmeter.result.v1\"\n}\n";

fn make(dir: &Path, d: Dest, user: &[u8]) -> std::path::PathBuf {
    let p = dir.join("out.json");
    let real = dir.join("real.json");
    match d {
        Dest::Missing => {}
        Dest::UserFile => std::fs::write(&p, user).unwrap(),
        Dest::OurResult => std::fs::write(&p, OURS).unwrap(),
        Dest::Directory => std::fs::create_dir(&p).unwrap(),
        Dest::Fifo => {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        Dest::LinkToUserFile => {
            std::fs::write(&real, user).unwrap();
            std::os::unix::fs::symlink("real.json", &p).unwrap();
        }
        Dest::LinkToOurResult => {
            std::fs::write(&real, OURS).unwrap();
            std::os::unix::fs::symlink("real.json", &p).unwrap();
        }
        Dest::DanglingLink => std::os::unix::fs::symlink("nowhere.json", &p).unwrap(),
    }
    p
}

/// What the destination holds now: file bytes, or a description of the node.
fn state(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let ft = std::fs::symlink_metadata(e.path()).unwrap().file_type();
            let what = if ft.is_file() {
                format!("file:{:?}", std::fs::read(e.path()).unwrap())
            } else if ft.is_symlink() {
                format!("link:{:?}", std::fs::read_link(e.path()).unwrap())
            } else if ft.is_fifo() {
                "fifo".into()
            } else {
                "dir".into()
            };
            (e.file_name().to_string_lossy().into_owned(), what)
        })
        .collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn outputs_change_only_what_the_rules_allow(
        d in dest(),
        force in any::<bool>(),
        commit in any::<bool>(),
        user in proptest::collection::vec(any::<u8>(), 0..64),
        new in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let p = make(dir.path(), d, &user);
        let before = state(dir.path());
        let allowed = match d {
            Dest::Missing | Dest::OurResult | Dest::LinkToOurResult => true,
            Dest::UserFile | Dest::LinkToUserFile => force,
            Dest::Directory | Dest::Fifo | Dest::DanglingLink => false,
        };
        match output::plan(&p, "--output", force) {
            Err(e) => {
                prop_assert!(!allowed, "refused an allowed destination {d:?}: {e}");
                prop_assert!(matches!(e, FileError::Usage(_)), "{e}");
                prop_assert_eq!(state(dir.path()), before);
            }
            Ok(out) => {
                prop_assert!(allowed, "accepted {d:?} (force {force})");
                let mut f = out.create().unwrap();
                f.write_all(&new).unwrap();
                if commit {
                    f.commit().unwrap();
                    let target = std::fs::canonicalize(&p).unwrap();
                    prop_assert_eq!(std::fs::read(&target).unwrap(), new);
                    // A link stays a link.
                    if matches!(d, Dest::LinkToUserFile | Dest::LinkToOurResult) {
                        prop_assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_symlink());
                    }
                    let names: Vec<String> = state(dir.path()).into_iter().map(|(n, _)| n).collect();
                    let want: Vec<String> = before.iter().map(|(n, _)| n.clone()).chain(
                        matches!(d, Dest::Missing).then(|| "out.json".to_string())).collect();
                    let mut want = want;
                    want.sort();
                    prop_assert_eq!(names, want, "no temporary file remains");
                } else {
                    drop(f);
                    prop_assert_eq!(state(dir.path()), before, "an unfinished write changes nothing");
                }
            }
        }
    }
}
