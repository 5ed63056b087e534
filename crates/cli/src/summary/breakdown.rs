//! What the HTML report lists beyond the terminal summary's top five: per level, every
//! rule that fired (its authors and file) and every computer (its detections and the
//! distinct rules that fired on it), the MITRE ATT&CK tactics seen on each computer,
//! and the loaded rules by status.
//!
//! Rows are counted in one map keyed by (computer, rule, level): a few bytes per
//! distinct triple, however many rows share it, so the tally stays far below the rows'
//! own size. The lists it gives are bounded: rules by the rule set, computers by
//! [`LISTED`] per level (the rest counted, not listed).

use scanner_engine::RuleRef;
use scanner_rules::{FxHashMap, FxHashSet, Level, RuleMeta, RuleSet};
use std::collections::BTreeMap;

/// How many computers the report lists per level, and in the tactics table: past it,
/// a line says how many more there are (`computer-metrics` lists every one).
pub const LISTED: usize = 2_000;

const LEVELS: usize = Level::ALL.len();

/// A rule that fired, with its detections at one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleCount {
    /// `title`.
    pub title: String,
    /// `author`, as the rule writes it (`-` when it has none).
    pub author: String,
    /// The rule file, as loaded.
    pub path: String,
    /// Detections.
    pub detections: usize,
}

/// A computer with detections at one level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComputerCount {
    /// The computer's name, as the events give it.
    pub name: String,
    /// Detections.
    pub detections: usize,
    /// Distinct rules that fired on it (Hayabusa's "unique detections").
    pub rules: usize,
}

/// The MITRE ATT&CK tactics of the rules that fired on one computer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComputerTactics {
    /// The computer.
    pub name: String,
    /// Each tactic's short name (`mitre_tactics.txt`), the distinct rules with it that
    /// fired on the computer, and their detections; by name.
    pub tactics: Vec<(String, usize, usize)>,
}

/// The rules a run loaded, as Hayabusa's report gives them (its General Overview).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleFigures {
    /// Rule files read.
    pub files: usize,
    /// Rules and correlations enabled (log-source variants of one rule count once).
    pub enabled: usize,
    /// Enabled rules and correlations per `status` (`undefined` when none), by name.
    pub statuses: Vec<(String, usize)>,
    /// Sigma correlations among them (legacy `| count()` rules are rules).
    pub correlations: usize,
    /// Rules that only feed a correlation (no rows of their own).
    pub correlation_only: usize,
    /// Rules loaded but not run, per reason (deprecated, noisy, excluded…).
    pub disabled: Vec<(&'static str, usize)>,
    /// Rule documents (or files) that could not be loaded.
    pub rejected: usize,
}

impl RuleFigures {
    /// The figures of `set`.
    pub fn of(set: &RuleSet) -> RuleFigures {
        type Key<'m> = (&'m str, &'m str, &'m str);
        fn key(m: &RuleMeta) -> Key<'_> {
            (&m.path, &m.id, &m.title)
        }
        let rule_keys: FxHashSet<Key<'_>> = set.rules().iter().map(|r| key(&r.meta)).collect();
        // A legacy count rule is a rule and a correlation with the same metadata.
        let correlation_keys: FxHashSet<Key<'_>> =
            set.correlations().iter().map(|c| key(&c.meta)).collect();
        let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
        let mut seen = FxHashSet::default();
        let metas = set.rules().iter().map(|r| &r.meta);
        for m in metas.chain(set.correlations().iter().map(|c| &c.meta)) {
            if seen.insert(key(m)) {
                let status = if m.status.is_empty() {
                    "undefined"
                } else {
                    &m.status
                };
                *statuses.entry(status).or_default() += 1;
            }
        }
        let correlation_only: FxHashSet<Key<'_>> = set
            .rules()
            .iter()
            .zip(set.emits())
            .filter(|(r, emits)| !**emits && !correlation_keys.contains(&key(&r.meta)))
            .map(|(r, _)| key(&r.meta))
            .collect();
        let report = set.report();
        RuleFigures {
            files: report.files,
            enabled: seen.len(),
            statuses: statuses
                .into_iter()
                .map(|(s, n)| (s.to_string(), n))
                .collect(),
            correlations: correlation_keys.difference(&rule_keys).count(),
            correlation_only: correlation_only.len(),
            disabled: report
                .disabled
                .iter()
                .map(|(d, n)| (d.label(), *n))
                .collect(),
            rejected: report.errors.len(),
        }
    }
}

/// The rules that fired at a level, from each rule's detections there: a rule's
/// log-source variants (same file and title) are one rule; most detections first.
pub fn every_rule(fired: &[(usize, &RuleMeta)]) -> Vec<RuleCount> {
    let mut by_rule: FxHashMap<(&str, &str), RuleCount> = FxHashMap::default();
    for (n, m) in fired {
        by_rule
            .entry((&m.title, &m.path))
            .or_insert_with(|| RuleCount {
                title: m.title.to_string(),
                author: m.author.to_string(),
                path: m.path.to_string(),
                detections: 0,
            })
            .detections += n;
    }
    let mut v: Vec<RuleCount> = by_rule.into_values().collect();
    v.sort_by(|a, b| (b.detections, &a.title, &a.path).cmp(&(a.detections, &b.title, &b.path)));
    v
}

