//! Lossless text form of a [`LatHist`]: HdrHistogram's standard V2-deflate encoding in
//! base64 (the `HISTFAAA…` strings that HdrHistogram's Java, C, Go and Rust libraries and
//! HdrHistogram's plotter read). Results carry them with `--histograms`, MPI ranks send them
//! to rank 0, and `merge` adds them up: histograms add exactly, percentiles do not.
//!
//! The layout is the same on both sides (1 ns to 1 h at 3 significant digits), so a count
//! lands in the same bin after the round trip and every figure of the summary survives it.

use super::{value_for, LatHist, LAT_MAX_NS};
use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Why a histogram string could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistCodecError {
    #[error("not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("not an HdrHistogram V2 histogram: {0:?}")]
    Decode(hdrhistogram::serialization::DeserializeError),
    #[error("the histogram holds {0} ns, beyond the 1 h that diskmeter tracks")]
    OutOfRange(u64),
}

impl LatHist {
    /// The histogram as HdrHistogram V2-deflate, base64-encoded.
    pub fn to_base64_v2(&self) -> String {
        let mut h = Histogram::<u64>::new_with_bounds(1, LAT_MAX_NS, 3).expect("valid fixed bounds");
        let r = self.range();
        for (i, &c) in self.counts[r.clone()].iter().enumerate() {
            if c != 0 {
                h.record_n(value_for(r.start + i).max(1), c).expect("in range: same layout");
            }
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new().serialize(&h, &mut bytes).expect("writing to a Vec cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// [`LatHist::to_base64_v2`] of a histogram that holds values; `None` for an empty one
    /// (a direction that did no I/O), as results store them.
    pub fn encoded(&self) -> Option<String> {
        (!self.is_empty()).then(|| self.to_base64_v2())
    }

    /// Read a histogram written by [`LatHist::to_base64_v2`] (or by any HdrHistogram
    /// library, V2 or V2-deflate, with values in nanoseconds up to one hour).
    pub fn from_base64_v2(text: &str) -> Result<LatHist, HistCodecError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        let h: Histogram<u64> =
            Deserializer::new().deserialize(&mut bytes.as_slice()).map_err(HistCodecError::Decode)?;
        let mut out = LatHist::new();
        for v in h.iter_recorded() {
            let low = h.lowest_equivalent(v.value_iterated_to());
            if low > LAT_MAX_NS {
                return Err(HistCodecError::OutOfRange(low));
            }
            out.record_n(low, v.count_at_value());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_empty_histogram_round_trips() {
        let h = LatHist::new();
        let back = LatHist::from_base64_v2(&h.to_base64_v2()).unwrap();
        assert!(back.is_empty());
        assert!(h.to_base64_v2().starts_with("HISTF"), "the standard V2-deflate cookie");
    }

    #[test]
    fn garbage_is_refused_with_a_reason() {
        assert!(matches!(LatHist::from_base64_v2("not base64!"), Err(HistCodecError::Base64(_))));
        assert!(matches!(LatHist::from_base64_v2("AAAA"), Err(HistCodecError::Decode(_))));
    }

    #[test]
    fn the_reference_library_reads_what_we_write() {
        let mut h = LatHist::new();
        h.record_n(1_000_000, 100);
        h.record_n(100_000_000, 9);
        let bytes = base64::engine::general_purpose::STANDARD.decode(h.to_base64_v2()).unwrap();
        let r: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice()).unwrap();
        assert_eq!(r.len(), 109);
        assert_eq!(r.value_at_quantile(0.5), h.quantile(0.5));
        assert_eq!(r.value_at_quantile(0.99), h.quantile(0.99));
        assert_eq!(r.max(), h.max());
    }

    proptest! {
        #[test]
        fn every_figure_survives_the_round_trip(
            values in proptest::collection::vec((1u64..LAT_MAX_NS, 1u64..1000), 1..200)
        ) {
            let mut h = LatHist::new();
            for &(v, n) in &values {
                h.record_n(v, n);
            }
            let back = LatHist::from_base64_v2(&h.to_base64_v2()).unwrap();
            prop_assert_eq!(back.count(), h.count());
            prop_assert_eq!(back.summary(), h.summary());
            prop_assert_eq!(back.cdf(), h.cdf());
        }

        #[test]
        fn merged_after_decoding_equals_decoded_after_merging(
            a in proptest::collection::vec(1u64..10_000_000_000, 1..100),
            b in proptest::collection::vec(1u64..10_000_000_000, 1..100),
        ) {
            let (mut ha, mut hb) = (LatHist::new(), LatHist::new());
            a.iter().for_each(|&v| ha.record(v));
            b.iter().for_each(|&v| hb.record(v));
            let mut both = ha.clone();
            both.add(&hb);
            let mut sum = LatHist::from_base64_v2(&ha.to_base64_v2()).unwrap();
            sum.add(&LatHist::from_base64_v2(&hb.to_base64_v2()).unwrap());
            prop_assert_eq!(sum.summary(), both.summary());
        }
    }
}
