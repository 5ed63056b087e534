//! Automata and regexes in a rule set cache: each written once, in a table, and
//! referred to by its number wherever a rule or a prefilter holds it.
//!
//! The loader gives every rule and bucket that needs the same automaton (or regex) one
//! shared instance, so that it is built once (`Automaton::share`, `RegexCache`). Written
//! as values, each would be written, read and built once per holder. Instead, while a
//! rule set is written ([`collecting`]), each automaton and regex met is entered in a
//! [`SharedTable`] and written as its number; while it is read ([`resolving`]), a number
//! is looked up in the table read before it: the set read back shares what the set
//! written shared, and nothing is built until first use, as after a load.
//!
//! The table lives in a thread-local for the length of the call, as serde gives
//! `Serialize` and `Deserialize` no other way to reach it; outside such a call an
//! automaton or regex cannot be written or read (an error, not a panic).

use super::automaton::{Automaton, Build};
use super::regex_cache::{CompiledRegex, LazyRegex, MinRun};
use crate::fields::FxHashMap;
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::RefCell;
use std::sync::Arc;

/// The automata and regexes of a rule set, by number.
#[derive(Debug, Default)]
pub struct SharedTable {
    automata: Vec<Automaton>,
    regexes: Vec<Arc<CompiledRegex>>,
}

/// While writing: the table, and the number of each instance entered (by address).
#[derive(Default)]
struct Numbering {
    table: SharedTable,
    automata: FxHashMap<usize, u32>,
    regexes: FxHashMap<usize, u32>,
}

thread_local! {
    static WRITING: RefCell<Option<Numbering>> = const { RefCell::new(None) };
    static READING: RefCell<Option<SharedTable>> = const { RefCell::new(None) };
}

/// Runs `write` (which serializes values holding automata and regexes) with each
/// automaton and regex written as a number; returns what it returned and the table
/// of what the numbers stand for.
pub fn collecting<R>(write: impl FnOnce() -> R) -> (R, SharedTable) {
    /// Empties the slot when the call ends, however it ends.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            WRITING.with(|w| w.borrow_mut().take());
        }
    }
    WRITING.with(|w| *w.borrow_mut() = Some(Numbering::default()));
    let _clear = Clear;
    let r = write();
    let table = WRITING.with(|w| w.borrow_mut().take());
    (r, table.map(|n| n.table).unwrap_or_default())
}

/// Runs `read` (which deserializes values written under [`collecting`]) with numbers
/// looked up in `table`; hands the table back.
pub fn resolving<R>(table: SharedTable, read: impl FnOnce() -> R) -> (R, SharedTable) {
    /// Empties the slot when the call ends, however it ends.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            READING.with(|r| r.borrow_mut().take());
        }
    }
    READING.with(|r| *r.borrow_mut() = Some(table));
    let _clear = Clear;
    let out = read();
    let table = READING.with(|r| r.borrow_mut().take());
    (out, table.unwrap_or_default())
}

#[cfg(test)]
impl SharedTable {
    /// How many automata and regexes.
    pub fn len(&self) -> (usize, usize) {
        (self.automata.len(), self.regexes.len())
    }
}

/// The number of `key` in `numbers`, entering `value` in `list` when new.
fn number<T: Clone>(
    numbers: &mut FxHashMap<usize, u32>,
    list: &mut Vec<T>,
    key: usize,
    value: &T,
) -> Option<u32> {
    if let Some(&n) = numbers.get(&key) {
        return Some(n);
    }
    let n = u32::try_from(list.len()).ok()?;
    list.push(value.clone());
    numbers.insert(key, n);
    Some(n)
}

impl Serialize for Automaton {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = WRITING.with(|w| {
            let mut w = w.borrow_mut();
            let w = w.as_mut()?;
            number(&mut w.automata, &mut w.table.automata, self.address(), self)
        });
        match n {
            Some(n) => s.serialize_u32(n),
            None => Err(S::Error::custom("an automaton written outside a rule set")),
        }
    }
}

impl<'de> Deserialize<'de> for Automaton {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Automaton, D::Error> {
        let n = u32::deserialize(d)? as usize;
        READING
            .with(|r| r.borrow().as_ref()?.automata.get(n).cloned())
            .ok_or_else(|| D::Error::custom("no such automaton"))
    }
}

/// `#[serde(with)]` for a shared compiled regex.
pub mod regex {
    use super::*;

    /// Writes the regex as its number.
    pub fn serialize<S: Serializer>(re: &Arc<CompiledRegex>, s: S) -> Result<S::Ok, S::Error> {
        let n = WRITING.with(|w| {
            let mut w = w.borrow_mut();
            let w = w.as_mut()?;
            let key = Arc::as_ptr(re) as usize;
            number(&mut w.regexes, &mut w.table.regexes, key, re)
        });
        match n {
            Some(n) => s.serialize_u32(n),
            None => Err(S::Error::custom("a regex written outside a rule set")),
        }
    }

    /// Reads a number as the regex it stands for.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<CompiledRegex>, D::Error> {
        let n = u32::deserialize(d)? as usize;
        READING
            .with(|r| r.borrow().as_ref()?.regexes.get(n).cloned())
            .ok_or_else(|| D::Error::custom("no such regex"))
    }
}

