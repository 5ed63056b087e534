//! Compiled tests on field values: what one `field|modifiers: values` entry becomes.
//!
//! The fast paths of the performance guide live here. Values are compared in their
//! lowercased form (computed once per record by the record view) with `==`,
//! `starts_with`, `ends_with` or `contains`, each behind a length check;
//! long OR-lists of substrings become one Aho-Corasick automaton; regexes come from the
//! shared [`RegexCache`] and are only used where a wildcard sits inside a value or the
//! rule asks for `re`.

mod affix;
mod anchors;
mod automaton;
mod cidr;
mod compile;
mod encode;
mod pattern;
mod regex_cache;
mod shared;
mod time_part;

pub use affix::AffixSet;
pub use automaton::{Automaton, Build, SharedAutomata};
pub(crate) use compile::{compile_entry, merge_needles, CompileContext};
pub use regex_cache::{RegexCache, REGEX_BUDGET};
pub(crate) use shared::{collecting, resolving, SharedTable};
pub use time_part::TimePart;

use crate::correlation::CountOp;
use crate::event::{Event, Value};
use crate::fields::FieldId;
use cidr::Cidr;
use regex_cache::CompiledRegex;
use std::sync::Arc;

/// A plain string test on one value.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum StrKind {
    /// Whole-value equality.
    Exact(Box<str>),
    /// `starts_with`.
    Prefix(Box<str>),
    /// `ends_with`.
    Suffix(Box<str>),
    /// Substring.
    Contains(Box<str>),
    /// Any value.
    Any,
    /// Anchored regex for wildcards in the middle of a value.
    Glob(#[serde(with = "shared::regex")] Arc<CompiledRegex>),
}

/// A test on one value of a field.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum ValueTest {
    /// A string test.
    Str {
        /// What is compared.
        kind: StrKind,
        /// Compare the raw value (otherwise the lowercased one).
        cased: bool,
    },
    /// Any of many substrings (one automaton scan).
    Needles {
        /// The automaton over every needle (kept shortest first), built on first use;
        /// its needles also feed the rule-set prefilter.
        ac: Automaton,
        /// Compare the raw value (otherwise the lowercased one).
        cased: bool,
        /// The shortest needle: shorter values cannot match.
        min_len: usize,
    },
    /// Many `startswith` or `endswith` values: one set lookup per needle length.
    Affixes(AffixSet),
    /// `re`: unanchored search on the raw value.
    Regex(#[serde(with = "shared::regex")] Arc<CompiledRegex>),
    /// `cidr`.
    Cidr(Cidr),
    /// `gt`/`gte`/`lt`/`lte`: the value read as a number, compared as correlations
    /// compare their counts.
    Num(CountOp, f64),
    /// `minute`/`hour`/`day`/`week`/`month`/`year`: that part of the value read as a
    /// date (UTC) equals the number.
    Time(TimePart, i64),
}

impl ValueTest {
    /// Whether the value passes.
    #[inline]
    pub fn is_match(&self, v: Value<'_>) -> bool {
        match self {
            ValueTest::Str { kind, cased } => {
                let s = if *cased { v.raw } else { v.lower };
                match kind {
                    // Length prefilters first: most candidates differ in length.
                    StrKind::Exact(n) => s.len() == n.len() && s == &**n,
                    StrKind::Prefix(n) => s.len() >= n.len() && s.starts_with(&**n),
                    StrKind::Suffix(n) => s.len() >= n.len() && s.ends_with(&**n),
                    StrKind::Contains(n) => s.len() >= n.len() && s.contains(&**n),
                    StrKind::Any => true,
                    StrKind::Glob(re) => re.re.is_match(s),
                }
            }
            ValueTest::Needles {
                ac, cased, min_len, ..
            } => {
                let s = if *cased { v.raw } else { v.lower };
                s.len() >= *min_len && ac.is_match(s)
            }
            ValueTest::Affixes(a) => a.is_match(if a.cased { v.raw } else { v.lower }),
            ValueTest::Regex(re) => match &re.min_run {
                Some(run) => run.is_match(v.raw),
                None => re.re.is_match(v.raw),
            },
            ValueTest::Cidr(c) => c.contains(v.raw),
            ValueTest::Num(op, n) => v.raw.trim().parse().is_ok_and(|x| op.holds(x, *n)),
            ValueTest::Time(part, n) => part.of(v.raw) == Some(*n),
        }
    }
}

/// Whether some value of `e` passes some test: the substring tests scan the record's
/// values joined end to end once (a match must lie within one value), the others go
/// value by value.
fn keywords_match<E: Event>(tests: &[ValueTest], e: &E) -> bool {
    tests.iter().any(|t| match t.joined_match(e) {
        Some(hit) => hit,
        None => e.all_values().any(|v| t.is_match(v)),
    })
}

