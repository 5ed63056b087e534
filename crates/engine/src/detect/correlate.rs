//! Correlation rules, evaluated after the scan over the events their rules matched.
//!
//! Each correlation's events (one per record, however many of its rules matched the
//! record) come grouped by their group-by values and sorted by time (the order of
//! [`crate::detect::hit_store::cmp`]); each group is streamed through its sliding
//! windows ([`crate::detect::window`]): a window opens at each distinct event time and
//! holds every event of the group from that instant to `timespan` later (both ends
//! included; ties are never split). A window is judged only when it reaches an event
//! the previous window did not (a window inside the previous one is a truncated view of
//! events already judged). When the measure (events, distinct values, referenced rules,
//! rules in order, or the sum, mean or percentile of a field;
//! [`crate::detect::tally`]) satisfies the condition, one row is emitted for the window,
//! dated at its first event, and the next window opens after it. A correlation that
//! another one refers to is evaluated first; each window it fires on is an event of the
//! outer one, dated at the window's last event, with the window's group-by values as
//! fields. Each event enters and leaves the running tally once, so evaluation is
//! O(n log n) for the sort and O(n) after it (O(n log w) for `value_percentile`, w the
//! window's size), and memory holds one window of one group.

use crate::detect::hit::{CorrelationHit, CHAINED};
use crate::detect::window::{slide, Fired};
use crate::items::{Items, ItemsBuf};
use crate::row::{CorrelationOrigin, DetectInfo, Origin, RuleRef};
use scanner_rules::{Correlation, CorrelationKind, CorrelationSource, InputKey, RuleSet};
use std::io;
use std::iter::Peekable;

/// Correlation indices, each after the correlations it refers to.
fn order(set: &RuleSet) -> Vec<usize> {
    let cs = set.correlations();
    let mut done = vec![false; cs.len()];
    let mut out = Vec::with_capacity(cs.len());
    while out.len() < cs.len() {
        let before = out.len();
        for (i, c) in cs.iter().enumerate() {
            if done[i] {
                continue;
            }
            let ready = c.inputs.iter().all(|x| match x.source {
                CorrelationSource::Correlation(k) => done[k as usize],
                CorrelationSource::Rule(_) => true,
            });
            if ready {
                done[i] = true;
                out.push(i);
            }
        }
        if out.len() == before {
            // A cycle (the loader refuses them): evaluate the rest as they are.
            out.extend((0..cs.len()).filter(|&i| !done[i]));
        }
    }
    out
}

/// Each correlation's place in the order correlations are evaluated (each after the
/// correlations it refers to), by correlation index.
pub fn ranks(set: &RuleSet) -> Vec<u32> {
    let mut rank = vec![u32::MAX; set.correlations().len()];
    for (place, ci) in order(set).into_iter().enumerate() {
        rank[ci] = place as u32;
    }
    rank
}

/// Evaluates every correlation over `hits`, held in memory; returns the rows.
#[cfg(test)]
pub fn evaluate(
    set: &RuleSet,
    mut hits: Vec<CorrelationHit>,
    file_name: &dyn Fn(u32) -> String,
) -> Vec<DetectInfo> {
    let rank = ranks(set);
    hits.sort_unstable_by(|a, b| crate::detect::hit_store::cmp(&rank, a, b));
    // Hits in memory cannot fail to be read.
    collect_sorted(set, hits.into_iter().map(Ok), file_name).unwrap_or_default()
}

/// [`evaluate_sorted`], its rows collected.
#[cfg(test)]
pub fn collect_sorted(
    set: &RuleSet,
    hits: impl Iterator<Item = io::Result<CorrelationHit>>,
    file_name: &dyn Fn(u32) -> String,
) -> io::Result<Vec<DetectInfo>> {
    let mut rows = Vec::new();
    evaluate_sorted(set, hits, file_name, &mut |r| rows.push(r))?;
    Ok(rows)
}

