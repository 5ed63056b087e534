//! A prefilter shared by every rule of an index bucket.
//!
//! Most rules can only match when some literal text occurs in some field: a rule with
//! `Image|endswith: '\whoami.exe'` needs `\whoami.exe` in `Image`. [`requirements`]
//! derives, from a compiled condition, clauses of (field, needle) pairs: one pair of
//! each clause must occur for the rule to match (sound: it never excludes a rule that
//! could match). The tests of a selection, the terms of an AND and the groups of an
//! `|all` test are each a clause, so a rule needing `\windows\` in `Image` and one of
//! its `CommandLine` needles is evaluated only where both occur; an OR is one clause,
//! the union of each branch's best. A rule keeps its two most selective clauses. A bucket of rules then gets one Aho-Corasick automaton per field over all its
//! rules' needles: a record's value is scanned once, and only the rules with every
//! clause met (plus the rules without a requirement) are evaluated.

mod admit;
mod needle_cache;

pub use admit::Admission;

use crate::condition::Cond;
use crate::event::lowercase;
use crate::fields::{FieldId, FxHashMap, CHANNEL, EVENT_ID};
use crate::matcher::{Automaton, Build};
use crate::matcher::{Check, FieldTest, StrKind, Target, ValueTest};
use crate::rule::{Rule, Selection};

/// The pseudo-field of keyword searches: its needles are scanned over every value.
pub const ALL_VALUES: FieldId = FieldId::MAX;

/// Buckets with fewer rules than this are evaluated rule by rule.
pub const MIN_BUCKET: usize = 8;

/// (field, lowercase needle) pairs, one of which must occur: a clause.
pub type Requirement = Vec<(FieldId, Box<str>)>;

/// The most clauses a rule is admitted by (the best ones). Measured on c5 (the attack
/// corpus 5 times, one thread, instructions): one clause 3.186 G, two 3.037 G, three
/// 3.056 G, eight 3.065 G: past two, a clause's needles cost the automata more hits
/// than the evaluations they spare.
const MAX_CLAUSES: usize = 2;
// A rule's clauses are the bits of a `u8` (`Owner`).
const _: () = assert!(MAX_CLAUSES <= 8);

fn value_needles(t: &ValueTest) -> Option<Vec<Box<str>>> {
    let n: Vec<Box<str>> = match t {
        ValueTest::Str { kind, .. } => match kind {
            StrKind::Exact(n) | StrKind::Prefix(n) | StrKind::Suffix(n) | StrKind::Contains(n) => {
                vec![lowercase(n).into_boxed_str()]
            }
            StrKind::Glob(re) => re.required.clone()?,
            StrKind::Any => return None,
        },
        ValueTest::Needles { ac, .. } => ac
            .needles()
            .iter()
            .map(|n| lowercase(n).into_boxed_str())
            .collect(),
        ValueTest::Affixes(crate::matcher::AffixSet { needles, .. }) => needles
            .iter()
            .map(|n| lowercase(n).into_boxed_str())
            .collect(),
        // The literals the regex's syntax tree requires (`regex_cache::required_literals`).
        ValueTest::Regex(re) => re.required.clone()?,
        ValueTest::Cidr(_) | ValueTest::Num(..) | ValueTest::Time(..) => return None,
    };
    // An empty needle occurs everywhere: no requirement.
    if n.iter().any(|x| x.is_empty()) {
        return None;
    }
    Some(n)
}

/// The clauses a field test needs: one per group of an `|all` test, else one.
fn test_clauses(t: &FieldTest) -> Vec<Requirement> {
    // A keyword search's needles must occur in some value: scanned over all of them.
    let f = match t.target {
        Target::Field(f) => f,
        Target::Keywords => ALL_VALUES,
    };
    // Channel and EventID hold for every record of a bucket: useless as a filter.
    if t.negate || f == CHANNEL || f == EVENT_ID {
        return Vec::new();
    }
    let groups: &[Vec<ValueTest>] = match &t.check {
        Check::Any {
            tests,
            or_absent: false,
        } => std::slice::from_ref(tests),
        // Every group must match: each group's needles are necessary.
        Check::All(groups) => groups,
        _ => return Vec::new(),
    };
    groups
        .iter()
        .filter_map(|tests| {
            let mut out = Vec::new();
            for v in tests {
                for n in value_needles(v)? {
                    out.push((f, n));
                }
            }
            (!out.is_empty()).then_some(out)
        })
        .collect()
}

