//! Which loaded rules run: derived duplicates, the config's rule lists, status, level
//! and the tag, category and status options decide; correlations are then tied to the
//! enabled rules they name, and legacy `| count()` rules become correlations over
//! themselves.

use super::{LoadOptions, Loaded};
use crate::config::Config;
use crate::correlation::{self, Correlation, CorrelationInput, CorrelationSource};
use crate::fields::{FxHashMap, FxHashSet};
use crate::meta::RuleMeta;
use crate::report::{Disabled, LoadError, LoadReport};
use crate::rule::Rule;
use std::collections::BTreeMap;

/// Which rules to keep, by tag, log-source category and status. An include list keeps
/// only the rules with a listed value (so a rule without one is dropped); an exclude
/// list drops the rules with a listed value. Comparisons ignore case.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RuleSelect {
    /// Keep rules with any of these tags.
    pub include_tags: Vec<String>,
    /// Drop rules with any of these tags.
    pub exclude_tags: Vec<String>,
    /// Keep rules of these categories.
    pub include_categories: Vec<String>,
    /// Drop rules of these categories.
    pub exclude_categories: Vec<String>,
    /// Keep rules of these statuses (`*` keeps all).
    pub include_status: Vec<String>,
    /// Drop rules of these statuses.
    pub exclude_status: Vec<String>,
}

impl RuleSelect {
    /// Whether a rule passes the selection.
    pub fn keeps(&self, meta: &RuleMeta) -> bool {
        let has = |list: &[String], v: &str| list.iter().any(|x| x.eq_ignore_ascii_case(v));
        let any_tag = |list: &[String]| meta.tags.iter().any(|t| has(list, t));
        if !self.include_tags.is_empty() && !any_tag(&self.include_tags) {
            return false;
        }
        if any_tag(&self.exclude_tags) {
            return false;
        }
        let category = meta.logsource.category.as_deref().unwrap_or("");
        if !self.include_categories.is_empty() && !has(&self.include_categories, category) {
            return false;
        }
        if !category.is_empty() && has(&self.exclude_categories, category) {
            return false;
        }
        let status = meta.status.as_str();
        if !self.include_status.is_empty()
            && !self.include_status.iter().any(|s| s == "*")
            && !has(&self.include_status, status)
        {
            return false;
        }
        status.is_empty() || !has(&self.exclude_status, status)
    }
}

/// The rules and correlations that run, and which rules emit rows of their own.
pub(super) struct Enabled {
    /// Enabled rules (log-source variants each count as one).
    pub rules: Vec<Rule>,
    /// Per rule, whether it emits its own rows.
    pub emits: Vec<bool>,
    /// Enabled correlations, their rule references resolved, then the aggregations.
    pub correlations: Vec<Correlation>,
}

/// Chooses what runs from what loaded, recording every disabled rule in `report`.
pub(super) fn enable(
    loaded: Loaded,
    config: &Config,
    opts: &LoadOptions,
    report: &mut LoadReport,
) -> Enabled {
    let Loaded {
        mut rules,
        correlations,
        mut disabled,
    } = loaded;
    if !opts.keep_derived_duplicates {
        drop_derived_duplicates(&mut rules, &mut disabled, report);
    }
    let verdict = Verdict { config, opts };
    let rules = keep_enabled(rules, &verdict, &mut disabled);
    let mut emits = vec![true; rules.len()];
    let mut kept = resolve_correlations(
        correlations,
        &rules,
        &mut emits,
        &verdict,
        &mut disabled,
        report,
    );
    // Legacy `| count()` rules: each becomes a correlation over itself.
    for (i, r) in rules.iter().enumerate() {
        if let Some((a, timeframe)) = &r.detection.aggregation {
            emits[i] = false;
            kept.push(correlation::from_aggregation(
                r.meta.clone(),
                i as u32,
                a,
                *timeframe,
            ));
        }
    }
    report.disabled = disabled.into_iter().collect();
    // Count rules, not log-source variants.
    let distinct: FxHashSet<_> = rules
        .iter()
        .filter(|r| r.detection.aggregation.is_none())
        .map(|r| (&r.meta.path, &r.meta.id, &r.meta.title))
        .collect();
    report.enabled = distinct.len() + kept.len();
    Enabled {
        rules,
        emits,
        correlations: kept,
    }
}

