//! One compiled `Regex` per distinct pattern, shared by every rule that uses it.

use crate::error::{ErrorKind, RuleError};
use regex::{Regex, RegexBuilder};
use regex_automata::nfa::thompson;
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Most memory one compiled pattern may take (as the `regex` crate counts it); a rule
/// whose regex needs more is rejected. The largest real pattern (`\w{1,64}` in
/// SigmaHQ and Hayabusa rules) takes about a tenth of it. A pattern just under it
/// compiles in about 0.06 s to about 14 MB: one is cheap, many are what
/// [`REGEX_BUDGET`] bounds.
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;

/// Most compiled size (the sum of the distinct patterns' NFAs, as `regex-automata`
/// measures them) all the regexes of a rule set may take together. The full SigmaHQ
/// and Hayabusa rule sets take 2.5 MiB each (1.1 MiB of it one pattern); a regex
/// keeps about 3.7 times its NFA size in memory, so the budget bounds a rule set's
/// regexes to roughly 120 MB and a second of compiling.
pub const REGEX_BUDGET: usize = 32 << 20;

/// A compiled pattern and the literal texts one of which every match contains.
#[derive(Debug)]
pub struct CompiledRegex {
    /// The regex, built on first use.
    pub re: LazyRegex,
    /// Lowercase texts one of which occurs (case-insensitively) in every matching value;
    /// `None` when the pattern requires no literal (used by the rule-set prefilter).
    pub required: Option<Vec<Box<str>>>,
    /// When the whole pattern is `.{N,}` (a length test), what it asks.
    pub min_run: Option<MinRun>,
}

/// A regex built the first time it is searched. Its pattern was parsed, measured and
/// charged to the budget at load, so the build cannot fail for its size; patterns that
/// could (a failed measure, or a size near the limit) are built at load instead, where
/// an error rejects the rule. Loading the hayabusa rules compiled 352 regexes up front
/// (6% of the load), most of which a scan of one host never runs. (Shown as its
/// pattern: whether it is built yet is no part of what it is.)
pub struct LazyRegex {
    source: Box<str>,
    /// What is built instead of `source`, when less matches the same values
    /// ([`for_is_match`]).
    shorter: Option<Box<str>>,
    built: OnceLock<Option<Regex>>,
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.source).finish()
    }
}

/// The regex `source` compiles to, with the cache's limits.
fn build(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
}

impl LazyRegex {
    /// A regex of `source`, not built yet: one measured and built (or vouched for) by
    /// a load before, read back from the rule set cache.
    pub(crate) fn unbuilt(source: Box<str>, shorter: Option<Box<str>>) -> LazyRegex {
        LazyRegex {
            source,
            shorter,
            built: OnceLock::new(),
        }
    }

    /// The pattern.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The pattern built instead, when a shorter one matches the same values.
    pub(crate) fn shorter(&self) -> Option<&str> {
        self.shorter.as_deref()
    }

    /// Whether the regex matches somewhere in `hay`. A regex whose build failed (none
    /// has: see the type) matches nothing.
    #[inline]
    pub fn is_match(&self, hay: &str) -> bool {
        self.built
            .get_or_init(|| build(self.pattern()).ok())
            .as_ref()
            .is_some_and(|re| re.is_match(hay))
    }

    /// The pattern built.
    fn pattern(&self) -> &str {
        self.shorter.as_deref().unwrap_or(&self.source)
    }
}

