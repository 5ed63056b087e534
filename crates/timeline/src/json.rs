//! The JSON timeline (`json-timeline`): the same rows and columns as the CSV timeline,
//! one object per detection, keys in the profile's column order, as Hayabusa 4.0 writes
//! them, so that jq and Elastic queries written for its output work unchanged:
//!
//! - Details, ExtraFieldInfo and AllFieldInfo are objects of their `label: value` items
//!   (a label given more than once gets an array of its values, as strings). A Details
//!   item that carries no label of its template's (a bare `%Details%`, whose value may
//!   well hold a colon: `C:\Users\…`) is kept whole under the empty key `""`
//!   ([`field_key`]).
//! - A value that reads as a 64-bit integer is a JSON number (`2020`, and `+7` or `007`
//!   as `7`: Rust's `i64` parse, Hayabusa's rule), `true` and `false` are booleans, any
//!   other value (`0x3e7`, `1.5`, integers past 64 bits) a string; so for every column
//!   and field ([`scalar`]).
//! - The MITRE and tag columns are arrays of their items; other lists (a correlation's
//!   computers, channels, EventIDs, files) one value, their items joined with
//!   [`LIST_SEPARATOR`]. A column with nothing to show (no tags, an empty text) is left
//!   out; an empty field list is `{}`.
//!
//! Output is a stream of objects, each spread over lines as serde_json's pretty printer
//! does with four spaces (`jq` reads such a stream; Hayabusa's `-t json`), or with `-L`
//! JSON Lines: one object a line, `{ "key":value,… }` as Hayabusa 4.0 pads it.

use crate::cell::{Cell, CellRef};
use crate::encoder::RowEncoder;
use crate::layout::Layout;
use crate::profile::{Column, LIST_SEPARATOR};
use crate::row_cells::RowCells;
use scanner_engine::{DetectInfo, Item, ItemIter, Origin};
use std::io;

/// A value as JSON text, typed as Hayabusa types it: what Rust's `i64` parse reads
/// (an optional sign, ASCII digits, within 64 bits) as that number, `true` and `false`
/// as booleans, anything else as a string.
fn scalar(v: &str, out: &mut Vec<u8>) {
    if let Ok(n) = v.parse::<i64>() {
        out.extend_from_slice(n.to_string().as_bytes());
    } else if v == "true" || v == "false" {
        out.extend_from_slice(v.as_bytes());
    } else {
        string(v, out);
    }
}

/// `v` as a JSON string, escaped as `serde_json` escapes it.
fn string(v: &str, out: &mut Vec<u8>) {
    // Writing to a vector cannot fail, nor can serialising a string.
    let _ = serde_json::to_writer(&mut *out, v);
}

/// How a field list's items are keyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// Every item by its label: the field lists, whose labels are field names, and a
    /// correlation's Details (`Count:2`).
    Labels,
    /// A record's Details, rendered from a template of `Label: %Field%` items (or, with
    /// no template, from `name: value` fields): an item is labelled when it holds `: `
    /// or ends with `:` (an empty value); any other item is a value without a label.
    Template,
}

/// The key and value of a field-list item, both trimmed: the item's label (the text
/// before its first colon, as Hayabusa splits a `key: value` pair) and what follows.
/// With [`Keys::Template`], an item that holds no `: ` and does not end with `:`
/// (`C:\x`, `file:///c`, `DWORD (0x00000001)`) has no label of its template's: it is
/// the key `""` with the whole item as its value, as Hayabusa keys a Details item that
/// begins with its placeholder (`%Details%`).
///
/// The rows do not say which items began with a placeholder (an item's label ends at
/// its first colon whatever its template), so a bare value that itself holds `: ` is
/// read as labelled; no value of the attack corpus is.
fn field_key(item: Item<'_>, keys: Keys) -> (&str, &str) {
    let (label, value) = (item.label(), item.value());
    let labelled = match keys {
        Keys::Labels => true,
        Keys::Template => {
            let text = item.text();
            text.contains(": ") || text.ends_with(':')
        }
    };
    if labelled {
        (label.trim(), value.trim())
    } else {
        ("", item.text().trim())
    }
}

