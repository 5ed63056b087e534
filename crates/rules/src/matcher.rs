//! Compiled tests on field values: what one `field|modifiers: values` entry becomes.
//!
//! The fast paths of the performance guide live here. Values are compared in their
//! lowercased form (computed once per record by the record view) with `==`,
//! `starts_with`, `ends_with` or `contains`, each behind a length check;
//! long OR-lists of substrings become one Aho-Corasick automaton; regexes come from the
//! shared [`RegexCache`] and are only used where a wildcard sits inside a value or the
//! rule asks for `re`.

use crate::cidr::Cidr;
use crate::encode::{self, Utf16};
use crate::event::{lowercase, Event, Value};
use crate::fields::FieldId;
use crate::pattern::{self, Piece, Shape};
use crate::regex_cache::RegexCache;
use aho_corasick::AhoCorasick;
use serde_yaml::Value as Yaml;
use std::sync::Arc;

/// Marks the error of a value whose `expand` placeholder has no values: such a rule is
/// valid but disabled until values are supplied.
pub const NO_PLACEHOLDER_VALUES: &str = "has no values";

/// OR-lists with at least this many substring needles share one automaton.
pub const AUTOMATON_MIN_NEEDLES: usize = 4;

/// A plain string test on one value.
#[derive(Debug, Clone)]
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
    Glob(Arc<crate::regex_cache::CompiledRegex>),
}

/// A test on one value of a field.
#[derive(Debug, Clone)]
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
        /// The automaton over every needle.
        ac: AhoCorasick,
        /// Compare the raw value (otherwise the lowercased one).
        cased: bool,
        /// The shortest needle: shorter values cannot match.
        min_len: usize,
        /// The needles themselves (for the rule-set prefilter).
        needles: Box<[Box<str>]>,
    },
    /// Many `startswith` or `endswith` values: one set lookup per needle length.
    Affixes(crate::affix::AffixSet),
    /// `re`: unanchored search on the raw value.
    Regex(Arc<crate::regex_cache::CompiledRegex>),
    /// `cidr`.
    Cidr(Cidr),
    /// `gt`/`gte`/`lt`/`lte`.
    Num(Cmp, f64),
}

/// Numeric comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `gt`
    Gt,
    /// `gte`
    Gte,
    /// `lt`
    Lt,
    /// `lte`
    Lte,
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
            ValueTest::Num(op, n) => match v.raw.trim().parse::<f64>() {
                Ok(x) => match op {
                    Cmp::Gt => x > *n,
                    Cmp::Gte => x >= *n,
                    Cmp::Lt => x < *n,
                    Cmp::Lte => x <= *n,
                },
                Err(_) => false,
            },
        }
    }

    /// The lowercase literal substrings one of which must occur in a value this test
    /// accepts, if the test is that simple (used by prefilters and for reporting).
    pub fn needle(&self) -> Option<&str> {
        match self {
            ValueTest::Str {
                kind:
                    StrKind::Exact(n) | StrKind::Prefix(n) | StrKind::Suffix(n) | StrKind::Contains(n),
                cased: false,
            } => Some(n),
            _ => None,
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
                while let Some(m) = ac.find(aho_corasick::Input::new(text).span(at..text.len())) {
                    if e.within_one_value(*cased, m.start(), m.end()) {
                        return Some(true);
                    }
                    at = m.start() + 1;
                }
                Some(false)
            }
            _ => None,
        }
    }
}

/// What a field test reads: one field, or every value of the record (keywords).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One field.
    Field(FieldId),
    /// Every value (keyword search).
    Keywords,
}

/// How field references compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone)]
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
#[derive(Debug, Clone)]
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

/// What compiling a field entry needs from the rule loader.
pub trait CompileContext {
    /// The id of a rule field name.
    fn field(&self, name: &str) -> FieldId;
    /// The shared regex cache.
    fn regexes(&self) -> &RegexCache;
    /// The values of an `expand` placeholder (`%name%` without the percent signs).
    fn placeholder(&self, name: &str) -> Option<&[String]>;
    /// How the log being compiled for writes `value` of rule field `field`, when it
    /// differs (e.g. Sysmon's `Initiated: true` is `Direction: %%14593` in Security 5156).
    fn map_value(&self, _field: &str, _value: &str) -> Option<String> {
        None
    }
}

