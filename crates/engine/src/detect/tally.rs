//! What a correlation window measures, kept up to date as the window slides: each event
//! enters once and leaves once, and judging a window costs no more than a constant (the
//! number of referenced rules) or a logarithm of the window's size, whatever the type.
//!
//! - `event_count`: the window's length; `value_count`: a count per distinct value;
//!   `temporal`: a count per referenced rule; `value_sum`/`value_avg`: a running sum.
//! - `temporal_ordered` ([`Ordered`]): for each position k of the listed rules, the
//!   latest time at which a chain of the rules 0..=k (each at or after the previous one)
//!   can start among the events entered so far. Windows start at ever later times and
//!   every event entered so far ends at or before the window's end, so the window holds
//!   a chain through k exactly when that start is at or after the window's start.
//! - `value_percentile` ([`Ranked`]): the window's numbers split into the lowest `rank`
//!   and the rest, two ordered multisets, `rank` being the nearest rank of the
//!   percentile for the current count; the answer is the largest of the lowest.

use crate::detect::hit::CorrelationHit;
use compact_str::CompactString;
use jiff::Timestamp;
use scanner_rules::{Correlation, CorrelationKind};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

/// The event's field value as a number, for the metric types.
pub(crate) fn number(h: &CorrelationHit) -> Option<f64> {
    h.value
        .as_deref()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|x| x.is_finite())
}

/// The nearest rank (1-based) of percentile `p` (0–100) among `n` values.
pub(crate) fn nearest_rank(p: f64, n: usize) -> usize {
    (((p / 100.0) * n as f64).ceil() as usize).clamp(1, n.max(1))
}

/// What a window measures.
pub(crate) struct Tally {
    kind: CorrelationKind,
    events: usize,
    values: HashMap<CompactString, u32>,
    refs: [u32; 32],
    distinct_refs: u32,
    sum: f64,
    numbers: u32,
    ordered: Ordered,
    ranked: Ranked,
}

impl Tally {
    /// An empty tally for correlation `c`.
    pub(crate) fn new(c: &Correlation) -> Self {
        Tally {
            kind: c.kind,
            events: 0,
            values: HashMap::new(),
            refs: [0; 32],
            distinct_refs: 0,
            sum: 0.0,
            numbers: 0,
            ordered: Ordered::new(c.rule_refs.len()),
            ranked: Ranked::new(c.percentile.unwrap_or(50.0)),
        }
    }

    /// Empties the tally (after a window fired: the next one starts after it).
    pub(crate) fn clear(&mut self) {
        self.events = 0;
        self.values.clear();
        self.refs = [0; 32];
        self.distinct_refs = 0;
        self.sum = 0.0;
        self.numbers = 0;
        self.ordered.clear();
        self.ranked.clear();
    }