impl ValueTest {
    /// A substring test run over [`Event::joined`], or `None` when this test (or the
    /// event) does not allow it.
    fn joined_match<E: Event>(&self, e: &E) -> Option<bool> {
        match self {
            ValueTest::Str {
                kind: StrKind::Contains(n),
                cased,
            } if !n.is_empty() => {
                let text = e.joined(*cased)?;
                let mut at = 0;
                while let Some(i) = text.get(at..).and_then(|t| t.find(&**n)) {
                    let start = at + i;
                    if e.within_one_value(*cased, start, start + n.len()) {
                        return Some(true);
                    }
                    at = start + text[start..].chars().next().map_or(1, char::len_utf8);
                }
                Some(false)
            }
            ValueTest::Needles {
                ac, cased, min_len, ..
            } if *min_len > 0 => {
                let text = e.joined(*cased)?;
                // Needles are ordered shortest first, so the match reported at a position
                // is the shortest one there: when it crosses into the next value, every
                // longer needle at that position does too.
                let mut at = 0;
                while let Some(m) = ac.find_from(text, at) {
                    if e.within_one_value(*cased, m.start, m.end) {
                        return Some(true);
                    }
                    at = m.start + 1;
                }
                Some(false)
            }
            _ => None,
        }
    }
}

/// What a field test reads: one field, or every value of the record (keywords).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Target {
    /// One field.
    Field(FieldId),
    /// Every value (keyword search).
    Keywords,
}

/// How field references compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RefKind {
    /// Equal.
    Eq,
    /// This field starts with the other.
    Prefix,
    /// This field ends with the other.
    Suffix,
    /// This field contains the other.
    Contains,
}

/// The check made on a field's values.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum Check {
    /// `null`: the field is absent.
    Absent,
    /// `exists: true|false`.
    Exists(bool),
    /// Some value passes some test (a YAML list is OR); `or_absent` when the list holds `null`.
    Any {
        /// The tests, any of which may pass.
        tests: Vec<ValueTest>,
        /// Whether an absent field passes too (the list held `null`).
        or_absent: bool,
    },
    /// `all`: every group is passed by some value (a group is one YAML value's variants).
    All(Vec<Vec<ValueTest>>),
    /// `fieldref`: compare with another field of the same record.
    FieldRef {
        /// The fields compared with.
        others: Vec<FieldId>,
        /// How they compare.
        kind: RefKind,
        /// Case-sensitive.
        cased: bool,
    },
}

/// One `field|modifiers: values` entry of a selection.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FieldTest {
    /// What is read.
    pub target: Target,
    /// What is checked.
    pub check: Check,
    /// `neq`: the result is inverted.
    pub negate: bool,
}

enum Values<A, B> {
    One(A),
    All(B),
}

impl<'a, A: Iterator<Item = Value<'a>>, B: Iterator<Item = Value<'a>>> Iterator for Values<A, B> {
    type Item = Value<'a>;
    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        match self {
            Values::One(a) => a.next(),
            Values::All(b) => b.next(),
        }
    }
}

