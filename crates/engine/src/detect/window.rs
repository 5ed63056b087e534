//! The sliding windows of one group of a correlation's events, taken as a stream in
//! time order: only the events of the current window are held (a window opens at each
//! distinct event time and holds every event up to `timespan` later), so memory is
//! bounded by the largest window, not by the group.

use crate::detect::hit::CorrelationHit;
use crate::detect::tally::Tally;
use jiff::{SignedDuration, Timestamp};
use scanner_rules::Correlation;
use std::collections::VecDeque;
use std::io;
use std::iter::Peekable;

/// A window a correlation fired on.
pub(crate) struct Fired {
    /// The group-by values, joined with U+001F.
    pub(crate) group: Box<str>,
    /// The window's events, in time order.
    pub(crate) window: Vec<CorrelationHit>,
    /// The measure that satisfied the condition.
    pub(crate) measure: f64,
}

fn holds(c: &Correlation, n: f64) -> bool {
    c.conditions.iter().all(|(op, b)| op.holds(n, *b))
}

/// Slides over `hits`, one group's events in time order, and hands each window that
/// satisfies `c`'s condition to `fire`; stops at the first error of `hits`.
///
/// A window is judged only when it reaches an event the previous window did not (a
/// window inside the previous one is a truncated view of events already judged). When
/// it fires, the next window opens after its last event.
pub(crate) fn slide<I>(
    c: &Correlation,
    hits: &mut Peekable<I>,
    fire: &mut dyn FnMut(Fired),
) -> io::Result<()>
where
    I: Iterator<Item = io::Result<CorrelationHit>>,
{
    // Without a timespan (a legacy `count()` without `timeframe`) the whole group is
    // one window.
    let span = c
        .timespan_secs
        .map(|s| SignedDuration::from_secs(i64::try_from(s).unwrap_or(i64::MAX)));
    let mut tally = Tally::new(c);
    let mut window: VecDeque<CorrelationHit> = VecDeque::new();
    // Whether an event entered since the last judgement.
    let mut fresh = false;
    loop {
        let t = match window.front() {
            Some(h) => h.time,
            None => match next_time(hits)? {
                Some(t) => t,
                None => return Ok(()),
            },
        };
        let end = span.and_then(|s| t.checked_add(s).ok());
        while next_time(hits)?.is_some_and(|n| end.is_none_or(|e| n <= e)) {
            if let Some(Ok(h)) = hits.next() {
                tally.enter(&h);
                window.push_back(h);
                fresh = true;
            }
        }
        if fresh {
            fresh = false;
            if let Some(m) = tally.measure(t).filter(|&m| holds(c, m)) {
                let window: Vec<CorrelationHit> = window.drain(..).collect();
                fire(Fired {
                    group: window[0].group.clone(),
                    window,
                    measure: m,
                });
                tally.clear();
                continue;
            }
        }
        while window.front().is_some_and(|h| h.time == t) {
            if let Some(h) = window.pop_front() {
                tally.leave(&h);
            }
        }
    }
}

