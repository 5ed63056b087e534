//! Rules indexed by (Channel, EventID), so a record is tested only against the rules
//! that can match it.

use crate::fields::FxHashMap;
use crate::rule::Constraint;

/// Rule indices keyed by lowercase channel, then EventID text; `""` stands for "any".
#[derive(Debug, Default, Clone)]
pub struct RuleIndex {
    map: FxHashMap<Box<str>, FxHashMap<Box<str>, Vec<u32>>>,
}

const EMPTY: &[u32] = &[];

impl RuleIndex {
    /// Adds rule `rule` under every (channel, EventID) pair its constraint allows.
    pub fn insert(&mut self, rule: u32, c: &Constraint) {
        let any = vec![String::new()];
        let chans = c.channels.as_ref().unwrap_or(&any);
        let eids = c.event_ids.as_ref().unwrap_or(&any);
        for ch in chans {
            for e in eids {
                self.map
                    .entry(ch.to_lowercase().into())
                    .or_default()
                    .entry(e.as_str().into())
                    .or_default()
                    .push(rule);
            }
        }
    }

    fn get(&self, ch: &str, eid: &str) -> &[u32] {
        self.map
            .get(ch)
            .and_then(|m| m.get(eid))
            .map_or(EMPTY, Vec::as_slice)
    }

    /// The rules a record with this (lowercase) channel and EventID may match: four
    /// disjoint lists (exact pair, channel only, EventID only, unconstrained).
    #[inline]
    pub fn candidates(&self, channel: &str, event_id: &str) -> [&[u32]; 4] {
        [
            if channel.is_empty() || event_id.is_empty() {
                EMPTY
            } else {
                self.get(channel, event_id)
            },
            if channel.is_empty() {
                EMPTY
            } else {
                self.get(channel, "")
            },
            if event_id.is_empty() {
                EMPTY
            } else {
                self.get("", event_id)
            },
            self.get("", ""),
        ]
    }

    /// Number of (channel, EventID) keys.
    pub fn keys(&self) -> usize {
        self.map.values().map(|m| m.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_are_disjoint_lists() {
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
        assert_eq!(
            ix.candidates("security", "4688"),
            [&[0u32][..], &[1], &[2], &[3]]
        );
        assert_eq!(ix.candidates("system", "4688"), [&[][..], &[], &[2], &[3]]);
        assert_eq!(
            ix.candidates("security", "1"),
            [&[0u32][..], &[1], &[], &[3]]
        );
    }
}
