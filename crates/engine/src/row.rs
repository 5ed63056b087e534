//! `DetectInfo`: one row of the timeline, holding only what the output prints, as typed
//! values: the rule as a [`RuleRef`], the cells of several items as [`Items`], a
//! correlation's files as file indices.

use crate::items::{ItemIter, Items};
use compact_str::CompactString;
use jiff::Timestamp;
use std::cmp::Ordering;

/// The rule a row names: a detection rule or a correlation, by its index in the rule
/// set's rules or correlations, or an integrity finding's built-in rule. A rule comes
/// before a correlation, a correlation before an integrity finding in the timeline's
/// order, then lower indices first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleRef {
    /// Index into `RuleSet::rules`.
    Rule(u32),
    /// Index into `RuleSet::correlations`.
    Correlation(u32),
    /// An integrity finding (`--integrity`): one of the built-in integrity rules
    /// ([`crate::integrity_meta`]).
    Integrity(crate::IntegrityRule),
}

impl RuleRef {
    /// The index, into the rules or the correlations (an integrity rule's
    /// [`crate::IntegrityRule::index`]).
    pub fn index(self) -> u32 {
        match self {
            RuleRef::Rule(i) | RuleRef::Correlation(i) => i,
            RuleRef::Integrity(r) => r.index(),
        }
    }
}

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
    /// A correlation over several records.
    Correlation(Box<CorrelationOrigin>),
}

/// What a correlation's records had: each list distinct and sorted (files by their
/// path as shown, the others by their text).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct CorrelationOrigin {
    /// Input file indices.
    pub files: Box<[u32]>,
    /// `Computer`s.
    pub computers: Items,
    /// `Channel`s, as recorded.
    pub channels: Items,
    /// `EventID`s.
    pub event_ids: Items,
}

/// The addresses `-G` looks up for a row ([`crate::ScannerBuilder::geo_ip`]): the
/// event's source and target IP fields as recorded, each the first of its
/// `geoip_field_mapping.yaml` placeholders (`SrcIP`, `TgtIP`) the event has; `None` when
/// it has none, or an empty one.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct GeoAddrs {
    /// The source address.
    pub src: Option<CompactString>,
    /// The target address.
    pub tgt: Option<CompactString>,
}

/// A detection, slim: the rule is an index, strings are compact.
#[derive(Debug, Clone)]
pub struct DetectInfo {
    /// The record's `TimeCreated` (a correlation's window start).
    pub time: Timestamp,
    /// The rule or correlation.
    pub rule: RuleRef,
    /// The record was carved from slack space or a damaged chunk (`--recover-records`).
    pub recovered: bool,
    /// Record or correlation origin.
    pub origin: Origin,
    /// `Computer` (empty for a correlation: see [`Self::computers`]).
    pub computer: CompactString,
    /// `Channel`, as recorded, abbreviated when written (empty for a correlation: see
    /// [`Self::channels`]).
    pub channel: CompactString,
    /// `EventID` (empty for a correlation: see [`Self::event_ids`]).
    pub event_id: CompactString,
    /// `Provider_Name` (`-` for correlations).
    pub provider: CompactString,
    /// Details, `label: value` items (none: nothing to show).
    pub details: Items,
    /// ExtraFieldInfo, only when the profile prints it.
    pub extra: Option<Items>,
    /// AllFieldInfo (every event-data field), only when the profile prints it.
    pub all_fields: Option<Items>,
    /// The addresses `-G` looks up: only with [`crate::ScannerBuilder::geo_ip`], for
    /// events its mapping's `Filter` lists that have either address.
    pub geo: Option<Box<GeoAddrs>>,
}

/// A row's computers, channels or EventIDs: the record's one, or a correlation's list.
#[derive(Debug, Clone)]
pub enum Names<'a> {
    /// A record's value (taken once).
    One(Option<&'a str>),
    /// A correlation's values.
    Many(ItemIter<'a>),
}

impl<'a> Iterator for Names<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Names::One(v) => v.take(),
            Names::Many(items) => items.next().map(|i| i.text()),
        }
    }
}

impl DetectInfo {
    /// The sort key of the timeline: time, then file, record and rule for a stable order.
    pub fn sort_key(&self) -> (Timestamp, u32, u64, RuleRef) {
        match &self.origin {
            Origin::Record { file, record_id } => (self.time, *file, *record_id, self.rule),
            Origin::Correlation(_) => (self.time, u32::MAX, u64::MAX, self.rule),
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
        Option<&CorrelationOrigin>,
        &str,
        &str,
        &str,
        &str,
        &Items,
        Option<&Items>,
        Option<&Items>,
        bool,
        Option<&GeoAddrs>,
    ) {
        let sources = match &self.origin {
            Origin::Record { .. } => None,
            Origin::Correlation(c) => Some(&**c),
        };
        (
            sources,
            &self.computer,
            &self.channel,
            &self.event_id,
            &self.provider,
            &self.details,
            self.extra.as_ref(),
            self.all_fields.as_ref(),
            self.recovered,
            self.geo.as_deref(),
        )
    }

    /// The computers of the row: the record's, or each of a correlation's.
    pub fn computers(&self) -> Names<'_> {
        match &self.origin {
            Origin::Record { .. } => Names::One(Some(&self.computer)),
            Origin::Correlation(c) => Names::Many(c.computers.iter()),
        }
    }

