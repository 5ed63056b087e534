//! The Details and ExtraFieldInfo columns: Hayabusa's `details:` templates with
//! `%Field%` placeholders, the `default_details.txt` fallback keyed by provider and
//! EventID, and the all-fields fallback. A template's items (`Cmdline: %CommandLine%`)
//! become the cell's items, each collapsed on its own ([`DetailsTemplate::render`]).
//!
//! Values are shown the way Hayabusa shows them, so that analysts can compare the two
//! tools' timelines cell for cell:
//! - typed values that the `evtx` crate renders differently from the parser Hayabusa
//!   uses are put back in that parser's form ([`legacy_form`]): GUIDs in upper case
//!   without braces, FILETIMEs with six fractional digits;
//! - field data mappings (`config/data_mapping/*.yaml`) rewrite some fields of some
//!   events ([`crate::render::data_mapping`]);
//! - control characters are dropped from Details values and become spaces in
//!   all-fields entries, and every run of whitespace becomes one space;
//! - an empty value shows as nothing, a missing field as `n/a`, an empty cell as `-`
//!   (by the encoders: the cell has no items).
//!
//! None of this changes what rules match: matching reads the recorded values.

use crate::items::ItemsBuf;
use crate::render::data_mapping::RecordMap;
use scanner_input::RecordView;
use scanner_rules::{Event, FieldId, FieldTable};
use std::borrow::Cow;

/// What separates a template's items, with whitespace on both sides: the rules'
/// `details:` texts (Hayabusa's syntax) write `Cmdline: %CommandLine% ¦ PID: %ProcessId%`.
/// The template is cut into its items once, as it is compiled; rendered items are kept
/// apart ([`ItemsBuf`]) and never joined with it again.
const ITEM_MARK: char = '¦';

/// What a Details placeholder shows for a field the record lacks.
pub const MISSING: &str = "n/a";

#[derive(Debug, Clone)]
enum Part {
    Lit(String),
    /// A field, and the name data mappings know it by (its path's last segment).
    Field(FieldId, String),
    /// `%Data[n]%`, and the name data mappings know it by.
    DataIndex(usize, String),
}

/// A compiled Details template: its items, each rendered into one item of the cell.
#[derive(Debug, Clone)]
pub struct DetailsTemplate {
    items: Vec<TemplateItem>,
}

/// One item of a template (`Cmdline: %CommandLine%`), without the whitespace at its
/// ends (which collapsing would drop).
#[derive(Debug, Clone)]
struct TemplateItem {
    parts: Vec<Part>,
    /// Where the item's label ends when its text is its parts as rendered: the first
    /// `:` of a literal it begins with, if that literal holds one.
    label: Option<usize>,
    /// Every literal part holds no whitespace but single spaces, none doubled
    /// ([`is_clean_literal`]): the rendered item then needs collapsing only where two
    /// parts meet, or at its ends.
    clean_literals: bool,
}

/// The texts of a Details template's items (`Cmdline: %CommandLine%`): `text` cut at
/// every [`ITEM_MARK`] with whitespace on both sides and text beyond it on both sides,
/// each piece trimmed; any other mark (at either end, or the second of two in a row)
/// is text. The one reader of the templates' syntax.
pub fn template_items(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut from = 0;
        while let Some(at) = rest[from..].find(ITEM_MARK).map(|i| from + i) {
            let after = at + ITEM_MARK.len_utf8();
            let spaced = |c: Option<char>| c.is_some_and(char::is_whitespace);
            let (before, beyond) = (&rest[..at], &rest[after..]);
            if spaced(before.chars().next_back())
                && spaced(beyond.chars().next())
                && !before.trim().is_empty()
                && !beyond.trim().is_empty()
            {
                let item = &rest[..at];
                rest = &rest[after..];
                return Some(item.trim());
            }
            from = after;
        }
        done = true;
        Some(rest.trim())
    })
}