#[derive(Default, Debug)]
struct Mods {
    contains: bool,
    startswith: bool,
    endswith: bool,
    all: bool,
    re: bool,
    re_flags: String,
    windash: bool,
    cidr: bool,
    base64: bool,
    base64offset: bool,
    utf16: Option<Utf16>,
    fieldref: bool,
    exists: bool,
    cmp: Option<Cmp>,
    cased: bool,
    expand: bool,
    neq: bool,
}

fn parse_mods(names: &[&str]) -> Result<Mods, String> {
    let mut m = Mods::default();
    for &n in names {
        match n {
            "contains" => m.contains = true,
            "startswith" => m.startswith = true,
            "endswith" => m.endswith = true,
            "all" => m.all = true,
            "re" => m.re = true,
            "i" | "ignorecase" => m.re_flags.push('i'),
            "m" | "multiline" => m.re_flags.push('m'),
            "s" | "dotall" => m.re_flags.push('s'),
            "windash" => m.windash = true,
            "cidr" => m.cidr = true,
            "base64" => m.base64 = true,
            "base64offset" => m.base64offset = true,
            "wide" | "utf16le" => m.utf16 = Some(Utf16::Le),
            "utf16be" => m.utf16 = Some(Utf16::Be),
            "utf16" => m.utf16 = Some(Utf16::Bom),
            "fieldref" | "equalsfield" => m.fieldref = true,
            "endswithfield" => {
                m.fieldref = true;
                m.endswith = true
            }
            "exists" => m.exists = true,
            "gt" => m.cmp = Some(Cmp::Gt),
            "gte" => m.cmp = Some(Cmp::Gte),
            "lt" => m.cmp = Some(Cmp::Lt),
            "lte" => m.cmp = Some(Cmp::Lte),
            "cased" => m.cased = true,
            "expand" => m.expand = true,
            "neq" => m.neq = true,
            "" => return Err("empty modifier".into()),
            other => return Err(format!("unknown modifier '{other}'")),
        }
    }
    if [m.contains, m.startswith, m.endswith]
        .iter()
        .filter(|&&b| b)
        .count()
        > 1
    {
        return Err("contains, startswith and endswith exclude each other".into());
    }
    if !m.re_flags.is_empty() && !m.re {
        return Err("modifiers i, m and s need re".into());
    }
    if m.re && (m.contains || m.startswith || m.endswith || m.base64 || m.base64offset || m.windash)
    {
        return Err("re cannot be combined with string modifiers".into());
    }
    if m.base64 && m.base64offset {
        return Err("base64 and base64offset exclude each other".into());
    }
    Ok(m)
}

/// A YAML scalar as Sigma text (numbers and booleans compare as text); `None` is `null`.
pub fn scalar_text(v: &Yaml) -> Result<Option<String>, String> {
    match v {
        Yaml::Null => Ok(None),
        Yaml::Bool(b) => Ok(Some(b.to_string())),
        Yaml::Number(n) => Ok(Some(n.to_string())),
        Yaml::String(s) => Ok(Some(s.clone())),
        Yaml::Tagged(t) => scalar_text(&t.value),
        Yaml::Sequence(_) => Err("a list inside a list of values".into()),
        Yaml::Mapping(_) => Err("a map where a value was expected".into()),
    }
}

fn value_list(v: &Yaml) -> Result<Vec<Option<String>>, String> {
    match v {
        Yaml::Sequence(items) => items.iter().map(scalar_text).collect(),
        other => Ok(vec![scalar_text(other)?]),
    }
}

fn expand_placeholders(value: &str, ctx: &dyn CompileContext) -> Result<Vec<String>, String> {
    let mut out = vec![String::new()];
    let mut rest = value;
    while let Some(start) = rest.find('%') {
        let Some(len) = rest[start + 1..].find('%') else {
            break;
        };
        let name = &rest[start + 1..start + 1 + len];
        let values = ctx.placeholder(name).ok_or_else(|| {
            format!(
                "placeholder %{name}% has no values (add expand/{name}.txt to the config folder)"
            )
        })?;
        let prefix = &rest[..start];
        out = out
            .iter()
            .flat_map(|o| values.iter().map(move |v| format!("{o}{prefix}{v}")))
            .collect();
        rest = &rest[start + len + 2..];
    }
    for o in &mut out {
        o.push_str(rest);
    }
    Ok(out)
}