/// An automaton as written in the table: how it is built and its needles.
#[derive(Serialize, Deserialize)]
struct AutomatonEntry<N> {
    build: Build,
    needles: N,
}

/// A regex as written in the table: its pattern and what was learnt of it at load.
#[derive(Serialize, Deserialize)]
struct RegexEntry<S, R> {
    source: S,
    shorter: Option<S>,
    required: R,
    min_run: Option<MinRun>,
}

impl Serialize for SharedTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let automata: Vec<AutomatonEntry<&[Box<str>]>> = self
            .automata
            .iter()
            .map(|a| AutomatonEntry {
                build: a.build(),
                needles: a.needles(),
            })
            .collect();
        let regexes: Vec<RegexEntry<&str, &Option<Vec<Box<str>>>>> = self
            .regexes
            .iter()
            .map(|r| RegexEntry {
                source: r.re.as_str(),
                shorter: r.re.shorter(),
                required: &r.required,
                min_run: r.min_run,
            })
            .collect();
        (automata, regexes).serialize(s)
    }
}

impl<'de> Deserialize<'de> for SharedTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SharedTable, D::Error> {
        type Entries = (
            Vec<AutomatonEntry<Box<[Box<str>]>>>,
            Vec<RegexEntry<Box<str>, Option<Vec<Box<str>>>>>,
        );
        let (automata, regexes) = Entries::deserialize(d)?;
        Ok(SharedTable {
            automata: automata
                .into_iter()
                .map(|a| Automaton::new(a.needles, a.build))
                .collect(),
            regexes: regexes
                .into_iter()
                .map(|r| {
                    Arc::new(CompiledRegex {
                        re: LazyRegex::unbuilt(r.source, r.shorter),
                        required: r.required,
                        min_run: r.min_run,
                    })
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matcher::RegexCache;

    #[derive(Serialize, Deserialize)]
    struct Holder {
        automata: Vec<Automaton>,
        #[serde(with = "regex")]
        re: Arc<CompiledRegex>,
        #[serde(with = "regex")]
        again: Arc<CompiledRegex>,
    }

    #[test]
    fn shared_instances_are_written_once_and_read_back_shared_and_unbuilt() {
        let a = Automaton::new(
            vec!["cmd".into(), "wscript".into()].into(),
            Build::FirstMatch,
        );
        let b = Automaton::new(vec!["x".into()].into(), Build::Overlapping);
        let cache = RegexCache::default();
        let re = cache.get(r"(?i)\\mimi[kc]atz\.exe$").unwrap();
        assert!(re.re.is_match("c:\\mimikatz.exe"), "built before writing");
        let holder = Holder {
            automata: vec![a.clone(), b.clone(), a.clone()],
            re: re.clone(),
            again: re,
        };
        let (bytes, table) = collecting(|| postcard::to_stdvec(&holder).unwrap());
        assert_eq!(table.len(), (2, 1), "each once");
        let table_bytes = postcard::to_stdvec(&table).unwrap();
        let table: SharedTable = postcard::from_bytes(&table_bytes).unwrap();
        let (back, _) = resolving(table, || postcard::from_bytes::<Holder>(&bytes).unwrap());
        assert_eq!(
            back.automata[0].address(),
            back.automata[2].address(),
            "shared"
        );
        assert_ne!(back.automata[0].address(), back.automata[1].address());
        assert_eq!(back.automata[1].needles(), b.needles());
        assert_eq!(back.automata[1].build(), Build::Overlapping);
        assert!(!back.automata[0].is_built());
        assert!(Arc::ptr_eq(&back.re, &back.again));
        assert!(!back.re.re.is_built(), "built on first use, again");
        assert!(back.re.re.is_match("C:\\MimiCatz.EXE"));
        assert_eq!(back.re.required, holder.re.required);
        // A regex built from a shorter pattern keeps it.
        let long = cache.get(r"-k\s\w{1,64}(?:\s?(?:-p|-s))?").unwrap();
        assert!(long.re.shorter().is_some());
        let holder = Holder {
            automata: Vec::new(),
            re: long.clone(),
            again: long.clone(),
        };
        let (bytes, table) = collecting(|| postcard::to_stdvec(&holder).unwrap());
        let table_bytes = postcard::to_stdvec(&table).unwrap();
        let table: SharedTable = postcard::from_bytes(&table_bytes).unwrap();
        let (back, _) = resolving(table, || postcard::from_bytes::<Holder>(&bytes).unwrap());
        assert_eq!(back.re.re.as_str(), long.re.as_str());
        assert_eq!(back.re.re.shorter(), long.re.shorter());
        assert!(back.re.re.is_match("svchost.exe -k netsvcs") && !back.re.re.is_match("-k  x"));

        // Outside a call, or a number past the table: an error.
        assert!(postcard::to_stdvec(&holder).is_err());
        let (r, _) = resolving(SharedTable::default(), || {
            postcard::from_bytes::<Holder>(&bytes).is_err()
        });
        assert!(r);
    }
}