/// The time of the next hit, or its error.
fn next_time<I>(hits: &mut Peekable<I>) -> io::Result<Option<Timestamp>>
where
    I: Iterator<Item = io::Result<CorrelationHit>>,
{
    match hits.peek() {
        Some(Ok(h)) => Ok(Some(h.time)),
        Some(Err(_)) => match hits.next() {
            Some(Err(e)) => Err(e),
            _ => Ok(None),
        },
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::tally::{nearest_rank, number};
    use scanner_rules::{load, CorrelationKind, LoadOptions, RuleSource};
    use std::collections::HashSet;

    const RULES: &str = "title: A
name: a
detection: {sel: {EventID: 1}, condition: sel}
---
title: B
name: b
detection: {sel: {EventID: 2}, condition: sel}
---
title: C
name: c
detection: {sel: {EventID: 3}, condition: sel}
---
correlation: {type: event_count, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 3}}
---
correlation: {type: event_count, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {eq: 2}}
---
correlation: {type: event_count, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {lt: 2}}
---
correlation: {type: value_count, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 2, field: V}}
---
correlation: {type: value_count, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {neq: 1, field: V}}
---
correlation: {type: temporal, rules: [a, b, c], group-by: [G], timespan: 1m}
---
correlation: {type: temporal, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 2}}
---
correlation: {type: temporal_ordered, rules: [a, b, c], group-by: [G], timespan: 1m}
---
correlation: {type: temporal_ordered, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 2}}
---
correlation: {type: temporal_ordered, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {lt: 2}}
---
correlation: {type: temporal_ordered, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {eq: 2}}
---
correlation: {type: value_sum, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 100, field: V}}
---
correlation: {type: value_avg, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gt: 30, lt: 50, field: V}}
---
correlation: {type: value_percentile, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 40, field: V, percentile: 50}}
---
correlation: {type: value_percentile, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {lte: 5, field: V, percentile: 90}}
---
correlation: {type: value_percentile, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {gte: 40, field: V, percentile: 0}}
---
correlation: {type: value_percentile, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {eq: 60, field: V, percentile: 100}}
---
correlation: {type: value_percentile, rules: [a, b, c], group-by: [G], timespan: 1m, condition: {neq: 5, field: V, percentile: 33}}
";

    /// (group, first time, last time, events, measure) of a fired window.
    type Seen = (String, Timestamp, Timestamp, usize, f64);

    /// How many of the references, in the listed order, the window holds one after the
    /// other: the earliest event of each at or after the previous one's instant.
    fn in_order(c: &Correlation, w: &[CorrelationHit]) -> usize {
        let mut at = 0usize;
        let mut found = 0;
        for r in 0..c.rule_refs.len() {
            let bit = 1u32 << r;
            let Some(p) = w[at..].iter().position(|h| h.references & bit != 0) else {
                break;
            };
            found += 1;
            let t = w[at + p].time;
            at = w[..=at + p].partition_point(|h| h.time < t);
        }
        found
    }

    /// A window's measure, computed afresh from its events.
    fn measure(c: &Correlation, w: &[CorrelationHit]) -> Option<f64> {
        let mut xs: Vec<f64> = w.iter().filter_map(number).collect();
        Some(match c.kind {
            CorrelationKind::EventCount => w.len() as f64,
            CorrelationKind::ValueCount => {
                let v: HashSet<&str> = w.iter().filter_map(|h| h.value.as_deref()).collect();
                v.len() as f64
            }
            CorrelationKind::Temporal => {
                f64::from(w.iter().fold(0u32, |b, h| b | h.references).count_ones())
            }
            CorrelationKind::TemporalOrdered => in_order(c, w) as f64,
            CorrelationKind::ValueSum => (!xs.is_empty()).then(|| xs.iter().sum())?,
            CorrelationKind::ValueAvg => {
                (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)?
            }
            CorrelationKind::ValuePercentile => {
                if xs.is_empty() {
                    return None;
                }
                xs.sort_by(f64::total_cmp);
                xs[nearest_rank(c.percentile.unwrap_or(50.0), xs.len()) - 1]
            }
        })
    }

    /// The straightforward evaluation: every window's events held in one sorted list
    /// and measured afresh at each judgement (O(window) each).
    fn reference(c: &Correlation, mut hits: Vec<CorrelationHit>) -> Vec<Seen> {
        hits.sort_by(|a, b| (&a.group, a.time).cmp(&(&b.group, b.time)));
        let span = c.timespan_secs.map(|s| SignedDuration::from_secs(s as i64));
        let mut out = Vec::new();
        for g in hits.chunk_by(|a, b| a.group == b.group) {
            let (mut i, mut j, mut judged_to) = (0, 0, 0);
            while i < g.len() {
                let t = g[i].time;
                let end = span.and_then(|s| t.checked_add(s).ok());
                while j < g.len() && end.is_none_or(|e| g[j].time <= e) {
                    j += 1;
                }
                if j > judged_to {
                    judged_to = j;
                    if let Some(m) = measure(c, &g[i..j]).filter(|&m| holds(c, m)) {
                        out.push((g[i].group.to_string(), t, g[j - 1].time, j - i, m));
                        i = j;
                        continue;
                    }
                }
                while i < g.len() && g[i].time == t {
                    i += 1;
                }
            }
        }
        out
    }

    /// The same through [`slide`], one group at a time.
    fn streamed(c: &Correlation, mut hits: Vec<CorrelationHit>) -> Vec<Seen> {
        hits.sort_by(|a, b| (&a.group, a.time).cmp(&(&b.group, b.time)));
        let mut out = Vec::new();
        for g in hits.chunk_by(|a, b| a.group == b.group) {
            let mut it = g.iter().cloned().map(Ok).peekable();
            slide(c, &mut it, &mut |f| {
                let w = &f.window;
                out.push((
                    f.group.to_string(),
                    w[0].time,
                    w[w.len() - 1].time,
                    w.len(),
                    f.measure,
                ));
            })
            .unwrap();
            assert!(it.next().is_none(), "the group is read to its end");
        }
        out
    }

    fn rng(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed | 1;
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }

    /// Up to 40 events over 3 groups, at whole multiples of 10 s within 200 s (ties, and
    /// events exactly one timespan apart), answering one to three of the rules, with
    /// values that are numbers, not numbers or missing.
    fn stream(next: &mut impl FnMut(u64) -> u64) -> Vec<CorrelationHit> {
        let n = next(41);
        (0..n)
            .map(|_| {
                let mut references = 1u32 << next(3);
                if next(4) == 0 {
                    references |= 1 << next(3);
                }
                let value = match next(7) {
                    0 => None,
                    1 => Some("x".into()),
                    k => Some(["1", "5", "40", "60", "-0"][k as usize - 2].into()),
                };
                CorrelationHit {
                    correlation: 0,
                    references,
                    time: Timestamp::new(next(21) as i64 * 10, 0).unwrap(),
                    group: format!("g{}", next(3)).into(),
                    value,
                    computer: "PC".into(),
                    channel: "Security".into(),
                    event_id: "1".into(),
                    file: 0,
                }
            })
            .collect()
    }

    #[test]
    fn the_streamed_windows_equal_a_straightforward_evaluation() {
        let set = load(
            &[RuleSource::Text {
                name: "window-test.yml".into(),
                text: RULES.into(),
            }],
            &LoadOptions::default(),
        );
        assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
        let mut cs: Vec<Correlation> = set.correlations().to_vec();
        // Without a timespan (a legacy `count()` without `timeframe`): one window.
        for k in [0, 3, 9] {
            let mut whole = cs[k].clone();
            whole.timespan_secs = None;
            cs.push(whole);
        }
        let mut next = rng(0x2545_f491_4f6c_dd1d);
        let mut fired = 0;
        for _ in 0..2000 {
            let hits = stream(&mut next);
            for c in &cs {
                let want = reference(c, hits.clone());
                fired += want.len();
                assert_eq!(
                    streamed(c, hits.clone()),
                    want,
                    "{:?} over {hits:?}",
                    c.kind
                );
            }
        }
        assert!(fired > 10_000, "the conditions fire often: {fired}");
    }

    #[test]
    fn an_error_in_the_stream_ends_the_slide_with_it() {
        let set = load(
            &[RuleSource::Text {
                name: "window-test.yml".into(),
                text: RULES.into(),
            }],
            &LoadOptions::default(),
        );
        let c = &set.correlations()[0];
        let mut next = rng(7);
        let mut sorted = stream(&mut next);
        sorted.sort_by_key(|h| h.time);
        let mut hits: Vec<io::Result<CorrelationHit>> = sorted
            .into_iter()
            .map(|mut h| {
                h.group = "g".into();
                Ok(h)
            })
            .collect();
        hits.push(Err(io::Error::other("cut short")));
        let mut it = hits.into_iter().peekable();
        let err = slide(c, &mut it, &mut |_| {}).unwrap_err();
        assert_eq!(err.to_string(), "cut short");
    }
}