fn str_test(
    pieces: Vec<Piece>,
    cased: bool,
    ctx: &dyn CompileContext,
) -> Result<ValueTest, String> {
    let low = |s: String| -> Box<str> {
        if cased {
            s.into_boxed_str()
        } else {
            lowercase(&s).into_boxed_str()
        }
    };
    let kind = match pattern::shape(pieces) {
        Shape::Exact(s) => StrKind::Exact(low(s)),
        Shape::Prefix(s) => StrKind::Prefix(low(s)),
        Shape::Suffix(s) => StrKind::Suffix(low(s)),
        Shape::Contains(s) => StrKind::Contains(low(s)),
        Shape::Any => StrKind::Any,
        Shape::Glob(p) => StrKind::Glob(ctx.regexes().get(&pattern::glob_regex(&p, !cased))?),
    };
    Ok(ValueTest::Str { kind, cased })
}

/// The tests one YAML value gives (its variants under windash, base64offset or expand).
fn value_tests(
    value: &str,
    m: &Mods,
    keyword: bool,
    ctx: &dyn CompileContext,
) -> Result<Vec<ValueTest>, String> {
    let expanded = if m.expand {
        expand_placeholders(value, ctx)?
    } else {
        vec![value.to_string()]
    };
    let mut out = Vec::new();
    for value in expanded {
        if m.re {
            let src = if m.re_flags.is_empty() {
                value
            } else {
                format!("(?{}){value}", m.re_flags)
            };
            out.push(ValueTest::Regex(ctx.regexes().get(&src)?));
            continue;
        }
        if m.cidr {
            out.push(ValueTest::Cidr(Cidr::parse(&value)?));
            continue;
        }
        if let Some(op) = m.cmp {
            let n = value
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("'{value}' is not a number"))?;
            out.push(ValueTest::Num(op, n));
            continue;
        }
        let variants = if m.windash {
            encode::windash(&value)?
        } else {
            vec![value]
        };
        let encoded = m.base64 || m.base64offset;
        for v in variants {
            let mut bodies: Vec<(Vec<Piece>, bool)> = Vec::new();
            if encoded {
                let bytes = match m.utf16 {
                    Some(how) => encode::utf16(&v, how),
                    None => v.into_bytes(),
                };
                if m.base64offset {
                    for s in encode::base64_offsets(&bytes) {
                        bodies.push((pattern::literal(&s), true));
                    }
                } else {
                    let mut s = encode::base64(&bytes);
                    if m.contains || m.startswith {
                        s.truncate(s.trim_end_matches('=').len());
                    }
                    bodies.push((pattern::literal(&s), true));
                }
            } else {
                if m.utf16.is_some() {
                    return Err("utf16 modifiers need base64 or base64offset".into());
                }
                bodies.push((pattern::parse(&v), m.cased));
            }
            for (mut pieces, cased) in bodies {
                let wrap_start = m.contains || m.endswith || (keyword && !m.startswith);
                let wrap_end = m.contains || m.startswith || (keyword && !m.endswith);
                if wrap_start && pieces.first() != Some(&Piece::Star) {
                    pieces.insert(0, Piece::Star);
                }
                if wrap_end && pieces.last() != Some(&Piece::Star) {
                    pieces.push(Piece::Star);
                }
                out.push(str_test(pieces, cased, ctx)?);
            }
        }
    }
    Ok(out)
}