/// How objects are laid out.
#[derive(Debug, Clone, Copy)]
struct Form {
    /// One level of indentation; empty: all on one line.
    indent: &'static str,
    /// Levels of indentation the object itself is at.
    base: usize,
    /// Nested objects and arrays indented too (else only the object's own keys).
    nested: bool,
    /// A space after `:` and `,` on one line.
    spaced: bool,
    /// The object's braces padded with a space (`{ "a":1 }`).
    padded: bool,
}

impl Form {
    /// Hayabusa's `-t json`: serde_json's pretty form, four spaces a level.
    const PRETTY: Form = Form {
        indent: "    ",
        base: 0,
        nested: true,
        spaced: true,
        padded: false,
    };
    /// Hayabusa 4.0's JSON Lines: compact, the braces padded.
    const LINE: Form = Form {
        indent: "",
        base: 0,
        nested: false,
        spaced: false,
        padded: true,
    };

    /// `search`'s objects: `{"a": 1, "b": {"c": 2}}`, or with `indent` each key of the
    /// object on a line of its own, two levels in.
    fn search(indent: Option<&'static str>) -> Form {
        Form {
            indent: indent.unwrap_or(""),
            base: usize::from(indent.is_some()),
            nested: false,
            spaced: true,
            padded: false,
        }
    }

    /// Whether the members of a container at `depth` (1: the object's own keys) go on
    /// lines of their own.
    fn lines(self, depth: usize) -> bool {
        !self.indent.is_empty() && (depth == 1 || self.nested)
    }

    fn newline(self, levels: usize, out: &mut Vec<u8>) {
        out.push(b'\n');
        for _ in 0..levels {
            out.extend_from_slice(self.indent.as_bytes());
        }
    }

    /// Opens a container of members at `depth`.
    fn open(self, bracket: u8, depth: usize, out: &mut Vec<u8>) {
        out.push(bracket);
        if self.padded && depth == 1 {
            out.push(b' ');
        }
    }

    /// Writes what comes before member `i` of a container at `depth`.
    fn member(self, i: usize, depth: usize, out: &mut Vec<u8>) {
        if i > 0 {
            out.push(b',');
        }
        if self.lines(depth) {
            self.newline(self.base + depth, out);
        } else if i > 0 && self.spaced {
            out.push(b' ');
        }
    }

    /// Writes a key and its colon.
    fn key(self, k: &str, out: &mut Vec<u8>) {
        string(k, out);
        out.extend_from_slice(if self.spaced { b": " } else { b":" });
    }

    /// Closes a container at `depth` that had `n` members.
    fn close(self, bracket: u8, depth: usize, n: usize, out: &mut Vec<u8>) {
        if n > 0 && self.lines(depth) {
            self.newline(self.base + depth - 1, out);
        }
        if self.padded && depth == 1 {
            out.push(b' ');
        }
        out.push(bracket);
    }
}

/// Writes a field list's items, then the pairs of `more`, as an object at `depth`: each
/// key once, in the order first seen; a key given more than once gets an array of its
/// values, as strings.
fn object(
    items: ItemIter<'_>,
    more: &[(&str, &str)],
    keys: Keys,
    form: Form,
    depth: usize,
    out: &mut Vec<u8>,
) {
    let mut pairs: Vec<(&str, &str)> = items.map(|i| field_key(i, keys)).collect();
    pairs.extend_from_slice(more);
    form.open(b'{', depth, out);
    let mut n = 0;
    for (i, (name, first)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(k, _)| k == name) {
            continue;
        }
        form.member(n, depth, out);
        n += 1;
        form.key(name, out);
        let mut more = pairs[i + 1..].iter().filter(|(k, _)| k == name).peekable();
        if more.peek().is_none() {
            scalar(first, out);
            continue;
        }
        let values = std::iter::once(*first).chain(more.map(|(_, v)| *v));
        array(values, form, depth + 1, out);
    }
    form.close(b'}', depth, n, out);
}

/// Writes `values` as an array of strings at `depth`.
fn array<'v>(values: impl Iterator<Item = &'v str>, form: Form, depth: usize, out: &mut Vec<u8>) {
    form.open(b'[', depth, out);
    let mut n = 0;
    for v in values {
        form.member(n, depth, out);
        n += 1;
        string(v, out);
    }
    form.close(b']', depth, n, out);
}

