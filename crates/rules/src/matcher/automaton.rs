//! Aho-Corasick automata built once searching without them has cost about as much as
//! building them.
//!
//! The hayabusa rule set holds about a thousand needle automata (long OR-lists of
//! substrings, and one per field of every large bucket's prefilter); building them all
//! was a quarter of loading the rules, and a scan touches only the buckets of the
//! channels and EventIDs its logs hold. Most of those it touches it searches a few
//! times: on the attack corpus, 72% of the needle bytes built on first use were in
//! automata searched at most five times (a 260 KB prefilter five times, a 219 KB list
//! of driver hashes twice), and building them was a fifth of the run.
//!
//! So an [`Automaton`] first searches its needles one by one (`memmem`), adding up an
//! estimate of what that costs, and builds itself (once, whichever thread gets there
//! first; the others wait for it) when that sum reaches a quarter of the estimated
//! cost of the build (a ski-rental rule: an automaton searched often costs at most a
//! quarter more, one searched a few times costs a few searches instead of a build).
//! The answers are the same either way (tested). Should a build
//! fail (the crate refuses automata past its state limits, which rule files bounded to
//! a few MiB do not reach), the needles go on being searched one by one.

use crate::fields::FxHashMap;
use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// How an automaton is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Build {
    /// A contiguous NFA with leftmost-first semantics (a value test: whether some needle
    /// occurs, and where the first one does, shortest needle first).
    FirstMatch,
    /// The crate's default kind and semantics, searched for every overlapping needle
    /// (a prefilter: every rule a value may admit).
    Overlapping,
}

/// Needles and the automaton over them, built on first use. Clones share it (and
/// its build): the loader gives every rule with the same needle list one automaton
/// ([`Automaton::share`]).
#[derive(Debug, Clone)]
pub struct Automaton(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    needles: Box<[Box<str>]>,
    build: Build,
    built: OnceLock<Option<AhoCorasick>>,
    /// Estimated instructions spent searching needle by needle so far.
    spent: AtomicU64,
    /// Estimated instructions a build costs: when `spent` reaches it, build.
    build_cost: u64,
}

/// An automaton is built once searching without it has cost this fraction of the build
/// (1/4: each automaton it builds costs at most 1.25 builds). Measured on the attack
/// corpus and on five copies of it (instructions, one thread, hayabusa rules): always
/// built 2.83 G and 6.36 G, built at a whole build's cost 2.79 G and 6.59 G, at a
/// sixteenth 2.73 G and 6.38 G, at a quarter 2.60 G and 6.23 G.
const SEARCHED_BEFORE_BUILD: u64 = 4;

/// Instructions a build costs per needle byte (measured with cachegrind on the hayabusa
/// rules' automata: 906 KB of needles took 610 M instructions, about 670 a byte).
const BUILD_PER_BYTE: u64 = 670;

/// Instructions one `memmem` search costs beyond reading the haystack: its setup
/// (measured the same way: about 600 a needle on the attack corpus's values).
const SEARCH_SETUP: u64 = 600;

/// Haystack bytes one `memmem` search reads per instruction (a vector scan).
const SEARCH_BYTES_PER_INSTRUCTION: u64 = 8;

/// Automata by what they are built from, so that equal ones are built once.
pub type SharedAutomata = FxHashMap<(Build, Box<[Box<str>]>), Automaton>;

/// A needle found: its index in the needle list and where it lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Index of the needle.
    pub needle: usize,
    /// Start byte.
    pub start: usize,
    /// End byte (exclusive).
    pub end: usize,
}

impl Automaton {
    /// An automaton over `needles`, not built yet.
    pub fn new(needles: Box<[Box<str>]>, build: Build) -> Automaton {
        let bytes: u64 = needles.iter().map(|n| n.len() as u64).sum();
        Automaton(Arc::new(Inner {
            needles,
            build,
            built: OnceLock::new(),
            spent: AtomicU64::new(0),
            build_cost: bytes.saturating_mul(BUILD_PER_BYTE) / SEARCHED_BEFORE_BUILD,
        }))
    }

