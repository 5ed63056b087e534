//! Needles indexed by how they begin: a multi-needle search that costs next to nothing
//! to build, for the automata not worth building yet (`automaton.rs`).
//!
//! A needle of four bytes or more is filed under its first four; the search looks at
//! each position of the haystack, skips it unless its first two bytes begin some such
//! needle (a 64 Ki-bit table), and otherwise compares the needles filed under its four
//! bytes. Needles of fewer than four bytes are compared wherever their first byte
//! stands. Building costs a sort of the needles; a search costs a few instructions a
//! haystack byte and a comparison per needle filed where it looks, where an
//! Aho-Corasick automaton costs about 670 instructions a needle byte to build and less
//! to search. Each search counts what it cost, for its owner to weigh against a build.

use crate::fields::FxHashMap;

/// The bytes a needle is filed under.
const KEY: usize = 4;

/// What a search costs, in instructions (estimates, for `automaton.rs` to weigh
/// against a build): each position looked at, each table lookup, each needle compared.
const POSITION: u64 = 2;
const LOOKUP: u64 = 20;
const COMPARE: u64 = 25;

/// The index of a needle list (the needles themselves stay with their owner, which
/// passes them to each search).
#[derive(Debug)]
pub struct Anchors {
    /// Bit `b0 << 8 | b1` set when a needle of `KEY` bytes or more starts with `b0 b1`.
    pairs: Box<[u64]>,
    /// Needles of `KEY` bytes or more by their first `KEY` bytes: a range of `ids`.
    long: FxHashMap<u32, (u32, u32)>,
    ids: Box<[u32]>,
    /// Bit `b` set when a shorter needle starts with byte `b`.
    short_starts: [u64; 4],
    /// The shorter needles (not empty), in list order.
    short: Box<[u32]>,
    /// The empty needles (each occurs at every position).
    empty: Box<[u32]>,
}

