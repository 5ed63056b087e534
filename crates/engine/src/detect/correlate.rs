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

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::{load, LoadOptions, RuleSource};

    const RULES: &str = "title: Logon failed
name: failed_logon
detection: {sel: {EventID: 4625}, condition: sel}
---
title: Logon succeeded
name: good_logon
detection: {sel: {EventID: 4624}, condition: sel}
---
title: Many failures
correlation: {type: event_count, rules: failed_logon, group-by: [IpAddress], timespan: 5m, condition: {gte: 3}}
---
title: Many users
correlation: {type: value_count, rules: failed_logon, group-by: [IpAddress], timespan: 10m, condition: {gte: 2, field: TargetUserName}}
---
title: Both
correlation: {type: temporal, rules: [failed_logon, good_logon], group-by: [IpAddress], timespan: 5m}
---
title: Failure then success
correlation: {type: temporal_ordered, rules: [failed_logon, good_logon], group-by: [IpAddress], timespan: 5m}
";

    /// The rule set, with the index of a rule and of a correlation by name and title.
    struct Rules {
        set: RuleSet,
    }

    impl Rules {
        fn new() -> Rules {
            let text = RULES.to_string();
            let name = "correlate-test.yml".to_string();
            let set = load(&[RuleSource::Text { name, text }], &LoadOptions::default());
            assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
            Rules { set }
        }

        fn rule(&self, name: &str) -> u32 {
            let found = self
                .set
                .rules()
                .iter()
                .position(|r| r.meta.name.as_deref() == Some(name));
            found.expect("a rule") as u32
        }

        fn correlation(&self, title: &str) -> u32 {
            let found = self
                .set
                .correlations()
                .iter()
                .position(|c| c.meta.title == title);
            found.expect("a correlation") as u32
        }

        /// A hit of rule `rule` for correlation `title`, at `minute`, from `ip`, with
        /// `user` as the value and input file `file`.
        fn hit(
            &self,
            title: &str,
            rule: &str,
            minute: i64,
            ip: &str,
            user: &str,
        ) -> CorrelationHit {
            let failed = rule == "failed_logon";
            CorrelationHit {
                correlation: self.correlation(title),
                rule: self.rule(rule),
                time: Timestamp::new(minute * 60, 0).unwrap(),
                group: ip.into(),
                value: Some(user.into()),
                computer: "DC01".into(),
                channel: "Security".into(),
                event_id: if failed { "4625" } else { "4624" }.into(),
                file: 0,
            }
        }

        /// (correlation title, minute of the window start, Details) of each row.
        fn evaluate(&self, hits: Vec<CorrelationHit>) -> Vec<(String, i64, String)> {
            let mut rows: Vec<(String, i64, String)> =
                evaluate(&self.set, hits, &|f| format!("f{f}.evtx"))
                    .into_iter()
                    .map(|r| {
                        assert!(r.correlation);
                        let title = self.set.correlations()[r.rule as usize]
                            .meta
                            .title
                            .to_string();
                        (title, r.time.as_second() / 60, r.details.to_string())
                    })
                    .collect();
            rows.sort();
            rows
        }
    }

    fn expect(rows: &[(&str, i64, &str)]) -> Vec<(String, i64, String)> {
        rows.iter()
            .map(|(t, m, d)| (t.to_string(), *m, d.to_string()))
            .collect()
    }

    #[test]
    fn event_count_fires_once_per_window_of_enough_hits_within_the_timespan() {
        let r = Rules::new();
        let c = "Many failures";
        let mut hits = Vec::new();
        // Three within five minutes, twice; the windows do not overlap.
        for m in [0, 1, 2, 10, 11, 15] {
            hits.push(r.hit(c, "failed_logon", m, "10.0.0.5", "a"));
        }
        // Three, but spread wider than the timespan.
        for m in [30, 36, 42] {
            hits.push(r.hit(c, "failed_logon", m, "10.0.0.5", "a"));
        }
        // Given out of order: evaluation sorts them.
        hits.reverse();
        assert_eq!(
            r.evaluate(hits),
            expect(&[
                ("Many failures", 0, "Count:3 ¦ IpAddress:10.0.0.5"),
                ("Many failures", 10, "Count:3 ¦ IpAddress:10.0.0.5"),
            ])
        );
    }

    #[test]
    fn hits_are_counted_per_group() {
        let r = Rules::new();
        let c = "Many failures";
        let hits = vec![
            r.hit(c, "failed_logon", 0, "10.0.0.5", "a"),
            r.hit(c, "failed_logon", 1, "10.0.0.9", "a"),
            r.hit(c, "failed_logon", 2, "10.0.0.5", "a"),
            r.hit(c, "failed_logon", 3, "10.0.0.9", "a"),
        ];
        assert_eq!(r.evaluate(hits.clone()), expect(&[]), "two per group only");
        let mut more = hits;
        more.push(r.hit(c, "failed_logon", 4, "10.0.0.9", "a"));
        assert_eq!(
            r.evaluate(more),
            expect(&[("Many failures", 1, "Count:3 ¦ IpAddress:10.0.0.9")])
        );
    }

    #[test]
    fn value_count_counts_distinct_values_and_lists_them() {
        let r = Rules::new();
        let c = "Many users";
        let same: Vec<CorrelationHit> = (0..5)
            .map(|m| r.hit(c, "failed_logon", m, "10.0.0.5", "alice"))
            .collect();
        assert_eq!(
            r.evaluate(same.clone()),
            expect(&[]),
            "one value, however many hits"
        );
        let mut two = same;
        two.push(r.hit(c, "failed_logon", 6, "10.0.0.5", "bob"));
        assert_eq!(
            r.evaluate(two),
            expect(&[(
                "Many users",
                0,
                "Count:2 ¦ TargetUserName:alice/bob ¦ IpAddress:10.0.0.5"
            )])
        );
        // Past the timespan of the first hits, the window slides to the later ones.
        let late = vec![
            r.hit(c, "failed_logon", 0, "10.0.0.5", "alice"),
            r.hit(c, "failed_logon", 8, "10.0.0.5", "alice"),
            r.hit(c, "failed_logon", 20, "10.0.0.5", "bob"),
        ];
        assert_eq!(r.evaluate(late), expect(&[]));
    }

    #[test]
    fn temporal_needs_every_rule_in_the_window_and_ordered_needs_them_in_order() {
        let r = Rules::new();
        let mut hits = Vec::new();
        for c in ["Both", "Failure then success"] {
            // Success before failure.
            hits.push(r.hit(c, "good_logon", 0, "10.0.0.1", "a"));
            hits.push(r.hit(c, "failed_logon", 1, "10.0.0.1", "a"));
            // Failure before success.
            hits.push(r.hit(c, "failed_logon", 0, "10.0.0.2", "a"));
            hits.push(r.hit(c, "good_logon", 2, "10.0.0.2", "a"));
            // Too far apart.
            hits.push(r.hit(c, "failed_logon", 0, "10.0.0.3", "a"));
            hits.push(r.hit(c, "good_logon", 10, "10.0.0.3", "a"));
            // Only one of the rules.
            hits.push(r.hit(c, "failed_logon", 0, "10.0.0.4", "a"));
            hits.push(r.hit(c, "failed_logon", 1, "10.0.0.4", "a"));
        }
        assert_eq!(
            r.evaluate(hits),
            expect(&[
                ("Both", 0, "Count:2 ¦ IpAddress:10.0.0.1"),
                ("Both", 0, "Count:2 ¦ IpAddress:10.0.0.2"),
                ("Failure then success", 0, "Count:2 ¦ IpAddress:10.0.0.2"),
            ])
        );
    }

    #[test]
    fn a_row_joins_the_distinct_files_computers_channels_and_event_ids_of_its_window() {
        let r = Rules::new();
        let c = "Both";
        let mut first = r.hit(c, "failed_logon", 0, "10.0.0.1", "a");
        first.file = 1;
        first.computer = "WS02".into();
        let mut second = r.hit(c, "good_logon", 1, "10.0.0.1", "a");
        second.channel = "Microsoft-Windows-Sysmon/Operational".into();
        let third = r.hit(c, "good_logon", 2, "10.0.0.1", "a");
        let rows = evaluate(&r.set, vec![third, second, first], &|f| {
            format!("f{f}.evtx")
        });
        assert_eq!(rows.len(), 1);
        let row = &rows[0];
        assert_eq!(row.rule, r.correlation(c));
        assert_eq!(row.time, Timestamp::new(0, 0).unwrap());
        assert_eq!(
            row.origin,
            Origin::Correlation {
                files: "f0.evtx ¦ f1.evtx".into()
            }
        );
        assert_eq!(row.computer, "DC01 ¦ WS02");
        assert_eq!(
            row.channel,
            "Microsoft-Windows-Sysmon/Operational ¦ Security"
        );
        assert_eq!(row.event_id, "4624 ¦ 4625");
        assert_eq!(row.provider, "-");
        assert_eq!(&*row.details, "Count:2 ¦ IpAddress:10.0.0.1");
    }
}
