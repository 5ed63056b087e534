//! `DetectInfo`: one row of the timeline, holding only what the output prints.

use compact_str::CompactString;
use jiff::Timestamp;
use std::cmp::Ordering;

/// Where a detection's record came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// One record of input file `file` (an index into the scan's file list).
    Record {
        /// Input file index.
        file: u32,
        /// EventRecordID.
        record_id: u64,
    },
    /// A correlation over several records; the distinct files, joined.
    Correlation {
        /// Distinct input files, joined with ` ¦ `.
        files: Box<str>,
    },
}

/// A detection, slim: the rule is an index, strings are compact.
#[derive(Debug, Clone)]
pub struct DetectInfo {
    /// The record's `TimeCreated` (a correlation's window start).
    pub time: Timestamp,
    /// Index of the rule (or, with `correlation`, of the correlation) in the rule set.
    pub rule: u32,
    /// Whether `rule` indexes the rule set's correlations.
    pub correlation: bool,
    /// The record was carved from slack space or a damaged chunk (`--recover-records`).
    pub recovered: bool,
    /// Record or correlation origin.
    pub origin: Origin,
    /// `Computer`.
    pub computer: CompactString,
    /// `Channel`, as recorded (abbreviated when written).
    pub channel: CompactString,
    /// `EventID`.
    pub event_id: CompactString,
    /// `Provider_Name` (`-` for correlations).
    pub provider: CompactString,
    /// The rendered Details.
    pub details: Box<str>,
    /// ExtraFieldInfo, only when the profile prints it.
    pub extra: Option<Box<str>>,
    /// AllFieldInfo (every event-data field), only when the profile prints it.
    pub all_fields: Option<Box<str>>,
}

impl DetectInfo {
    /// The sort key of the timeline: time, then file, record and rule for a stable order.
    pub fn sort_key(&self) -> (Timestamp, u32, u64, bool, u32) {
        match &self.origin {
            Origin::Record { file, record_id } => {
                (self.time, *file, *record_id, self.correlation, self.rule)
            }
            Origin::Correlation { .. } => {
                (self.time, u32::MAX, u64::MAX, self.correlation, self.rule)
            }
        }
    }

    /// The timeline's order: [`Self::sort_key`], then every other field, so that rows
    /// with equal keys (records without an EventRecordID, correlations with the same
    /// window start, carved copies of live records) still come in one order whether they
    /// were sorted in memory or merged from spilled runs. Rows equal under it print alike.
    pub fn timeline_cmp(&self, other: &Self) -> Ordering {
        self.sort_key()
            .cmp(&other.sort_key())
            .then_with(|| self.tie_key().cmp(&other.tie_key()))
    }

    #[allow(clippy::type_complexity)]
    fn tie_key(
        &self,
    ) -> (
        &str,
        &str,
        &str,
        &str,
        &str,
        &str,
        Option<&str>,
        Option<&str>,
        bool,
    ) {
        let files = match &self.origin {
            Origin::Record { .. } => "",
            Origin::Correlation { files } => files,
        };
        (
            files,
            &self.computer,
            &self.channel,
            &self.event_id,
            &self.provider,
            &self.details,
            self.extra.as_deref(),
            self.all_fields.as_deref(),
            self.recovered,
        )
    }