/// The first `KEY` bytes of `b`, which holds at least that many.
#[inline]
fn key(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

#[inline]
fn bit(bits: &[u64], i: usize) -> bool {
    bits[i >> 6] >> (i & 63) & 1 == 1
}

fn set_bit(bits: &mut [u64], i: usize) {
    bits[i >> 6] |= 1 << (i & 63);
}

impl Anchors {
    /// The index of `needles`.
    pub fn new(needles: &[Box<str>]) -> Anchors {
        let mut pairs = vec![0u64; (1 << 16) / 64].into_boxed_slice();
        let mut short_starts = [0u64; 4];
        let mut short = Vec::new();
        let mut empty = Vec::new();
        let mut filed: Vec<(u32, u32)> = Vec::new();
        for (i, n) in needles.iter().enumerate() {
            let (b, i) = (n.as_bytes(), i as u32);
            if b.len() >= KEY {
                set_bit(&mut pairs, usize::from(b[0]) << 8 | usize::from(b[1]));
                filed.push((key(b), i));
            } else if let Some(&first) = b.first() {
                set_bit(&mut short_starts, usize::from(first));
                short.push(i);
            } else {
                empty.push(i);
            }
        }
        filed.sort_unstable();
        let mut long = FxHashMap::default();
        let mut start = 0;
        while start < filed.len() {
            let k = filed[start].0;
            let end = start + filed[start..].iter().take_while(|f| f.0 == k).count();
            long.insert(k, (start as u32, end as u32));
            start = end;
        }
        Anchors {
            pairs,
            long,
            ids: filed.into_iter().map(|(_, i)| i).collect(),
            short_starts,
            short: short.into_boxed_slice(),
            empty: empty.into_boxed_slice(),
        }
    }

    /// Calls `each` with every needle that occurs at `p` in `hay` (not in list order);
    /// adds what that cost to `cost`.
    #[inline]
    fn at(
        &self,
        needles: &[Box<str>],
        hay: &[u8],
        p: usize,
        cost: &mut u64,
        mut each: impl FnMut(u32),
    ) {
        *cost += POSITION;
        for &e in self.empty.iter() {
            each(e);
        }
        let Some(&b0) = hay.get(p) else { return };
        let rest = &hay[p..];
        if !self.short.is_empty() && bit(&self.short_starts, usize::from(b0)) {
            *cost += COMPARE * self.short.len() as u64;
            for &i in self.short.iter() {
                if rest.starts_with(needles[i as usize].as_bytes()) {
                    each(i);
                }
            }
        }
        if rest.len() >= KEY && bit(&self.pairs, usize::from(b0) << 8 | usize::from(rest[1])) {
            *cost += LOOKUP;
            if let Some(&(s, e)) = self.long.get(&key(rest)) {
                *cost += COMPARE * u64::from(e - s);
                for &i in &self.ids[s as usize..e as usize] {
                    if rest.starts_with(needles[i as usize].as_bytes()) {
                        each(i);
                    }
                }
            }
        }
    }

    /// Whether some needle occurs in `hay`; adds what the search cost to `cost`.
    pub fn is_match(&self, needles: &[Box<str>], hay: &str, cost: &mut u64) -> bool {
        if !self.empty.is_empty() {
            return true;
        }
        let hay = hay.as_bytes();
        let mut found = false;
        for p in 0..hay.len() {
            self.at(needles, hay, p, cost, |_| found = true);
            if found {
                return true;
            }
        }
        false
    }

    /// The needle that occurs first at or after `at`, and of those starting there the
    /// first in the list: (its index, where it starts); adds what the search cost to
    /// `cost`.
    pub fn find_from(
        &self,
        needles: &[Box<str>],
        hay: &str,
        at: usize,
        cost: &mut u64,
    ) -> Option<(usize, usize)> {
        let hay = hay.as_bytes();
        for p in at..=hay.len() {
            let mut first: Option<u32> = None;
            self.at(needles, hay, p, cost, |i| {
                first = Some(first.map_or(i, |f| f.min(i)))
            });
            if let Some(i) = first {
                return Some((i as usize, p));
            }
        }
        None
    }

    /// Calls `each` with (needle, start) for every occurrence of every needle in `hay`;
    /// adds what the search cost to `cost`.
    pub fn for_each(
        &self,
        needles: &[Box<str>],
        hay: &str,
        cost: &mut u64,
        mut each: impl FnMut(usize, usize),
    ) {
        let hay = hay.as_bytes();
        for p in 0..=hay.len() {
            self.at(needles, hay, p, cost, |i| each(i as usize, p));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(list: &[&str]) -> Box<[Box<str>]> {
        list.iter().map(|s| Box::from(*s)).collect()
    }

    /// Every (needle, start) by comparing every needle at every position.
    fn naive(list: &[Box<str>], hay: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for p in 0..=hay.len() {
            for (i, n) in list.iter().enumerate() {
                if hay.as_bytes()[p..].starts_with(n.as_bytes()) {
                    out.push((i, p));
                }
            }
        }
        out
    }

    #[test]
    fn finds_what_comparing_everywhere_finds() {
        let lists = [
            needles(&[
                "ab", "abcd", "abce", "b", "bcde", "zzzz", "é", "cmd.exe", "abcd",
            ]),
            needles(&["powershell", "pwsh", "-enc", "iex(", "x"]),
            needles(&["", "ab"]),
            needles(&["ab", "", "x", ""]),
            needles(&[]),
        ];
        let hays = [
            "",
            "a",
            "abcde",
            "xabcdabce",
            "zzzzz",
            "aébé",
            "c:\\windows\\cmd.exe /c pwsh -enc",
            "iex(iex(",
            "bcd",
        ];
        for list in &lists {
            let a = Anchors::new(list);
            for hay in hays {
                let want = naive(list, hay);
                let mut got = Vec::new();
                let mut cost = 0;
                a.for_each(list, hay, &mut cost, |i, p| got.push((i, p)));
                assert!(cost >= POSITION * (hay.len() as u64 + 1), "{cost}");
                got.sort_by_key(|&(i, p)| (p, i));
                assert_eq!(got, want, "{list:?} in {hay:?}");
                assert_eq!(
                    a.is_match(list, hay, &mut cost),
                    !want.is_empty(),
                    "{hay:?}"
                );
                for at in 0..=hay.len() + 1 {
                    let first = want
                        .iter()
                        .filter(|&&(_, p)| p >= at)
                        .min_by_key(|&&(i, p)| (p, i))
                        .copied();
                    assert_eq!(
                        a.find_from(list, hay, at, &mut cost),
                        first,
                        "{hay:?} at {at}"
                    );
                }
            }
        }
    }
}
