//! Many `startswith` or `endswith` values of one selection entry as one test: the
//! value's head (or tail) of each needle length is looked up in a hash set, so a list of
//! 400 file names costs a lookup per distinct length instead of 400 comparisons.

use crate::fields::FxHashSet;

/// Needles of one length.
type Bytes = FxHashSet<Box<[u8]>>;

/// Tests of this many affixes (of one kind and casing) or more are merged.
pub const MIN_AFFIXES: usize = 8;

/// A set of prefixes or suffixes. Written (in a rule set cache) as its needles; its
/// sets are made again when read.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(from = "Written<Vec<Box<str>>>")]
pub struct AffixSet {
    /// Suffixes (`endswith`); otherwise prefixes.
    pub suffix: bool,
    /// Compared with the raw value (otherwise the lowercased one).
    pub cased: bool,
    /// The needles, by length, shortest first.
    by_len: Box<[(usize, Bytes)]>,
    /// The needles themselves (for the rule-set prefilter).
    pub needles: Box<[Box<str>]>,
}

/// What an [`AffixSet`] is written as.
#[derive(serde::Serialize, serde::Deserialize)]
struct Written<N> {
    needles: N,
    suffix: bool,
    cased: bool,
}

impl From<Written<Vec<Box<str>>>> for AffixSet {
    fn from(w: Written<Vec<Box<str>>>) -> AffixSet {
        AffixSet::new(w.needles, w.suffix, w.cased)
    }
}

impl serde::Serialize for AffixSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let w = Written {
            needles: &self.needles,
            suffix: self.suffix,
            cased: self.cased,
        };
        serde::Serialize::serialize(&w, s)
    }
}

impl AffixSet {
    /// The set of `needles` (compared as given: already lowercased unless `cased`).
    pub fn new(needles: Vec<Box<str>>, suffix: bool, cased: bool) -> AffixSet {
        let mut by_len: Vec<(usize, Bytes)> = Vec::new();
        for n in &needles {
            let len = n.len();
            let i = match by_len.iter().position(|(l, _)| *l == len) {
                Some(i) => i,
                None => {
                    by_len.push((len, Bytes::default()));
                    by_len.len() - 1
                }
            };
            by_len[i].1.insert(n.as_bytes().into());
        }
        by_len.sort_by_key(|(l, _)| *l);
        AffixSet {
            suffix,
            cased,
            by_len: by_len.into_boxed_slice(),
            needles: needles.into_boxed_slice(),
        }
    }

    /// Whether `s` starts (or ends) with one of the needles.
    #[inline]
    pub fn is_match(&self, s: &str) -> bool {
        let b = s.as_bytes();
        for (len, set) in self.by_len.iter() {
            // Length prefilter: longer needles cannot match either.
            if *len > b.len() {
                return false;
            }
            let part = if self.suffix {
                &b[b.len() - len..]
            } else {
                &b[..*len]
            };
            if set.contains(part) {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(needles: &[&str], suffix: bool) -> AffixSet {
        AffixSet::new(needles.iter().map(|&n| n.into()).collect(), suffix, false)
    }

    #[test]
    fn suffixes_and_prefixes_of_several_lengths() {
        let s = set(&["\\a.dll", "\\bcrypt.dll", ".exe", "é"], true);
        assert!(s.is_match("c:\\windows\\bcrypt.dll"));
        assert!(s.is_match("x\\a.dll"));
        assert!(s.is_match("café"));
        assert!(s.is_match(".exe"));
        assert!(!s.is_match("c:\\windows\\bcrypt.dll.bak"));
        assert!(!s.is_match("a.dll"), "shorter than its needle");
        assert!(!s.is_match(""));
        let p = set(&["c:\\windows\\", "\\\\", "ü"], false);
        assert!(p.is_match("c:\\windows\\x"));
        assert!(p.is_match("\\\\host\\share"));
        assert!(p.is_match("über"));
        assert!(!p.is_match("d:\\windows\\"));
        // A needle length that splits a multi-byte character is compared as bytes.
        assert!(!p.is_match("aé"));
    }
}
