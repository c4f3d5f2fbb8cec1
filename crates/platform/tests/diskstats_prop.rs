//! Any well-formed /proc/diskstats line round-trips; garbage never panics.
#![allow(clippy::unwrap_used)]

use diskmeter_platform::diskstats::{parse, parse_line};
use proptest::prelude::*;

proptest! {
    #[test]
    fn well_formed_lines_round_trip(
        v in proptest::collection::vec(any::<u64>(), 17),
        cols in prop_oneof![Just(14usize), Just(18), Just(20)],
        major in any::<u32>(),
        minor in any::<u32>(),
        name in "[a-z][a-z0-9-]{0,12}",
    ) {
        let fields: Vec<String> = v.iter().take(cols - 3).map(u64::to_string).collect();
        let line = format!("{major:>4} {minor:>7} {name} {}", fields.join(" "));
        let l = parse_line(&line).unwrap();
        prop_assert_eq!((l.major, l.minor, l.name.as_str()), (major, minor, name.as_str()));
        let c = l.counters;
        prop_assert_eq!(c.columns as usize, cols);
        let got = [c.rd_ios, c.rd_merges, c.rd_sectors, c.rd_ticks, c.wr_ios, c.wr_merges, c.wr_sectors, c.wr_ticks,
            c.inflight, c.io_ticks, c.time_in_queue, c.dc_ios, c.dc_merges, c.dc_sectors, c.dc_ticks, c.fl_ios, c.fl_ticks];
        for (i, g) in got.iter().enumerate() {
            let want = if i < cols - 3 { v[i] } else { 0 };
            prop_assert_eq!(*g, want, "field {}", i);
        }
    }

    #[test]
    fn garbage_never_panics(s in "\\PC{0,300}") {
        let _ = parse_line(&s);
        let _ = parse(&s);
    }

    #[test]
    fn numeric_junk_never_panics(v in proptest::collection::vec("[0-9x-]{0,25}", 0..24)) {
        let line = v.join(" ");
        let _ = parse_line(&line);
    }
}
