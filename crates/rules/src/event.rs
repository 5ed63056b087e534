//! The interface between compiled rules and the records they test.
//!
//! Rules never see EVTX or JSON: they see an [`Event`], which hands out each field's
//! values by [`FieldId`], each both as written and lowercased once per record.

use crate::fields::FieldId;

/// One value of a field: the text as recorded (trimmed) and its lowercase form.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    /// The value as the event holds it.
    pub raw: &'a str,
    /// The value lowercased (computed once per record, shared by every rule).
    pub lower: &'a str,
}

/// A record as rules see it.
pub trait Event {
    /// The values of a field (several for repeated elements such as unnamed `Data`).
    fn values(&self, field: FieldId) -> impl Iterator<Item = Value<'_>>;

    /// Every value of the record's event data and system fields, for keyword search.
    fn all_values(&self) -> impl Iterator<Item = Value<'_>>;

    /// Every value of [`Event::all_values`] laid end to end, in the same order: the
    /// lowercase forms, or the values as written when `cased`. Lets a keyword search scan
    /// a record once instead of value by value; `None` when the event does not keep its
    /// values so (the search then goes value by value).
    fn joined(&self, cased: bool) -> Option<&str> {
        let _ = cased;
        None
    }

    /// Whether bytes `start..end` of [`Event::joined`] lie within one value (a match
    /// across two values is not a match).
    fn within_one_value(&self, cased: bool, start: usize, end: usize) -> bool {
        let _ = (cased, start, end);
        false
    }

    /// Whether the field is present with at least one value.
    fn has(&self, field: FieldId) -> bool {
        self.values(field).next().is_some()
    }
}

/// Appends `s` lowercased character by character to `out`, without allocating: the one
/// definition of lowercase for record values (the engine's record view) and for needles
/// (the matcher), so the two always agree (the prefilter depends on it), even where
/// context-dependent rules such as Greek final sigma would differ.
pub fn push_lowercase(out: &mut String, s: &str) {
    push_lowercase_same_length(out, s);
}

/// [`push_lowercase`], saying whether every character's lowercase has the character's
/// own length: a position in `s` is then the same position in what was appended, and
/// each part of `s` lowercased alone is the matching part of it. ASCII runs are
/// lowercased a run at a time.
pub fn push_lowercase_same_length(out: &mut String, s: &str) -> bool {
    let mut same = true;
    let mut rest = s;
    loop {
        let ascii = ascii_prefix(rest.as_bytes());
        let start = out.len();
        out.push_str(&rest[..ascii]);
        // ASCII lowercasing keeps UTF-8 valid.
        out[start..].make_ascii_lowercase();
        rest = &rest[ascii..];
        let Some(c) = rest.chars().next() else {
            return same;
        };
        let before = out.len();
        out.extend(c.to_lowercase());
        same &= out.len() - before == c.len_utf8();
        rest = &rest[c.len_utf8()..];
    }
}

/// The length of `b`'s longest ASCII prefix, checked sixteen bytes at a time.
fn ascii_prefix(b: &[u8]) -> usize {
    let whole = b
        .chunks_exact(16)
        .take_while(|chunk| chunk.is_ascii())
        .count()
        * 16;
    whole
        + b[whole..]
            .iter()
            .position(|c| !c.is_ascii())
            .unwrap_or(b.len() - whole)
}

/// `s` lowercased as [`push_lowercase`] does.
pub fn lowercase(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_lowercase(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercasing_is_lowercasing_each_character_and_says_when_lengths_are_kept() {
        let pieces = [
            "",
            "aB",
            "Z",
            "À",
            "É",
            "ΩΣ",
            "İ",
            "ẞ",
            "¦",
            "日本",
            "\u{7f}",
            "K",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let s = format!("{a}{b}{c}");
                    let mut want = String::from("x");
                    want.extend(s.chars().flat_map(char::to_lowercase));
                    let mut got = String::from("x");
                    let same = push_lowercase_same_length(&mut got, &s);
                    assert_eq!(got, want, "{s:?}");
                    let kept = s.chars().all(|ch| {
                        ch.to_lowercase().map(char::len_utf8).sum::<usize>() == ch.len_utf8()
                    });
                    assert_eq!(same, kept, "{s:?}");
                }
            }
        }
    }
}