/// A rule derived from another with the same title (a conversion of it, such as
/// Hayabusa's) stands for it: run one, not both.
fn drop_derived_duplicates(
    rules: &mut Vec<Rule>,
    disabled: &mut BTreeMap<Disabled, usize>,
    report: &mut LoadReport,
) {
    let mut title_of: FxHashMap<&str, &str> = FxHashMap::default();
    for r in rules.iter() {
        title_of.insert(r.meta.id.as_str(), r.meta.title.as_str());
    }
    let mut superseded: FxHashMap<String, String> = FxHashMap::default();
    for r in rules.iter() {
        for (id, kind) in &r.meta.related {
            if kind == "derived"
                && *id != r.meta.id
                && title_of.get(id.as_str()) == Some(&r.meta.title.as_str())
            {
                superseded.insert(id.to_string(), r.meta.id.to_string());
            }
        }
    }
    if superseded.is_empty() {
        return;
    }
    let mut seen = FxHashSet::default();
    rules.retain(|r| match superseded.get(r.meta.id.as_str()) {
        Some(by) => {
            if seen.insert((r.meta.path.clone(), r.meta.id.clone())) {
                *disabled.entry(Disabled::Duplicate).or_default() += 1;
                report.disabled_rules.push(LoadError {
                    file: r.meta.path.to_string(),
                    document: 0,
                    title: Some(r.meta.title.to_string()),
                    reason: format!("rule {by}, derived from it with the same title, is loaded"),
                });
            }
            false
        }
        None => true,
    });
}

/// Why the options and config lists disable a rule, if they do.
struct Verdict<'a> {
    config: &'a Config,
    opts: &'a LoadOptions,
}

impl Verdict<'_> {
    /// The reason a rule is disabled, in Hayabusa's order of precedence; `None` when it
    /// runs.
    fn of(&self, meta: &RuleMeta) -> Option<Disabled> {
        let (config, opts) = (self.config, self.opts);
        let id = meta.id.as_str();
        if config.exclude.contains(id) {
            return Some(Disabled::Excluded);
        }
        if !opts.enable_noisy && config.noisy.contains(id) {
            return Some(Disabled::Noisy);
        }
        if opts.proven_only && !config.proven.as_ref().is_some_and(|p| p.contains(id)) {
            return Some(Disabled::NotProven);
        }
        match meta.status.as_str() {
            "deprecated" if !opts.enable_deprecated => return Some(Disabled::Deprecated),
            "unsupported" if !opts.enable_unsupported => return Some(Disabled::Unsupported),
            _ => {}
        }
        if meta.level < opts.min_level {
            return Some(Disabled::BelowMinLevel);
        }
        if opts.exact_level.is_some_and(|l| l != meta.level) {
            return Some(Disabled::NotExactLevel);
        }
        (!opts.select.keeps(meta)).then_some(Disabled::Selected)
    }
}

/// The rules the verdict lets run; each disabled rule is counted once, not once per
/// log-source variant.
fn keep_enabled(
    rules: Vec<Rule>,
    verdict: &Verdict<'_>,
    disabled: &mut BTreeMap<Disabled, usize>,
) -> Vec<Rule> {
    let verdicts: Vec<Option<Disabled>> = rules.iter().map(|r| verdict.of(&r.meta)).collect();
    let mut counted = FxHashSet::default();
    for (r, d) in rules.iter().zip(&verdicts) {
        if let Some(d) = d {
            let m = &r.meta;
            if counted.insert((&*m.path, m.id.as_str(), m.title.as_str())) {
                *disabled.entry(*d).or_default() += 1;
            }
        }
    }
    rules
        .into_iter()
        .zip(verdicts)
        .filter_map(|(r, d)| d.is_none().then_some(r))
        .collect()
}

