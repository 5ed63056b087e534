//! `DetectInfo`: one row of the timeline, holding only what the output prints.

use compact_str::CompactString;
use jiff::Timestamp;

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
}