/// Evaluates every correlation over `hits`, given in the order of
/// [`crate::detect::hit_store::cmp`] (by correlation in evaluation order, then group,
/// then time); hands each row to `emit` as it is made, and returns the first error of
/// `hits`. Each group's hits are streamed through its windows (a window never spans
/// groups); a correlation fed by another's windows gets those windows merged into its
/// groups in the same order.
pub fn evaluate_sorted(
    set: &RuleSet,
    hits: impl Iterator<Item = io::Result<CorrelationHit>>,
    file_name: &dyn Fn(u32) -> String,
    emit: &mut dyn FnMut(DetectInfo),
) -> io::Result<()> {
    let cs = set.correlations();
    let mut hits = hits.peekable();
    // Events of chained correlations (the windows of the correlations they refer to),
    // and the origin of each such window (its files, computers, …).
    let mut chained: Vec<Vec<CorrelationHit>> = (0..cs.len()).map(|_| Vec::new()).collect();
    let mut chained_origins: Vec<CorrelationOrigin> = Vec::new();
    for ci in order(set) {
        let c = &cs[ci];
        let mut inner = std::mem::take(&mut chained[ci]);
        // Stable: ties keep the order the windows fired in.
        inner.sort_by(|a, b| (&a.group, a.time).cmp(&(&b.group, b.time)));
        let mut inner = inner.into_iter().peekable();
        while let Some(group) = next_group(&mut hits, &mut inner, ci)? {
            let mut one = GroupHits {
                hits: &mut hits,
                inner: &mut inner,
                correlation: ci as u32,
                group: &group,
            }
            .peekable();
            slide(c, &mut one, &mut |f| {
                let row = row(ci as u32, c, &f, &chained_origins, file_name);
                chain(set, ci, &f, &row, &mut chained, &mut chained_origins);
                if c.emits {
                    emit(row);
                }
            })?;
        }
    }
    Ok(())
}

/// The group of correlation `ci`'s next event: the least of the head of `hits` (when it
/// is `ci`'s) and the head of `inner`; `None` when both are done with `ci`.
fn next_group<I>(
    hits: &mut Peekable<I>,
    inner: &mut Peekable<std::vec::IntoIter<CorrelationHit>>,
    ci: usize,
) -> io::Result<Option<Box<str>>>
where
    I: Iterator<Item = io::Result<CorrelationHit>>,
{
    if let Some(Err(_)) = hits.peek() {
        if let Some(Err(e)) = hits.next() {
            return Err(e);
        }
    }
    let head = match hits.peek() {
        Some(Ok(h)) => (h.correlation as usize == ci).then_some(&h.group),
        _ => None,
    };
    Ok(match (head, inner.peek().map(|h| &h.group)) {
        (Some(a), Some(b)) => Some(a.min(b).clone()),
        (a, b) => a.or(b).cloned(),
    })
}

/// The events of one group of one correlation, in time order: those of the sorted
/// stream merged with the chained windows that belong to the group (the stream's first
/// on a tie).
struct GroupHits<'a, I: Iterator<Item = io::Result<CorrelationHit>>> {
    hits: &'a mut Peekable<I>,
    inner: &'a mut Peekable<std::vec::IntoIter<CorrelationHit>>,
    correlation: u32,
    group: &'a str,
}

impl<I: Iterator<Item = io::Result<CorrelationHit>>> Iterator for GroupHits<'_, I> {
    type Item = io::Result<CorrelationHit>;

    fn next(&mut self) -> Option<Self::Item> {
        let streamed = match self.hits.peek() {
            Some(Ok(h)) => {
                (h.correlation == self.correlation && *h.group == *self.group).then_some(h.time)
            }
            Some(Err(_)) => return self.hits.next(),
            None => None,
        };
        let chained = self
            .inner
            .peek()
            .filter(|h| *h.group == *self.group)
            .map(|h| h.time);
        match (streamed, chained) {
            (Some(a), Some(b)) if b < a => self.inner.next().map(Ok),
            (Some(_), _) => self.hits.next(),
            (None, Some(_)) => self.inner.next().map(Ok),
            (None, None) => None,
        }
    }
}

