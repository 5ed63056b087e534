//! Sigma filter documents: a condition ANDed into the rules a filter names (or every
//! rule of its log source), with pySigma's semantics (the filter's own condition carries
//! the `not`).

use super::ctx::Ctx;
use crate::condition::Cond;
use crate::logsource::Mapping;
use crate::meta::LogSource;
use crate::report::{LoadError, LoadReport};
use crate::rule::{self, Detection, Rule};
use compact_str::CompactString;

/// A Sigma filter: a condition ANDed into the rules it names (or all rules of its log source).
pub(super) struct Filter {
    /// The filter's file.
    pub file: String,
    /// Its title (selection names of the rules it joins are prefixed with it).
    pub title: String,
    /// The log source a rule must have for the filter to apply.
    pub logsource: LogSource,
    /// Rule ids or names; empty means every rule with a matching log source.
    pub rules: Vec<String>,
    /// The detection (selections and condition), compiled per target rule.
    pub detection: yaml_serde::Mapping,
}

impl Filter {
    /// Whether the filter targets rule `r`: named by id or name (or no names given), and
    /// of a log source the filter's covers.
    fn targets(&self, r: &Rule) -> bool {
        let named = self.rules.is_empty()
            || self
                .rules
                .iter()
                .any(|x| r.meta.id == x.as_str() || r.meta.name.as_deref() == Some(x.as_str()));
        named && logsource_covers(&self.logsource, &r.meta.logsource)
    }
}

/// Whether a filter's log source covers a rule's: each of product, category and service
/// the filter names must be the rule's.
fn logsource_covers(filter: &LogSource, rule: &LogSource) -> bool {
    let same = |a: &Option<CompactString>, b: &Option<CompactString>| {
        a.as_ref()
            .is_none_or(|a| b.as_ref().is_some_and(|b| a.eq_ignore_ascii_case(b)))
    };
    same(&filter.product, &rule.product)
        && same(&filter.category, &rule.category)
        && same(&filter.service, &rule.service)
}

/// Appends a filter's compiled detection to a rule's: its selections after the rule's
/// own (named `filter:<title>:<name>`), its condition ANDed with the rule's.
fn join(d: &mut Detection, filter: Detection, title: &str) {
    let off = d.selections.len() as u32;
    d.names
        .extend(filter.names.iter().map(|n| format!("filter:{title}:{n}")));
    d.selections.extend(filter.selections);
    let own = std::mem::replace(&mut d.condition, Cond::And(Vec::new()));
    d.condition = Cond::And(vec![own, filter.condition.shifted(off)]);
}

/// ANDs a filter's condition into every rule it targets, compiled for each rule's
/// log-source variant; a filter that applies to no rule is reported as a config problem.
pub(super) fn apply(f: &Filter, rules: &mut [Rule], ctx: &Ctx<'_>, report: &mut LoadReport) {
    let mut applied = 0;
    for r in rules.iter_mut().filter(|r| f.targets(r)) {
        let variant = match (r.variant, ctx.logsources.lookup(&r.meta.logsource)) {
            (Some(i), Mapping::Variants(v)) => v.get(i as usize),
            _ => None,
        };
        match rule::compile_detection(&f.detection, &ctx.for_variant(variant)) {
            Ok(fd) => {
                join(&mut r.detection, fd, &f.title);
                applied += 1;
            }
            Err(e) => report.errors.push(LoadError {
                file: f.file.clone(),
                document: 0,
                title: Some(f.title.clone()),
                reason: format!("filter on rule {}: {e}", r.meta.id),
            }),
        }
    }
    if applied == 0 {
        report.config_errors.push(format!(
            "{}: filter '{}' applies to no loaded rule",
            f.file, f.title
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ls(product: Option<&str>, category: Option<&str>) -> LogSource {
        LogSource {
            product: product.map(Into::into),
            category: category.map(Into::into),
            service: None,
        }
    }

    #[test]
    fn a_filter_covers_the_log_sources_it_does_not_narrow() {
        let rule = ls(Some("windows"), Some("process_creation"));
        assert!(logsource_covers(&ls(None, None), &rule));
        assert!(logsource_covers(&ls(Some("Windows"), None), &rule));
        assert!(logsource_covers(
            &ls(Some("windows"), Some("process_creation")),
            &rule
        ));
        assert!(!logsource_covers(&ls(None, Some("file_event")), &rule));
        assert!(!logsource_covers(&ls(Some("linux"), None), &ls(None, None)));
    }

    #[test]
    fn joining_appends_the_filter_selections_and_ands_the_conditions() {
        let mut d = Detection {
            names: vec!["sel".into()],
            selections: vec![crate::rule::Selection::All(Vec::new())],
            condition: Cond::Sel(0),
            aggregation: None,
        };
        let f = Detection {
            names: vec!["a".into(), "b".into()],
            selections: vec![
                crate::rule::Selection::All(Vec::new()),
                crate::rule::Selection::All(Vec::new()),
            ],
            condition: Cond::Not(Box::new(Cond::Or(vec![Cond::Sel(0), Cond::Sel(1)]))),
            aggregation: None,
        };
        join(&mut d, f, "T");
        assert_eq!(d.names, ["sel", "filter:T:a", "filter:T:b"]);
        assert_eq!(d.selections.len(), 3);
        assert_eq!(
            d.condition,
            Cond::And(vec![
                Cond::Sel(0),
                Cond::Not(Box::new(Cond::Or(vec![Cond::Sel(1), Cond::Sel(2)])))
            ])
        );
    }
}