/// Appends one row as a JSON object to `out`, in `form`. `details` keys the Details
/// items; `joined` is a buffer for list cells written as one value. `-G`'s columns are
/// not keys of the row: `geo`, their cells other than `-`, is added to a Details or
/// AllFieldInfo object that has items, as Hayabusa 4.0 writes them.
fn push_row<'c>(
    names: &[(&str, Column)],
    cells: impl Iterator<Item = CellRef<'c>>,
    form: Form,
    details: Keys,
    geo: &[(&str, &str)],
    joined: &mut String,
    out: &mut Vec<u8>,
) {
    form.open(b'{', 1, out);
    let mut n = 0;
    for ((name, col), v) in names.iter().zip(cells) {
        if col.is_geo() {
            continue;
        }
        let items = match v {
            // A text (in a field-list column, `-R`'s mark for the whole cell).
            CellRef::Text(t) => {
                if !t.is_empty() {
                    form.member(n, 1, out);
                    n += 1;
                    form.key(name, out);
                    scalar(t, out);
                }
                continue;
            }
            CellRef::List(items) => items,
        };
        match col {
            c if c.is_field_list() => {
                form.member(n, 1, out);
                n += 1;
                form.key(name, out);
                let keys = if *c == Column::Details {
                    details
                } else {
                    Keys::Labels
                };
                let more = match c {
                    Column::ExtraFieldInfo => &[][..],
                    _ if items.len() == 0 => &[],
                    _ => geo,
                };
                object(items, more, keys, form, 2, out);
            }
            Column::MitreTactics | Column::MitreTags | Column::OtherTags => {
                let mut texts = items.map(|i| i.text().trim()).filter(|v| !v.is_empty());
                let Some(first) = texts.next() else { continue };
                form.member(n, 1, out);
                n += 1;
                form.key(name, out);
                array(std::iter::once(first).chain(texts), form, 2, out);
            }
            _ => {
                joined.clear();
                CellRef::List(items).write(LIST_SEPARATOR, "", joined);
                if !joined.is_empty() {
                    form.member(n, 1, out);
                    n += 1;
                    form.key(name, out);
                    scalar(joined, out);
                }
            }
        }
    }
    form.close(b'}', 1, n, out);
}