/// Replaces four or more case-insensitive (or four or more cased) substring tests by one
/// Aho-Corasick automaton each, and [`crate::affix::MIN_AFFIXES`] or more prefix (or
/// suffix) tests of one casing by one set each.
pub(crate) fn merge_needles(tests: Vec<ValueTest>) -> Result<Vec<ValueTest>, String> {
    let mut out = Vec::with_capacity(tests.len());
    let mut needles: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    let mut held: [Vec<ValueTest>; 2] = [Vec::new(), Vec::new()];
    // Prefixes and suffixes, uncased and cased: [prefix, suffix] × [uncased, cased].
    let mut affixes: [[Vec<ValueTest>; 2]; 2] = Default::default();
    for t in tests {
        match &t {
            ValueTest::Str {
                kind: StrKind::Contains(n),
                cased,
            } => {
                let i = usize::from(*cased);
                needles[i].push(n.as_bytes().to_vec());
                held[i].push(t);
            }
            ValueTest::Str {
                kind: StrKind::Prefix(_) | StrKind::Suffix(_),
                cased,
            } => {
                let suffix = matches!(
                    t,
                    ValueTest::Str {
                        kind: StrKind::Suffix(_),
                        ..
                    }
                );
                affixes[usize::from(suffix)][usize::from(*cased)].push(t);
            }
            _ => out.push(t),
        }
    }
    for (suffix, by_case) in affixes.into_iter().enumerate() {
        for (cased, tests) in by_case.into_iter().enumerate() {
            if tests.len() < crate::affix::MIN_AFFIXES {
                out.extend(tests);
                continue;
            }
            let list = tests
                .into_iter()
                .filter_map(|t| match t {
                    ValueTest::Str {
                        kind: StrKind::Prefix(n) | StrKind::Suffix(n),
                        ..
                    } => Some(n),
                    _ => None,
                })
                .collect();
            out.push(ValueTest::Affixes(crate::affix::AffixSet::new(
                list,
                suffix == 1,
                cased == 1,
            )));
        }
    }
    for i in 0..2 {
        // Shortest first: with leftmost-first semantics, the match reported at a position
        // is then the shortest needle there (which keyword search relies on).
        needles[i].sort_by_key(Vec::len);
        if needles[i].len() >= AUTOMATON_MIN_NEEDLES {
            let min_len = needles[i].iter().map(Vec::len).min().unwrap_or(0);
            // A contiguous NFA: a fraction of a DFA's memory, still one pass per value.
            // Only whether a needle occurs matters, so leftmost-first semantics (same
            // answer) are chosen: they let the crate skip ahead with its SIMD prefilter.
            let ac = AhoCorasick::builder()
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .build(&needles[i])
                .map_err(|e| format!("needle automaton: {e}"))?;
            let list = needles[i]
                .iter()
                .map(|n| String::from_utf8_lossy(n).into_owned().into_boxed_str())
                .collect();
            out.push(ValueTest::Needles {
                ac,
                cased: i == 1,
                min_len,
                needles: list,
            });
        } else {
            out.append(&mut held[i]);
        }
    }
    Ok(out)
}

/// Compiles one selection entry: `key` is `field|mod|mod` (an empty field for keywords).
pub fn compile_entry(
    key: &str,
    value: &Yaml,
    ctx: &dyn CompileContext,
) -> Result<FieldTest, String> {
    let mut parts = key.split('|');
    let field = parts.next().unwrap_or("");
    let mod_names: Vec<&str> = parts.collect();
    let m = parse_mods(&mod_names).map_err(|e| format!("field '{key}': {e}"))?;
    let target = if field.is_empty() {
        Target::Keywords
    } else {
        Target::Field(ctx.field(field))
    };
    let keyword = target == Target::Keywords;
    let err = |e: String| format!("field '{key}': {e}");

    if m.exists {
        let want = match value {
            Yaml::Bool(b) => *b,
            Yaml::String(s) if s.eq_ignore_ascii_case("true") => true,
            Yaml::String(s) if s.eq_ignore_ascii_case("false") => false,
            _ => return Err(err("exists takes true or false".into())),
        };
        return Ok(FieldTest {
            target,
            check: Check::Exists(want),
            negate: m.neq,
        });
    }

    let mut values = value_list(value).map_err(err)?;
    if !keyword {
        for v in values.iter_mut().flatten() {
            if let Some(mapped) = ctx.map_value(field, v) {
                *v = mapped;
            }
        }
    }
    if values.is_empty() {
        return Err(err("an empty list of values".into()));
    }

    if m.fieldref {
        if keyword {
            return Err(err("fieldref needs a field".into()));
        }
        let others = values
            .iter()
            .map(|v| v.as_deref().map(|n| ctx.field(n)).ok_or("fieldref of null"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| err(e.into()))?;
        let kind = if m.contains {
            RefKind::Contains
        } else if m.startswith {
            RefKind::Prefix
        } else if m.endswith {
            RefKind::Suffix
        } else {
            RefKind::Eq
        };
        return Ok(FieldTest {
            target,
            check: Check::FieldRef {
                others,
                kind,
                cased: m.cased,
            },
            negate: m.neq,
        });
    }

    let or_absent = values.iter().any(Option::is_none);
    let mut groups = Vec::new();
    for v in values.iter().flatten() {
        groups.push(value_tests(v, &m, keyword, ctx).map_err(err)?);
    }
    let check = if groups.is_empty() {
        Check::Absent
    } else if m.all {
        Check::All(groups)
    } else {
        Check::Any {
            tests: merge_needles(groups.into_iter().flatten().collect()).map_err(err)?,
            or_absent,
        }
    };
    Ok(FieldTest {
        target,
        check,
        negate: m.neq,
    })
}