/// The correlations the verdict lets run whose references all resolve (to enabled
/// rules, or to other such correlations: chains), each tied to its inputs; a rule or
/// correlation that feeds a correlation without `generate` stops emitting its own
/// rows. A correlation naming a missing rule, or in a reference cycle, is an error, not
/// a loaded document.
fn resolve_correlations(
    correlations: Vec<Correlation>,
    rules: &[Rule],
    emits: &mut [bool],
    verdict: &Verdict<'_>,
    disabled: &mut BTreeMap<Disabled, usize>,
    report: &mut LoadReport,
) -> Vec<Correlation> {
    let mut candidates = Vec::new();
    for c in correlations {
        match verdict.of(&c.meta) {
            Some(d) => *disabled.entry(d).or_default() += 1,
            None => candidates.push(c),
        }
    }
    // Drop the correlations with a reference that names nothing kept; then those in a
    // cycle, and again what referred to them.
    let mut kept: Vec<bool> = vec![true; candidates.len()];
    let mut why: Vec<Option<String>> = vec![None; candidates.len()];
    drop_unresolved(&candidates, rules, &mut kept, &mut why, |missing| {
        format!(
            "correlation refers to rules not loaded or not enabled: {}",
            missing.join(", ")
        )
    });
    for i in in_cycles(&candidates, rules, &kept) {
        kept[i] = false;
        why[i] = Some("correlation refers to itself through other correlations".into());
    }
    drop_unresolved(&candidates, rules, &mut kept, &mut why, |_| {
        "correlation refers to a correlation that is not loaded".into()
    });
    // New indices of the kept correlations.
    let mut new_index = vec![u32::MAX; candidates.len()];
    let mut n = 0u32;
    for (i, k) in kept.iter().enumerate() {
        if *k {
            new_index[i] = n;
            n += 1;
        }
    }
    let mut out = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        if !kept[i] {
            report.loaded -= 1;
            report.errors.push(LoadError {
                file: c.meta.path.to_string(),
                document: c.document,
                title: Some(c.meta.title.to_string()),
                reason: why[i].take().unwrap_or_default(),
            });
            continue;
        }
        let mut c = c.clone();
        c.inputs = inputs(&c, i, rules, &candidates, &kept, &new_index);
        out.push(c);
    }
    // Sources that only feed a correlation without `generate` emit nothing themselves.
    let mut silenced = Vec::new();
    for c in &out {
        if c.generate {
            continue;
        }
        for input in &c.inputs {
            match input.source {
                CorrelationSource::Rule(r) => emits[r as usize] = false,
                CorrelationSource::Correlation(k) => silenced.push(k as usize),
            }
        }
    }
    for k in silenced {
        out[k].emits = false;
    }
    out
}

/// Drops, pass after pass until none is left to drop, the kept candidates with a
/// reference that names nothing kept, `why` each was dropped (`reason` of the
/// references missing when it was).
fn drop_unresolved(
    candidates: &[Correlation],
    rules: &[Rule],
    kept: &mut [bool],
    why: &mut [Option<String>],
    reason: impl Fn(&[String]) -> String,
) {
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..candidates.len() {
            if !kept[i] {
                continue;
            }
            let missing = missing_refs(&candidates[i], i, rules, candidates, kept);
            if !missing.is_empty() {
                kept[i] = false;
                why[i] = Some(reason(&missing));
                changed = true;
            }
        }
    }
}

/// Whether reference `r` names correlation `c` (by id or name).
fn names(r: &str, meta: &RuleMeta) -> bool {
    meta.id == r || meta.name.as_deref() == Some(r)
}

/// The references of `c` (candidate `me`) that name no rule and no kept correlation.
fn missing_refs(
    c: &Correlation,
    me: usize,
    rules: &[Rule],
    candidates: &[Correlation],
    kept: &[bool],
) -> Vec<String> {
    c.rule_refs
        .iter()
        .filter(|r| {
            !rules.iter().any(|x| names(r, &x.meta))
                && !candidates
                    .iter()
                    .enumerate()
                    .any(|(k, x)| k != me && kept[k] && names(r, &x.meta))
        })
        .cloned()
        .collect()
}

/// The kept candidates that reach themselves through correlation references.
fn in_cycles(candidates: &[Correlation], rules: &[Rule], kept: &[bool]) -> Vec<usize> {
    let refs: Vec<Vec<usize>> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            c.rule_refs
                .iter()
                .filter(|r| !rules.iter().any(|x| names(r, &x.meta)))
                .flat_map(|r| {
                    candidates
                        .iter()
                        .enumerate()
                        .filter(move |(k, x)| *k != i && kept[*k] && names(r, &x.meta))
                        .map(|(k, _)| k)
                })
                .collect()
        })
        .collect();
    (0..candidates.len())
        .filter(|&i| kept[i])
        .filter(|&i| {
            let mut seen = vec![false; candidates.len()];
            let mut stack = refs[i].clone();
            while let Some(k) = stack.pop() {
                if k == i {
                    return true;
                }
                if !std::mem::replace(&mut seen[k], true) {
                    stack.extend(&refs[k]);
                }
            }
            false
        })
        .collect()
}

