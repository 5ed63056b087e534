//! One Sigma rule: its metadata and its compiled detection.

use crate::condition::Cond;
use crate::error::{Context, ErrorKind, RuleError};
use crate::event::Event;
use crate::fields::{CHANNEL, EVENT_ID};
use crate::matcher::{self, Check, CompileContext, FieldTest, StrKind, Target, ValueTest};
use crate::meta::RuleMeta;
use yaml_serde::{Mapping, Value as Yaml};

/// A selection: a map of entries (AND) or a list of selections (OR).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Selection {
    /// Every entry matches.
    All(Vec<FieldTest>),
    /// Some item matches.
    Any(#[serde(deserialize_with = "scanner_files::nested")] Vec<Selection>),
}

impl Selection {
    /// Whether the record matches.
    #[inline]
    pub fn is_match<E: Event>(&self, e: &E) -> bool {
        match self {
            Selection::All(tests) => tests.iter().all(|t| t.is_match(e)),
            Selection::Any(items) => items.iter().any(|s| s.is_match(e)),
        }
    }

    /// Moves its Channel and EventID tests behind the others (see
    /// [`Detection::defer_index_tests`]).
    fn defer_index_tests(&mut self) {
        match self {
            Selection::All(tests) => tests.sort_by_key(FieldTest::is_index_test),
            Selection::Any(items) => items.iter_mut().for_each(Selection::defer_index_tests),
        }
    }

    /// Whether it tests Channel or EventID only.
    fn is_index_only(&self) -> bool {
        match self {
            Selection::All(tests) => {
                !tests.is_empty() && tests.iter().all(FieldTest::is_index_test)
            }
            Selection::Any(_) => false,
        }
    }

    /// Calls `f` on every field test, to change it.
    pub fn for_each_test_mut(&mut self, f: &mut impl FnMut(&mut FieldTest)) {
        match self {
            Selection::All(tests) => tests.iter_mut().for_each(f),
            Selection::Any(items) => items.iter_mut().for_each(|s| s.for_each_test_mut(f)),
        }
    }

    /// Calls `f` on every field test.
    pub fn for_each_test<'s>(&'s self, f: &mut impl FnMut(&'s FieldTest)) {
        match self {
            Selection::All(tests) => tests.iter().for_each(f),
            Selection::Any(items) => items.iter().for_each(|s| s.for_each_test(f)),
        }
    }
}

/// A compiled detection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Detection {
    /// Selection names, in the order of the rule.
    pub names: Vec<String>,
    /// Compiled selections, by index.
    pub selections: Vec<Selection>,
    /// The condition.
    pub condition: Cond,
    /// A legacy `| count()` clause, with the detection's `timeframe` in seconds.
    pub aggregation: Option<(crate::correlation::Aggregation, Option<u64>)>,
}

impl Detection {
    /// Reorders what is ANDed so that tests of Channel and EventID come last: the rule
    /// index only hands a rule records its channel and event ID may match, so those
    /// tests mostly pass, and a rule that fails (most evaluated rules do) fails before
    /// reaching them. Results do not change: AND has no order.
    pub fn defer_index_tests(&mut self) {
        for s in &mut self.selections {
            s.defer_index_tests();
        }
        let sels = &self.selections;
        self.condition
            .defer(&|c| matches!(c, Cond::Sel(i) if sels[*i as usize].is_index_only()));
    }

    /// Whether the record matches the rule.
    #[inline]
    pub fn is_match<E: Event>(&self, e: &E) -> bool {
        self.condition
            .eval(&mut |i| self.selections[i as usize].is_match(e))
    }
}

/// A loaded rule.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Rule {
    /// Metadata for output.
    pub meta: RuleMeta,
    /// The detection, evaluated through [`Rule::is_match`].
    pub(crate) detection: Detection,
    /// Which log-source variant of the rule this is (an index into its log source's
    /// variants), when its log source was mapped.
    pub(crate) variant: Option<u16>,
}

/// The Channel and EventID values a record must have for a rule to match it
/// (lowercase channel names; `None` is unconstrained).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Constraint {
    /// Channels, lowercase.
    pub channels: Option<Vec<String>>,
    /// EventIDs as text.
    pub event_ids: Option<Vec<String>>,
}

fn exact_values(t: &FieldTest) -> Option<Vec<String>> {
    if t.negate {
        return None;
    }
    let Check::Any {
        tests,
        or_absent: false,
    } = &t.check
    else {
        return None;
    };
    tests
        .iter()
        .map(|v| match v {
            ValueTest::Str {
                kind: StrKind::Exact(s),
                cased: false,
            } => Some(s.to_string()),
            _ => None,
        })
        .collect()
}

fn and_dim(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.into_iter().filter(|x| b.contains(x)).collect()),
        (a, None) => a,
        (None, b) => b,
    }
}

