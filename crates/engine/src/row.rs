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