    /// Adds `h`, the window's latest event (events enter in time order).
    pub(crate) fn enter(&mut self, h: &CorrelationHit) {
        self.events += 1;
        match self.kind {
            CorrelationKind::TemporalOrdered => self.ordered.enter(h.time, h.references),
            CorrelationKind::ValuePercentile => {
                if let Some(x) = number(h) {
                    self.ranked.insert(x);
                }
            }
            _ => {}
        }
        if let Some(v) = &h.value {
            match self.values.get_mut(v) {
                Some(n) => *n += 1,
                None => {
                    self.values.insert(v.clone(), 1);
                }
            }
            if let Some(x) = number(h) {
                self.sum += x;
                self.numbers += 1;
            }
        }
        let mut bits = h.references;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            self.refs[r] += 1;
            if self.refs[r] == 1 {
                self.distinct_refs += 1;
            }
        }
    }

    /// Removes `h`, the window's earliest event.
    pub(crate) fn leave(&mut self, h: &CorrelationHit) {
        self.events -= 1;
        if self.kind == CorrelationKind::ValuePercentile {
            if let Some(x) = number(h) {
                self.ranked.remove(x);
            }
        }
        if let Some(v) = h.value.as_deref() {
            if let Some(n) = self.values.get_mut(v) {
                *n -= 1;
                if *n == 0 {
                    self.values.remove(v);
                }
            }
            if let Some(x) = number(h) {
                self.numbers -= 1;
                // Exact for whole numbers below 2^53; reset when empty so rounding of
                // fractions cannot linger.
                self.sum = if self.numbers == 0 { 0.0 } else { self.sum - x };
            }
        }
        let mut bits = h.references;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            self.refs[r] -= 1;
            if self.refs[r] == 0 {
                self.distinct_refs -= 1;
            }
        }
    }

    /// The measure of the window that starts at `start` and holds every event entered
    /// and not left; `None` when it has none (no numeric value to sum, average or rank).
    pub(crate) fn measure(&self, start: Timestamp) -> Option<f64> {
        Some(match self.kind {
            CorrelationKind::EventCount => self.events as f64,
            CorrelationKind::ValueCount => self.values.len() as f64,
            CorrelationKind::Temporal => f64::from(self.distinct_refs),
            CorrelationKind::TemporalOrdered => self.ordered.in_order(start) as f64,
            CorrelationKind::ValueSum => (self.numbers > 0).then_some(self.sum)?,
            CorrelationKind::ValueAvg => {
                (self.numbers > 0).then(|| self.sum / f64::from(self.numbers))?
            }
            CorrelationKind::ValuePercentile => self.ranked.get()?,
        })
    }
}

/// For `temporal_ordered`: per position k of the listed rules, the latest start of a
/// chain through rule k (events of rules 0..=k at non-decreasing times; an event at the
/// same instant as the previous one counts as after it, and one event may answer
/// several rules) among the events entered so far.
struct Ordered {
    starts: Vec<Option<Timestamp>>,
    /// The instant being entered, and the rules its events answer so far.
    instant: Option<Timestamp>,
    bits: u32,
}

impl Ordered {
    fn new(rules: usize) -> Self {
        Ordered {
            starts: vec![None; rules.min(32)],
            instant: None,
            bits: 0,
        }
    }

    fn clear(&mut self) {
        self.starts.iter_mut().for_each(|s| *s = None);
        self.instant = None;
        self.bits = 0;
    }

    fn enter(&mut self, t: Timestamp, references: u32) {
        if self.instant != Some(t) {
            self.instant = Some(t);
            self.bits = 0;
        }
        // The events of one instant are taken together, in any order: rule k can
        // follow rule k-1 at this instant whichever of their events came first.
        self.bits |= references;
        let mut bits = self.bits;
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let Some(slot) = self.starts.get(k) else {
                break;
            };
            let through = if k == 0 { Some(t) } else { self.starts[k - 1] };
            if through > *slot {
                self.starts[k] = through;
            }
        }
    }

    /// How many of the listed rules, in order, a window starting at `start` holds.
    fn in_order(&self, start: Timestamp) -> usize {
        self.starts
            .iter()
            .take_while(|s| s.is_some_and(|s| s >= start))
            .count()
    }
}

/// A finite number ordered as `f64::total_cmp` orders it.
#[derive(Debug, Clone, Copy)]
struct Num(f64);

impl Ord for Num {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl PartialOrd for Num {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Num {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Num {}

/// An ordered multiset of numbers (value → how many).
#[derive(Default)]
struct Multiset {
    counts: BTreeMap<Num, u32>,
    len: usize,
}

impl Multiset {
    fn insert(&mut self, x: Num) {
        *self.counts.entry(x).or_default() += 1;
        self.len += 1;
    }

    fn remove(&mut self, x: Num) -> bool {
        let Some(n) = self.counts.get_mut(&x) else {
            return false;
        };
        *n -= 1;
        if *n == 0 {
            self.counts.remove(&x);
        }
        self.len -= 1;
        true
    }

    fn first(&self) -> Option<Num> {
        self.counts.first_key_value().map(|(k, _)| *k)
    }

    fn last(&self) -> Option<Num> {
        self.counts.last_key_value().map(|(k, _)| *k)
    }