impl TemplateItem {
    /// Compiles one item's text, interning every placeholder's field.
    fn compile(text: &str, fields: &mut FieldTable) -> TemplateItem {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find('%') {
            let after = &rest[start + 1..];
            let Some(len) = after.find('%') else { break };
            let name = &after[..len];
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_[]".contains(c));
            if !valid {
                parts.push(Part::Lit(rest[..start + 1].to_string()));
                rest = after;
                continue;
            }
            if start > 0 {
                parts.push(Part::Lit(rest[..start].to_string()));
            }
            let data_index = name
                .strip_prefix("Data[")
                .and_then(|n| n.strip_suffix(']'))
                .and_then(|n| n.parse::<usize>().ok());
            parts.push(match data_index {
                Some(n) => Part::DataIndex(n, format!("Data[{n}]")),
                None => {
                    let path = fields.path_of(name);
                    let leaf = path.rsplit('.').next().unwrap_or(name).to_string();
                    Part::Field(fields.intern(name), leaf)
                }
            });
            rest = &after[len + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.to_string()));
        }
        let clean_literals = parts.iter().all(|p| match p {
            Part::Lit(s) => is_clean_literal(s),
            Part::Field(..) | Part::DataIndex(..) => true,
        });
        let label = match parts.first() {
            Some(Part::Lit(s)) => s.find(':'),
            _ => None,
        };
        TemplateItem {
            parts,
            label,
            clean_literals,
        }
    }

    /// Appends the item's text, before collapsing, to `shown`; whether it is collapsed
    /// already. Every part is (values are collapsed as they are shown; literals when
    /// clean), so only where a part ending in a space meets one starting with a space,
    /// or at the item's ends, can it not be.
    fn render_raw(
        &self,
        view: &RecordView,
        data: FieldId,
        map: &RecordMap,
        shown: &mut Shown,
    ) -> bool {
        let start = shown.text.len();
        let mut collapsed = self.clean_literals;
        for p in &self.parts {
            let before = shown.text.len();
            let after_space = before > start && shown.text.ends_with(' ');
            match p {
                Part::Lit(s) => shown.text.push_str(s),
                Part::Field(f, name) => {
                    let mut vals = view.shown_values(*f).map(|v| v.raw);
                    match (vals.next(), vals.next()) {
                        (None, _) => shown.text.push_str(MISSING),
                        (Some(v), None) => shown.push_value(name, v, map),
                        (Some(a), Some(b)) => {
                            // Several values (unnamed `Data` elements): compact JSON
                            // array text, as Hayabusa prints an array.
                            let mut all = String::from("[");
                            for (i, v) in [a, b].into_iter().chain(vals).enumerate() {
                                if i > 0 {
                                    all.push(',');
                                }
                                let v = detail_value(name, v, map, &mut shown.legacy);
                                push_json_string(&v, &mut all);
                            }
                            all.push(']');
                            shown.push_shown(&all)
                        }
                    }
                }
                Part::DataIndex(n, name) => match view.values(data).nth(n.saturating_sub(1)) {
                    Some(v) if *n > 0 => shown.push_value(name, v.raw, map),
                    _ => shown.text.push_str(MISSING),
                },
            }
            collapsed &= !(after_space && shown.text[before..].starts_with(' '));
        }
        let text = &shown.text[start..];
        collapsed && !text.starts_with(' ') && !text.ends_with(' ')
    }
}

impl DetailsTemplate {
    /// Compiles `text`, interning every placeholder's field.
    pub fn compile(text: &str, fields: &mut FieldTable) -> DetailsTemplate {
        DetailsTemplate {
            items: template_items(text)
                .map(|t| TemplateItem::compile(t, fields))
                .collect(),
        }
    }

    /// Renders the template for a record into `out` (emptied first), one item of the
    /// cell per item of the template, whitespace collapsed. An item left with no text
    /// is left out, and a cell whose only item is `-` (Hayabusa's sign of nothing) has
    /// no items. `data` is the id of the unnamed `Data` field, `map` the record's field
    /// data mappings; `shown` is refilled with every value shown.
    pub fn render(
        &self,
        view: &RecordView,
        data: FieldId,
        map: &RecordMap,
        out: &mut ItemsBuf,
        shown: &mut Shown,
    ) {
        shown.clear();
        out.clear();
        for item in &self.items {
            let start = shown.text.len();
            let collapsed = item.render_raw(view, data, map, shown);
            let text = &shown.text[start..];
            if text.is_empty() {
                continue;
            }
            let o = out.text_mut();
            if collapsed {
                o.push_str(text);
                // The text is as rendered: where its label ends is known.
                match item.label {
                    Some(label) => out.close_labelled(label),
                    None => out.close(),
                }
                continue;
            }
            let before = o.len();
            if shown.keep_line_breaks {
                squeeze_spaces_into(text, o);
            } else {
                push_collapsed(text, o);
            }
            if o.len() > before {
                out.close();
            }
        }
        if out.len() == 1 && out.text() == "-" {
            out.clear();
        }
    }
}