/// How selective a requirement is: longer shortest needles first, then fewer needles.
fn score(r: &Requirement) -> (usize, std::cmp::Reverse<usize>) {
    (
        r.iter().map(|(_, n)| n.len()).min().unwrap_or(0),
        std::cmp::Reverse(r.len()),
    )
}

fn best(clauses: Vec<Requirement>) -> Option<Requirement> {
    clauses.into_iter().max_by_key(score)
}

/// An OR of terms (`clauses` gives each term's): one clause, the union of each term's
/// best; none when a term has none.
fn union<T>(terms: &[T], clauses: impl Fn(&T) -> Vec<Requirement>) -> Vec<Requirement> {
    let mut out = Vec::new();
    for t in terms {
        match best(clauses(t)) {
            Some(c) => out.extend(c),
            None => return Vec::new(),
        }
    }
    vec![out]
}

fn selection_clauses(s: &Selection) -> Vec<Requirement> {
    match s {
        Selection::All(tests) => tests.iter().flat_map(test_clauses).collect(),
        Selection::Any(items) => union(items, selection_clauses),
    }
}

fn cond_clauses(c: &Cond, sels: &[Selection]) -> Vec<Requirement> {
    match c {
        Cond::Sel(i) => selection_clauses(&sels[*i as usize]),
        Cond::Not(_) => Vec::new(),
        Cond::And(cs) => cs.iter().flat_map(|c| cond_clauses(c, sels)).collect(),
        Cond::Or(cs) | Cond::AtLeast(_, cs) => union(cs, |c| cond_clauses(c, sels)),
    }
}

/// The clauses `rule` needs, each of which must have one of its needles occur for it to
/// match: the most selective first, at most [`MAX_CLAUSES`], none repeated; empty when
/// it needs none.
pub fn requirements(rule: &Rule) -> Vec<Requirement> {
    let mut clauses = cond_clauses(&rule.detection.condition, &rule.detection.selections);
    for c in &mut clauses {
        c.sort_unstable();
        c.dedup();
    }
    clauses.sort_by_key(|c| std::cmp::Reverse(score(c)));
    let mut kept: Vec<Requirement> = Vec::new();
    for c in clauses {
        if kept.len() < MAX_CLAUSES && !kept.contains(&c) {
            kept.push(c);
        }
    }
    kept
}

/// The most selective clause of [`requirements`]: needles one of which must occur for
/// `rule` to match, if it has such a set.
#[cfg(test)]
fn requirement(rule: &Rule) -> Option<Requirement> {
    requirements(rule).into_iter().next()
}

/// A field's needles while building: the needles, their ids, and each needle's owners.
type Needles = (Vec<Box<str>>, FxHashMap<Box<str>, usize>, Vec<Vec<Owner>>);

/// A clause of a rule that a needle meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Owner {
    /// The rule.
    pub rule: u32,
    /// The clause met, as a bit.
    pub clause: u8,
    /// The bits of all the rule's clauses: it is admitted once they are all met.
    pub all: u8,
}

/// One field's automaton: which rules' clauses each needle meets.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FieldScan {
    /// The field scanned.
    pub field: FieldId,
    /// All needles of the bucket's rules for this field, built on first use.
    pub automaton: Automaton,
    /// For each needle (pattern id), the rule clauses it meets.
    pub owners: Vec<Vec<Owner>>,
}

/// The prefilter of one bucket.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Prefilter {
    /// Rules that must always be evaluated (no requirement).
    pub always: Vec<u32>,
    /// Per-field automata.
    pub fields: Vec<FieldScan>,
}

