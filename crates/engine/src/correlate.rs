//! Correlation rules, evaluated after the scan over the hits their rules produced.
//!
//! `event_count` and `value_count` slide a window of `timespan` over each group's hits
//! in time order; when the count satisfies the condition, one row is emitted for the
//! window (dated at its first hit) and the next window starts after it. `temporal`
//! and `temporal_ordered` require every referenced rule to fire for the same group
//! within the window (in order, for the latter).

use crate::detect_info::{DetectInfo, Origin};
use crate::detector::join_distinct;
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

fn count(c: &Correlation, window: &[&CorrelationHit]) -> u64 {
    match c.kind {
        CorrelationKind::EventCount => window.len() as u64,
        CorrelationKind::ValueCount => {
            let mut v: Vec<&str> = window.iter().filter_map(|h| h.value.as_deref()).collect();
            v.sort_unstable();
            v.dedup();
            v.len() as u64
        }
        CorrelationKind::Temporal | CorrelationKind::TemporalOrdered => {
            let mut r: Vec<u32> = window.iter().map(|h| h.rule).collect();
            r.sort_unstable();
            r.dedup();
            r.len() as u64
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
        let c = &set.correlations[ci as usize];
        let span = c
            .timespan_secs
            .map(|s| jiff::SignedDuration::from_secs(i64::try_from(s).unwrap_or(i64::MAX)));
        let mut i = 0;
        while i < hs.len() {
            // Without a timespan the whole scan is one window.
            let end_time = span.and_then(|s| hs[i].time.checked_add(s).ok());
            let j = i + hs[i..]
                .iter()
                .take_while(|h| end_time.is_none_or(|e| h.time <= e))
                .count();
            let window = &hs[i..j];
            let n = count(c, window);
            let fire = match c.kind {
                CorrelationKind::Temporal => n == c.rules.len() as u64,
                CorrelationKind::TemporalOrdered => n == c.rules.len() as u64 && ordered(c, window),
                _ => holds(c, n),
            };
            if fire {
                rows.push(row(set, ci, c, group, window, n, file_name));
                i = j;
            } else {
                i += 1;
            }
        }
    }
    rows
}

fn row(
    set: &RuleSet,
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
        details.push_str(&format!("{}{f}:{}", crate::details::SEP, vals.join("/")));
    }
    for (g, v) in c.group_by.iter().zip(group.split('\u{1f}')) {
        details.push_str(&format!("{}{g}:{v}", crate::details::SEP));
    }
    let _ = set;
    let files: Vec<String> = w.iter().map(|h| file_name(h.file)).collect();
    DetectInfo {
        time: w[0].time,
        rule: ci,
        correlation: true,
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