    /// The needles, in pattern order.
    pub fn needles(&self) -> &[Box<str>] {
        &self.0.needles
    }

    /// Whether it has been built (for tests and statistics).
    pub fn is_built(&self) -> bool {
        self.0.built.get().is_some()
    }

    /// Makes this automaton the one of `shared` built from the same needles the same
    /// way, or enters it there.
    pub fn share(&mut self, shared: &mut SharedAutomata) {
        let key = (self.0.build, self.0.needles.clone());
        *self = shared.entry(key).or_insert_with(|| self.clone()).clone();
    }

    /// The automaton, when it is built or searching `hay` needle by needle has now
    /// cost as much as building it would; `None`: search needle by needle.
    #[inline]
    fn get(&self, hay: &str) -> Option<&AhoCorasick> {
        let inner = &*self.0;
        if let Some(built) = inner.built.get() {
            return built.as_ref();
        }
        let search = (inner.needles.len() as u64)
            .saturating_mul(SEARCH_SETUP + hay.len() as u64 / SEARCH_BYTES_PER_INSTRUCTION);
        let spent = inner.spent.fetch_add(search, Ordering::Relaxed);
        if spent.saturating_add(search) < inner.build_cost {
            return None;
        }
        self.build()
    }

    /// Builds the automaton now (once), unless it is.
    fn build(&self) -> Option<&AhoCorasick> {
        let inner = &*self.0;
        inner
            .built
            .get_or_init(|| {
                let mut b = AhoCorasick::builder();
                match inner.build {
                    Build::FirstMatch => b
                        .kind(Some(AhoCorasickKind::ContiguousNFA))
                        .match_kind(MatchKind::LeftmostFirst),
                    // Its conversion to a contiguous NFA or a DFA cost more than the
                    // faster search it buys gave back, even over five copies of the
                    // attack corpus.
                    Build::Overlapping => b.kind(Some(AhoCorasickKind::NoncontiguousNFA)),
                };

                b.build(inner.needles.iter().map(|n| n.as_bytes())).ok()
            })
            .as_ref()
    }

    /// Whether some needle occurs in `hay`.
    #[inline]
    pub fn is_match(&self, hay: &str) -> bool {
        match self.get(hay) {
            Some(ac) => ac.is_match(hay),
            None => self.0.needles.iter().any(|n| hay.contains(&**n)),
        }
    }

    /// The first needle found at or after `at`, leftmost first; of the needles starting
    /// there, the first in the list (built [`Build::FirstMatch`]).
    pub fn find_from(&self, hay: &str, at: usize) -> Option<Hit> {
        if at > hay.len() {
            return None;
        }
        match self.get(hay) {
            Some(ac) => ac.find(Input::new(hay).span(at..hay.len())).map(|m| Hit {
                needle: m.pattern().as_usize(),
                start: m.start(),
                end: m.end(),
            }),
            None => self
                .0
                .needles
                .iter()
                .enumerate()
                .filter_map(|(i, n)| {
                    let start = at + find_bytes(&hay.as_bytes()[at..], n.as_bytes())?;
                    Some((start, i, n.len()))
                })
                .min_by_key(|&(start, i, _)| (start, i))
                .map(|(start, needle, len)| Hit {
                    needle,
                    start,
                    end: start + len,
                }),
        }
    }

    /// Every occurrence of every needle in `hay`, overlapping ones too; `each` gets each
    /// needle's index and where it lies. Only for an automaton built
    /// [`Build::Overlapping`] (the other kind is searched needle by needle).
    pub fn for_each_overlapping(&self, hay: &str, mut each: impl FnMut(Hit)) {
        // Of the other kind, the needles one by one: the same hits, and no refusal.
        match self.get(hay).filter(|_| self.0.build == Build::Overlapping) {
            Some(ac) => {
                for m in ac.find_overlapping_iter(hay) {
                    each(Hit {
                        needle: m.pattern().as_usize(),
                        start: m.start(),
                        end: m.end(),
                    });
                }
            }
            None => {
                for (i, n) in self.0.needles.iter().enumerate() {
                    let mut at = 0;
                    while let Some(p) = hay
                        .as_bytes()
                        .get(at..)
                        .and_then(|h| find_bytes(h, n.as_bytes()))
                    {
                        let start = at + p;
                        each(Hit {
                            needle: i,
                            start,
                            end: start + n.len(),
                        });
                        at = start + 1;
                    }
                }
            }
        }
    }
}