/// A pattern that matches somewhere in a value exactly when `h` does, and repeats no
/// more than a match needs; `None` when that is `h`. A search only asks whether there
/// is a match, not where it ends, so at either end of the pattern a part that may match
/// nothing anywhere (`x*`, `(?:-p)?`) is dropped and a repetition is cut to its
/// minimum: `-k\s\w{1,64}(?:\s?(?:-p|-s))?` matches where `-k\s\w` does. That
/// pattern's 64 copies of Unicode's `\w` took 29 ms to build, 60% of all the regexes a
/// scan of the attack corpus builds, and the budget's measure of it another share.
pub fn for_is_match(h: &Hir) -> Option<Hir> {
    match h.kind() {
        HirKind::Capture(c) => for_is_match(&c.sub),
        HirKind::Alternation(branches) => {
            let shorter: Vec<Option<Hir>> = branches.iter().map(for_is_match).collect();
            shorter.iter().any(Option::is_some).then(|| {
                let each = shorter.into_iter().zip(branches);
                Hir::alternation(each.map(|(s, b)| s.unwrap_or_else(|| b.clone())).collect())
            })
        }
        HirKind::Repetition(_) => at_minimum(h),
        HirKind::Concat(items) => {
            let mut end = items.len();
            while end > 0 && empty_anywhere(&items[end - 1]) {
                end -= 1;
            }
            let mut start = 0;
            while start < end && empty_anywhere(&items[start]) {
                start += 1;
            }
            let mut kept = items[start..end].to_vec();
            let mut changed = kept.len() < items.len();
            if let Some(first) = kept.first_mut() {
                if let Some(cut) = at_minimum(first) {
                    *first = cut;
                    changed = true;
                }
            }
            if let Some(last) = kept.last_mut() {
                if let Some(cut) = at_minimum(last) {
                    *last = cut;
                    changed = true;
                }
            }
            changed.then(|| Hir::concat(kept))
        }
        _ => None,
    }
}

/// Whether `h` may match the empty text wherever it is (not a look-around, which may
/// match nothing only in some places).
fn empty_anywhere(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Empty => true,
        HirKind::Repetition(r) => r.min == 0,
        HirKind::Capture(c) => empty_anywhere(&c.sub),
        HirKind::Concat(items) => items.iter().all(empty_anywhere),
        HirKind::Alternation(branches) => branches.iter().any(empty_anywhere),
        _ => false,
    }
}

/// A repetition of more than its minimum, cut to exactly its minimum.
fn at_minimum(h: &Hir) -> Option<Hir> {
    match h.kind() {
        HirKind::Repetition(r) if r.max != Some(r.min) => {
            Some(Hir::repetition(regex_syntax::hir::Repetition {
                min: r.min,
                max: Some(r.min),
                greedy: r.greedy,
                sub: r.sub.clone(),
            }))
        }
        _ => None,
    }
}

/// Patterns measured at more than this are built at load, so that a build error is a
/// rule error there (the forward NFA measured is not the only automaton the regex
/// builds).
const EAGER_SIZE: usize = REGEX_SIZE_LIMIT / 8;

/// A pattern that only asks for `n` characters in a row: on one line (`.{N,}`), or
/// anywhere (`(?s).{N,}`). Tested by counting, which costs what reading the value costs,
/// where the compiled regex (N copies of `.`) took milliseconds on long values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MinRun {
    /// Characters in a row.
    pub n: usize,
    /// Whether a line feed breaks the run.
    pub lines: bool,
}

impl MinRun {
    /// Whether `v` holds the run, as the regex would find it.
    pub fn is_match(&self, v: &str) -> bool {
        // A character is at least one byte.
        if v.len() < self.n {
            return false;
        }
        if self.lines {
            v.split('\n')
                .any(|line| line.len() >= self.n && line.chars().count() >= self.n)
        } else {
            v.chars().count() >= self.n
        }
    }

    /// The length test a pattern's syntax tree is, if it is one: a greedy or lazy
    /// repetition, at least N and without a maximum, of any character, or of any
    /// character but a line feed.
    fn of(h: &Hir) -> Option<MinRun> {
        let HirKind::Repetition(r) = h.kind() else {
            return None;
        };
        let HirKind::Class(Class::Unicode(c)) = r.sub.kind() else {
            return None;
        };
        if r.max.is_some() {
            return None;
        }
        let ranges: Vec<(char, char)> = c.ranges().iter().map(|r| (r.start(), r.end())).collect();
        let lines = match ranges.as_slice() {
            [('\0', '\u{10FFFF}')] => false,
            [('\0', '\t'), ('\u{b}', '\u{10FFFF}')] => true,
            _ => return None,
        };
        Some(MinRun {
            n: r.min as usize,
            lines,
        })
    }
}

