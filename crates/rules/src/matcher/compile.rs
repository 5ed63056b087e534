//! Compiling one selection entry (`field|modifiers: values`) into a [`FieldTest`]:
//! modifiers are checked, values expanded (placeholders, windash, base64, UTF-16) and
//! each reduced to the cheapest exact test; long OR-lists are merged into one automaton
//! or affix set.

use super::affix::{self, AffixSet};
use super::automaton::{Automaton, Build};
use super::cidr::Cidr;
use super::encode::{self, Utf16};
use super::pattern::{self, Piece, Shape};
use super::regex_cache::RegexCache;
use super::{Check, FieldTest, RefKind, StrKind, Target, TimePart, ValueTest};
use crate::correlation::CountOp;
use crate::error::{Context, ErrorKind, RuleError};
use crate::event::lowercase;
use crate::fields::FieldId;
use yaml_serde::Value as Yaml;

/// OR-lists with at least this many substring needles share one automaton.
pub const AUTOMATON_MIN_NEEDLES: usize = 4;

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
    cmp: Option<CountOp>,
    cased: bool,
    expand: bool,
    neq: bool,
    time: Option<TimePart>,
}

fn parse_mods(names: &[&str]) -> Result<Mods, RuleError> {
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
            "gt" => m.cmp = Some(CountOp::Gt),
            "gte" => m.cmp = Some(CountOp::Gte),
            "lt" => m.cmp = Some(CountOp::Lt),
            "lte" => m.cmp = Some(CountOp::Lte),
            "cased" => m.cased = true,
            "expand" => m.expand = true,
            "neq" => m.neq = true,
            "minute" | "hour" | "day" | "week" | "month" | "year" => {
                if m.time.is_some() {
                    return Err(ErrorKind::Modifiers("only one time modifier per field").into());
                }
                m.time = TimePart::from_modifier(n)
            }
            "" => return Err(ErrorKind::EmptyModifier.into()),
            other => return Err(ErrorKind::UnknownModifier(other.to_string()).into()),
        }
    }
    if [m.contains, m.startswith, m.endswith]
        .iter()
        .filter(|&&b| b)
        .count()
        > 1
    {
        return Err(
            ErrorKind::Modifiers("contains, startswith and endswith exclude each other").into(),
        );
    }
    if !m.re_flags.is_empty() && !m.re {
        return Err(ErrorKind::Modifiers("modifiers i, m and s need re").into());
    }
    if m.re && (m.contains || m.startswith || m.endswith || m.base64 || m.base64offset || m.windash)
    {
        return Err(ErrorKind::Modifiers("re cannot be combined with string modifiers").into());
    }
    if m.base64 && m.base64offset {
        return Err(ErrorKind::Modifiers("base64 and base64offset exclude each other").into());
    }
    let others = m.contains
        || m.startswith
        || m.endswith
        || m.all
        || m.re
        || m.windash
        || m.cidr
        || m.base64
        || m.base64offset
        || m.utf16.is_some()
        || m.fieldref
        || m.exists
        || m.cmp.is_some()
        || m.cased
        || m.expand;
    if m.time.is_some() && others {
        return Err(ErrorKind::Modifiers(
            "time modifiers (minute, hour, day, week, month, year) combine only with neq",
        )
        .into());
    }
    Ok(m)
}

/// A YAML scalar as Sigma text (numbers and booleans compare as text); `None` is `null`.
fn scalar_text(v: &Yaml) -> Result<Option<String>, RuleError> {
    match v {
        Yaml::Null => Ok(None),
        Yaml::Bool(_) | Yaml::Number(_) | Yaml::String(_) => Ok(scanner_yaml::scalar_text(v)),
        Yaml::Tagged(t) => scalar_text(&t.value),
        Yaml::Sequence(_) => Err(ErrorKind::Malformed("a list inside a list of values").into()),
        Yaml::Mapping(_) => Err(ErrorKind::Malformed("a map where a value was expected").into()),
    }
}

fn value_list(v: &Yaml) -> Result<Vec<Option<String>>, RuleError> {
    match v {
        Yaml::Sequence(items) => items.iter().map(scalar_text).collect(),
        other => Ok(vec![scalar_text(other)?]),
    }
}