    /// The channels of the row, as recorded: the record's, or each of a correlation's.
    pub fn channels(&self) -> Names<'_> {
        match &self.origin {
            Origin::Record { .. } => Names::One(Some(&self.channel)),
            Origin::Correlation(c) => Names::Many(c.channels.iter()),
        }
    }

    /// The EventIDs of the row: the record's, or each of a correlation's.
    pub fn event_ids(&self) -> Names<'_> {
        match &self.origin {
            Origin::Record { .. } => Names::One(Some(&self.event_id)),
            Origin::Correlation(c) => Names::Many(c.event_ids.iter()),
        }
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
        let origin = match &self.origin {
            Origin::Record { .. } => 0,
            Origin::Correlation(c) => {
                std::mem::size_of::<CorrelationOrigin>()
                    + std::mem::size_of_val(&*c.files)
                    + c.computers.heap_bytes()
                    + c.channels.heap_bytes()
                    + c.event_ids.heap_bytes()
            }
        };
        std::mem::size_of::<Self>()
            + heap(&self.computer)
            + heap(&self.channel)
            + heap(&self.event_id)
            + heap(&self.provider)
            + self.details.heap_bytes()
            + self.extra.as_ref().map_or(0, Items::heap_bytes)
            + self.all_fields.as_ref().map_or(0, Items::heap_bytes)
            + self.geo.as_ref().map_or(0, |g| {
                std::mem::size_of::<GeoAddrs>()
                    + g.src.as_ref().map_or(0, heap)
                    + g.tgt.as_ref().map_or(0, heap)
            })
            + origin
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
            rule: RuleRef::Rule(rule),
            recovered: false,
            origin: Origin::Record { file, record_id },
            ..row(1)
        }
    }

    fn correlation(secs: i64, rule: u32, files: &[u32]) -> DetectInfo {
        DetectInfo {
            rule: RuleRef::Correlation(rule),
            origin: Origin::Correlation(Box::new(CorrelationOrigin {
                files: files.into(),
                ..CorrelationOrigin::default()
            })),
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
        let c = correlation(10, 0, &[0]);
        assert!(at(10, u32::MAX - 1, u64::MAX, u32::MAX)
            .timeline_cmp(&c)
            .is_lt());
        let mut last = at(10, u32::MAX, u64::MAX, u32::MAX);
        last.rule = RuleRef::Rule(u32::MAX);
        assert!(last.timeline_cmp(&c).is_lt(), "a rule before a correlation");
        assert!(c.timeline_cmp(&at(11, 0, 0, 0)).is_lt());
        assert!(correlation(10, 0, &[9])
            .timeline_cmp(&correlation(10, 1, &[0]))
            .is_lt());
        assert_eq!(
            c.sort_key(),
            (c.time, u32::MAX, u64::MAX, RuleRef::Correlation(0))
        );
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
                    details: Items::of(["zz"]),
                    ..base.clone()
                },
            ),
            (
                "extra",
                DetectInfo {
                    extra: Some(Items::of(["zz"])),
                    ..base.clone()
                },
            ),
            (
                "all_fields",
                DetectInfo {
                    all_fields: Some(Items::of(["zz"])),
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
        let (a, b) = (correlation(10, 0, &[0]), correlation(10, 0, &[1]));
        assert!(a.timeline_cmp(&b).is_lt(), "correlations by their files");
        let mut c = correlation(10, 0, &[0]);
        if let Origin::Correlation(o) = &mut c.origin {
            o.computers = Items::of(["b"]);
        }
        assert!(a.timeline_cmp(&c).is_lt(), "then by their computers");
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
    fn a_rows_names_are_its_records_or_its_correlations() {
        let r = at(0, 0, 0, 0);
        assert_eq!(r.computers().collect::<Vec<_>>(), [r.computer.as_str()]);
        assert_eq!(r.channels().collect::<Vec<_>>(), [r.channel.as_str()]);
        assert_eq!(r.event_ids().collect::<Vec<_>>(), [r.event_id.as_str()]);
        let mut c = correlation(0, 0, &[0, 1]);
        if let Origin::Correlation(o) = &mut c.origin {
            o.computers = Items::of(["DC01", "WS02"]);
            o.channels = Items::of(["Security"]);
            o.event_ids = Items::of(["4624", "4625"]);
        }
        assert_eq!(c.computers().collect::<Vec<_>>(), ["DC01", "WS02"]);
        assert_eq!(c.channels().collect::<Vec<_>>(), ["Security"]);
        assert_eq!(c.event_ids().collect::<Vec<_>>(), ["4624", "4625"]);
    }

    #[test]
    fn approx_bytes_grows_with_the_text_a_row_owns() {
        let base = DetectInfo {
            computer: "pc".into(),
            details: Items::default(),
            extra: None,
            all_fields: None,
            ..at(0, 0, 0, 0)
        };
        let size = base.approx_bytes();
        assert!(size >= std::mem::size_of::<DetectInfo>());
        let long = "x".repeat(1000);
        let item = std::mem::size_of::<crate::items::ItemEnd>();
        let details = DetectInfo {
            details: Items::of([long.as_str()]),
            ..base.clone()
        };
        assert_eq!(details.approx_bytes(), size + 1000 + item);
        let extra = DetectInfo {
            extra: Some(Items::of([long.as_str()])),
            ..base.clone()
        };
        assert_eq!(extra.approx_bytes(), size + 1000 + item);
        let all = DetectInfo {
            all_fields: Some(Items::of([long.as_str()])),
            ..base.clone()
        };
        assert_eq!(all.approx_bytes(), size + 1000 + item);
        // A computer name held inline costs nothing more; a long one its heap bytes.
        let computer = DetectInfo {
            computer: long.as_str().into(),
            ..base.clone()
        };
        assert!(computer.approx_bytes() >= size + 1000);
        let files = correlation(0, 0, &[1; 250]);
        assert!(files.approx_bytes() >= size + 1000);
    }
}
