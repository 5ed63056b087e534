//! The product of loading: compiled rules, their correlations, the field table they
//! read through, the rule index, the configuration and the load report.

use crate::config::Config;
use crate::correlation::Correlation;
use crate::event::Event;
use crate::fields::FieldTable;
use crate::index::RuleIndex;
use crate::prefilter::Admission;
use crate::report::LoadReport;
use crate::rule::Rule;

/// A loaded, compiled, indexed rule set. It can be written whole and read back (the
/// rule set cache, `load::cache`). What an output makes of it (the level a row is shown
/// at, critical systems) is the timeline's; which Details templates a scan renders is
/// the engine's.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RuleSet {
    /// Enabled rules; index positions are `u32` ids.
    pub(crate) rules: Vec<Rule>,
    /// Whether each rule emits rows of its own (false for rules that only feed a correlation).
    pub(crate) emits: Vec<bool>,
    /// Enabled correlations.
    pub(crate) correlations: Vec<Correlation>,
    /// Interned fields.
    pub(crate) fields: FieldTable,
    /// (Channel, EventID) index.
    pub(crate) index: RuleIndex,
    /// Configuration.
    pub(crate) config: Config,
    /// The load report.
    pub(crate) report: LoadReport,
    /// Number of distinct compiled regexes.
    pub(crate) regexes: usize,
}

impl RuleSet {
    /// The enabled rules, in load order; a rule's position is its `u32` id everywhere
    /// (the index, correlations, detections).
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// For each rule (by id), whether it emits rows of its own: false for a rule that
    /// only feeds a correlation.
    pub fn emits(&self) -> &[bool] {
        &self.emits
    }

    /// The enabled correlations, their rule ids resolved.
    pub fn correlations(&self) -> &[Correlation] {
        &self.correlations
    }

    /// The table of every field name the rules (and their correlations) read.
    pub fn fields(&self) -> &FieldTable {
        &self.fields
    }

    /// The field table, to intern more fields, beside the rules and the config to read
    /// while doing it (an output's Details templates name fields no rule tests).
    pub fn fields_mut_with(&mut self) -> (&mut FieldTable, &[Rule], &Config) {
        (&mut self.fields, &self.rules, &self.config)
    }

    /// Calls `f` with the id of each rule to evaluate for `event`, a record of this
    /// (lowercase) `channel` and `event_id`: the rules indexed under its (Channel,
    /// EventID) pair, its channel, its EventID or neither, those of a large bucket only
    /// when its prefilter admits them (every one with `prefilter` off). `adm` holds a
    /// worker's reused buffers and memo. Returns which rules read records of this
    /// (Channel, EventID) at all: (some rule indexed under its channel, some rule with
    /// no channel), by the buckets that exist.
    #[inline]
    pub fn for_each_candidate(
        &self,
        channel: &str,
        event_id: &str,
        event: &impl Event,
        adm: &mut Admission,
        prefilter: bool,
        mut f: impl FnMut(u32),
    ) -> (bool, bool) {
        let rules = self.rules.len();
        let buckets = self.index.candidates(channel, event_id);
        let reads = (
            buckets[0].is_some() || buckets[1].is_some(),
            buckets[2].is_some() || buckets[3].is_some(),
        );
        for b in buckets.into_iter().flatten() {
            for &r in b.admit(adm, event, rules, prefilter) {
                f(r);
            }
        }
        reads
    }

    /// How many rules the index gives a record of this (lowercase) `channel` and
    /// `event_id`: those indexed under its channel (with its EventID or any), and those
    /// with no channel (with its EventID or none).
    pub fn candidate_rules(&self, channel: &str, event_id: &str) -> (usize, usize) {
        let [exact, channel_any, eid_any, any] = self.index.candidates(channel, event_id);
        let n = |b: Option<&crate::index::Bucket>| b.map_or(0, |b| b.rules.len());
        (n(exact) + n(channel_any), n(eid_any) + n(any))
    }

    /// Whether some rule may match a record of this (lowercase) channel: a rule
    /// indexed under it, or a rule with no channel constraint.
    pub fn has_channel(&self, channel: &str) -> bool {
        self.index.has_channel(channel)
    }

    /// Number of (Channel, EventID) keys the rules are indexed under.
    pub fn index_keys(&self) -> usize {
        self.index.keys()
    }

    /// Number of (Channel, EventID) buckets with a prefilter, and the rules in them.
    pub fn prefiltered(&self) -> (usize, usize) {
        self.index.prefiltered()
    }

    /// The configuration the rules were loaded with (aliases, abbreviations, …).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// What loading did: files, documents, errors, disabled rules, timings.
    pub fn report(&self) -> &LoadReport {
        &self.report
    }

    /// The number of distinct compiled regexes the rules share.
    pub fn regexes(&self) -> usize {
        self.regexes
    }
}