/// The values of an `expand` value: each `%name%` replaced by each of the placeholder's
/// values. `\\%` is a literal `%` (not a placeholder's edge); `\\\\` is kept as written
/// (an escaped backslash for the wildcard parser), so `\\\\%` still opens a placeholder.
fn expand_placeholders(value: &str, ctx: &dyn CompileContext) -> Result<Vec<String>, RuleError> {
    let mut out = vec![String::new()];
    let mut literal = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.clone().next() {
                Some('%') => {
                    chars.next();
                    literal.push('%');
                }
                Some('\\') => {
                    chars.next();
                    literal.push_str("\\\\");
                }
                _ => literal.push('\\'),
            },
            '%' => {
                let rest = chars.as_str();
                let Some(len) = rest.find('%') else {
                    literal.push('%');
                    continue;
                };
                let name = &rest[..len];
                let values = ctx
                    .placeholder(name)
                    .ok_or_else(|| ErrorKind::NoPlaceholderValues(name.to_string()))?;
                let prefix = std::mem::take(&mut literal);
                let prefix = prefix.as_str();
                out = out
                    .iter()
                    .flat_map(|o| values.iter().map(move |v| format!("{o}{prefix}{v}")))
                    .collect();
                chars = rest[len + 1..].chars();
            }
            c => literal.push(c),
        }
    }
    for o in &mut out {
        o.push_str(&literal);
    }
    Ok(out)
}

fn str_test(
    pieces: Vec<Piece>,
    cased: bool,
    ctx: &dyn CompileContext,
) -> Result<ValueTest, RuleError> {
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
        Shape::Glob(p) => StrKind::Glob(ctx.regexes().compile(&pattern::glob_regex(&p, !cased))?),
    };
    Ok(ValueTest::Str { kind, cased })
}

/// The literal bodies (compared cased) of a value under `base64` or `base64offset`, of
/// its UTF-16 form when a `utf16` modifier asks.
fn encoded_bodies(v: String, m: &Mods) -> Vec<(Vec<Piece>, bool)> {
    let bytes = match m.utf16 {
        Some(how) => encode::utf16(&v, how),
        None => v.into_bytes(),
    };
    if m.base64offset {
        return encode::base64_offsets(&bytes)
            .iter()
            .map(|s| (pattern::literal(s), true))
            .collect();
    }
    let mut s = encode::base64(&bytes);
    if m.contains || m.startswith {
        s.truncate(s.trim_end_matches('=').len());
    }
    vec![(pattern::literal(&s), true)]
}

