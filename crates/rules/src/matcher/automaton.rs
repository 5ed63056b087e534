//! Aho-Corasick automata built the first time they are searched.
//!
//! The hayabusa rule set holds about a thousand needle automata (long OR-lists of
//! substrings, and one per field of every large bucket's prefilter); building them all
//! was a quarter of loading the rules, and a scan touches only the buckets of the
//! channels and EventIDs its logs hold. An [`Automaton`] keeps its needles and builds
//! on first use, once, whichever thread gets there first (the others wait for it).
//! Should a build ever fail (the crate refuses automata past its state limits, which
//! rule files bounded to a few MiB do not reach), the needles are searched one by one
//! with the same answers, only slower.

use crate::fields::FxHashMap;
use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};
use std::sync::{Arc, OnceLock};

/// How an automaton is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
/// ([`Automaton::share`]). In a rule set cache it is written once, as its needles and
/// way of building, and read back unbuilt (`matcher::shared`).
#[derive(Debug, Clone)]
pub struct Automaton(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    needles: Box<[Box<str>]>,
    build: Build,
    built: OnceLock<Option<AhoCorasick>>,
}

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
        Automaton(Arc::new(Inner {
            needles,
            build,
            built: OnceLock::new(),
        }))
    }

    /// The needles, in pattern order.
    pub fn needles(&self) -> &[Box<str>] {
        &self.0.needles
    }

    /// How it is built.
    pub fn build(&self) -> Build {
        self.0.build
    }

    /// What tells this automaton (and its clones, which share it) from others: the
    /// address of what they share.
    pub fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
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

    fn get(&self) -> Option<&AhoCorasick> {
        let inner = &*self.0;
        inner
            .built
            .get_or_init(|| {
                let mut b = AhoCorasick::builder();
                if inner.build == Build::FirstMatch {
                    b.kind(Some(AhoCorasickKind::ContiguousNFA))
                        .match_kind(MatchKind::LeftmostFirst);
                }
                b.build(inner.needles.iter().map(|n| n.as_bytes())).ok()
            })
            .as_ref()
    }

    /// Whether some needle occurs in `hay`.
    #[inline]
    pub fn is_match(&self, hay: &str) -> bool {
        match self.get() {
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
        match self.get() {
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
        match self.get().filter(|_| self.0.build == Build::Overlapping) {
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

    #[test]
    fn builds_on_first_search_only_and_once_for_equal_needles() {
        let list = ["cmd", "powershell", "wscript"];
        let mut a = Automaton::new(needles(&list), Build::FirstMatch);
        let mut b = Automaton::new(needles(&list), Build::FirstMatch);
        let mut other = Automaton::new(needles(&list), Build::Overlapping);
        let mut shared = SharedAutomata::default();
        for x in [&mut a, &mut b, &mut other] {
            x.share(&mut shared);
        }
        assert_eq!(shared.len(), 2, "one per needle list and way of building");
        assert!(!a.is_built());
        assert!(a.is_match("c:\\windows\\system32\\cmd.exe"));
        assert!(a.is_built() && b.is_built(), "built once, for both");
        assert!(!other.is_built());
        assert!(!a.is_match("explorer.exe"));
    }

    #[test]
    fn the_fallback_finds_what_the_automaton_finds() {
        let list = ["ab", "abc", "b", "bcd", "zz", "é"];
        let hays = ["", "xabcd", "bcd", "zzz", "abab", "aébé", "nothing", "b"];
        for build in [Build::FirstMatch, Build::Overlapping] {
            let built = Automaton::new(needles(&list), build);
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
        let built = Automaton::new(needles(&list), Build::FirstMatch);
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