/// Appends `v` as a JSON string literal (quoted, escaped as serde_json writes it).
fn push_json_string(v: &str, out: &mut String) {
    use std::fmt::Write;
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The text a Details template rendered before its whitespace was collapsed, and the
/// values it showed (which ExtraFieldInfo leaves out). Reused from record to record.
#[derive(Debug, Default)]
pub struct Shown {
    text: String,
    values: Vec<(u32, u32)>,
    /// A bit per shown value's length (modulo 64): most texts are told apart by it.
    lengths: u64,
    /// A value's legacy form, while it is shown.
    legacy: String,
    /// Values and items keep their tabs and line breaks (spaces squeezed, ends
    /// trimmed) instead of having every run of whitespace collapsed.
    pub(crate) keep_line_breaks: bool,
}

impl Shown {
    fn clear(&mut self) {
        self.text.clear();
        self.values.clear();
        self.lengths = 0;
    }

    /// Appends a value with its whitespace collapsed (or squeezed, with
    /// [`Self::keep_line_breaks`]) and records it as shown.
    pub fn push_shown(&mut self, v: &str) {
        let keep = self.keep_line_breaks;
        push_shown_into(&mut self.text, &mut self.values, &mut self.lengths, v, keep);
    }

    /// Shows one field value as [`detail_value`] renders it.
    fn push_value(&mut self, name: &str, raw: &str, map: &RecordMap) {
        let v = detail_value(name, raw, map, &mut self.legacy);
        let keep = self.keep_line_breaks;
        push_shown_into(
            &mut self.text,
            &mut self.values,
            &mut self.lengths,
            &v,
            keep,
        );
    }

    /// Whether `exact` is a value shown (a trailing comma of the shown value ignored).
    pub fn contains(&self, exact: &str) -> bool {
        if self.lengths & length_bit(exact.len()) == 0 {
            return false;
        }
        self.values.iter().any(|&(a, b)| {
            (b - a) as usize == exact.len() && &self.text[a as usize..b as usize] == exact
        })
    }
}

/// [`Shown::push_shown`] on its parts.
fn push_shown_into(
    text: &mut String,
    values: &mut Vec<(u32, u32)>,
    lengths: &mut u64,
    v: &str,
    keep_line_breaks: bool,
) {
    let start = text.len();
    if keep_line_breaks {
        squeeze_spaces_into(v, text);
    } else {
        push_collapsed(v, text);
    }
    // Kept without its trailing commas, as `contains` compares it.
    let kept = text[start..].trim_end_matches(',').len();
    values.push((start as u32, (start + kept) as u32));
    *lengths |= length_bit(kept);
}

/// The bit of [`Shown::lengths`] for a text of `len` bytes.
fn length_bit(len: usize) -> u64 {
    1 << (len % 64)
}

/// A value as a Details placeholder shows it, before whitespace is collapsed:
/// legacy typed form (written into `buf` when it differs), data mapping, control
/// characters dropped.
fn detail_value<'v>(
    name: &str,
    raw: &'v str,
    map: &RecordMap,
    buf: &'v mut String,
) -> Cow<'v, str> {
    let v = legacy_form_in(raw, buf);
    drop_controls(map.apply(name, v))
}

/// `v` without control characters other than tab, CR and LF.
fn drop_controls(v: Cow<'_, str>) -> Cow<'_, str> {
    // ASCII text: its control characters found on bytes, in a pass the compiler
    // vectorises.
    let dropped = if v.is_ascii() {
        v.bytes().fold(false, |d, c| {
            d | ((c < 0x20) & !matches!(c, b'\t' | b'\r' | b'\n')) | (c == 0x7f)
        })
    } else {
        v.chars().any(is_dropped_control)
    };
    if dropped {
        Cow::Owned(v.chars().filter(|c| !is_dropped_control(*c)).collect())
    } else {
        v
    }
}

/// Control characters other than the whitespace ones (tab, CR, LF).
fn is_dropped_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\r' | '\n')
}

