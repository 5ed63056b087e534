//! Which kinds of event the evidence holds, counted during the scan
//! ([`crate::ScannerBuilder::coverage`]): per (Channel, Provider, EventID), the records,
//! the computers, the first and last time, and the detections they gave. Each worker
//! keeps its own [`TypeTally`]; they are merged when the scan ends. Keys are nested maps
//! looked up by the record's text, so a record allocates only for a new key or computer.

use jiff::Timestamp;
use scanner_input::RecordView;
use scanner_rules::{FieldId, FxHashMap, FxHashSet, CHANNEL, EVENT_ID};

/// What one (Channel, Provider, EventID) holds.
#[derive(Debug, Default, Clone)]
pub struct TypeCount {
    /// Records.
    pub events: u64,
    /// Rows the rules gave for them (correlations aside).
    pub detections: u64,
    /// The distinct `Computer`s.
    pub computers: FxHashSet<Box<str>>,
    /// The earliest readable `SystemTime`.
    pub first: Option<Timestamp>,
    /// The latest.
    pub last: Option<Timestamp>,
}

impl TypeCount {
    fn merge(&mut self, o: TypeCount) {
        self.events += o.events;
        self.detections += o.detections;
        self.computers.extend(o.computers);
        self.first = match (self.first, o.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = self.last.max(o.last);
    }
}

type ByEventId = FxHashMap<Box<str>, TypeCount>;

/// Where a record's provider name, computer and time are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KindFields {
    pub(crate) provider: FieldId,
    pub(crate) computer: FieldId,
    pub(crate) time: FieldId,
}

/// The kinds of event met, keyed by Channel, then Provider, then EventID (as the records
/// write them; a missing one is empty).
#[derive(Debug, Default)]
pub struct TypeTally {
    map: FxHashMap<Box<str>, FxHashMap<Box<str>, ByEventId>>,
}

/// The entry of `key` in `map`, made when new (allocating only then).
fn entry<'m, V: Default>(map: &'m mut FxHashMap<Box<str>, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.into(), V::default());
    }
    map.get_mut(key).expect("just inserted")
}

impl TypeTally {
    /// Counts the record in `view`, which gave `detections` rows; `out` says where its
    /// provider, computer and time are.
    pub(crate) fn add(&mut self, view: &RecordView, out: KindFields, detections: u64) {
        let ch = view.first(CHANNEL).unwrap_or("");
        let provider = view.first(out.provider).unwrap_or("");
        let eid = view.first(EVENT_ID).unwrap_or("");
        let c = entry(entry(entry(&mut self.map, ch), provider), eid);
        c.events += 1;
        c.detections += detections;
        if let Some(computer) = view.first(out.computer) {
            if !c.computers.contains(computer) {
                c.computers.insert(computer.into());
            }
        }
        if let Some(t) = view
            .first(out.time)
            .and_then(scanner_input::parse_timestamp)
        {
            c.first = Some(c.first.map_or(t, |f| f.min(t)));
            c.last = Some(c.last.map_or(t, |l| l.max(t)));
        }
    }

    /// Adds another worker's tally.
    pub(crate) fn merge(&mut self, other: TypeTally) {
        for (ch, providers) in other.map {
            let mine = entry(&mut self.map, &ch);
            for (p, eids) in providers {
                let mine = entry(mine, &p);
                for (e, c) in eids {
                    entry(mine, &e).merge(c);
                }
            }
        }
    }

    /// Every kind met: (Channel, Provider, EventID, its counts), sorted by the three.
    pub fn types(&self) -> Vec<(&str, &str, &str, &TypeCount)> {
        let mut v: Vec<_> = self
            .map
            .iter()
            .flat_map(|(ch, ps)| {
                ps.iter()
                    .flat_map(move |(p, es)| es.iter().map(move |(e, c)| (&**ch, &**p, &**e, c)))
            })
            .collect();
        v.sort_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
        v
    }
}
