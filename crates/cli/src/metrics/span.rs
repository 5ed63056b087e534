//! The records a tally counted and the time they span: kept alike by eid-metrics,
//! log-metrics and logon-summary, per worker and then per file.

use jiff::Timestamp;

/// How many records, and the earliest and latest time among them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Span {
    /// Records counted.
    pub records: u64,
    /// The earliest readable time.
    pub first: Option<Timestamp>,
    /// The latest readable time.
    pub last: Option<Timestamp>,
}

impl Span {
    /// Counts one record, of time `t` when it has a readable one.
    pub fn add(&mut self, t: Option<Timestamp>) {
        self.records += 1;
        if let Some(t) = t {
            self.first = Some(self.first.map_or(t, |f| f.min(t)));
            self.last = Some(self.last.map_or(t, |l| l.max(t)));
        }
    }

    /// Adds what another worker counted.
    pub fn merge(&mut self, o: Span) {
        self.records += o.records;
        self.first = match (self.first, o.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = self.last.max(o.last);
    }
}
