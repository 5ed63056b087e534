//! The event a correlation counts ([`CorrelationHit`]): made by the detection of each
//! record, stored and sorted by the hit store, and read by the windows and tallies of
//! the correlation's evaluation.

use compact_str::CompactString;
use jiff::Timestamp;

/// One event (a record, or a chained correlation's window) that feeds a correlation.
#[derive(Debug, Clone)]
pub struct CorrelationHit {
    /// Correlation index.
    pub correlation: u32,
    /// Bit i is set when the event answers the correlation's reference i.
    pub references: u32,
    /// Record time.
    pub time: Timestamp,
    /// Group-by values, joined with U+001F.
    pub group: Box<str>,
    /// `condition.field` values, joined with U+001F.
    pub value: Option<CompactString>,
    /// `Computer`.
    pub computer: CompactString,
    /// `Channel`.
    pub channel: CompactString,
    /// `EventID`.
    pub event_id: CompactString,
    /// Input file index; with [`CHAINED`] set, an index into the chained windows'
    /// files (kept aside so that a record's hit is no bigger for them).
    pub file: u32,
}

/// The bit of [`CorrelationHit::file`] that marks a chained correlation's window.
pub const CHAINED: u32 = 1 << 31;