/// The inputs of `c` (candidate `me`): every rule (variant) each reference names, or
/// else the correlation it names. Rules win over correlations of the same name, as a
/// reference names a rule first in the specification's examples.
fn inputs(
    c: &Correlation,
    me: usize,
    rules: &[Rule],
    candidates: &[Correlation],
    kept: &[bool],
    new_index: &[u32],
) -> Vec<CorrelationInput> {
    let mut out = Vec::new();
    for (ri, r) in c.rule_refs.iter().enumerate() {
        let before = out.len();
        for (i, x) in rules.iter().enumerate() {
            if names(r, &x.meta) {
                out.push(CorrelationInput {
                    source: CorrelationSource::Rule(i as u32),
                    reference: ri as u16,
                    group: Vec::new(),
                    values: Vec::new(),
                });
            }
        }
        if out.len() > before {
            continue;
        }
        if let Some(k) =
            (0..candidates.len()).find(|&k| k != me && kept[k] && names(r, &candidates[k].meta))
        {
            out.push(CorrelationInput {
                source: CorrelationSource::Correlation(new_index[k]),
                reference: ri as u16,
                group: Vec::new(),
                values: Vec::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::Level;

    fn meta(id: &str, status: &str, level: Level, tags: &[&str]) -> RuleMeta {
        RuleMeta {
            id: id.into(),
            title: format!("title {id}").into(),
            status: status.into(),
            level,
            tags: tags.iter().map(|&t| t.into()).collect(),
            ..RuleMeta::default()
        }
    }

    #[test]
    fn selection_lists_include_and_exclude_ignoring_case() {
        let m = meta("a", "test", Level::High, &["attack.t1059"]);
        let s = |f: fn(&mut RuleSelect)| {
            let mut s = RuleSelect::default();
            f(&mut s);
            s.keeps(&m)
        };
        assert!(s(|_| {}));
        assert!(s(|s| s.include_tags = vec!["ATTACK.T1059".into()]));
        assert!(!s(|s| s.include_tags = vec!["attack.t1003".into()]));
        assert!(!s(|s| s.exclude_tags = vec!["attack.t1059".into()]));
        assert!(!s(
            |s| s.include_categories = vec!["process_creation".into()]
        ));
        assert!(s(|s| s.include_status = vec!["*".into()]));
        assert!(!s(|s| s.exclude_status = vec!["Test".into()]));
    }

    #[test]
    fn the_verdict_follows_hayabusa_precedence() {
        let mut config = Config::default();
        config.exclude.insert("x".into());
        config.noisy.insert("n".into());
        let opts = LoadOptions {
            min_level: Level::Medium,
            ..LoadOptions::default()
        };
        let v = Verdict {
            config: &config,
            opts: &opts,
        };
        for (id, status, level, why) in [
            ("x", "deprecated", Level::Low, Disabled::Excluded),
            ("n", "", Level::High, Disabled::Noisy),
            ("d", "deprecated", Level::Low, Disabled::Deprecated),
            ("l", "", Level::Low, Disabled::BelowMinLevel),
        ] {
            assert_eq!(v.of(&meta(id, status, level, &[])), Some(why), "{id}");
        }
        assert_eq!(v.of(&meta("ok", "stable", Level::High, &[])), None);
    }

    #[test]
    fn proven_only_keeps_the_listed_ids_and_none_without_a_list() {
        let mut config = Config::default();
        let opts = LoadOptions {
            proven_only: true,
            ..LoadOptions::default()
        };
        let v = |c: &Config, id: &str| {
            Verdict {
                config: c,
                opts: &opts,
            }
            .of(&meta(id, "stable", Level::High, &[]))
        };
        assert_eq!(
            v(&config, "p"),
            Some(Disabled::NotProven),
            "no list: none kept"
        );
        config.add_file("proven_rules.txt", "# proven\np\n");
        assert_eq!(v(&config, "p"), None);
        assert_eq!(v(&config, "q"), Some(Disabled::NotProven));
        config.noisy.insert("p".into());
        assert_eq!(
            v(&config, "p"),
            Some(Disabled::Noisy),
            "noisy comes first, as in Hayabusa"
        );
    }
}