/// Whether `b` is printable ASCII with single inner spaces and none at its ends: the
/// common value, which collapsing and squeezing leave as it is.
#[inline]
fn is_plain(b: &[u8]) -> bool {
    let printable = |c: u8| c.wrapping_sub(0x20) < 0x5f;
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return true;
    };
    // One pass over each byte and the one before it, without early exits (which the
    // compiler vectorises): every byte printable, no two spaces in a row.
    first != b' '
        && last != b' '
        && printable(first)
        && !b[..b.len() - 1]
            .iter()
            .zip(&b[1..])
            .fold(false, |bad, (&x, &y)| {
                bad | !printable(y) | ((x == b' ') & (y == b' '))
            })
}

/// Whether `b` (UTF-8) holds a whitespace character outside ASCII (U+0085, U+00A0,
/// U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), by its encoding.
fn has_wide_space(b: &[u8]) -> bool {
    // First, in a pass without early exits (vectorised), whether any two bytes start
    // one of them (most non-ASCII text, `é` for one, holds none).
    let lead = b.len() > 1
        && b[..b.len() - 1]
            .iter()
            .zip(&b[1..])
            .fold(false, |found, (&x, &y)| {
                found
                    | ((x == 0xC2) & ((y == 0x85) | (y == 0xA0)))
                    | ((x == 0xE1) & (y == 0x9A))
                    | ((x == 0xE2) & ((y == 0x80) | (y == 0x81)))
                    | ((x == 0xE3) & (y == 0x80))
            });
    lead && (0..b.len()).any(|i| b[i] >= 0x80 && whitespace_width(b, i) > 0)
}

/// The length of the whitespace character (as `char::is_whitespace` says) that starts
/// at byte `i` of `b` (UTF-8), or 0 when none does (a continuation byte is none).
#[inline]
fn whitespace_width(b: &[u8], i: usize) -> usize {
    match b[i] {
        b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r' => 1,
        0xC2 if matches!(b.get(i + 1), Some(0x85 | 0xA0)) => 2,
        0xE1 if b.get(i + 1..i + 3) == Some(&[0x9A, 0x80]) => 3,
        0xE2 => match (b.get(i + 1), b.get(i + 2)) {
            (Some(0x80), Some(0x80..=0x8A | 0xA8 | 0xA9 | 0xAF)) | (Some(0x81), Some(0x9F)) => 3,
            _ => 0,
        },
        0xE3 if b.get(i + 1..i + 3) == Some(&[0x80, 0x80]) => 3,
        _ => 0,
    }
}

/// Whether collapsing whitespace leaves `v` as it is: its only whitespace is single
/// spaces between other characters. Decided on bytes, in passes without early exits
/// (which the compiler vectorises); values and template texts are often not ASCII, so
/// this must not need it.
fn is_collapsed(v: &str) -> bool {
    let b = v.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return true;
    };
    if first == b' ' || last == b' ' {
        return false;
    }
    // Tab, line feed, vertical tab, form feed, carriage return, two spaces in a row;
    // and any byte >= 0x80. One pass over each byte and the one before it.
    let (bad, high) = b[..b.len() - 1].iter().zip(&b[1..]).fold(
        (first.wrapping_sub(0x09) < 5, first),
        |(bad, high), (&x, &y)| {
            (
                bad | (y.wrapping_sub(0x09) < 5) | ((x == b' ') & (y == b' ')),
                high | y,
            )
        },
    );
    !bad && (high < 0x80 || !has_wide_space(b))
}

/// Whether a Details template's literal text holds no whitespace but single spaces,
/// none doubled (one may be at either end).
fn is_clean_literal(s: &str) -> bool {
    let inner = s.strip_prefix(' ').unwrap_or(s);
    let inner = inner.strip_suffix(' ').unwrap_or(inner);
    !s.contains("  ") && is_collapsed(inner)
}

