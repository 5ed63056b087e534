//! Rules indexed by (Channel, EventID), so a record is tested only against the rules
//! that can match it; large buckets carry a [`Prefilter`] so that only the rules whose
//! needles occur in the record are evaluated.

use crate::event::Event;
use crate::fields::FxHashMap;
use crate::prefilter::{Admission, Prefilter, MIN_BUCKET};
use crate::rule::{Constraint, Rule};
use rayon::prelude::*;

/// The rules under one (channel, EventID) key.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Bucket {
    /// Rule indices, in rule-set order.
    pub(crate) rules: Vec<u32>,
    /// The shared prefilter, for buckets of at least eight rules.
    pub(crate) prefilter: Option<Prefilter>,
}

impl Bucket {
    /// The rules of this bucket to evaluate for `event` (of a set of `rules` rules):
    /// those its prefilter admits (every rule when it has none, or when `use_prefilter`
    /// is off), found with `adm`'s reused buffers.
    #[inline]
    pub(crate) fn admit<'a>(
        &self,
        adm: &'a mut Admission,
        event: &impl Event,
        rules: usize,
        use_prefilter: bool,
    ) -> &'a [u32] {
        let prefilter = self.prefilter.as_ref().filter(|_| use_prefilter);
        adm.admit(&self.rules, prefilter, event, rules)
    }
}

/// Buckets keyed by lowercase channel, then EventID text; `""` stands for "any".
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct RuleIndex {
    map: FxHashMap<Box<str>, FxHashMap<Box<str>, Bucket>>,
}

impl RuleIndex {
    /// Adds rule `rule` under every (channel, EventID) pair its constraint allows.
    pub(crate) fn insert(&mut self, rule: u32, c: &Constraint) {
        let any = vec![String::new()];
        let chans = c.channels.as_ref().unwrap_or(&any);
        let eids = c.event_ids.as_ref().unwrap_or(&any);
        for ch in chans {
            for e in eids {
                let b = self
                    .map
                    .entry(ch.to_lowercase().into())
                    .or_default()
                    .entry(e.as_str().into())
                    .or_default();
                if b.rules.last() != Some(&rule) {
                    b.rules.push(rule);
                }
            }
        }
    }

    /// Builds the prefilters of large buckets (in parallel).
    pub(crate) fn build_prefilters(&mut self, rules: &[Rule]) {
        let mut big: Vec<&mut Bucket> = self
            .map
            .values_mut()
            .flat_map(|m| m.values_mut())
            .filter(|b| b.rules.len() >= MIN_BUCKET)
            .collect();
        big.par_iter_mut()
            .for_each(|b| b.prefilter = Some(Prefilter::build(&b.rules, rules)));
    }

    /// Gives equal automata (same needles, same way of building) one build: buckets
    /// of parallel rule sets (Sysmon 1 and Security 4688) often scan for the same needles.
    pub(crate) fn share_automata(&mut self, shared: &mut crate::matcher::SharedAutomata) {
        for b in self.map.values_mut().flat_map(|m| m.values_mut()) {
            for f in b.prefilter.iter_mut().flat_map(|p| p.fields.iter_mut()) {
                f.automaton.share(shared);
            }
        }
    }

    /// The buckets a record with this (lowercase) channel and EventID may match: up to
    /// four disjoint ones (exact pair, channel only, EventID only, unconstrained).
    #[inline]
    pub(crate) fn candidates(&self, channel: &str, event_id: &str) -> [Option<&Bucket>; 4] {
        fn in_channel<'a>(
            m: Option<&'a FxHashMap<Box<str>, Bucket>>,
            event_id: &str,
        ) -> [Option<&'a Bucket>; 2] {
            match m {
                Some(m) if event_id.is_empty() => [None, m.get("")],
                Some(m) => [m.get(event_id), m.get("")],
                None => [None, None],
            }
        }
        // Two lookups of the channel (its own and the wildcard), then the EventIDs.
        let [exact, channel_any] = if channel.is_empty() {
            [None, None]
        } else {
            in_channel(self.map.get(channel), event_id)
        };
        let [eid_any, any] = in_channel(self.map.get(""), event_id);
        [exact, channel_any, eid_any, any]
    }

    /// Whether some rule may match a record of this channel (lowercase): a rule
    /// indexed under it, or a rule with no channel constraint.
    pub(crate) fn has_channel(&self, channel: &str) -> bool {
        self.map.contains_key(channel) || self.map.contains_key("")
    }

    /// Every bucket, in no order.
    pub(crate) fn buckets(&self) -> impl Iterator<Item = &Bucket> {
        self.map.values().flat_map(|m| m.values())
    }

    /// Number of (channel, EventID) keys.
    pub(crate) fn keys(&self) -> usize {
        self.map.values().map(|m| m.len()).sum()
    }

    /// Number of buckets with a prefilter, and the rules in them.
    pub(crate) fn prefiltered(&self) -> (usize, usize) {
        let b = self
            .map
            .values()
            .flat_map(|m| m.values())
            .filter(|b| b.prefilter.is_some());
        b.fold((0, 0), |(n, r), b| (n + 1, r + b.rules.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(b: Option<&Bucket>) -> Vec<u32> {
        b.map(|b| b.rules.clone()).unwrap_or_default()
    }

    #[test]
    fn candidates_are_disjoint_buckets() {
        let mut ix = RuleIndex::default();
        ix.insert(
            0,
            &Constraint {
                channels: Some(vec!["Security".into()]),
                event_ids: Some(vec!["4688".into(), "1".into()]),
            },
        );
        ix.insert(
            1,
            &Constraint {
                channels: Some(vec!["security".into()]),
                event_ids: None,
            },
        );
        ix.insert(
            2,
            &Constraint {
                channels: None,
                event_ids: Some(vec!["4688".into()]),
            },
        );
        ix.insert(3, &Constraint::default());
        let c = ix.candidates("security", "4688");
        assert_eq!(c.map(ids), [vec![0], vec![1], vec![2], vec![3]]);
        let c = ix.candidates("system", "4688");
        assert_eq!(c.map(ids), [vec![], vec![], vec![2], vec![3]]);
        let c = ix.candidates("security", "1");
        assert_eq!(c.map(ids), [vec![0], vec![1], vec![], vec![3]]);
    }
}