/// Feeds a fired window of correlation `ci` to the correlations that refer to it; each
/// event it makes is marked [`CHAINED`], its origin (the row's) kept in `origins`.
fn chain(
    set: &RuleSet,
    ci: usize,
    f: &Fired,
    row: &DetectInfo,
    by: &mut [Vec<CorrelationHit>],
    origins: &mut Vec<CorrelationOrigin>,
) {
    let inner: Vec<&str> = f.group.split('\u{1f}').collect();
    let pick = |keys: &[Option<InputKey>]| -> Option<String> {
        let mut out = String::new();
        for (i, k) in keys.iter().enumerate() {
            let Some(InputKey::Group(p)) = k else {
                return None;
            };
            if i > 0 {
                out.push('\u{1f}');
            }
            out.push_str(inner.get(*p)?);
        }
        Some(out)
    };
    for (oi, o) in set.correlations().iter().enumerate() {
        for input in &o.inputs {
            if input.source != CorrelationSource::Correlation(ci as u32) {
                continue;
            }
            let Some(group) = pick(&input.group) else {
                continue;
            };
            let value = if input.values.is_empty() {
                None
            } else {
                match pick(&input.values) {
                    Some(v) => Some(v.into()),
                    None => continue,
                }
            };
            origins.push(match &row.origin {
                Origin::Correlation(o) => (**o).clone(),
                Origin::Record { .. } => CorrelationOrigin::default(),
            });
            // Its computers, channels and EventIDs are its origin's.
            by[oi].push(CorrelationHit {
                correlation: oi as u32,
                references: 1u32 << input.reference,
                time: f.window[f.window.len() - 1].time,
                group: group.into(),
                value,
                computer: Default::default(),
                channel: Default::default(),
                event_id: Default::default(),
                file: CHAINED | (origins.len() - 1) as u32,
            });
        }
    }
}