/// Appends `v` with every run of whitespace turned into one space, trimmed.
pub fn push_collapsed(v: &str, out: &mut String) {
    if is_collapsed(v) {
        out.push_str(v);
        return;
    }
    // The words between whitespace copied a run at a time, on bytes.
    let b = v.as_bytes();
    let start = out.len();
    let mut push_word = |word: &str| {
        if out.len() > start {
            out.push(' ');
        }
        out.push_str(word);
    };
    let (mut run, mut i) = (0, 0);
    while i < b.len() {
        let width = whitespace_width(b, i);
        if width == 0 {
            i += 1;
            continue;
        }
        if run < i {
            push_word(&v[run..i]);
        }
        i += width;
        run = i;
    }
    if run < b.len() {
        push_word(&v[run..]);
    }
}

/// Whether collapsing `v`'s whitespace (as [`push_collapsed`]) changes it; when it
/// does, the collapsed form is appended to `out`.
pub fn collapse_into(v: &str, out: &mut String) -> bool {
    let clean = is_collapsed(v);
    if !clean {
        push_collapsed(v, out);
    }
    !clean
}

/// The form Hayabusa's EVTX parser gives a typed value that the `evtx` crate renders
/// differently: a GUID (`{365abb72-ac09-…}`) in upper case without braces
/// (`365ABB72-AC09-…`), a FILETIME (`…T16:10:39.0000000Z`) with six fractional digits
/// (`…T16:10:39.000000Z`, truncated). Only a whole value of exactly that shape is
/// changed: the same text inside a longer string is kept as recorded.
#[cfg(test)]
fn legacy_form(v: &str) -> Cow<'_, str> {
    let mut buf = String::new();
    if push_legacy(v, &mut buf) {
        Cow::Owned(buf)
    } else {
        Cow::Borrowed(v)
    }
}

/// The legacy form of `v` (see the tests' `legacy_form`) into a reused buffer: `v` itself, or its legacy form written into
/// `buf` (cleared first).
pub fn legacy_form_in<'a>(v: &'a str, buf: &'a mut String) -> &'a str {
    buf.clear();
    if push_legacy(v, buf) {
        buf
    } else {
        v
    }
}

/// Appends `v`'s legacy form to `out` when it has one other than itself; whether it did.
fn push_legacy(v: &str, out: &mut String) -> bool {
    if let Some(inner) = v.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        if is_lower_guid(inner) {
            let start = out.len();
            out.push_str(inner);
            out[start..].make_ascii_uppercase();
            return true;
        }
    }
    if is_filetime_7(v) {
        out.push_str(&v[..v.len() - 2]);
        out.push('Z');
        return true;
    }
    false
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lower-case hexadecimal.
fn is_lower_guid(s: &str) -> bool {
    let b = s.as_bytes();
    // Dashes where they belong, and none elsewhere: four dashes in all, every other
    // byte a lowercase hex digit (counted in one pass without early exits, which the
    // compiler vectorises).
    let (ok, dashes) = b.iter().fold((true, 0u32), |(ok, dashes), &c| {
        let hex = c.is_ascii_digit() | (c.wrapping_sub(b'a') < 6);
        (ok & (hex | (c == b'-')), dashes + u32::from(c == b'-'))
    });
    b.len() == 36 && ok && dashes == 4 && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-')
}