/// Where `needle` first occurs in `hay` (an empty needle at 0).
fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(hay, needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(list: &[&str]) -> Box<[Box<str>]> {
        list.iter().map(|s| Box::from(*s)).collect()
    }

    /// The fallback search (used when a build fails) answers as the automaton does.
    fn unbuilt(list: &[&str], build: Build) -> Automaton {
        let a = Automaton::new(needles(list), build);
        a.0.built.set(None).unwrap();
        a
    }

    /// Built now, as it would be after enough searches.
    fn built(list: &[&str], build: Build) -> Automaton {
        let a = Automaton::new(needles(list), build);
        assert!(a.build().is_some());
        a
    }

    #[test]
    fn builds_once_searching_without_it_cost_a_build_and_once_for_equal_needles() {
        let list = ["cmd", "powershell", "wscript"];
        let mut a = Automaton::new(needles(&list), Build::FirstMatch);
        let mut b = Automaton::new(needles(&list), Build::FirstMatch);
        let mut other = Automaton::new(needles(&list), Build::Overlapping);
        let mut shared = SharedAutomata::default();
        for x in [&mut a, &mut b, &mut other] {
            x.share(&mut shared);
        }
        assert_eq!(shared.len(), 2, "one per needle list and way of building");
        let hay = "c:\\windows\\system32\\cmd.exe";
        assert!(a.is_match(hay));
        assert!(!a.is_built(), "one search does not pay for a build");
        // 20 needle bytes cost 13,400 to build, a quarter of it 3,350; a search of three
        // needles in a short value about 3 × 603: built on the second search.
        assert!(!b.is_match("explorer.exe"));
        assert!(a.is_built(), "the second search, through its twin, builds");
        assert!(b.is_built(), "built once, for both");
        assert!(!other.is_built());
        assert!(a.is_match(hay) && !a.is_match("explorer.exe"));
        // A long value costs more to search needle by needle: fewer searches pay.
        let long = "x".repeat(100_000);
        let c = Automaton::new(needles(&list), Build::Overlapping);
        c.for_each_overlapping(&long, |_| panic!("no needle in it"));
        assert!(
            c.is_built(),
            "one search of 100 KB costs more than the build"
        );
    }

    #[test]
    fn the_fallback_finds_what_the_automaton_finds() {
        let list = ["ab", "abc", "b", "bcd", "zz", "é"];
        let hays = ["", "xabcd", "bcd", "zzz", "abab", "aébé", "nothing", "b"];
        for build in [Build::FirstMatch, Build::Overlapping] {
            let built = built(&list, build);
            let fallback = unbuilt(&list, build);
            for hay in hays {
                assert_eq!(built.is_match(hay), fallback.is_match(hay), "{hay}");
                if build == Build::Overlapping {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    built.for_each_overlapping(hay, |h| a.push(h));
                    fallback.for_each_overlapping(hay, |h| b.push(h));
                    a.sort_by_key(|h| (h.needle, h.start));
                    b.sort_by_key(|h| (h.needle, h.start));
                    assert_eq!(a, b, "{hay}");
                }
            }
        }
        // Leftmost first, then the first needle in the list (they are kept shortest
        // first): "ab" before "abc" at the same start.
        let built = built(&list, Build::FirstMatch);
        let fallback = unbuilt(&list, Build::FirstMatch);
        for hay in hays {
            for at in 0..=hay.len() + 1 {
                if !hay.is_char_boundary(at.min(hay.len())) {
                    continue;
                }
                assert_eq!(
                    built.find_from(hay, at),
                    fallback.find_from(hay, at),
                    "{hay} {at}"
                );
            }
        }
        assert_eq!(
            built.find_from("xabcd", 0),
            Some(Hit {
                needle: 0,
                start: 1,
                end: 3
            })
        );
    }
}
