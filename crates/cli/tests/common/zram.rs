//! A zram device of the test's own: created through zram-control, removed on drop (also when
//! the test panics). Never touches a zram device it did not create: one may be swap.

use std::path::{Path, PathBuf};

const CONTROL: &str = "/sys/class/zram-control";

pub struct Zram {
    pub id: u32,
    pub dev: PathBuf,
}

impl Zram {
    /// Why zram tests cannot run here, if they cannot.
    pub fn unavailable() -> Option<&'static str> {
        if !super::is_root() {
            return Some("not root");
        }
        if !Path::new(CONTROL).join("hot_add").exists() {
            return Some("no /sys/class/zram-control (zram not built in or loaded)");
        }
        None
    }

    /// A new zram device of `mib` MiB, every block written with random data (so reads find
    /// stored pages, not the zero page).
    pub fn filled(mib: u64) -> Zram {
        let id: u32 = std::fs::read_to_string(Path::new(CONTROL).join("hot_add"))
            .expect("zram hot_add")
            .trim()
            .parse()
            .expect("zram id");
        let z = Zram { id, dev: PathBuf::from(format!("/dev/zram{id}")) };
        std::fs::write(format!("/sys/block/zram{id}/disksize"), format!("{mib}M")).expect("zram disksize");
        let st = std::process::Command::new("dd")
            .args(["if=/dev/urandom", "bs=1M", "oflag=direct", "status=none"])
            .arg(format!("of={}", z.dev.display()))
            .arg(format!("count={mib}"))
            .status()
            .expect("dd");
        assert!(st.success(), "filling {}", z.dev.display());
        z
    }

    pub fn dev_str(&self) -> &str {
        self.dev.to_str().expect("utf-8 device path")
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        // A device still open (a run that has not quite let go) refuses removal: retry briefly.
        for _ in 0..50 {
            if std::fs::write(Path::new(CONTROL).join("hot_remove"), self.id.to_string()).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("note: could not remove zram{}", self.id);
    }
}
