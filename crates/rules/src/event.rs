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
    if s.is_ascii() {
        let start = out.len();
        out.push_str(s);
        // ASCII lowercasing keeps UTF-8 valid.
        out[start..].make_ascii_lowercase();
    } else {
        out.extend(s.chars().flat_map(char::to_lowercase));
    }
}

/// `s` lowercased as [`push_lowercase`] does.
pub fn lowercase(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_lowercase(&mut out, s);
    out
}
