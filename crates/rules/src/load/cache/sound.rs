//! Whether a rule set read back from the rule set cache holds together: every number
//! in it that the scan will index with (a rule, a selection, a field, a needle, a
//! correlation, a reference) points inside it, as after a load.
//!
//! Decoding already refuses bytes that are not a rule set; this refuses a rule set
//! that no load makes, so that no cache file, however it was made, can make a later
//! scan index out of bounds.

use crate::condition::Cond;
use crate::correlation::{CorrelationSource, InputKey, MAX_REFS};
use crate::matcher::{Check, FieldTest, Target};
use crate::prefilter::ALL_VALUES;
use crate::rule::Rule;
use crate::set::RuleSet;

/// Whether every index `set` holds is within it.
pub fn sound(set: &RuleSet) -> bool {
    let rules = set.rules.len();
    let fields = set.fields.len();
    let field = |f: u32| (f as usize) < fields;
    let rule = |r: u32| (r as usize) < rules;
    set.fields.is_sound()
        && set.emits.len() == rules
        && set.rules.iter().all(|r| rule_sound(r, &field))
        && set.index.buckets().all(|b| {
            b.rules.iter().all(|&r| rule(r))
                && b.prefilter.as_ref().is_none_or(|p| {
                    p.always.iter().all(|&r| rule(r))
                        && p.fields.iter().all(|f| {
                            (f.field == ALL_VALUES || field(f.field))
                                && f.owners.len() == f.automaton.needles().len()
                                && f.owners.iter().flatten().all(|o| {
                                    rule(o.rule)
                                        && o.clause.count_ones() == 1
                                        && o.all & o.clause == o.clause
                                })
                        })
                })
        })
        && set.correlations.iter().all(|c| {
            c.rule_refs.len() <= MAX_REFS
                && c.inputs.iter().all(|i| {
                    let key = |k: &Option<InputKey>| match k {
                        Some(InputKey::Field(f)) => field(*f),
                        Some(InputKey::Group(_)) | None => true,
                    };
                    let source = match i.source {
                        CorrelationSource::Rule(r) => rule(r),
                        CorrelationSource::Correlation(k) => (k as usize) < set.correlations.len(),
                    };
                    source
                        && usize::from(i.reference) < c.rule_refs.len()
                        && i.group.iter().all(key)
                        && i.values.iter().all(key)
                })
        })
}

/// Whether a rule's condition names its selections and its tests name fields of the
/// table (`field`).
fn rule_sound(r: &Rule, field: &impl Fn(u32) -> bool) -> bool {
    let d = &r.detection;
    let test = |t: &FieldTest| {
        let target = match t.target {
            Target::Field(f) => field(f),
            Target::Keywords => true,
        };
        let check = match &t.check {
            Check::FieldRef { others, .. } => others.iter().all(|&f| field(f)),
            _ => true,
        };
        target && check
    };
    let mut tests = true;
    for s in &d.selections {
        s.for_each_test(&mut |t| tests &= test(t));
    }
    d.names.len() == d.selections.len() && tests && cond_sound(&d.condition, d.selections.len())
}

/// Whether every selection a condition names is one of `selections`.
fn cond_sound(c: &Cond, selections: usize) -> bool {
    match c {
        Cond::Sel(i) => (*i as usize) < selections,
        Cond::Not(c) => cond_sound(c, selections),
        Cond::And(cs) | Cond::Or(cs) | Cond::AtLeast(_, cs) => {
            cs.iter().all(|c| cond_sound(c, selections))
        }
    }
}
