//! `--write-through` (DiskSpd's `-Sh` with unbuffered I/O): the target is opened with writes
//! through to the medium (Linux O_DSYNC, Windows FILE_FLAG_WRITE_THROUGH) and the result says
//! so; without it the result carries no such key.

#[macro_use]
mod common;

use common::*;

#[test]
fn write_through_is_asked_for_and_recorded() {
    let dir = tempdir();
    let run = |extra: &[&str]| {
        let o = expect_code(
            dm_in(dir.path())
                .args(["run", "--rw", "write", "--bs", "4k", "--size", "4M", "--runtime", "200ms", "--json"])
                .args(extra),
            0,
        );
        json_of(&o)
    };
    let doc = run(&["--write-through"]);
    assert_eq!(doc["target"]["write_through"], true, "{}", doc["target"]);
    assert!(doc["results"][0]["write"]["iops"].as_f64().unwrap_or(0.0) > 0.0);
    let doc = run(&[]);
    assert!(doc["target"].get("write_through").is_none(), "{}", doc["target"]);
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the test file is removed");
}