impl Prefilter {
    /// Builds the prefilter of a bucket of rules (indices into `rules`).
    pub fn build(bucket: &[u32], rules: &[Rule]) -> Prefilter {
        let mut always = Vec::new();
        let mut per_field: FxHashMap<FieldId, Needles> = FxHashMap::default();
        for &r in bucket {
            let clauses = requirements(&rules[r as usize]);
            if clauses.is_empty() {
                always.push(r);
                continue;
            }
            let all = u8::MAX >> (8 - clauses.len());
            for (k, clause) in clauses.into_iter().enumerate() {
                let owner = Owner {
                    rule: r,
                    clause: 1 << k,
                    all,
                };
                for (f, n) in clause {
                    let (pats, ids, owners) = per_field.entry(f).or_default();
                    let id = *ids.entry(n.clone()).or_insert_with(|| {
                        pats.push(n);
                        owners.push(Vec::new());
                        pats.len() - 1
                    });
                    if owners[id].last() != Some(&owner) {
                        owners[id].push(owner);
                    }
                }
            }
        }
        let mut fields: Vec<FieldScan> = per_field
            .into_iter()
            .map(|(field, (pats, _, owners))| FieldScan {
                field,
                automaton: Automaton::new(pats.into_boxed_slice(), Build::Overlapping),
                owners,
            })
            .collect();
        fields.sort_by_key(|f| f.field);
        Prefilter { always, fields }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{load, LoadOptions, RuleSource};

    fn rules_from(yaml: &str) -> crate::RuleSet {
        let dir = std::env::temp_dir().join(format!(
            "scanner-prefilter-{}-{}",
            std::process::id(),
            yaml.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("r.yml"), yaml).unwrap();
        load(&[RuleSource::Path(dir)], &LoadOptions::default())
    }

    #[test]
    fn requirements_follow_and_or_not() {
        let set = rules_from(
            "title: a\nid: a\ndetection:\n  sel:\n    EventID: 1\n    Image|endswith: '\\WHOAMI.exe'\n    CommandLine|contains: x\n  condition: sel\n---\n\
             title: b\nid: b\ndetection:\n  s1:\n    Image|endswith: ['\\a.exe', '\\b.exe']\n  s2:\n    CommandLine|contains: zz\n  condition: s1 or s2\n---\n\
             title: c\nid: c\ndetection:\n  s1:\n    Image|endswith: '\\a.exe'\n  s2:\n    CommandLine|re: x+\n  condition: s1 or s2\n---\n\
             title: d\nid: d\ndetection:\n  s1:\n    Image|endswith: '\\a.exe'\n  condition: not s1\n---\n\
             title: e\nid: e\ndetection:\n  s1:\n    Image|endswith: '\\a.exe'\n  kw:\n    - 'Perfc.DAT'\n  condition: s1 or kw\n",
        );
        assert!(set.report.errors.is_empty(), "{:?}", set.report.errors);
        let by = |id: &str| set.rules.iter().find(|r| r.meta.id == id).unwrap();
        let a = requirement(by("a")).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(
            &*a[0].1, "\\whoami.exe",
            "the longest needle of the AND, lowercased; never EventID"
        );
        let b = requirement(by("b")).unwrap();
        assert_eq!(b.len(), 3, "an OR needs all its branches' needles");
        assert!(
            requirement(by("c")).is_none(),
            "a regex branch has no needle"
        );
        assert!(requirement(by("d")).is_none(), "a negation has no needle");
        let e = requirement(by("e")).unwrap();
        assert!(
            e.contains(&(ALL_VALUES, "perfc.dat".into())),
            "a keyword's needle is looked for in every value: {e:?}"
        );
    }

    #[test]
    fn loaded_rules_test_channel_and_event_id_last() {
        let set = rules_from(
            "title: p\nid: p\nlogsource:\n  product: windows\ndetection:\n  process_creation:\n    EventID: 1\n    Channel: Microsoft-Windows-Sysmon/Operational\n  selection:\n    EventID: 1\n    Image|endswith: '\\x.exe'\n  condition: process_creation and selection\n",
        );
        assert!(set.report.errors.is_empty(), "{:?}", set.report.errors);
        let d = &set.rules[0].detection;
        assert_eq!(
            d.condition,
            Cond::And(vec![Cond::Sel(1), Cond::Sel(0)]),
            "the selection of Channel and EventID only goes last"
        );
        let Selection::All(tests) = &d.selections[1] else {
            panic!("one map: {:?}", d.selections[1]);
        };
        let fields: Vec<_> = tests.iter().map(|t| t.is_index_test()).collect();
        assert_eq!(fields, vec![false, true], "EventID after Image");
    }
}
