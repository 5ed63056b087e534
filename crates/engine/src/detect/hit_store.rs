//! Where a scan's correlation hits wait for the end of the scan: a spill store
//! ([`crate::sort::SpillStore`], as the timeline's rows have) with the hits' codec
//! ([`HitCodec`]). Hits are sorted by (correlation, in evaluation order; group; time;
//! then every other field, so the order is total); at the end the runs and the hits
//! still in memory are merged in that order, so correlations are evaluated one group at
//! a time and memory holds the largest group, not every hit.

use crate::detect::hit::CorrelationHit;
use crate::sort::{get, get_compact, get_string, get_time, put_str, put_time};
use crate::sort::{SpillCodec, SpillStore};
use compact_str::CompactString;
use rayon::slice::ParallelSliceMut;
use std::cmp::Ordering;
use std::io::{self, Read, Write};
use std::path::PathBuf;

/// A scan's correlation hits, held in memory up to a bound and spilled past it.
pub type HitStore = SpillStore<HitCodec>;

impl HitStore {
    /// A store spilling a batch once it holds more than `spill_at` bytes (`None`:
    /// never), to a private folder made in `parent`; `rank` is each correlation's
    /// place in evaluation order.
    pub fn new(spill_at: Option<usize>, parent: PathBuf, rank: Vec<u32>) -> HitStore {
        SpillStore::with_codec(HitCodec { rank }, spill_at, parent)
    }
}

fn rank_of(rank: &[u32], h: &CorrelationHit) -> u32 {
    rank.get(h.correlation as usize)
        .copied()
        .unwrap_or(u32::MAX)
}

/// The order hits are evaluated in: `rank` gives each correlation's place.
pub fn cmp(rank: &[u32], a: &CorrelationHit, b: &CorrelationHit) -> Ordering {
    ranked(rank_of(rank, a), a, rank_of(rank, b), b)
}

/// [`cmp`] of hits whose correlations' ranks are `ra` and `rb`.
fn ranked(ra: u32, a: &CorrelationHit, rb: u32, b: &CorrelationHit) -> Ordering {
    (ra, a.correlation, &a.group, a.time)
        .cmp(&(rb, b.correlation, &b.group, b.time))
        .then_with(|| {
            (
                a.references,
                &a.value,
                &a.computer,
                &a.channel,
                &a.event_id,
                a.file,
            )
                .cmp(&(
                    b.references,
                    &b.value,
                    &b.computer,
                    &b.channel,
                    &b.event_id,
                    b.file,
                ))
        })
}

/// About how many bytes a hit takes in memory.
pub fn approx_bytes(h: &CorrelationHit) -> usize {
    HitCodec::approx_bytes(h)
}

/// Correlation hits in a spill store, in evaluation order; their binary form in a run is
/// the numbers little-endian, then the strings (the value after a byte saying whether
/// there is one).
#[derive(Debug)]
pub struct HitCodec {
    /// Each correlation's place in evaluation order, by correlation index.
    rank: Vec<u32>,
}

impl SpillCodec for HitCodec {
    type Item = CorrelationHit;
    /// The rank of the hit's correlation.
    type Key = u32;

    const HOLDS: &'static str = "correlation events";
    const READ_BACK: &'static str = "correlation events";

    fn run_name(n: u64) -> String {
        format!("c{n:x}")
    }

    fn approx_bytes(h: &CorrelationHit) -> usize {
        let heap = |s: &CompactString| if s.is_heap_allocated() { s.len() } else { 0 };
        std::mem::size_of::<CorrelationHit>()
            + h.group.len()
            + h.value.as_ref().map_or(0, heap)
            + heap(&h.computer)
            + heap(&h.channel)
            + heap(&h.event_id)
    }

    fn key(&self, h: &CorrelationHit) -> u32 {
        rank_of(&self.rank, h)
    }

    fn cmp(ra: u32, a: &CorrelationHit, rb: u32, b: &CorrelationHit) -> Ordering {
        ranked(ra, a, rb, b)
    }

    fn sort(&self, hits: &mut [CorrelationHit], parallel: bool) {
        let by = |a: &CorrelationHit, b: &CorrelationHit| cmp(&self.rank, a, b);
        if parallel {
            hits.par_sort_unstable_by(by);
        } else {
            hits.sort_unstable_by(by);
        }
    }

    fn encode<W: Write>(h: &CorrelationHit, w: &mut W) -> io::Result<()> {
        w.write_all(&h.correlation.to_le_bytes())?;
        w.write_all(&h.references.to_le_bytes())?;
        put_time(w, h.time)?;
        w.write_all(&h.file.to_le_bytes())?;
        put_str(w, &h.group)?;
        match &h.value {
            Some(v) => {
                w.write_all(&[1])?;
                put_str(w, v)?;
            }
            None => w.write_all(&[0])?,
        }
        put_str(w, &h.computer)?;
        put_str(w, &h.channel)?;
        put_str(w, &h.event_id)
    }