/// `YYYY-MM-DDTHH:MM:SS.fffffffZ`, the `evtx` crate's rendering of a FILETIME.
fn is_filetime_7(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 28
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            27 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// Appends `v` with control characters other than tab, CR and LF as spaces, runs of
/// spaces as one and no spaces at either end; tabs and line breaks are kept. Returns
/// whether `v` was copied as it was: printable ASCII, no space to squeeze, and so no
/// whitespace other than single inner spaces.
pub fn squeeze_spaces_into(v: &str, out: &mut String) -> bool {
    // Most values are printable ASCII with single inner spaces: copied as they are.
    if is_plain(v.as_bytes()) {
        out.push_str(v);
        return true;
    }
    // Otherwise the text between spaces and dropped controls is copied a run at a
    // time, one space put between two runs that had any between them.
    let b = v.as_bytes();
    let start = out.len();
    let (mut run, mut i, mut gap) = (0, 0, false);
    while i < b.len() {
        let width = match b[i] {
            b' ' | 0x7f => 1,
            c if c < 0x20 && !matches!(c, b'\t' | b'\r' | b'\n') => 1,
            // U+0080-U+009F, the C1 controls.
            0xC2 if b.get(i + 1).is_some_and(|n| (0x80..0xA0).contains(n)) => 2,
            _ => {
                i += 1;
                continue;
            }
        };
        if run < i {
            if gap && out.len() > start {
                out.push(' ');
            }
            out.push_str(&v[run..i]);
        }
        gap = true;
        i += width;
        run = i;
    }
    if run < b.len() {
        if gap && out.len() > start {
            out.push(' ');
        }
        out.push_str(&v[run..]);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_input::Flattener;

    /// [`squeeze_spaces_into`] one character at a time, as it was first written.
    fn squeezed_slowly(v: &str) -> String {
        let mut out = String::new();
        for c in v.chars() {
            let c = if is_dropped_control(c) { ' ' } else { c };
            if c == ' ' && (out.is_empty() || out.ends_with(' ')) {
                continue;
            }
            out.push(c);
        }
        if out.ends_with(' ') {
            out.pop();
        }
        out
    }

    #[test]
    fn squeezing_copies_runs_as_squeezing_each_character_did() {
        let pieces = [
            "a", " ", "  ", "\t", "\r\n", "\u{1}", "\u{7f}", "\u{80}", "\u{9f}", "\u{a0}",
            "\u{a6}", "é", "\u{85}", "日本", "\u{2028}", "x y", "",
        ];
        let mut n = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    for d in ["", " ", "z", "\u{1f}"] {
                        let v = format!("{a}{b}{c}{d}");
                        let mut out = String::from("kept ");
                        let plain = squeeze_spaces_into(&v, &mut out);
                        assert_eq!(out, format!("kept {}", squeezed_slowly(&v)), "{v:?}");
                        // "Copied as it was" is never said of a value changed.
                        assert!(!plain || out == format!("kept {v}"), "{v:?}");
                        n += 1;
                    }
                }
            }
        }
        assert_eq!(n, 17 * 17 * 17 * 4);
    }

    /// Collapsing as `split_whitespace` does, the plain way.
    fn collapsed_slowly(v: &str) -> String {
        v.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn details_values_drop_control_characters_but_tab_and_line_breaks() {
        let m = RecordMap::default();
        let mut b = String::new();
        assert_eq!(
            detail_value("n", "a\u{1}b\tc\r\n\u{7f}d", &m, &mut b),
            "ab\tc\r\nd"
        );
        assert_eq!(detail_value("n", "é\u{85}x\u{1f}", &m, &mut b), "éx");
        assert!(matches!(
            detail_value("n", "plain text", &m, &mut b),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn collapsing_agrees_with_split_whitespace_for_any_char() {
        let mut out = String::new();
        // Every whitespace char is below U+4000 (lead bytes up to 0xE3); above, a sample.
        let chars = (0..0x4000).chain((0x4000..=0x10ffff).step_by(97));
        for c in chars.filter_map(char::from_u32) {
            for v in [
                format!("a{c}b"),
                format!("{c}¦ x"),
                format!("x ¦{c}"),
                format!("a {c} b"),
            ] {
                out.clear();
                push_collapsed(&v, &mut out);
                let want = collapsed_slowly(&v);
                assert_eq!(out, want, "{:?}", c as u32);
                out.clear();
                assert_eq!(collapse_into(&v, &mut out), want != v, "{:?}", c as u32);
            }
        }
    }

    fn view(t: &FieldTable, json: &str) -> RecordView {
        let mut v = RecordView::default();
        Flattener::default().fill(json, t, &mut v).unwrap();
        v
    }

    /// The items joined as the CSV timeline joins them by default.
    fn joined(items: &ItemsBuf) -> String {
        let texts: Vec<&str> = items.iter().map(|i| i.text()).collect();
        if texts.is_empty() {
            "-".to_string()
        } else {
            texts.join(" ¦ ")
        }
    }

    fn render(
        tpl: &DetailsTemplate,
        v: &RecordView,
        data: FieldId,
        map: &RecordMap,
    ) -> (String, Vec<String>) {
        let mut out = ItemsBuf::default();
        let mut shown = Shown::default();
        tpl.render(v, data, map, &mut out, &mut shown);
        let values = shown
            .values
            .iter()
            .map(|&(a, b)| shown.text[a as usize..b as usize].to_string())
            .collect();
        (joined(&out), values)
    }

    #[test]
    fn renders_placeholders_missing_and_data_index() {
        let mut t = FieldTable::new();
        let tpl = DetailsTemplate::compile(
            "User: %TargetUserName% ¦ Ip: %IpAddress% ¦ D2: %Data[2]% ¦ D9: %Data[9]% ¦ 100%",
            &mut t,
        );
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"TargetUserName":"  bob   smith ","Data":["x","y"]}}}"#,
        );
        let (out, shown) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(out, "User: bob smith ¦ Ip: n/a ¦ D2: y ¦ D9: n/a ¦ 100%");
        assert_eq!(shown, vec!["bob smith", "y"]);
    }

    #[test]
    fn several_data_values_show_as_a_compact_json_array() {
        let mut t = FieldTable::new();
        let tpl = DetailsTemplate::compile("Data: %Data%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Data":["a  b","say \"hi\"","c:\\x","two\n\tlines"]}}}"#,
        );
        let (out, _) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(out, r#"Data: ["a b","say \"hi\"","c:\\x","two\n\tlines"]"#);
        let one = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Data":["only"]}}}"#,
        );
        assert_eq!(
            render(&tpl, &one, data, &RecordMap::default()).0,
            "Data: only"
        );
    }

    #[test]
    fn empty_values_show_nothing_and_whitespace_collapses_across_the_cell() {
        let mut t = FieldTable::new();
        let tpl = DetailsTemplate::compile("A: %A% ¦  B:  %B% ¦ C: %C%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"A":"","B":"two\n\tlines","C":""}}}"#,
        );
        let (out, shown) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(out, "A: ¦ B: two lines ¦ C:");
        assert_eq!(shown, vec!["", "two lines", ""]);
        let empty = DetailsTemplate::compile("%A%", &mut t);
        assert_eq!(render(&empty, &v, data, &RecordMap::default()).0, "-");
    }

    #[test]
    fn items_render_as_the_whole_text_collapsed_and_cut_at_the_marks() {
        let mut t = FieldTable::new();
        let data = t.intern("Data");
        let lits = [
            "", " ", "x", " x", "x ", " ¦ ", "a b", "  ", "\t", "y\u{a0}", "¦", "\t¦  ", "K: ",
            " ¦ L:",
        ];
        let values = ["", "v", " v ", "a  b", "\u{a0}", "n\nl", "c:d"];
        let (mut shortcut, mut compared) = (0, 0);
        for a in lits {
            for b in lits {
                for c in lits {
                    let text = format!("{a}%A%{b}%B%{c}");
                    let tpl = DetailsTemplate::compile(&text, &mut t);
                    // The template as one item: the whole text, as it was rendered
                    // before items were kept apart.
                    let whole = TemplateItem::compile(&text, &mut t);
                    for va in values {
                        for vb in values {
                            let json = serde_json::json!({"Event": {"System": {"EventID": 1},
                                "EventData": {"A": va, "B": vb}}});
                            let v = view(&t, &json.to_string());
                            let mut out = ItemsBuf::default();
                            let mut shown = Shown::default();
                            tpl.render(&v, data, &RecordMap::default(), &mut out, &mut shown);
                            // Each item is its template item rendered and collapsed.
                            let mut want = Vec::new();
                            for item in &tpl.items {
                                let mut raw = Shown::default();
                                item.render_raw(&v, data, &RecordMap::default(), &mut raw);
                                let c = collapsed_slowly(&raw.text);
                                if !c.is_empty() {
                                    want.push(c);
                                }
                            }
                            if want == ["-"] {
                                want.clear();
                            }
                            let got: Vec<&str> = out.iter().map(|i| i.text()).collect();
                            assert_eq!(got, want, "{a:?} {b:?} {c:?} / {va:?} {vb:?}");
                            for i in out.iter() {
                                let colon = i.text().find(':').unwrap_or(i.text().len());
                                assert_eq!(i.label().len(), colon, "{:?}", i.text());
                            }
                            // Joined, the items are the whole text collapsed, unless an
                            // item was left with nothing.
                            let mut raw = Shown::default();
                            whole.render_raw(&v, data, &RecordMap::default(), &mut raw);
                            let mut old = collapsed_slowly(&raw.text);
                            if old.is_empty() {
                                old.push('-');
                            }
                            if want.len() == tpl.items.len() && old != "-" {
                                assert_eq!(joined(&out), old, "{text:?} / {va:?} {vb:?}");
                                compared += 1;
                            }
                            shortcut += usize::from(
                                tpl.items.len() == 1
                                    && tpl.items[0].clean_literals
                                    && out.text() == shown.text,
                            );
                        }
                    }
                }
            }
        }
        assert!(shortcut > 1000, "{shortcut}");
        assert!(compared > 10_000, "{compared}");
    }

    #[test]
    fn a_template_is_cut_at_marks_with_whitespace_around_them() {
        fn cut(t: &str) -> Vec<&str> {
            template_items(t).collect()
        }
        assert_eq!(cut("A: %A% ¦ B: %B%"), ["A: %A%", "B: %B%"]);
        assert_eq!(cut(" A  ¦\tB ¦ "), ["A", "B ¦"]);
        assert_eq!(cut("A¦B ¦C ¦ D"), ["A¦B ¦C", "D"]);
        assert_eq!(cut("A ¦ ¦ B"), ["A", "¦ B"]);
        assert_eq!(cut(" ¦ A ¦  ¦ "), ["¦ A", "¦"]);
        assert_eq!(cut(""), [""]);
    }

    #[test]
    fn control_characters_are_dropped_in_details() {
        let mut t = FieldTable::new();
        let tpl = DetailsTemplate::compile("Cmd: %Cmd%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Cmd":"a\u009d b","P":"\u0094\u0002-"}}}"#,
        );
        assert_eq!(render(&tpl, &v, data, &RecordMap::default()).0, "Cmd: a b");
    }

    #[test]
    fn lower_guids_are_told_as_position_by_position() {
        let slow = |s: &str| {
            s.len() == 36
                && s.bytes().enumerate().all(|(i, c)| match i {
                    8 | 13 | 18 | 23 => c == b'-',
                    _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
                })
        };
        let guid = "365abb72-ac09-4a7f-b3c1-0123456789ef";
        let mut n = 0;
        for i in 0..guid.len() {
            for c in ['-', '0', 'a', 'f', 'g', 'A', 'F', ' ', 'é'] {
                let mut v = guid.to_string();
                v.replace_range(i..i + 1, &c.to_string());
                for t in [v.clone(), format!("{v}0"), v.chars().skip(1).collect()] {
                    assert_eq!(is_lower_guid(&t), slow(&t), "{t}");
                    n += usize::from(slow(&t));
                }
            }
        }
        assert!(is_lower_guid(guid) && n >= 100, "{n}");
    }

    #[test]
    fn guids_and_filetimes_take_the_legacy_form_only_as_whole_values() {
        assert_eq!(
            legacy_form("{365abb72-7acc-5cc4-0000-0010b2470300}"),
            "365ABB72-7ACC-5CC4-0000-0010B2470300"
        );
        assert_eq!(
            legacy_form("2017-04-20T16:10:39.1234567Z"),
            "2017-04-20T16:10:39.123456Z"
        );
        for kept in [
            "C:\\x\\{4f02f780-dd6c-40e3-ab21-c1336815b4db}.sdb",
            "%{c6faf700-bfe4-452a-a766-424f84c29583}",
            "{365ABB72-7ACC-5CC4-0000-0010B2470300}",
            "{365abb72-7acc-5cc4-0000-0010b247030}",
            "2019-07-18T20:40:00.580Z",
            "2019-07-18 20:40:00.5801234",
        ] {
            assert_eq!(legacy_form(kept), kept);
        }
        let mut t = FieldTable::new();
        let tpl = DetailsTemplate::compile("PGUID: %ParentProcessGuid%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"ParentProcessGuid":"{365abb72-7acc-5cc4-0000-0010b2470300}"}}}"#,
        );
        assert_eq!(
            render(&tpl, &v, data, &RecordMap::default()).0,
            "PGUID: 365ABB72-7ACC-5CC4-0000-0010B2470300"
        );
    }
}