/// The tests one YAML value gives (its variants under windash, base64offset or expand).
fn value_tests(
    value: &str,
    m: &Mods,
    keyword: bool,
    ctx: &dyn CompileContext,
) -> Result<Vec<ValueTest>, RuleError> {
    let expanded = if m.expand {
        expand_placeholders(value, ctx)?
    } else {
        vec![value.to_string()]
    };
    let mut out = Vec::new();
    for value in expanded {
        if let Some(part) = m.time {
            let n = value
                .trim()
                .parse::<i64>()
                .map_err(|_| ErrorKind::NotANumber(value.clone()))?;
            out.push(ValueTest::Time(part, n));
            continue;
        }
        if m.re {
            let src = if m.re_flags.is_empty() {
                value
            } else {
                format!("(?{}){value}", m.re_flags)
            };
            out.push(ValueTest::Regex(ctx.regexes().compile(&src)?));
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
                .map_err(|_| ErrorKind::NotANumber(value.clone()))?;
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
            let bodies = if encoded {
                encoded_bodies(v, m)
            } else {
                if m.utf16.is_some() {
                    return Err(ErrorKind::Modifiers(
                        "utf16 modifiers need base64 or base64offset",
                    )
                    .into());
                }
                vec![(pattern::parse(&v), m.cased)]
            };
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

/// One automaton test over `needles` (sorted shortest first), built on first use.
fn needle_automaton(needles: &[Vec<u8>], cased: bool) -> ValueTest {
    let min_len = needles.iter().map(Vec::len).min().unwrap_or(0);
    // A contiguous NFA: a fraction of a DFA's memory, still one pass per value.
    // Only whether a needle occurs matters, so leftmost-first semantics (same
    // answer) are chosen: they let the crate skip ahead with its SIMD prefilter.
    let list = needles
        .iter()
        .map(|n| String::from_utf8_lossy(n).into_owned().into_boxed_str())
        .collect();
    ValueTest::Needles {
        ac: Automaton::new(list, Build::FirstMatch),
        cased,
        min_len,
    }
}

/// Replaces four or more case-insensitive (or four or more cased) substring tests by one
/// Aho-Corasick automaton each, and [`affix::MIN_AFFIXES`] or more prefix (or
/// suffix) tests of one casing by one set each.
pub(crate) fn merge_needles(tests: Vec<ValueTest>) -> Result<Vec<ValueTest>, RuleError> {
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
            if tests.len() < affix::MIN_AFFIXES {
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
            out.push(ValueTest::Affixes(AffixSet::new(
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
            out.push(needle_automaton(&needles[i], i == 1));
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
) -> Result<FieldTest, RuleError> {
    entry(key, value, ctx).map_err(|e| e.within(Context::Field(key.to_string())))
}

/// [`compile_entry`] without the field named in its errors.
fn entry(key: &str, value: &Yaml, ctx: &dyn CompileContext) -> Result<FieldTest, RuleError> {
    let mut parts = key.split('|');
    let field = parts.next().unwrap_or("");
    let mod_names: Vec<&str> = parts.collect();
    let m = parse_mods(&mod_names)?;
    let target = if field.is_empty() {
        Target::Keywords
    } else {
        Target::Field(ctx.field(field))
    };
    let keyword = target == Target::Keywords;
    let check = if m.exists {
        exists_check(value)?
    } else {
        let mut values = value_list(value)?;
        if !keyword {
            for v in values.iter_mut().flatten() {
                if let Some(mapped) = ctx.map_value(field, v) {
                    *v = mapped;
                }
            }
        }
        if values.is_empty() {
            return Err(ErrorKind::Malformed("an empty list of values").into());
        }
        if m.fieldref && keyword {
            return Err(ErrorKind::Modifiers("fieldref needs a field").into());
        } else if m.fieldref {
            fieldref_check(&values, &m, ctx)?
        } else {
            value_check(&values, &m, keyword, ctx)?
        }
    };
    Ok(FieldTest {
        target,
        check,
        negate: m.neq,
    })
}

/// `exists: true|false`.
fn exists_check(value: &Yaml) -> Result<Check, RuleError> {
    let want = match value {
        Yaml::Bool(b) => *b,
        Yaml::String(s) if s.eq_ignore_ascii_case("true") => true,
        Yaml::String(s) if s.eq_ignore_ascii_case("false") => false,
        _ => return Err(ErrorKind::Modifiers("exists takes true or false").into()),
    };
    Ok(Check::Exists(want))
}

/// `fieldref`: the values name the fields of the same record compared with.
fn fieldref_check(
    values: &[Option<String>],
    m: &Mods,
    ctx: &dyn CompileContext,
) -> Result<Check, RuleError> {
    let others = values
        .iter()
        .map(|v| v.as_deref().map(|n| ctx.field(n)))
        .collect::<Option<Vec<_>>>()
        .ok_or(ErrorKind::Malformed("fieldref of null"))?;
    let kind = if m.contains {
        RefKind::Contains
    } else if m.startswith {
        RefKind::Prefix
    } else if m.endswith {
        RefKind::Suffix
    } else {
        RefKind::Eq
    };
    Ok(Check::FieldRef {
        others,
        kind,
        cased: m.cased,
    })
}

/// The tests of plain values: any of them (merged where many), or each group under `all`;
/// a `null` among them lets an absent field pass.
fn value_check(
    values: &[Option<String>],
    m: &Mods,
    keyword: bool,
    ctx: &dyn CompileContext,
) -> Result<Check, RuleError> {
    let or_absent = values.iter().any(Option::is_none);
    let mut groups = Vec::new();
    for v in values.iter().flatten() {
        groups.push(value_tests(v, m, keyword, ctx)?);
    }
    Ok(if groups.is_empty() {
        Check::Absent
    } else if m.all {
        Check::All(groups)
    } else {
        Check::Any {
            tests: merge_needles(groups.into_iter().flatten().collect())?,
            or_absent,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::FieldTable;
    use std::sync::Mutex;

    /// A compile context with a field table, a regex cache and one placeholder.
    struct Ctx {
        fields: Mutex<FieldTable>,
        regexes: RegexCache,
        admins: Vec<String>,
    }

    impl CompileContext for Ctx {
        fn field(&self, name: &str) -> FieldId {
            self.fields.lock().unwrap().intern(name)
        }
        fn regexes(&self) -> &RegexCache {
            &self.regexes
        }
        fn placeholder(&self, name: &str) -> Option<&[String]> {
            (name == "admins").then_some(self.admins.as_slice())
        }
    }

    fn ctx() -> Ctx {
        Ctx {
            fields: Mutex::new(FieldTable::new()),
            regexes: RegexCache::default(),
            admins: vec!["root".into(), "Admin".into()],
        }
    }

    fn entry(key: &str, yaml: &str) -> Result<FieldTest, String> {
        compile_entry(key, &yaml_serde::from_str(yaml).unwrap(), &ctx()).map_err(|e| e.to_string())
    }

    fn tests(key: &str, yaml: &str) -> Vec<ValueTest> {
        match entry(key, yaml).unwrap().check {
            Check::Any { tests, .. } => tests,
            other => panic!("{other:?}"),
        }
    }

    fn kind(t: &ValueTest) -> String {
        match t {
            ValueTest::Str { kind, cased } => {
                let k = match kind {
                    StrKind::Exact(s) => format!("exact {s}"),
                    StrKind::Prefix(s) => format!("prefix {s}"),
                    StrKind::Suffix(s) => format!("suffix {s}"),
                    StrKind::Contains(s) => format!("contains {s}"),
                    StrKind::Any => "any".into(),
                    StrKind::Glob(r) => format!("glob {}", r.re.as_str()),
                };
                if *cased {
                    format!("{k} (cased)")
                } else {
                    k
                }
            }
            ValueTest::Needles { ac, .. } => format!("needles {}", ac.needles().join(",")),
            ValueTest::Affixes(a) => format!("affixes {}", a.needles.len()),
            ValueTest::Regex(r) => format!("regex {}", r.re.as_str()),
            ValueTest::Cidr(_) => "cidr".into(),
            ValueTest::Num(op, n) => format!("{op:?} {n}"),
            ValueTest::Time(part, n) => format!("{part:?} {n}"),
        }
    }

    #[test]
    fn values_reduce_to_the_cheapest_exact_test() {
        let k = |key: &str, yaml: &str| tests(key, yaml).iter().map(kind).collect::<Vec<_>>();
        assert_eq!(k("Image", "C:\\X.exe"), ["exact c:\\x.exe"]);
        assert_eq!(k("Image|endswith", "\\CMD.exe"), ["suffix \\cmd.exe"]);
        assert_eq!(k("Image|contains|cased", "CMD"), ["contains CMD (cased)"]);
        assert_eq!(k("Image", "C:*x?.exe"), ["glob (?s)^c:.*x.\\.exe$"]);
        assert_eq!(k("Image", "'*'"), ["any"]);
        assert_eq!(k("CommandLine|re|i", "'a+b'"), ["regex (?i)a+b"]);
        assert_eq!(k("Count|gte", "5"), ["Gte 5"]);
        assert_eq!(k("Ip|cidr", "10.0.0.0/8"), ["cidr"]);
        assert_eq!(
            k("User|expand", "'%admins%'"),
            ["exact root", "exact admin"]
        );
        assert_eq!(
            k("CommandLine|contains", "[dd, a, ccc, b]"),
            ["needles a,b,dd,ccc"],
            "four substrings share an automaton, shortest first"
        );
        let nine: Vec<String> = (0..9).map(|i| format!("\\{i}.exe")).collect();
        assert_eq!(
            k("Image|endswith", &format!("[{}]", nine.join(", "))),
            ["affixes 9"]
        );
    }

    #[test]
    fn keywords_and_special_modifiers() {
        let t = entry("", "[whoami]").unwrap();
        assert_eq!(t.target, Target::Keywords);
        assert!(
            matches!(&t.check, Check::Any { tests, .. } if kind(&tests[0]) == "contains whoami")
        );
        assert!(matches!(
            entry("A|exists", "false").unwrap().check,
            Check::Exists(false)
        ));
        assert!(matches!(entry("A", "null").unwrap().check, Check::Absent));
        assert!(matches!(
            entry("A|fieldref|endswith", "B").unwrap().check,
            Check::FieldRef {
                kind: RefKind::Suffix,
                ..
            }
        ));
        assert!(entry("A|neq", "x").unwrap().negate);
        assert!(matches!(
            entry("A", "[x, null]").unwrap().check,
            Check::Any {
                or_absent: true,
                ..
            }
        ));
        assert!(
            matches!(entry("A|all|contains", "[x, y]").unwrap().check, Check::All(g) if g.len() == 2)
        );
    }

    #[test]
    fn expand_keeps_an_escaped_percent_literal() {
        let kinds =
            |yaml: &str| -> Vec<String> { tests("A|expand", yaml).iter().map(kind).collect() };
        assert_eq!(kinds("'%admins%'"), ["exact root", "exact admin"]);
        assert_eq!(
            kinds("'50\\% of %admins%'"),
            ["exact 50% of root", "exact 50% of admin"]
        );
        assert_eq!(kinds("'\\%admins\\%'"), ["exact %admins%"]);
        assert_eq!(kinds("'\\%admins%'"), ["exact %admins%"]);
        // An escaped backslash stays one for the wildcard parser; the % after it opens.
        assert_eq!(
            kinds("'x\\\\%admins%'"),
            ["exact x\\root", "exact x\\admin"]
        );
    }

    #[test]
    fn time_modifiers_compare_one_part_of_a_date() {
        assert_eq!(kind(&tests("TimeCreated|hour", "3")[0]), "Hour 3");
        assert_eq!(kind(&tests("T|week", "'12'")[0]), "Week 12");
        let t = tests("T|month", "[1, 12]");
        let v = |s: &'static str| crate::Value { raw: s, lower: s };
        assert!(t.iter().any(|t| t.is_match(v("2024-12-01T00:00:00Z"))));
        assert!(!t.iter().any(|t| t.is_match(v("2024-06-01T00:00:00Z"))));
        assert!(!t.iter().any(|t| t.is_match(v("not a date"))));
        let e = |key: &str, yaml: &str| entry(key, yaml).unwrap_err();
        assert_eq!(
            e("T|hour", "three"),
            "field 'T|hour': 'three' is not a number"
        );
        assert!(e("T|hour|contains", "3").contains("combine only with neq"));
        assert!(e("T|hour|day", "3").contains("only one time modifier"));
        assert!(entry("T|hour|neq", "3").unwrap().negate);
    }

    #[test]
    fn errors_name_the_field_and_the_problem() {
        let e = |key: &str, yaml: &str| entry(key, yaml).unwrap_err();
        assert_eq!(
            e("A|bogus", "x"),
            "field 'A|bogus': unknown modifier 'bogus'"
        );
        assert_eq!(e("A|", "x"), "field 'A|': empty modifier");
        assert_eq!(
            e("A|contains|endswith", "x"),
            "field 'A|contains|endswith': contains, startswith and endswith exclude each other"
        );
        assert_eq!(e("A|i", "x"), "field 'A|i': modifiers i, m and s need re");
        assert_eq!(e("A|gt", "x"), "field 'A|gt': 'x' is not a number");
        assert_eq!(
            e("A|exists", "x"),
            "field 'A|exists': exists takes true or false"
        );
        assert_eq!(e("A", "[]"), "field 'A': an empty list of values");
        assert_eq!(e("A", "[[x]]"), "field 'A': a list inside a list of values");
        assert_eq!(
            e("|fieldref", "B"),
            "field '|fieldref': fieldref needs a field"
        );
        assert_eq!(
            e("A|wide", "x"),
            "field 'A|wide': utf16 modifiers need base64 or base64offset"
        );
        assert_eq!(
            e("A|expand", "'%nobody%'"),
            "field 'A|expand': placeholder %nobody% has no values (add expand/nobody.txt to the config folder)"
        );
        let err = compile_entry("A|expand", &"%x%".into(), &ctx()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::NoPlaceholderValues(n) if n == "x"));
        assert_eq!(
            e("A|cidr", "10.0.0.0/40"),
            "field 'A|cidr': '10.0.0.0/40' has an invalid prefix length"
        );
    }
}
