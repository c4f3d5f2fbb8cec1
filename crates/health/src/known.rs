//! Rated endurance of a few drive models, each figure from the maker's own published
//! table (no figure without a source). The user's `--tbw`/`--dwpd` always wins.

use crate::endurance::Rated;

/// Samsung's consumer SSD limited-warranty table ("Limited Warranty Condition (Period
/// and TBW)"), semiconductor.samsung.com/us/consumer-storage/support/faqs/05/.
const SAMSUNG_FAQ: &str = "Samsung warranty table, semiconductor.samsung.com/us/consumer-storage/support/faqs/05/";

/// (series as smartctl names it, capacity token, warranty years, TBW in TB).
const TABLE: [(&str, &str, u32, u64); 13] = [
    ("Samsung SSD 850 EVO", "120GB", 5, 75),
    ("Samsung SSD 850 EVO", "250GB", 5, 75),
    ("Samsung SSD 850 EVO", "500GB", 5, 150),
    ("Samsung SSD 850 EVO", "1TB", 5, 150),
    ("Samsung SSD 850 EVO", "2TB", 5, 300),
    ("Samsung SSD 850 EVO", "4TB", 5, 300),
    ("Samsung SSD 850 PRO", "128GB", 10, 150),
    ("Samsung SSD 850 PRO", "256GB", 10, 150),
    ("Samsung SSD 850 PRO", "512GB", 10, 150),
    ("Samsung SSD 850 PRO", "1TB", 10, 150),
    ("Samsung SSD 850 PRO", "2TB", 10, 300),
    ("Samsung SSD 950 PRO", "256GB", 5, 200),
    ("Samsung SSD 950 PRO", "512GB", 5, 400),
];

/// The published rating of `model` (smartctl's `model_name`), if diskmeter knows one.
/// The series must start the name and the capacity must end it ("Samsung SSD 850 EVO
/// M.2 500GB" is an 850 EVO 500GB).
pub fn rated_for(model: &str) -> Option<Rated> {
    let m = model.trim();
    TABLE.iter().find(|(series, cap, _, _)| m.starts_with(series) && m.ends_with(&format!(" {cap}"))).map(
        |(series, cap, years, tb)| Rated {
            bytes: tb * 1_000_000_000_000,
            source: format!("{series} {cap}: {years} years or {tb} TBW ({SAMSUNG_FAQ})"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_series_and_capacity() {
        let r = rated_for("Samsung SSD 850 EVO 500GB").unwrap();
        assert_eq!(r.bytes, 150_000_000_000_000);
        assert!(r.source.contains("5 years or 150 TBW"));
        assert_eq!(rated_for("Samsung SSD 850 EVO M.2 500GB").map(|r| r.bytes), Some(150_000_000_000_000));
        assert_eq!(rated_for("Samsung SSD 850 PRO 2TB").map(|r| r.bytes), Some(300_000_000_000_000));
        assert_eq!(rated_for("Samsung SSD 860 EVO 500GB"), None);
        assert_eq!(rated_for("Samsung SSD 850 EVO 5000GB"), None);
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,40}") {
            let _ = rated_for(&s);
        }
    }
}