/// A measure as Details shows it: whole numbers without a fraction.
fn shown(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The row of a fired window of correlation `ci`: the measure and group-by values as
/// Details items, the distinct files, computers, channels and EventIDs of its events
/// (those of a chained window's origin in `chained`); files sorted by `file_name`.
fn row(
    ci: u32,
    c: &Correlation,
    f: &Fired,
    chained: &[CorrelationOrigin],
    file_name: &dyn Fn(u32) -> String,
) -> DetectInfo {
    let w = &f.window;
    let label = match c.kind {
        CorrelationKind::ValueSum => "Sum".to_string(),
        CorrelationKind::ValueAvg => "Avg".to_string(),
        CorrelationKind::ValuePercentile => {
            format!("Percentile{}", shown(c.percentile.unwrap_or(50.0)))
        }
        _ => "Count".to_string(),
    };
    let mut details = ItemsBuf::default();
    details.push(&format!("{label}:{}", shown(f.measure)));
    if c.kind == CorrelationKind::ValueCount && !c.fields.is_empty() {
        let mut vals: Vec<String> = w
            .iter()
            .filter_map(|h| h.value.as_deref())
            .map(|v| v.replace('\u{1f}', ","))
            .collect();
        vals.sort_unstable();
        vals.dedup();
        details.push(&format!("{}:{}", c.fields.join(","), vals.join("/")));
    }
    for (g, v) in c.group_by.iter().zip(f.group.split('\u{1f}')) {
        details.push(&format!("{g}:{v}"));
    }
    let mut files: Vec<u32> = Vec::new();
    let (mut computers, mut channels, mut event_ids) = (Vec::new(), Vec::new(), Vec::new());
    for h in w.iter() {
        if h.file & CHAINED == 0 {
            files.push(h.file);
            computers.push(h.computer.as_str());
            channels.push(h.channel.as_str());
            event_ids.push(h.event_id.as_str());
        } else if let Some(o) = chained.get((h.file & !CHAINED) as usize) {
            files.extend_from_slice(&o.files);
            computers.extend(o.computers.iter().map(|i| i.text()));
            channels.extend(o.channels.iter().map(|i| i.text()));
            event_ids.extend(o.event_ids.iter().map(|i| i.text()));
        }
    }
    DetectInfo {
        time: w[0].time,
        rule: RuleRef::Correlation(ci),
        recovered: false,
        origin: Origin::Correlation(Box::new(CorrelationOrigin {
            files: distinct_files(files, file_name),
            computers: distinct(computers),
            channels: distinct(channels),
            event_ids: distinct(event_ids),
        })),
        computer: Default::default(),
        channel: Default::default(),
        event_id: Default::default(),
        provider: "-".into(),
        details: details.to_items(),
        extra: Some(Items::default()),
        all_fields: Some(Items::default()),
        geo: None,
    }
}

/// The distinct values, sorted.
fn distinct(mut values: Vec<&str>) -> Items {
    values.sort_unstable();
    values.dedup();
    Items::of(values)
}

/// The distinct files, sorted by their names (`file_name`), one for each name.
fn distinct_files(mut files: Vec<u32>, file_name: &dyn Fn(u32) -> String) -> Box<[u32]> {
    files.sort_unstable();
    files.dedup();
    let mut named: Vec<(String, u32)> = files.into_iter().map(|i| (file_name(i), i)).collect();
    named.sort_unstable();
    named.dedup_by(|a, b| a.0 == b.0);
    named.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    /// The items joined as the CSV timeline joins them by default.
    fn joined(items: &Items) -> String {
        let texts: Vec<&str> = items.iter().map(|i| i.text()).collect();
        texts.join(" ¦ ")
    }
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

        fn reference(&self, title: &str, rule: &str) -> u32 {
            let c = &self.set.correlations()[self.correlation(title) as usize];
            let found = c.rule_refs.iter().position(|r| r == rule);
            found.expect("a reference") as u32
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
                references: 1 << self.reference(title, rule),
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
                        let RuleRef::Correlation(i) = r.rule else {
                            panic!("a rule's row")
                        };
                        let title = self.set.correlations()[i as usize].meta.title.to_string();
                        (title, r.time.as_second() / 60, joined(&r.details))
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
        assert_eq!(row.rule, RuleRef::Correlation(r.correlation(c)));
        assert_eq!(row.time, Timestamp::new(0, 0).unwrap());
        assert_eq!(
            row.origin,
            Origin::Correlation(Box::new(CorrelationOrigin {
                files: [0, 1].into(),
                computers: Items::of(["DC01", "WS02"]),
                channels: Items::of(["Microsoft-Windows-Sysmon/Operational", "Security"]),
                event_ids: Items::of(["4624", "4625"]),
            }))
        );
        assert_eq!(row.computers().collect::<Vec<_>>(), ["DC01", "WS02"]);
        assert_eq!(row.provider, "-");
        assert_eq!(joined(&row.details), "Count:2 ¦ IpAddress:10.0.0.1");
        let labels: Vec<(&str, &str)> =
            row.details.iter().map(|i| (i.label(), i.value())).collect();
        assert_eq!(labels, [("Count", "2"), ("IpAddress", "10.0.0.1")]);
        assert_eq!(row.extra, Some(Items::default()));
    }

    #[test]
    fn files_are_sorted_by_name_and_a_chained_window_brings_its_own_origin() {
        let names = |i: u32| ["b.evtx", "a.evtx", "a.evtx"][i as usize].to_string();
        assert_eq!(&*distinct_files(vec![0, 1, 0, 2], &names), [1, 0]);
        let origin = CorrelationOrigin {
            files: [2].into(),
            computers: Items::of(["DC02", "DC01"]),
            channels: Items::of(["Security"]),
            event_ids: Items::of(["4625"]),
        };
        let r = Rules::new();
        let c = "Both";
        let mut hits = vec![r.hit(c, "failed_logon", 0, "10.0.0.1", "a")];
        let mut inner = r.hit(c, "good_logon", 1, "10.0.0.1", "a");
        inner.file = CHAINED;
        hits.push(inner);
        let fired = Fired {
            window: hits,
            group: "10.0.0.1".into(),
            measure: 2.0,
        };
        let ci = r.correlation(c);
        let corr = &r.set.correlations()[ci as usize];
        let row = row(ci, corr, &fired, &[origin], &|i| format!("f{i}.evtx"));
        let Origin::Correlation(o) = &row.origin else {
            panic!("a correlation's origin")
        };
        assert_eq!(&*o.files, [0, 2]);
        assert_eq!(o.computers, Items::of(["DC01", "DC02"]));
        assert_eq!(o.event_ids, Items::of(["4625"]));
    }
}