/// Renders one row as a JSON object (`search`'s): on one line, or with `indent` each
/// key on a line of its own, two indents in.
pub fn row_json(names: &[(&str, Column)], cells: &[Cell], indent: Option<&'static str>) -> String {
    let mut out = Vec::with_capacity(512);
    let cells = cells.iter().map(Cell::as_ref);
    let form = Form::search(indent);
    push_row(
        names,
        cells,
        form,
        Keys::Labels,
        &[],
        &mut String::new(),
        &mut out,
    );
    // Only whole UTF-8 strings and ASCII punctuation were written.
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// The JSON timeline's encoder: a stream of pretty-printed objects, or with `lines`,
/// JSON Lines.
pub struct JsonEncoder<'w, 'a> {
    cells: RowCells<'w, 'a>,
    form: Form,
    /// A list cell's items joined.
    joined: String,
    /// The layout has `-G`'s columns.
    geo: bool,
}

impl<'w, 'a> JsonEncoder<'w, 'a> {
    /// An encoder of `writer`'s columns, as JSON Lines when `lines`.
    pub fn new(writer: &'w Layout<'a>, lines: bool) -> Self {
        JsonEncoder {
            cells: RowCells::new(writer),
            form: if lines { Form::LINE } else { Form::PRETTY },
            joined: String::new(),
            geo: writer.named_columns().iter().any(|(_, c)| c.is_geo()),
        }
    }
}

impl RowEncoder for JsonEncoder<'_, '_> {
    fn row(&mut self, r: &DetectInfo, out: &mut Vec<u8>) -> io::Result<bool> {
        if !self.cells.fill(r) {
            return Ok(false);
        }
        let names = self.cells.writer().named_columns();
        let details = match r.origin {
            Origin::Record { .. } => Keys::Template,
            Origin::Correlation(_) => Keys::Labels,
        };
        let mut geo = Vec::new();
        if self.geo {
            for ((name, col), v) in names.iter().zip(self.cells.cells(r)) {
                if let (true, CellRef::Text(t)) = (col.is_geo(), v) {
                    if t != "-" {
                        geo.push((*name, t));
                    }
                }
            }
        }
        let (cells, joined) = (self.cells.cells(r), &mut self.joined);
        push_row(names, cells, self.form, details, &geo, joined, out);
        out.push(b'\n');
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_engine::Items;
    use serde_json::{json, Value};

    /// A row of `cells` in `form`, Details keyed as a record's.
    fn encoded(names: &[(&str, Column)], cells: &[Cell], form: Form) -> String {
        let mut out = Vec::new();
        let cells = cells.iter().map(Cell::as_ref);
        push_row(
            names,
            cells,
            form,
            Keys::Template,
            &[],
            &mut String::new(),
            &mut out,
        );
        String::from_utf8(out).unwrap()
    }

    fn parsed(names: &[(&str, Column)], cells: &[Cell]) -> Value {
        let line = encoded(names, cells, Form::LINE);
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    #[test]
    fn values_are_typed_as_rusts_i64_and_bool_parses_read_them() {
        let typed = |v: &str| {
            let mut out = Vec::new();
            scalar(v, &mut out);
            serde_json::from_slice::<Value>(&out).unwrap()
        };
        for (v, want) in [
            ("0", json!(0)),
            ("7", json!(7)),
            ("-7", json!(-7)),
            ("+7", json!(7)),
            ("007", json!(7)),
            ("-0", json!(0)),
            ("9223372036854775807", json!(i64::MAX)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("9223372036854775808", json!("9223372036854775808")),
            ("true", json!(true)),
            ("false", json!(false)),
            ("True", json!("True")),
            ("TRUE", json!("TRUE")),
            ("0x3e7", json!("0x3e7")),
            ("1.5", json!("1.5")),
            ("1e3", json!("1e3")),
            (" 1", json!(" 1")),
            ("", json!("")),
            ("-", json!("-")),
            ("٣", json!("٣")),
        ] {
            assert_eq!(typed(v), want, "{v:?}");
        }
    }

    #[test]
    fn details_items_without_a_label_are_kept_whole_under_the_empty_key() {
        let names = [("Details", Column::Details)];
        let details = [
            "TgtObj: HKU\\x\\Run\\360v",
            "C:\\Users\\IEUser\\AppData\\Roaming\\svchost.exe",
            "Proc: C:\\a.exe",
        ];
        let v = parsed(&names, &[Cell::items(&Items::of(details))]);
        assert_eq!(
            v["Details"],
            json!({
                "TgtObj": "HKU\\x\\Run\\360v",
                "": "C:\\Users\\IEUser\\AppData\\Roaming\\svchost.exe",
                "Proc": "C:\\a.exe",
            })
        );
        for (bare, key, value) in [
            ("DWORD (0x00000001)", "", "DWORD (0x00000001)"),
            ("/c \"whoami > c:\\x.txt\"", "", "/c \"whoami > c:\\x.txt\""),
            ("file:///C:/T1121.DLL", "", "file:///C:/T1121.DLL"),
            ("Empty:", "Empty", ""),
            ("Cmdline: a: b", "Cmdline", "a: b"),
            ("xmlns:auto-ns3: http://x", "xmlns", "auto-ns3: http://x"),
        ] {
            let v = parsed(&names, &[Cell::items(&Items::of([bare]))]);
            assert_eq!(v["Details"], json!({ key: value }), "{bare:?}");
        }
        // Field lists and a correlation's Details are keyed by their labels.
        let names = [("ExtraFieldInfo", Column::ExtraFieldInfo)];
        let v = parsed(&names, &[Cell::items(&Items::of(["Count:2"]))]);
        assert_eq!(v["ExtraFieldInfo"], json!({"Count": 2}));
        let mut out = Vec::new();
        let cells = [Cell::items(&Items::of(["Count:2"]))];
        let names = [("Details", Column::Details)];
        let cells = cells.iter().map(Cell::as_ref);
        let form = Form::LINE;
        push_row(
            &names,
            cells,
            form,
            Keys::Labels,
            &[],
            &mut String::new(),
            &mut out,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{ \"Details\":{\"Count\":2} }"
        );
    }

    #[test]
    fn numbers_and_booleans_are_typed_and_repeated_labels_are_arrays_of_strings() {
        let names = [
            ("EventID", Column::EventID),
            ("Details", Column::Details),
            ("MitreTags", Column::MitreTags),
            ("OtherTags", Column::OtherTags),
            ("RecordID", Column::RecordID),
            ("ExtraFieldInfo", Column::ExtraFieldInfo),
        ];
        let details = [
            "Cmdline: a: b",
            "PID: 2020",
            "LID: 0x3e7",
            "Zero: 007",
            "Initiated: true",
            "X: 1",
            "X: two",
        ];
        let extra = [
            "SourceIsIpv6: false",
            "Count: -12",
            "Big: 18446744073709551616",
        ];
        let cells = [
            Cell::text("4688"),
            Cell::items(&Items::of(details)),
            Cell::items(&Items::of(["T1021.002", "T1570", ""])),
            Cell::items(&Items::default()),
            Cell::text(""),
            Cell::items(&Items::of(extra)),
        ];
        let v = parsed(&names, &cells);
        let want = json!({
            "EventID": 4688,
            "Details": {
                "Cmdline": "a: b",
                "PID": 2020,
                "LID": "0x3e7",
                "Zero": 7,
                "Initiated": true,
                "X": ["1", "two"],
            },
            "MitreTags": ["T1021.002", "T1570"],
            "ExtraFieldInfo": {
                "SourceIsIpv6": false,
                "Count": -12,
                "Big": "18446744073709551616",
            },
        });
        // No tags and an empty RecordID: the keys are left out.
        assert_eq!(v, want);
        // A list in another column is one value; `-R`'s mark stays a string.
        let names = [("EventID", Column::EventID), ("Details", Column::Details)];
        let cells = [Cell::items(&Items::of(["4624", "4625"])), Cell::text("DUP")];
        let v = parsed(&names, &cells);
        assert_eq!(v, json!({"EventID": "4624 ¦ 4625", "Details": "DUP"}));
        let one = [
            Cell::items(&Items::of(["4624"])),
            Cell::items(&Items::default()),
        ];
        assert_eq!(
            parsed(&names, &one),
            json!({"EventID": 4624, "Details": {}})
        );
    }

    #[test]
    fn objects_are_laid_out_as_hayabusa_writes_them() {
        let names = [
            ("Timestamp", Column::Timestamp),
            ("EventID", Column::EventID),
            ("MitreTactics", Column::MitreTactics),
            ("Details", Column::Details),
            ("ExtraFieldInfo", Column::ExtraFieldInfo),
        ];
        let cells = [
            Cell::text("2019-05-15 04:18:40.474 +00:00"),
            Cell::text("13"),
            Cell::items(&Items::of(["Persis", "PrivEsc"])),
            Cell::items(&Items::of(["PID: 3804", "X: a", "X: b"])),
            Cell::items(&Items::default()),
        ];
        let line = encoded(&names, &cells, Form::LINE);
        assert_eq!(
            line,
            "{ \"Timestamp\":\"2019-05-15 04:18:40.474 +00:00\",\"EventID\":13,\
             \"MitreTactics\":[\"Persis\",\"PrivEsc\"],\
             \"Details\":{\"PID\":3804,\"X\":[\"a\",\"b\"]},\"ExtraFieldInfo\":{} }"
        );
        let pretty = encoded(&names, &cells, Form::PRETTY);
        assert_eq!(
            pretty,
            "{\n    \"Timestamp\": \"2019-05-15 04:18:40.474 +00:00\",\n    \"EventID\": 13,\n    \
             \"MitreTactics\": [\n        \"Persis\",\n        \"PrivEsc\"\n    ],\n    \
             \"Details\": {\n        \"PID\": 3804,\n        \"X\": [\n            \"a\",\n            \
             \"b\"\n        ]\n    },\n    \"ExtraFieldInfo\": {}\n}"
        );
        // search's objects keep their own layout.
        let names = [
            ("Event ID", Column::EventID),
            ("AllFieldInfo", Column::AllFieldInfo),
        ];
        let cells = [Cell::text("1"), Cell::items(&Items::of(["a: 1", "b: x"]))];
        assert_eq!(
            row_json(&names, &cells, None),
            "{\"Event ID\": 1, \"AllFieldInfo\": {\"a\": 1, \"b\": \"x\"}}"
        );
        assert_eq!(
            row_json(&names, &cells, Some("  ")),
            "{\n    \"Event ID\": 1,\n    \"AllFieldInfo\": {\"a\": 1, \"b\": \"x\"}\n  }"
        );
    }
}
