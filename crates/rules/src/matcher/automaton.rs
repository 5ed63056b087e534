//! Aho-Corasick automata built once searching without them has cost about what
//! building them is worth.
//!
//! The hayabusa rule set holds about a thousand needle automata (long OR-lists of
//! substrings, and one per field of every large bucket's prefilter); building them all
//! was a quarter of loading the rules, and a scan touches only the buckets of the
//! channels and EventIDs its logs hold. Most of those it touches it searches a few
//! times: on the attack corpus, 72% of the needle bytes built on first use were in
//! automata searched at most five times (a 260 KB prefilter five times, a 219 KB list
//! of driver hashes twice), and building them was a fifth of the run.
//!
//! So an [`Automaton`] first searches an index of its needles by their first bytes
//! ([`super::anchors`]), cheap to build and slower to search, adding up what the index
//! counts its searches cost, and builds the automaton (once, whichever thread gets
//! there first; the others wait for it) when that sum reaches a quarter of the
//! estimated cost of the build: a ski-rental rule, by which an automaton searched often
//! costs at most a quarter of a build more, and one searched a few times costs a few
//! searches instead of a build. The answers are the same either way (tested).
//! Should a build fail (the crate refuses automata past its state limits, which rule
//! files bounded to a few MiB do not reach), the index goes on being searched.

use super::anchors::Anchors;
use crate::fields::FxHashMap;
use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// How an automaton is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Build {
    /// A contiguous NFA with leftmost-first semantics (a value test: whether some needle
    /// occurs, and where the first one does, shortest needle first).
    FirstMatch,
    /// A contiguous NFA with the standard semantics, searched for every overlapping
    /// needle (a prefilter: every rule a value may admit).
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
    /// The index searched until then (and for good, should the build fail).
    anchors: OnceLock<Anchors>,
    /// Estimated instructions spent searching the index so far.
    spent: AtomicU64,
    /// Estimated instructions a build costs: when `spent` reaches it, build.
    build_cost: u64,
}

/// An automaton is built once searching without it has cost this fraction of the build.
/// Measured on the attack corpus and on five copies of it (instructions, one thread,
/// hayabusa rules): with `memmem` needle by needle, always built 2.83 G and 6.36 G, at
/// a whole build's cost 2.79 G and 6.59 G, at a quarter 2.60 G and 6.23 G; with the
/// index, charged by an estimate of 20 + 6 per byte, at half 2.23 G and 6.11 G; charged
/// what the index counts it did (the rule set from its cache, nested plans in), at half
/// 1.088 G and 3.723 G, at a quarter 1.061 G and 3.694 G (charging only what the index
/// cost beyond 3 instructions a byte left busy lists unbuilt: 1.30 G and 4.75 G).
const SEARCHED_BEFORE_BUILD: u64 = 4;

