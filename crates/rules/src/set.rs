//! The product of loading: compiled rules, their correlations, the field table they
//! read through, the rule index, the configuration and the load report.

use crate::config::Config;
use crate::correlation::Correlation;
use crate::fields::FieldTable;
use crate::index::RuleIndex;
use crate::report::LoadReport;
use crate::rule::Rule;

/// A loaded, compiled, indexed rule set.
pub struct RuleSet {
    /// Enabled rules; index positions are `u32` ids.
    pub rules: Vec<Rule>,
    /// Whether each rule emits rows of its own (false for rules that only feed a correlation).
    pub emits: Vec<bool>,
    /// Enabled correlations.
    pub correlations: Vec<Correlation>,
    /// Interned fields.
    pub fields: FieldTable,
    /// (Channel, EventID) index.
    pub index: RuleIndex,
    /// Configuration.
    pub config: Config,
    /// The load report.
    pub report: LoadReport,
    /// Number of distinct compiled regexes.
    pub regexes: usize,
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

    /// The field table, for interning the fields an output reads beyond the rules'.
    pub fn fields_mut(&mut self) -> &mut FieldTable {
        &mut self.fields
    }

    /// The index from (Channel, EventID) to the rules that may match such a record.
    pub fn index(&self) -> &RuleIndex {
        &self.index
    }

    /// The configuration the rules were loaded with (aliases, abbreviations, …).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The configuration, for a caller that adjusts what it displays (e.g. drops the
    /// default Details templates).
    pub fn config_mut(&mut self) -> &mut Config {
        &mut self.config
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