impl FieldTest {
    #[inline]
    fn values<'e, E: Event>(&self, e: &'e E) -> impl Iterator<Item = Value<'e>> {
        match self.target {
            Target::Field(f) => Values::One(e.values(f)),
            Target::Keywords => Values::All(e.all_values()),
        }
    }

    /// Whether it reads Channel or EventID (the fields rules are indexed by).
    pub fn is_index_test(&self) -> bool {
        matches!(self.target, Target::Field(f) if f == crate::fields::CHANNEL || f == crate::fields::EVENT_ID)
    }

    /// Whether the record passes this entry.
    #[inline]
    pub fn is_match<E: Event>(&self, e: &E) -> bool {
        let r = match &self.check {
            Check::Absent => self.values(e).next().is_none(),
            Check::Exists(want) => self.values(e).next().is_some() == *want,
            Check::Any { tests, or_absent } if self.target == Target::Keywords => {
                keywords_match(tests, e) || (*or_absent && e.all_values().next().is_none())
            }
            Check::Any { tests, or_absent } => {
                let mut seen = false;
                let mut hit = false;
                for v in self.values(e) {
                    seen = true;
                    if tests.iter().any(|t| t.is_match(v)) {
                        hit = true;
                        break;
                    }
                }
                hit || (!seen && *or_absent)
            }
            Check::All(groups) => groups
                .iter()
                .all(|g| self.values(e).any(|v| g.iter().any(|t| t.is_match(v)))),
            Check::FieldRef {
                others,
                kind,
                cased,
            } => self.values(e).any(|v| {
                others.iter().any(|&o| {
                    e.values(o).any(|w| {
                        let (a, b) = if *cased {
                            (v.raw, w.raw)
                        } else {
                            (v.lower, w.lower)
                        };
                        match kind {
                            RefKind::Eq => a == b,
                            RefKind::Prefix => a.starts_with(b),
                            RefKind::Suffix => a.ends_with(b),
                            RefKind::Contains => a.contains(b),
                        }
                    })
                })
            }),
        };
        r != self.negate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::Ev;

    fn str_test(kind: StrKind, cased: bool) -> ValueTest {
        ValueTest::Str { kind, cased }
    }

    fn value(raw: &str) -> String {
        raw.to_string()
    }

    #[test]
    fn string_tests_read_the_lowercase_value_unless_cased() {
        let lower = crate::event::lowercase("C:\\Windows\\CMD.exe");
        let raw = value("C:\\Windows\\CMD.exe");
        let v = Value {
            raw: &raw,
            lower: &lower,
        };
        let boxed = |s: &str| s.to_string().into_boxed_str();
        assert!(str_test(StrKind::Exact(boxed("c:\\windows\\cmd.exe")), false).is_match(v));
        assert!(!str_test(StrKind::Exact(boxed("c:\\windows\\cmd.exe")), true).is_match(v));
        assert!(str_test(StrKind::Prefix(boxed("c:\\win")), false).is_match(v));
        assert!(str_test(StrKind::Suffix(boxed("CMD.exe")), true).is_match(v));
        assert!(str_test(StrKind::Contains(boxed("windows")), false).is_match(v));
        assert!(!str_test(StrKind::Contains(boxed("system32")), false).is_match(v));
        assert!(str_test(StrKind::Any, false).is_match(v));
    }

    #[test]
    fn numeric_tests_compare_values_that_parse() {
        let v = |s: &'static str| Value { raw: s, lower: s };
        assert!(ValueTest::Num(CountOp::Gt, 5.0).is_match(v(" 6 ")));
        assert!(!ValueTest::Num(CountOp::Gt, 5.0).is_match(v("5")));
        assert!(ValueTest::Num(CountOp::Gte, 5.0).is_match(v("5")));
        assert!(ValueTest::Num(CountOp::Lt, 5.0).is_match(v("4.5")));
        assert!(!ValueTest::Num(CountOp::Lte, 5.0).is_match(v("five")));
    }

    #[test]
    fn checks_on_absent_present_and_negated_fields() {
        let ev = Ev::new(&[(10, &["Admin"]), (11, &["admin", "x"])], false);
        let test = |target, check, negate| FieldTest {
            target,
            check,
            negate,
        };
        let any = |s: &str, or_absent| Check::Any {
            tests: vec![str_test(StrKind::Exact(s.into()), false)],
            or_absent,
        };
        assert!(test(Target::Field(10), any("admin", false), false).is_match(&ev));
        assert!(!test(Target::Field(10), any("admin", false), true).is_match(&ev));
        assert!(!test(Target::Field(12), any("admin", false), false).is_match(&ev));
        assert!(test(Target::Field(12), any("admin", true), false).is_match(&ev));
        assert!(test(Target::Field(12), Check::Absent, false).is_match(&ev));
        assert!(test(Target::Field(10), Check::Exists(true), false).is_match(&ev));
        assert!(test(Target::Field(12), Check::Exists(false), false).is_match(&ev));
        let all = Check::All(vec![
            vec![str_test(StrKind::Exact("admin".into()), false)],
            vec![str_test(StrKind::Exact("x".into()), false)],
        ]);
        assert!(test(Target::Field(11), all.clone(), false).is_match(&ev));
        assert!(!test(Target::Field(10), all, false).is_match(&ev));
        let fieldref = |cased| Check::FieldRef {
            others: vec![11],
            kind: RefKind::Eq,
            cased,
        };
        assert!(test(Target::Field(10), fieldref(false), false).is_match(&ev));
        assert!(!test(Target::Field(10), fieldref(true), false).is_match(&ev));
        assert!(test(Target::Field(crate::fields::CHANNEL), Check::Absent, false).is_index_test());
        assert!(!test(Target::Field(10), Check::Absent, false).is_index_test());
    }

    #[test]
    fn keyword_substrings_must_lie_within_one_value_joined_or_not() {
        let contains = |n: &str| Check::Any {
            tests: vec![str_test(StrKind::Contains(n.into()), false)],
            or_absent: false,
        };
        for joined in [false, true] {
            let ev = Ev::new(&[(10, &["abc"]), (11, &["DEF"])], joined);
            let kw = |n: &str| FieldTest {
                target: Target::Keywords,
                check: contains(n),
                negate: false,
            };
            assert!(kw("bc").is_match(&ev), "joined: {joined}");
            assert!(kw("def").is_match(&ev), "joined: {joined}");
            assert!(
                !kw("cd").is_match(&ev),
                "across two values, joined: {joined}"
            );
        }
    }
}