/// The single lowercase char every member of a class lowercases to, if there is one
/// (`[Ww]`, or a lone char): such a class stands for one letter of a case-insensitive
/// literal.
fn folded_char(c: &Class) -> Option<char> {
    let mut out: Option<char> = None;
    let mut each = |ch: char| -> bool {
        let mut l = ch.to_lowercase();
        let (Some(lc), None) = (l.next(), l.next()) else {
            return false;
        };
        match out {
            None => {
                out = Some(lc);
                true
            }
            Some(o) => o == lc,
        }
    };
    match c {
        Class::Unicode(u) => {
            for r in u.ranges() {
                if (r.end() as u32) - (r.start() as u32) > 4 {
                    return None;
                }
                for ch in r.start()..=r.end() {
                    if !each(ch) {
                        return None;
                    }
                }
            }
        }
        Class::Bytes(b) => {
            for r in b.ranges() {
                if r.end() - r.start() > 4 {
                    return None;
                }
                for byte in r.start()..=r.end() {
                    if !byte.is_ascii() || !each(char::from(byte)) {
                        return None;
                    }
                }
            }
        }
    }
    out
}

fn better(a: Option<Vec<Box<str>>>, b: Option<Vec<Box<str>>>) -> Option<Vec<Box<str>>> {
    let key = |v: &Vec<Box<str>>| v.iter().map(|s| s.chars().count()).min().unwrap_or(0);
    match (a, b) {
        (Some(a), Some(b)) => Some(if key(&b) > key(&a) { b } else { a }),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The literals (lowercase) one of which every match of `h` contains; `None` if none is
/// required. Sound by construction: only concatenated literal runs, every branch of an
/// alternation, and repetitions that must occur at least once contribute.
pub fn required_literals(h: &Hir) -> Option<Vec<Box<str>>> {
    match h.kind() {
        HirKind::Literal(l) => {
            let s = std::str::from_utf8(&l.0).ok()?;
            let low: String = s.chars().flat_map(char::to_lowercase).collect();
            (!low.is_empty()).then(|| vec![low.into_boxed_str()])
        }
        HirKind::Class(c) => folded_char(c).map(|c| vec![c.to_string().into_boxed_str()]),
        HirKind::Capture(c) => required_literals(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required_literals(&r.sub),
        HirKind::Concat(items) => {
            let mut best: Option<Vec<Box<str>>> = None;
            let mut run = String::new();
            let flush = |run: &mut String, best: &mut Option<Vec<Box<str>>>| {
                if !run.is_empty() {
                    *best = better(
                        best.take(),
                        Some(vec![std::mem::take(run).into_boxed_str()]),
                    );
                }
            };
            for item in items {
                let piece = match item.kind() {
                    HirKind::Literal(l) => std::str::from_utf8(&l.0)
                        .ok()
                        .map(|s| s.chars().flat_map(char::to_lowercase).collect::<String>()),
                    HirKind::Class(c) => folded_char(c).map(String::from),
                    _ => None,
                };
                match piece {
                    Some(p) => run.push_str(&p),
                    None => {
                        flush(&mut run, &mut best);
                        best = better(best, required_literals(item));
                    }
                }
            }
            flush(&mut run, &mut best);
            best
        }
        HirKind::Alternation(branches) => {
            let mut out = Vec::new();
            for b in branches {
                out.extend(required_literals(b)?);
            }
            Some(out)
        }
        _ => None,
    }
}

/// The load-time cache of compiled patterns. Compiled once per distinct source, never
/// per record.
///
/// Each pattern's size is measured (its NFA compiled alone, which costs a fraction of
/// the regex's compile and stops at the limit) and charged to a budget for the whole
/// rule set before the regex is built: a rule whose regex would pass it is rejected,
/// and the rules compiled before keep theirs. Rules compile in parallel, so which rule
/// meets a spent budget first may vary between runs; real rule sets use a small part
/// of it.
pub struct RegexCache {
    map: Mutex<HashMap<String, Arc<CompiledRegex>>>,
    /// Compiled size of the patterns in `map`, plus what compiles under way reserved.
    spent: AtomicUsize,
    /// The budget for `spent`.
    budget: usize,
}

impl Default for RegexCache {
    fn default() -> RegexCache {
        RegexCache::with_budget(REGEX_BUDGET)
    }
}

/// What measuring a pattern found.
#[derive(Debug, PartialEq, Eq)]
enum Measure {
    /// Its NFA's size, in bytes.
    Size(usize),
    /// Its NFA passes the limit.
    OverLimit,
    /// Its NFA cannot be built for another reason (building the regex says which).
    Invalid,
}

/// The size of the NFA a pattern's syntax tree compiles to, compiling it no further
/// than `limit`.
fn nfa_size(hir: &Hir, limit: usize) -> Measure {
    match thompson::Compiler::new()
        .configure(thompson::Config::new().nfa_size_limit(Some(limit)))
        .build_from_hir(hir)
    {
        Ok(nfa) => Measure::Size(nfa.memory_usage()),
        Err(e) if e.size_limit().is_some() => Measure::OverLimit,
        Err(_) => Measure::Invalid,
    }
}

impl RegexCache {
    /// A cache whose patterns may take `budget` bytes compiled, together.
    pub(crate) fn with_budget(budget: usize) -> RegexCache {
        RegexCache {
            map: Mutex::default(),
            spent: AtomicUsize::new(0),
            budget,
        }
    }

    /// The compiled regex for `source`, compiling it on first use.
    pub fn compile(&self, source: &str) -> Result<Arc<CompiledRegex>, RuleError> {
        if let Some(r) = self.lock().get(source) {
            return Ok(Arc::clone(r));
        }
        // Parsed once, for the size and the literals; a pattern that does not parse is
        // charged nothing (building it reports why).
        let hir = regex_syntax::parse(source).ok();
        let shorter = hir.as_ref().and_then(for_is_match);
        let size = match shorter.as_ref().or(hir.as_ref()) {
            Some(h) => self.reserve(source, h)?,
            None => 0,
        };
        let shorter = shorter.map(|h| h.to_string().into_boxed_str());
        let pattern = shorter.as_deref().unwrap_or(source);
        // Built now when the measure could not vouch for the build (a pattern that does
        // not parse or measure, or a large one), so that its error rejects the rule.
        let built = OnceLock::new();
        if size == 0 || size > EAGER_SIZE {
            match build(pattern) {
                Ok(re) => {
                    let _ = built.set(Some(re));
                }
                Err(error) => {
                    self.spent.fetch_sub(size, Ordering::AcqRel);
                    return Err(ErrorKind::Regex {
                        pattern: source.to_string(),
                        error,
                    }
                    .into());
                }
            }
        }
        let re = LazyRegex {
            source: source.into(),
            shorter,
            built,
        };
        // Literals of one or two characters filter nothing useful.
        let required = hir
            .as_ref()
            .and_then(required_literals)
            .filter(|r| r.iter().all(|s| s.chars().count() >= 3));
        let min_run = hir.as_ref().and_then(MinRun::of);
        let re = Arc::new(CompiledRegex {
            re,
            required,
            min_run,
        });
        let mut map = self.lock();
        if let Some(first) = map.get(source) {
            // Another rule compiled it meanwhile: it was charged once.
            self.spent.fetch_sub(size, Ordering::AcqRel);
            return Ok(Arc::clone(first));
        }
        map.insert(source.to_string(), Arc::clone(&re));
        Ok(re)
    }

    /// Measures `source` (parsed into `hir`) and charges its size to the budget; the
    /// size charged.
    fn reserve(&self, source: &str, hir: &Hir) -> Result<usize, RuleError> {
        let left = self
            .budget
            .saturating_sub(self.spent.load(Ordering::Acquire));
        let over_budget = || ErrorKind::RegexBudget {
            pattern: source.to_string(),
            left,
            limit: self.budget,
        };
        let size = match nfa_size(hir, REGEX_SIZE_LIMIT.min(left)) {
            Measure::Size(size) => size,
            Measure::OverLimit if left < REGEX_SIZE_LIMIT => return Err(over_budget().into()),
            Measure::OverLimit => {
                return Err(ErrorKind::RegexTooLarge {
                    pattern: source.to_string(),
                    limit: REGEX_SIZE_LIMIT,
                }
                .into())
            }
            // Not a size problem: building the regex reports it.
            Measure::Invalid => 0,
        };
        self.spent
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                s.checked_add(size).filter(|&t| t <= self.budget)
            })
            .map_err(|_| over_budget())?;
        Ok(size)
    }

    /// The compiled size (NFA bytes) of the distinct patterns.
    pub fn compiled_bytes(&self) -> usize {
        self.spent.load(Ordering::Acquire)
    }

    /// Number of distinct compiled patterns.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no pattern has been compiled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CompiledRegex>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl LazyRegex {
        /// Whether it has been built.
        pub(crate) fn is_built(&self) -> bool {
            self.built.get().is_some()
        }
    }

    impl RegexCache {
        /// [`RegexCache::compile`], the error as text.
        pub(crate) fn get(&self, source: &str) -> Result<Arc<CompiledRegex>, String> {
            self.compile(source).map_err(|e| e.to_string())
        }
    }

    #[test]
    fn a_shorter_pattern_matches_the_same_values() {
        let hays = [
            "",
            "-k",
            "-k ",
            "-k a",
            "-k é",
            "x -k abc -p",
            "-k\tz -s",
            "svchost.exe -k netsvcs",
            "ab",
            "aab",
            "abbb",
            "b",
            "abc\n",
            "xyz abc",
            "abcabc",
            "\n\nab",
            "a\nb",
        ];
        // (pattern, whether it is shortened)
        let cases = [
            (r"-k\s\w{1,64}(?:\s?(?:-p|-s))?", true),
            (r"a+", true),
            (r"a{2,}b", true),
            (r"ab*", true),
            (r"x*ab*", true),
            (r"(a+|b{2,5})", true),
            (r"^a+", true),
            (r"a+$", true),
            (r"\ba+\b", false),
            (r"a+\b", true),
            (r"(?m)^ab{1,3}$", false),
            (r"a*", true),
            (r"(?:a|)", false),
            (r"abc", false),
            (r"(?i)ABC+", true),
            (r"(?s)a.{0,5}b", false),
            (r"^.*abc.*$", false),
        ];
        for (pattern, shortened) in cases {
            let hir = regex_syntax::parse(pattern).unwrap();
            let shorter = for_is_match(&hir).map(|h| h.to_string());
            assert_eq!(shorter.is_some(), shortened, "{pattern}: {shorter:?}");
            let (Some(shorter), original) = (shorter, Regex::new(pattern).unwrap()) else {
                continue;
            };
            let cut = Regex::new(&shorter).unwrap();
            for hay in hays {
                assert_eq!(
                    original.is_match(hay),
                    cut.is_match(hay),
                    "{pattern} as {shorter} on {hay:?}"
                );
            }
        }
        // The pattern that prompted it measures a sixtieth of its size when shortened.
        let hir = regex_syntax::parse(r"-k\s\w{1,64}(?:\s?(?:-p|-s))?").unwrap();
        let (Measure::Size(long), Measure::Size(short)) = (
            nfa_size(&hir, REGEX_SIZE_LIMIT),
            nfa_size(&for_is_match(&hir).unwrap(), REGEX_SIZE_LIMIT),
        ) else {
            panic!("not measured")
        };
        assert!(short * 30 < long, "{short} vs {long}");
        let c = RegexCache::default();
        let r = c.get(r"-k\s\w{1,64}(?:\s?(?:-p|-s))?").unwrap();
        assert_eq!(r.re.as_str(), r"-k\s\w{1,64}(?:\s?(?:-p|-s))?");
        assert!(r.re.is_match("svchost.exe -k netsvcs") && !r.re.is_match("-k  x"));
    }

    #[test]
    fn length_patterns_are_counted_as_the_regex_matches() {
        let c = RegexCache::default();
        let values = [
            "",
            "abcd",
            "abcde",
            "ab\ncde",
            "abcde\n",
            "ab\ncdefg",
            "ab\r\ncdef",
            "ééééé",
            "éééé",
            "a\u{2028}bcd",
            "\n\n\n\n\n\n",
            "a\nb\nc\nd\ne\nf",
        ];
        for (pattern, run) in [
            (".{5,}", Some(MinRun { n: 5, lines: true })),
            (".{5,}?", Some(MinRun { n: 5, lines: true })),
            ("(?s).{5,}", Some(MinRun { n: 5, lines: false })),
            (".{0,}", Some(MinRun { n: 0, lines: true })),
            (".{5,9}", None),
            (".{5}", None),
            ("^.{5,}", None),
            ("a{5,}", None),
        ] {
            let r = c.get(pattern).unwrap();
            assert_eq!(r.min_run, run, "{pattern}");
            if let Some(run) = r.min_run {
                for v in values {
                    assert_eq!(run.is_match(v), r.re.is_match(v), "{pattern} on {v:?}");
                }
            }
        }
        let long = c.get(".{1000,}").unwrap();
        let run = long.min_run.expect("a length test");
        for v in [
            "x".repeat(999),
            "x".repeat(1000),
            format!("{}\n{}", "é".repeat(999), "y".repeat(999)),
        ] {
            assert_eq!(run.is_match(&v), long.re.is_match(&v));
        }
    }

    #[test]
    fn the_budget_rejects_a_pattern_that_would_pass_it_and_keeps_the_others() {
        let size = |p: &str| match nfa_size(&regex_syntax::parse(p).unwrap(), REGEX_SIZE_LIMIT) {
            Measure::Size(n) => n,
            other => panic!("{p}: {other:?}"),
        };
        let (first, second) = (size("xa+b"), size("xc{2,40}d"));
        let c = RegexCache::with_budget(first + second - 1);
        c.get("xa+b").unwrap();
        c.get("xa+b").unwrap();
        assert_eq!(c.compiled_bytes(), first, "charged once per pattern");
        let e = c.compile("xc{2,40}d").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::RegexBudget { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("regex 'xc{2,40}d' compiles to more than the ")
                && e.to_string().contains(" KiB left of the rule set's "),
            "{e}"
        );
        assert!(c.get("(unclosed").is_err());
        assert_eq!(
            c.compiled_bytes(),
            first,
            "a pattern that fails costs nothing"
        );
        assert_eq!(c.len(), 1);
        assert!(Arc::ptr_eq(
            &c.get("xa+b").unwrap(),
            &c.get("xa+b").unwrap()
        ));
        // A pattern past the limit for one regex says so, without building it (kept
        // from being shortened by what stands at its ends).
        let e = RegexCache::default().compile(r"x\w{1,2000}x").unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::RegexTooLarge { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            r"regex 'x\w{1,2000}x' compiles to more than 10240 KiB, the limit for one regex"
        );
    }

    #[test]
    fn regexes_are_built_on_first_search_and_bad_ones_rejected_at_load() {
        let c = RegexCache::default();
        let r = c.get(r"(?i)\\mimi[kc]atz\.exe$").unwrap();
        assert!(!r.re.is_built(), "measured and charged, not built");
        assert!(c.compiled_bytes() > 0);
        assert!(r.re.is_match(r"C:\Tools\MimiCatz.EXE"));
        assert!(r.re.is_built());
        assert!(!r.re.is_match("mimikatz.exe.txt"));
        // Errors are still the load's: a pattern that does not parse, or one over the
        // limit, is never left to fail at scan time.
        assert!(matches!(
            c.compile("(unclosed").unwrap_err().kind(),
            ErrorKind::Regex { .. }
        ));
        assert!(matches!(
            c.compile(r"x\w{1,2000}x").unwrap_err().kind(),
            ErrorKind::RegexTooLarge { .. }
        ));
        // A large pattern (over an eighth of the limit) is built at load.
        let big = c.get(r"x\w{1,150}x").unwrap();
        assert!(big.re.is_built(), "built at load");
    }

    #[test]
    fn one_regex_per_pattern() {
        let c = RegexCache::default();
        let a = c.get("a+b").unwrap();
        let b = c.get("a+b").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(c.len(), 1);
        assert!(c.get("(unclosed").is_err());
        let req = |p: &str| {
            c.get(p)
                .unwrap()
                .required
                .clone()
                .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        };
        // Under (?i), `s` also matches `ſ` (long s), which lowercases to itself: the run
        // must break there, or a value spelled with `ſ` would be filtered out wrongly.
        assert_eq!(
            req(r"(?i)\.exe[\x22']?\s+[^\x22]{0,64}werfaultsecure\.exe"),
            Some(vec!["ecure.exe".to_string()])
        );
        assert_eq!(
            req(r"(?i)\\mimikatz\.exe"),
            Some(vec!["\\mimikatz.exe".to_string()])
        );
        // The most selective requirement wins: `.exe` (4) over {cmd, powershell} (3).
        assert_eq!(req(r"(cmd|PowerShell)\.exe"), Some(vec![".exe".into()]));
        assert_eq!(
            req(r"(cmd|PowerShell)\d"),
            Some(vec!["cmd".into(), "powershell".into()])
        );
        assert_eq!(req(r"a+b"), None, "too short to filter");
        assert_eq!(
            req(r"(abc)?def"),
            Some(vec!["def".into()]),
            "an optional group requires nothing"
        );
        assert_eq!(req(r"x*\d+"), None);
        assert_eq!(req(r"(foo|\d+)bar"), Some(vec!["bar".into()]));
        assert!(
            c.get(r"\w{1000}{1000}").is_err(),
            "size limit rejects huge patterns"
        );
    }
}