/// Detections per (computer, rule, level), counted row by row.
#[derive(Debug, Default)]
pub struct Breakdown {
    /// Each computer's number.
    ids: FxHashMap<String, u32>,
    /// Detections per (computer, rule key, level): a rule's key is its index, a
    /// correlation's the number of rules plus its index.
    counts: FxHashMap<(u32, u32, u8), usize>,
}

/// What [`Breakdown::finish`] gives.
#[derive(Debug, Default)]
pub struct Finished {
    /// Per level: its computers, most detections first, at most [`LISTED`].
    pub computers: [Vec<ComputerCount>; LEVELS],
    /// Per level: how many computers are not listed.
    pub computers_left_out: [usize; LEVELS],
    /// The computers with tactics, most detections first, at most [`LISTED`].
    pub tactics: Vec<ComputerTactics>,
    /// How many computers with tactics are not listed.
    pub tactics_left_out: usize,
}

impl Breakdown {
    /// Counts a row of `rule` on `computer` at `level`.
    pub fn add(&mut self, computer: &str, rule: RuleRef, rules: usize, level: Level) {
        let id = match self.ids.get(computer) {
            Some(&id) => id,
            None => {
                let id = self.ids.len() as u32;
                self.ids.insert(computer.to_string(), id);
                id
            }
        };
        let rule = match rule {
            RuleRef::Rule(i) => i,
            RuleRef::Correlation(i) => (rules as u32).saturating_add(i),
            // Integrity rows name no computer: not counted here.
            RuleRef::Integrity(_) => return,
        };
        *self.counts.entry((id, rule, level as u8)).or_default() += 1;
    }

    /// The lists, for the rules of `set`.
    pub fn finish(self, set: &RuleSet) -> Finished {
        let mut names: Vec<String> = vec![String::new(); self.ids.len()];
        for (name, id) in self.ids {
            names[id as usize] = name;
        }
        let meta = |key: u32| -> Option<&RuleMeta> {
            let key = key as usize;
            match key.checked_sub(set.rules().len()) {
                None => set.rules().get(key).map(|r| &r.meta),
                Some(c) => set.correlations().get(c).map(|c| &c.meta),
            }
        };
        // Per computer and level: detections, and distinct rules (by file and title:
        // a rule's log-source variants are one rule).
        let mut per_level = vec![[(0usize, 0usize); LEVELS]; names.len()];
        let mut distinct: FxHashSet<(u32, u8, &str, &str)> = FxHashSet::default();
        // Per computer and rule (any level): detections, for the tactics.
        let mut per_rule: FxHashMap<(u32, &str, &str), (usize, &RuleMeta)> = FxHashMap::default();
        for (&(c, rule, level), &n) in &self.counts {
            let Some(m) = meta(rule) else { continue };
            let slot = &mut per_level[c as usize][level as usize];
            slot.0 += n;
            if distinct.insert((c, level, &m.path, &m.title)) {
                slot.1 += 1;
            }
            per_rule.entry((c, &m.path, &m.title)).or_insert((0, m)).0 += n;
        }
        let mut out = Finished::default();
        for l in 0..LEVELS {
            let mut v: Vec<ComputerCount> = per_level
                .iter()
                .zip(&names)
                .filter(|(counts, _)| counts[l].0 > 0)
                .map(|(counts, name)| ComputerCount {
                    name: name.clone(),
                    detections: counts[l].0,
                    rules: counts[l].1,
                })
                .collect();
            v.sort_by(|a, b| {
                b.detections
                    .cmp(&a.detections)
                    .then_with(|| a.name.cmp(&b.name))
            });
            out.computers_left_out[l] = v.len().saturating_sub(LISTED);
            v.truncate(LISTED);
            out.computers[l] = v;
        }
        let mut tactics: Vec<BTreeMap<&str, (usize, usize)>> = vec![BTreeMap::new(); names.len()];
        for ((c, _, _), (n, m)) in per_rule {
            for t in tactics_of(set, m) {
                let e = tactics[c as usize].entry(t).or_default();
                e.0 += 1;
                e.1 += n;
            }
        }
        let mut rows: Vec<(usize, ComputerTactics)> = tactics
            .into_iter()
            .zip(&names)
            .zip(&per_level)
            .filter(|((t, _), _)| !t.is_empty())
            .map(|((t, name), levels)| {
                let total = levels.iter().map(|(n, _)| n).sum();
                let tactics = t
                    .into_iter()
                    .map(|(t, (rules, n))| (t.to_string(), rules, n))
                    .collect();
                (
                    total,
                    ComputerTactics {
                        name: name.clone(),
                        tactics,
                    },
                )
            })
            .collect();
        rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
        out.tactics_left_out = rows.len().saturating_sub(LISTED);
        out.tactics = rows.into_iter().take(LISTED).map(|(_, t)| t).collect();
        out
    }
}

/// A rule's tactics: the short names `mitre_tactics.txt` gives its tags, each once.
fn tactics_of<'s>(set: &'s RuleSet, m: &RuleMeta) -> Vec<&'s str> {
    let config = &set.config().mitre_tactics;
    let mut v: Vec<&str> = m
        .tags
        .iter()
        .filter_map(|t| config.get(t.to_lowercase().as_str()).map(String::as_str))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}
