//! Correlation rules, evaluated after the scan over the hits their rules produced.
//!
//! `event_count` and `value_count` slide a window of `timespan` over each group's hits
//! in time order; when the count satisfies the condition, one row is emitted for the
//! window (dated at its first hit) and the next window starts after it. `temporal`
//! and `temporal_ordered` require every referenced rule to fire for the same group
//! within the window (in order, for the latter).

use crate::render::details::SEP;
use crate::row::{DetectInfo, Origin};
use compact_str::CompactString;
use jiff::Timestamp;
use scanner_rules::{Correlation, CorrelationKind, RuleSet};
use std::collections::BTreeMap;

/// One record that matched a rule feeding a correlation.
#[derive(Debug, Clone)]
pub struct CorrelationHit {
    /// Correlation index.
    pub correlation: u32,
    /// The rule that matched.
    pub rule: u32,
    /// Record time.
    pub time: Timestamp,
    /// Group-by values, joined with U+001F.
    pub group: Box<str>,
    /// `value_count`'s field value.
    pub value: Option<CompactString>,
    /// `Computer`.
    pub computer: CompactString,
    /// `Channel`.
    pub channel: CompactString,
    /// `EventID`.
    pub event_id: CompactString,
    /// Input file index.
    pub file: u32,
}

fn holds(c: &Correlation, n: u64) -> bool {
    c.conditions.iter().all(|(op, b)| op.holds(n, *b))
}

/// What a window counts, kept up to date as the window slides (each hit enters and
/// leaves once), so a group of n hits costs O(n), not O(n × window).
#[derive(Default)]
struct Tally<'h> {
    values: std::collections::HashMap<&'h str, u32>,
    rules: std::collections::HashMap<u32, u32>,
}

impl<'h> Tally<'h> {
    fn enter(&mut self, h: &'h CorrelationHit) {
        if let Some(v) = h.value.as_deref() {
            *self.values.entry(v).or_default() += 1;
        }
        *self.rules.entry(h.rule).or_default() += 1;
    }

    fn leave(&mut self, h: &'h CorrelationHit) {
        fn dec<K: std::hash::Hash + Eq>(m: &mut std::collections::HashMap<K, u32>, k: K) {
            if let Some(n) = m.get_mut(&k) {
                *n -= 1;
                if *n == 0 {
                    m.remove(&k);
                }
            }
        }
        if let Some(v) = h.value.as_deref() {
            dec(&mut self.values, v);
        }
        dec(&mut self.rules, h.rule);
    }

    fn count(&self, c: &Correlation, window: usize) -> u64 {
        match c.kind {
            CorrelationKind::EventCount => window as u64,
            CorrelationKind::ValueCount => self.values.len() as u64,
            CorrelationKind::Temporal | CorrelationKind::TemporalOrdered => self.rules.len() as u64,
        }
    }
}

fn ordered(c: &Correlation, window: &[&CorrelationHit]) -> bool {
    // Each referenced rule must have a hit after the previous rule's first hit.
    let mut at = 0usize;
    for &r in &c.rules {
        match window[at..].iter().position(|h| h.rule == r) {
            Some(p) => at += p,
            None => return false,
        }
    }
    true
}

/// Evaluates every correlation over `hits`; returns the rows.
pub fn evaluate(
    set: &RuleSet,
    mut hits: Vec<CorrelationHit>,
    file_name: &dyn Fn(u32) -> String,
) -> Vec<DetectInfo> {
    hits.sort_by(|a, b| (a.correlation, &a.group, a.time).cmp(&(b.correlation, &b.group, b.time)));
    let mut groups: BTreeMap<(u32, &str), Vec<&CorrelationHit>> = BTreeMap::new();
    for h in &hits {
        groups.entry((h.correlation, &h.group)).or_default().push(h);
    }
    let mut rows = Vec::new();
    for ((ci, group), hs) in groups {
        let c = &set.correlations()[ci as usize];
        let span = c
            .timespan_secs
            .map(|s| jiff::SignedDuration::from_secs(i64::try_from(s).unwrap_or(i64::MAX)));
        let end_of = |i: usize| span.and_then(|s| hs[i].time.checked_add(s).ok());
        let mut tally = Tally::default();
        let (mut i, mut j) = (0, 0);
        while i < hs.len() {
            // The window is the hits within `timespan` of hit i (without a timespan the
            // whole scan is one window); j only moves forward.
            let end_time = end_of(i);
            while j < hs.len() && end_time.is_none_or(|e| hs[j].time <= e) {
                tally.enter(hs[j]);
                j += 1;
            }
            let window = &hs[i..j];
            let n = tally.count(c, window.len());
            let fire = match c.kind {
                CorrelationKind::Temporal => n == c.rules.len() as u64,
                CorrelationKind::TemporalOrdered => n == c.rules.len() as u64 && ordered(c, window),
                _ => holds(c, n),
            };
            if fire {
                rows.push(row(ci, c, group, window, n, file_name));
                // The next window starts after this one.
                tally = Tally::default();
                i = j;
            } else {
                tally.leave(hs[i]);
                i += 1;
            }
        }
    }
    rows
}

fn row(
    ci: u32,
    c: &Correlation,
    group: &str,
    w: &[&CorrelationHit],
    n: u64,
    file_name: &dyn Fn(u32) -> String,
) -> DetectInfo {
    let mut details = format!("Count:{n}");
    if let Some(f) = &c.field {
        let mut vals: Vec<&str> = w.iter().filter_map(|h| h.value.as_deref()).collect();
        vals.sort_unstable();
        vals.dedup();
        details.push_str(&format!(
            "{}{f}:{}",
            crate::render::details::SEP,
            vals.join("/")
        ));
    }
    for (g, v) in c.group_by.iter().zip(group.split('\u{1f}')) {
        details.push_str(&format!("{}{g}:{v}", crate::render::details::SEP));
    }
    let files: Vec<String> = w.iter().map(|h| file_name(h.file)).collect();
    DetectInfo {
        time: w[0].time,
        rule: ci,
        correlation: true,
        recovered: false,
        origin: Origin::Correlation {
            files: join_distinct(files.iter().map(String::as_str)).into(),
        },
        computer: join_distinct(w.iter().map(|h| h.computer.as_str())).into(),
        channel: join_distinct(w.iter().map(|h| h.channel.as_str())).into(),
        event_id: join_distinct(w.iter().map(|h| h.event_id.as_str())).into(),
        provider: "-".into(),
        details: details.into(),
        extra: Some("-".into()),
        all_fields: Some("-".into()),
    }
}

/// Joins distinct values, sorted, with the Details separator.
fn join_distinct<'s>(values: impl Iterator<Item = &'s str>) -> String {
    let mut v: Vec<&str> = values.collect();
    v.sort_unstable();
    v.dedup();
    v.join(SEP)
}