    fn decode<R: Read>(r: &mut R) -> io::Result<CorrelationHit> {
        let correlation = u32::from_le_bytes(get(r)?);
        let references = u32::from_le_bytes(get(r)?);
        let time = get_time(r)?;
        let file = u32::from_le_bytes(get(r)?);
        let group = get_string(r)?.into_boxed_str();
        let value = match get::<1>(r)? {
            [0] => None,
            _ => Some(get_compact(r)?),
        };
        Ok(CorrelationHit {
            correlation,
            references,
            time,
            group,
            value,
            computer: get_compact(r)?,
            channel: get_compact(r)?,
            event_id: get_compact(r)?,
            file,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::correlate::{collect_sorted, evaluate, ranks};
    use crate::sort::tests::{files_in, scratch};
    use crate::sort::FAN_IN;
    use jiff::Timestamp;
    use scanner_rules::{load, LoadOptions, RuleSet, RuleSource};

    const RULES: &str = "title: Logon failed
name: failed_logon
detection: {sel: {EventID: 4625}, condition: sel}
---
title: Logon succeeded
name: good_logon
detection: {sel: {EventID: 4624}, condition: sel}
---
title: Many failures
name: many_failures
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
---
title: Repeated bursts
correlation: {type: event_count, rules: many_failures, group-by: [IpAddress], timespan: 1h, condition: {gte: 2}}
";

    fn rules() -> RuleSet {
        let text = RULES.to_string();
        let name = "hit-store-test.yml".to_string();
        let set = load(&[RuleSource::Text { name, text }], &LoadOptions::default());
        assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
        set
    }

    /// `n` hits of every record-fed correlation of [`RULES`], from a fixed
    /// pseudo-random sequence: 40 groups, times in whole minutes (many ties), a few
    /// users, files and computers.
    fn hits(set: &RuleSet, n: u64) -> Vec<CorrelationHit> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let fed: Vec<usize> = set
            .correlations()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.meta.title != "Repeated bursts")
            .map(|(i, _)| i)
            .collect();
        (0..n)
            .map(|_| {
                let ci = fed[next(fed.len() as u64) as usize];
                let refs = set.correlations()[ci].rule_refs.len() as u64;
                CorrelationHit {
                    correlation: ci as u32,
                    references: 1 << next(refs),
                    time: Timestamp::new(next(90) as i64 * 60, 0).unwrap(),
                    group: format!("10.0.0.{}", next(40)).into(),
                    value: Some(format!("user{}", next(4)).into()),
                    computer: format!("WS{}", next(3)).into(),
                    channel: "Security".into(),
                    event_id: if next(2) == 0 { "4624" } else { "4625" }.into(),
                    file: next(3) as u32,
                }
            })
            .collect()
    }

    fn name(f: u32) -> String {
        format!("f{f}.evtx")
    }

    #[test]
    fn spilled_hits_give_the_rows_of_hits_evaluated_in_memory() {
        let set = rules();
        let all = hits(&set, 3000);
        let expected = format!("{:?}", evaluate(&set, all.clone(), &name));
        let chained = evaluate(&set, all.clone(), &name)
            .iter()
            .filter(|r| set.correlations()[r.rule.index() as usize].meta.title == "Repeated bursts")
            .count();
        assert!(chained > 0, "the chained correlation fires");

        let dir = scratch("hit-store-spill");
        // A bound of one byte: every push is a run, more than the fan-in.
        let store = HitStore::new(Some(1), dir.clone(), ranks(&set));
        for chunk in all.chunks(37) {
            let mut v = chunk.to_vec();
            let bytes = v.iter().map(approx_bytes).sum();
            store.push(&mut v, bytes);
        }
        let runs = store.runs();
        assert!(runs > FAN_IN, "{runs} runs");
        let sorted = store.finish().unwrap();
        let rows = collect_sorted(&set, sorted, &name).unwrap();
        assert_eq!(format!("{rows:?}"), expected);
        assert_eq!(files_in(&dir), 0, "no run left behind");

        // Held in memory (no bound), through the same path.
        let store = HitStore::new(None, dir.clone(), ranks(&set));
        let mut v = all;
        store.push(&mut v, 0);
        assert_eq!(store.runs(), 0);
        let rows = collect_sorted(&set, store.finish().unwrap(), &name).unwrap();
        assert_eq!(format!("{rows:?}"), expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_that_cannot_be_read_back_is_an_error_naming_its_file() {
        let set = rules();
        let dir = scratch("hit-store-truncated");
        let store = HitStore::new(Some(1), dir.clone(), ranks(&set));
        let mut v = hits(&set, 50);
        store.push(&mut v, 1000);
        let only = |d: &std::path::Path| std::fs::read_dir(d).unwrap().next().unwrap().unwrap();
        let run = only(&only(&dir).path()).path();
        let pid = std::process::id();
        assert_eq!(
            run.file_name().unwrap().to_str().unwrap(),
            format!("scanner-sort-{pid}-c0.run")
        );
        let f = std::fs::OpenOptions::new().write(true).open(&run).unwrap();
        f.set_len(10).unwrap();
        // Closed, so that the run can be removed on Windows too (an open file stays).
        drop(f);
        let err = collect_sorted(&set, store.finish().unwrap(), &name).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&run.display().to_string()), "{text}");
        assert!(
            text.starts_with("cannot read correlation events back from"),
            "{text}"
        );
        assert_eq!(files_in(&dir), 0, "no run left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hits_round_trip_and_damage_is_an_error() {
        let set = rules();
        let mut all = hits(&set, 200);
        all[0].value = None;
        all[1].group = "g".repeat(300).into();
        all[2].computer = "ホスト-名前-とても長いコンピューター名.example.jp".into();
        let mut buf = Vec::new();
        for h in &all {
            HitCodec::encode(h, &mut buf).unwrap();
        }
        let mut r = &buf[..];
        for h in &all {
            let back = HitCodec::decode(&mut r).unwrap();
            assert_eq!(format!("{back:?}"), format!("{h:?}"));
        }
        assert!(r.is_empty());
        let mut one = Vec::new();
        HitCodec::encode(&all[2], &mut one).unwrap();
        for cut in 0..one.len() {
            assert!(HitCodec::decode(&mut &one[..cut]).is_err(), "cut at {cut}");
        }
    }
}