    /// About how many bytes the row holds: the struct and the strings it owns.
    pub fn approx_bytes(&self) -> usize {
        fn heap(s: &CompactString) -> usize {
            if s.is_heap_allocated() {
                s.capacity()
            } else {
                0
            }
        }
        let files = match &self.origin {
            Origin::Record { .. } => 0,
            Origin::Correlation { files } => files.len(),
        };
        std::mem::size_of::<Self>()
            + heap(&self.computer)
            + heap(&self.channel)
            + heap(&self.event_id)
            + heap(&self.provider)
            + self.details.len()
            + self.extra.as_ref().map_or(0, |s| s.len())
            + self.all_fields.as_ref().map_or(0, |s| s.len())
            + files
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::tests::row;

    /// A record row at `secs` of file `file`, record `record_id`, rule `rule`.
    fn at(secs: i64, file: u32, record_id: u64, rule: u32) -> DetectInfo {
        DetectInfo {
            time: Timestamp::new(secs, 0).unwrap(),
            rule,
            correlation: false,
            recovered: false,
            origin: Origin::Record { file, record_id },
            ..row(1)
        }
    }

    fn correlation(secs: i64, rule: u32, files: &str) -> DetectInfo {
        DetectInfo {
            correlation: true,
            origin: Origin::Correlation {
                files: files.into(),
            },
            ..at(secs, 0, 0, rule)
        }
    }

    #[test]
    fn time_orders_first_then_file_then_record_then_rule() {
        use Ordering::{Greater, Less};
        let base = at(10, 5, 50, 5);
        let cases = [
            (at(9, 9, 99, 9), Less),
            (at(11, 0, 0, 0), Greater),
            (at(10, 4, 99, 9), Less),
            (at(10, 6, 0, 0), Greater),
            (at(10, 5, 49, 9), Less),
            (at(10, 5, 51, 0), Greater),
            (at(10, 5, 50, 4), Less),
            (at(10, 5, 50, 6), Greater),
        ];
        for (other, expected) in cases {
            assert_eq!(other.timeline_cmp(&base), expected, "{other:?}");
            assert_eq!(base.timeline_cmp(&other), expected.reverse(), "{other:?}");
            assert_eq!(other.sort_key().cmp(&base.sort_key()), expected);
        }
        assert_eq!(base.timeline_cmp(&base.clone()), Ordering::Equal);
    }

    #[test]
    fn a_correlation_comes_after_every_record_of_its_time_and_before_later_ones() {
        let c = correlation(10, 0, "a.evtx");
        assert!(at(10, u32::MAX - 1, u64::MAX, u32::MAX)
            .timeline_cmp(&c)
            .is_lt());
        assert!(c.timeline_cmp(&at(11, 0, 0, 0)).is_lt());
        assert!(correlation(10, 0, "z")
            .timeline_cmp(&correlation(10, 1, "a"))
            .is_lt());
        assert_eq!(c.sort_key(), (c.time, u32::MAX, u64::MAX, true, 0));
    }

    #[test]
    fn rows_with_equal_keys_are_ordered_by_every_other_field() {
        let base = at(10, 1, 1, 1);
        let changes: Vec<(&str, DetectInfo)> = vec![
            (
                "computer",
                DetectInfo {
                    computer: "zz".into(),
                    ..base.clone()
                },
            ),
            (
                "channel",
                DetectInfo {
                    channel: "zz".into(),
                    ..base.clone()
                },
            ),
            (
                "event_id",
                DetectInfo {
                    event_id: "zz".into(),
                    ..base.clone()
                },
            ),
            (
                "provider",
                DetectInfo {
                    provider: "zz".into(),
                    ..base.clone()
                },
            ),
            (
                "details",
                DetectInfo {
                    details: "zz".into(),
                    ..base.clone()
                },
            ),
            (
                "extra",
                DetectInfo {
                    extra: Some("zz".into()),
                    ..base.clone()
                },
            ),
            (
                "all_fields",
                DetectInfo {
                    all_fields: Some("zz".into()),
                    ..base.clone()
                },
            ),
            (
                "recovered",
                DetectInfo {
                    recovered: !base.recovered,
                    ..base.clone()
                },
            ),
        ];
        for (field, other) in &changes {
            assert_eq!(other.sort_key(), base.sort_key(), "{field}");
            let ord = base.timeline_cmp(other);
            assert_ne!(ord, Ordering::Equal, "{field} breaks the tie");
            assert_eq!(other.timeline_cmp(&base), ord.reverse(), "{field}");
        }
        let (a, b) = (correlation(10, 0, "a.evtx"), correlation(10, 0, "b.evtx"));
        assert!(a.timeline_cmp(&b).is_lt(), "correlations by their files");
    }

    #[test]
    fn timeline_order_is_total_and_consistent_with_the_sort_key() {
        let mut rows: Vec<DetectInfo> = (0..300).map(row).collect();
        rows.sort_by(DetectInfo::timeline_cmp);
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i..] {
                let ord = a.timeline_cmp(b);
                assert!(ord.is_le(), "{a:?} after {b:?}");
                assert_eq!(b.timeline_cmp(a), ord.reverse());
                assert!(a.sort_key() <= b.sort_key());
                if ord.is_eq() {
                    assert_eq!(format!("{a:?}"), format!("{b:?}"), "equal rows print alike");
                }
            }
        }
    }

    #[test]
    fn approx_bytes_grows_with_the_text_a_row_owns() {
        let base = DetectInfo {
            computer: "pc".into(),
            details: "".into(),
            extra: None,
            all_fields: None,
            ..at(0, 0, 0, 0)
        };
        let size = base.approx_bytes();
        assert!(size >= std::mem::size_of::<DetectInfo>());
        let long = "x".repeat(1000);
        let details = DetectInfo {
            details: long.as_str().into(),
            ..base.clone()
        };
        assert_eq!(details.approx_bytes(), size + 1000);
        let extra = DetectInfo {
            extra: Some(long.as_str().into()),
            ..base.clone()
        };
        assert_eq!(extra.approx_bytes(), size + 1000);
        let all = DetectInfo {
            all_fields: Some(long.as_str().into()),
            ..base.clone()
        };
        assert_eq!(all.approx_bytes(), size + 1000);
        // A computer name held inline costs nothing more; a long one its heap bytes.
        let computer = DetectInfo {
            computer: long.as_str().into(),
            ..base.clone()
        };
        assert!(computer.approx_bytes() >= size + 1000);
        let files = DetectInfo {
            origin: Origin::Correlation {
                files: long.as_str().into(),
            },
            ..base.clone()
        };
        assert_eq!(files.approx_bytes(), size + 1000);
    }
}