    fn clear(&mut self) {
        self.counts.clear();
        self.len = 0;
    }
}

/// For `value_percentile`: the window's numbers, the lowest `nearest_rank` of them in
/// `low` and the rest in `high` (every number of `low` at most every one of `high`).
struct Ranked {
    percentile: f64,
    low: Multiset,
    high: Multiset,
}

impl Ranked {
    fn new(percentile: f64) -> Self {
        Ranked {
            percentile,
            low: Multiset::default(),
            high: Multiset::default(),
        }
    }

    fn clear(&mut self) {
        self.low.clear();
        self.high.clear();
    }

    fn insert(&mut self, x: f64) {
        let x = Num(x);
        if self.low.last().is_some_and(|m| x <= m) {
            self.low.insert(x);
        } else {
            self.high.insert(x);
        }
        self.balance();
    }

    fn remove(&mut self, x: f64) {
        let x = Num(x);
        // A number at most the largest of `low` is in `low` (equal ones in `high` are
        // the same number).
        let removed = if self.low.last().is_some_and(|m| x <= m) {
            self.low.remove(x)
        } else {
            self.high.remove(x)
        };
        if removed {
            self.balance();
        }
    }

    /// Moves numbers across so that `low` holds exactly the nearest rank's count (the
    /// count changed by one, so at most one number moves).
    fn balance(&mut self) {
        let n = self.low.len + self.high.len;
        let want = if n == 0 {
            0
        } else {
            nearest_rank(self.percentile, n)
        };
        while self.low.len > want {
            let Some(m) = self.low.last() else { break };
            self.low.remove(m);
            self.high.insert(m);
        }
        while self.low.len < want {
            let Some(m) = self.high.first() else { break };
            self.high.remove(m);
            self.low.insert(m);
        }
    }

    /// The percentile's value: the largest of the lowest `rank` numbers.
    fn get(&self) -> Option<f64> {
        self.low.last().map(|x| x.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: i64) -> Timestamp {
        Timestamp::new(s, 0).unwrap()
    }

    #[test]
    fn ordered_chains_keep_their_latest_start() {
        let mut o = Ordered::new(3);
        o.enter(at(0), 0b001);
        o.enter(at(5), 0b001);
        o.enter(at(6), 0b010);
        assert_eq!(o.in_order(at(0)), 2);
        assert_eq!(o.in_order(at(5)), 2, "the chain from 5 s");
        assert_eq!(o.in_order(at(6)), 0, "rule 0 not at or after 6 s");
        // Rule 2 and rule 1 at one instant, rule 2 entered first: still in order.
        o.enter(at(9), 0b100);
        o.enter(at(9), 0b010);
        assert_eq!(o.in_order(at(5)), 3);
        // One event answering every rule is a chain by itself.
        o.enter(at(20), 0b111);
        assert_eq!(o.in_order(at(20)), 3);
        o.clear();
        assert_eq!(o.in_order(at(0)), 0);
    }

    #[test]
    fn ranked_gives_the_nearest_rank_as_numbers_come_and_go() {
        let mut r = Ranked::new(50.0);
        assert_eq!(r.get(), None);
        for x in [10.0, 70.0, 20.0] {
            r.insert(x);
        }
        assert_eq!(r.get(), Some(20.0));
        r.insert(60.0);
        // Four numbers: rank 2 of 10, 20, 60, 70.
        assert_eq!(r.get(), Some(20.0));
        r.remove(10.0);
        assert_eq!(r.get(), Some(60.0));
        r.remove(20.0);
        r.remove(60.0);
        assert_eq!(r.get(), Some(70.0));
        r.remove(70.0);
        assert_eq!(r.get(), None);
        let mut top = Ranked::new(100.0);
        for x in [3.0, 3.0, -1.0] {
            top.insert(x);
        }
        assert_eq!(top.get(), Some(3.0));
        top.remove(3.0);
        assert_eq!(top.get(), Some(3.0), "the other 3 stays");
        let mut bottom = Ranked::new(0.0);
        for x in [5.0, 2.0, 9.0] {
            bottom.insert(x);
        }
        assert_eq!(bottom.get(), Some(2.0));
    }
}