fn or_dim(items: impl Iterator<Item = Option<Vec<String>>>) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for i in items {
        for v in i? {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    Some(out)
}

impl Constraint {
    fn and(self, o: Constraint) -> Constraint {
        Constraint {
            channels: and_dim(self.channels, o.channels),
            event_ids: and_dim(self.event_ids, o.event_ids),
        }
    }

    fn or(items: Vec<Constraint>) -> Constraint {
        Constraint {
            channels: or_dim(items.iter().map(|c| c.channels.clone())),
            event_ids: or_dim(items.iter().map(|c| c.event_ids.clone())),
        }
    }

    fn of_selection(s: &Selection) -> Constraint {
        match s {
            Selection::All(tests) => tests.iter().fold(Constraint::default(), |acc, t| {
                let mut c = Constraint::default();
                match t.target {
                    Target::Field(CHANNEL) => c.channels = exact_values(t),
                    Target::Field(EVENT_ID) => c.event_ids = exact_values(t),
                    _ => {}
                }
                acc.and(c)
            }),
            Selection::Any(items) => Constraint::or(items.iter().map(Self::of_selection).collect()),
        }
    }

    fn of_cond(c: &Cond, sels: &[Selection]) -> Constraint {
        match c {
            Cond::Sel(i) => Self::of_selection(&sels[*i as usize]),
            Cond::Not(_) => Constraint::default(),
            Cond::And(cs) => cs.iter().fold(Constraint::default(), |acc, c| {
                acc.and(Self::of_cond(c, sels))
            }),
            Cond::Or(cs) | Cond::AtLeast(_, cs) => {
                Constraint::or(cs.iter().map(|c| Self::of_cond(c, sels)).collect())
            }
        }
    }
}

impl Rule {
    /// Whether the record matches the rule.
    #[inline]
    pub fn is_match<E: Event>(&self, e: &E) -> bool {
        self.detection.is_match(e)
    }

    /// The Channel/EventID values the rule requires of a record.
    pub fn constraint(&self) -> Constraint {
        Constraint::of_cond(&self.detection.condition, &self.detection.selections)
    }
}

fn compile_selection(v: &Yaml, ctx: &dyn CompileContext) -> Result<Selection, RuleError> {
    match v {
        Yaml::Mapping(m) => {
            if m.is_empty() {
                return Err(ErrorKind::Malformed("an empty selection").into());
            }
            let mut tests = Vec::with_capacity(m.len());
            for (k, v) in m {
                let key = match k {
                    Yaml::String(s) => s.as_str(),
                    other => {
                        return Err(ErrorKind::KeyNotText {
                            what: "selection",
                            key: format!("{other:?}"),
                        }
                        .into())
                    }
                };
                tests.push(matcher::compile_entry(key, v, ctx)?);
            }
            Ok(Selection::All(tests))
        }
        Yaml::Sequence(items) => {
            if items.is_empty() {
                return Err(ErrorKind::Malformed("an empty selection list").into());
            }
            if items
                .iter()
                .all(|i| !matches!(i, Yaml::Mapping(_) | Yaml::Sequence(_)))
            {
                return Ok(Selection::All(vec![matcher::compile_entry("", v, ctx)?]));
            }
            let items = items
                .iter()
                .map(|i| compile_selection(i, ctx))
                .collect::<Result<_, _>>()?;
            Ok(Selection::Any(merge_alternatives(items)?))
        }
        Yaml::Null => Err(ErrorKind::Malformed("an empty selection").into()),
        Yaml::Tagged(t) => compile_selection(&t.value, ctx),
        scalar => Ok(Selection::All(vec![matcher::compile_entry(
            "", scalar, ctx,
        )?])),
    }
}

/// A list item such as `- OriginalFileName|endswith: 'At.exe'` (one field, plain
/// values) as its target, values and `or_absent`; any other item is handed back.
fn into_single(s: Selection) -> Result<(Target, Vec<ValueTest>, bool), Selection> {
    match s {
        Selection::All(mut tests)
            if tests.len() == 1
                && !tests[0].negate
                && matches!(tests[0].check, Check::Any { .. }) =>
        {
            match tests.pop() {
                Some(FieldTest {
                    target,
                    check: Check::Any { tests, or_absent },
                    ..
                }) => Ok((target, tests, or_absent)),
                other => Err(Selection::All(other.into_iter().collect())),
            }
        }
        other => Err(other),
    }
}

/// Merges the items of a selection list that each test one field with plain values
/// (a list of one-entry maps on the same field) into one test of that field with all
/// their values: the same OR, but one pass over the field's values, and long lists of
/// affixes or substrings become one set or automaton.
fn merge_alternatives(items: Vec<Selection>) -> Result<Vec<Selection>, RuleError> {
    let mut out = Vec::with_capacity(items.len());
    // Per target: its values, whether an absent field passes, and how many items.
    let mut groups: Vec<(Target, Vec<ValueTest>, bool, usize)> = Vec::new();
    for item in items {
        match into_single(item) {
            Ok((target, values, or_absent)) => match groups.iter_mut().find(|g| g.0 == target) {
                Some(g) => {
                    g.1.extend(values);
                    g.2 |= or_absent;
                    g.3 += 1;
                }
                None => groups.push((target, values, or_absent, 1)),
            },
            Err(item) => out.push(item),
        }
    }
    for (target, tests, or_absent, n) in groups {
        let tests = if n > 1 {
            matcher::merge_needles(tests)?
        } else {
            tests
        };
        out.push(Selection::All(vec![FieldTest {
            target,
            check: Check::Any { tests, or_absent },
            negate: false,
        }]));
    }
    Ok(out)
}

/// Compiles a rule's `detection` block.
pub fn compile_detection(det: &Mapping, ctx: &dyn CompileContext) -> Result<Detection, RuleError> {
    let mut names = Vec::new();
    let mut selections = Vec::new();
    for (k, v) in det {
        let Yaml::String(name) = k else {
            return Err(ErrorKind::KeyNotText {
                what: "detection",
                key: format!("{k:?}"),
            }
            .into());
        };
        if name == "condition" || name == "timeframe" {
            continue;
        }
        let s =
            compile_selection(v, ctx).map_err(|e| e.within(Context::Selection(name.clone())))?;
        names.push(name.clone());
        selections.push(s);
    }
    let conditions: Vec<String> = match det.get("condition") {
        Some(Yaml::String(s)) => vec![s.clone()],
        Some(Yaml::Sequence(items)) => items
            .iter()
            .map(|i| match i {
                Yaml::String(s) => Ok(s.clone()),
                _ => Err(ErrorKind::Malformed("a condition list item is not text")),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(ErrorKind::Malformed("condition is not text").into()),
        None if names.len() == 1 => vec![names[0].clone()],
        None => {
            return Err(ErrorKind::Malformed("no condition, and more than one selection").into())
        }
    };
    let mut conds = Vec::with_capacity(conditions.len());
    let mut aggregation = None;
    for c in &conditions {
        let (boolean, agg) = match c.split_once('|') {
            Some((b, a)) => (b, Some(a)),
            None => (c.as_str(), None),
        };
        if let Some(a) = agg {
            if conditions.len() > 1 || aggregation.is_some() {
                return Err(ErrorKind::Malformed(
                    "an aggregation in a list of conditions is not supported",
                )
                .into());
            }
            let timeframe = match det.get("timeframe") {
                Some(Yaml::String(t)) => Some(crate::correlation::parse_timespan(t)?),
                Some(_) => return Err(ErrorKind::Malformed("timeframe is not text").into()),
                None => None,
            };
            aggregation = Some((crate::correlation::parse_aggregation(a)?, timeframe));
        }
        conds.push(Cond::parse(boolean, &names)?);
    }
    let condition = if conds.len() == 1 {
        conds.remove(0)
    } else {
        Cond::Or(conds)
    };
    Ok(Detection {
        names,
        selections,
        condition,
        aggregation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{load, LoadOptions, RuleSource};
    use crate::matcher::{Check, ValueTest};

    #[test]
    fn a_list_of_one_field_maps_becomes_one_test_per_field_and_long_affix_lists_a_set() {
        let items: String = [
            "At", "Bash", "CertUtil", "Cmd", "Cmstp", "Control", "Csc", "Cscript", "Dnscmd",
        ]
        .iter()
        .map(|n| format!("    - OriginalFileName|endswith: '{n}.exe'\n"))
        .collect();
        let text = format!(
            "title: lolbin\ndetection:\n  sel:\n{items}    - OriginalFileName|startswith: 'zz'\n    - Image|contains: 'tmp'\n  condition: sel\n"
        );
        let set = load(
            &[RuleSource::Text {
                name: "l.yml".into(),
                text,
            }],
            &LoadOptions::default(),
        );
        let Selection::Any(items) = &set.rules[0].detection.selections[0] else {
            panic!("a list is an OR of its items");
        };
        assert_eq!(items.len(), 2, "one item per field");
        let mut affix_sets = 0;
        for item in items {
            item.for_each_test(&mut |t| {
                if let Check::Any { tests, .. } = &t.check {
                    affix_sets += tests
                        .iter()
                        .filter(|v| matches!(v, ValueTest::Affixes(_)))
                        .count();
                }
            });
        }
        assert_eq!(affix_sets, 1, "the nine suffixes one set");
    }
}