/// Instructions a build costs per needle byte (measured with cachegrind on the hayabusa
/// rules' automata: 906 KB of needles took 610 M instructions, about 670 a byte).
const BUILD_PER_BYTE: u64 = 670;

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
            anchors: OnceLock::new(),
            spent: AtomicU64::new(0),
            build_cost: bytes.saturating_mul(BUILD_PER_BYTE) / SEARCHED_BEFORE_BUILD,
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

    /// Whether it has been built.
    #[cfg(test)]
    pub fn is_built(&self) -> bool {
        self.0.built.get().is_some()
    }

    /// Makes this automaton the one of `shared` built from the same needles the same
    /// way, or enters it there.
    pub fn share(&mut self, shared: &mut SharedAutomata) {
        let key = (self.0.build, self.0.needles.clone());
        *self = shared.entry(key).or_insert_with(|| self.clone()).clone();
    }

    /// The automaton to search with: the built one, when it is built or searching the
    /// index has now cost what its build is worth; else the index.
    #[inline]
    fn get(&self) -> Engine<'_> {
        let inner = &*self.0;
        if let Some(built) = inner.built.get() {
            return built.as_ref().map_or_else(|| self.anchors(), Engine::Built);
        }
        if inner.spent.load(Ordering::Relaxed) < inner.build_cost {
            return self.anchors();
        }
        self.build_now()
            .map_or_else(|| self.anchors(), Engine::Built)
    }

    /// Charges a search of the index that cost `cost` to the build.
    fn charge(&self, cost: u64) {
        self.0.spent.fetch_add(cost, Ordering::Relaxed);
    }

    /// Needle `needle` found by the index at `start`.
    fn hit_at(&self, needle: usize, start: usize) -> Hit {
        Hit {
            needle,
            start,
            end: start + self.0.needles[needle].len(),
        }
    }

    /// The index, built on its first search.
    fn anchors(&self) -> Engine<'_> {
        Engine::Anchors(self.0.anchors.get_or_init(|| Anchors::new(&self.0.needles)))
    }

    /// Builds the automaton now (once), unless it is.
    fn build_now(&self) -> Option<&AhoCorasick> {
        let inner = &*self.0;
        inner
            .built
            .get_or_init(|| {
                let mut b = AhoCorasick::builder();
                match inner.build {
                    Build::FirstMatch => b
                        .kind(Some(AhoCorasickKind::ContiguousNFA))
                        .match_kind(MatchKind::LeftmostFirst),
                    // Not the crate's choice (a DFA for small lists: its build cost more
                    // than its search gave back), nor a non-contiguous NFA: as many
                    // instructions (1.060 G against 1.070 G on the attack corpus, 3.689 G
                    // against 3.700 G on five copies), but its scattered transitions
                    // made the 1.1 GB scan 9% slower (1.85 s against 1.68 s, medians of
                    // 5 interleaved runs).
                    Build::Overlapping => b.kind(Some(AhoCorasickKind::ContiguousNFA)),
                };

                b.build(inner.needles.iter().map(|n| n.as_bytes())).ok()
            })
            .as_ref()
    }

    /// Whether some needle occurs in `hay`.
    #[inline]
    pub fn is_match(&self, hay: &str) -> bool {
        match self.get() {
            Engine::Built(ac) => ac.is_match(hay),
            Engine::Anchors(a) => {
                let mut cost = 0;
                let found = a.is_match(&self.0.needles, hay, &mut cost);
                self.charge(cost);
                found
            }
        }
    }

    /// The first needle found at or after `at`, leftmost first; of the needles starting
    /// there, the first in the list (built [`Build::FirstMatch`]).
    pub fn find_from(&self, hay: &str, at: usize) -> Option<Hit> {
        if at > hay.len() {
            return None;
        }
        match self.get() {
            Engine::Built(ac) => ac.find(Input::new(hay).span(at..hay.len())).map(Hit::from),
            Engine::Anchors(a) => {
                let mut cost = 0;
                let found = a.find_from(&self.0.needles, hay, at, &mut cost);
                self.charge(cost);
                found.map(|(needle, start)| self.hit_at(needle, start))
            }
        }
    }

    /// Every occurrence of every needle in `hay`, overlapping ones too; `each` gets each
    /// needle's index and where it lies. The automaton searches only when built
    /// [`Build::Overlapping`]; the other kind is searched through the index.
    pub fn for_each_overlapping(&self, hay: &str, mut each: impl FnMut(Hit)) {
        let engine = match self.get() {
            // Of the other kind, the index: the same hits, and no refusal.
            Engine::Built(_) if self.0.build != Build::Overlapping => self.anchors(),
            engine => engine,
        };
        match engine {
            Engine::Built(ac) => ac.find_overlapping_iter(hay).for_each(|m| each(m.into())),
            Engine::Anchors(a) => {
                let mut cost = 0;
                a.for_each(&self.0.needles, hay, &mut cost, |needle, start| {
                    each(self.hit_at(needle, start))
                });
                self.charge(cost);
            }
        }
    }
}

impl From<aho_corasick::Match> for Hit {
    fn from(m: aho_corasick::Match) -> Hit {
        Hit {
            needle: m.pattern().as_usize(),
            start: m.start(),
            end: m.end(),
        }
    }
}

/// What a search runs on.
enum Engine<'a> {
    Built(&'a AhoCorasick),
    Anchors(&'a Anchors),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(list: &[&str]) -> Box<[Box<str>]> {
        list.iter().map(|s| Box::from(*s)).collect()
    }

    /// The index (searched before the build, and for good when a build fails) answers
    /// as the automaton does.
    fn unbuilt(list: &[&str], build: Build) -> Automaton {
        let a = Automaton::new(needles(list), build);
        a.0.built.set(None).unwrap();
        a
    }

    /// Built now, as it would be after enough searches.
    fn built(list: &[&str], build: Build) -> Automaton {
        let a = Automaton::new(needles(list), build);
        assert!(a.build_now().is_some());
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
        // 20 needle bytes cost 13,400 to build, a quarter of it 3,350; a search of this
        // value costs the index about 130 instructions: built after some 25 searches
        // (through either twin), not before.
        let mut searches = 0;
        while !a.is_built() {
            let twin = if searches % 2 == 0 { &a } else { &b };
            assert!(twin.is_match(hay) && !twin.is_match("explorer.exe"));
            searches += 2;
            assert!(searches < 1000, "never built");
        }
        assert!(searches > 10, "built after {searches} searches");
        assert!(b.is_built(), "built once, for both");
        assert!(!other.is_built());
        assert!(a.is_match(hay) && !a.is_match("explorer.exe"));
        // A long value pays for the build at once (charged after its search).
        let c = Automaton::new(needles(&list), Build::Overlapping);
        let mut hits = 0;
        c.for_each_overlapping(&"cmd".repeat(30_000), |_| hits += 1);
        assert_eq!(hits, 30_000);
        assert!(!c.is_built(), "charged after the search");
        c.for_each_overlapping("cmd", |_| hits += 1);
        assert!(c.is_built());
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
        // Empty needles, twice: each found at every position by both.
        let empties = ["", "b", ""];
        let built_e = built(&empties, Build::Overlapping);
        let fallback_e = unbuilt(&empties, Build::Overlapping);
        for hay in hays {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            built_e.for_each_overlapping(hay, |h| a.push(h));
            fallback_e.for_each_overlapping(hay, |h| b.push(h));
            a.sort_by_key(|h| (h.needle, h.start));
            b.sort_by_key(|h| (h.needle, h.start));
            assert_eq!(a, b, "{hay}");
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
