//! The JSON timeline (`json-timeline`): the same rows and columns as the CSV timeline,
//! one object per detection, keys in the profile's column order. As Hayabusa writes
//! it, Details, ExtraFieldInfo and AllFieldInfo are objects of their `label: value`
//! items, written from the items' labels and values as they are (nothing is split),
//! and integer values (EventID, RecordID, `PID: 2020`) are JSON numbers. The MITRE and
//! tag columns are arrays of their items; other lists (a correlation's computers,
//! channels, EventIDs, files) are strings, their items joined with
//! [`LIST_SEPARATOR`]. Output is a JSON array (one object per indented block) or, with
//! `-L`, JSON Lines.

use crate::cell::{Cell, CellRef};
use crate::encoder::{take_bytes, RowEncoder};
use crate::layout::Layout;
use crate::profile::{Column, LIST_SEPARATOR};
use crate::row_cells::RowCells;
use scanner_engine::{DetectInfo, ItemIter};
use std::io;

/// Whether `v` is an integer written as Rust writes it (digits, a `-` but no `+`, no
/// leading zero), short enough to be exact in any JSON reader.
fn canonical_int(v: &str) -> bool {
    let digits = v.strip_prefix('-').unwrap_or(v);
    let leading_zero = digits.starts_with('0') && v != "0";
    !digits.is_empty()
        && v.len() <= 18
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !leading_zero
}

/// A cell's value as JSON text: an integer as a number, anything else as a string.
fn scalar(v: &str, out: &mut Vec<u8>) {
    if canonical_int(v) {
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

/// A cell's items as (name, value) pairs: each item's label and value, trimmed (an
/// item without a colon is a name with an empty value).
fn field_pairs(items: ItemIter<'_>) -> Vec<(&str, &str)> {
    items
        .map(|i| (i.label().trim(), i.value().trim()))
        .collect()
}

/// Writes `name: value` items as an object; a name given more than once gets an
/// array of its values, in order.
fn object(items: ItemIter<'_>, out: &mut Vec<u8>) {
    let pairs = field_pairs(items);
    out.push(b'{');
    for (i, (name, first)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(k, _)| k == name) {
            continue;
        }
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        string(name, out);
        out.extend_from_slice(b": ");
        let mut more = pairs[i + 1..].iter().filter(|(k, _)| k == name).peekable();
        if more.peek().is_none() {
            scalar(first, out);
        } else {
            out.push(b'[');
            scalar(first, out);
            for (_, v) in more {
                out.extend_from_slice(b", ");
                scalar(v, out);
            }
            out.push(b']');
        }
    }
    out.push(b'}');
}

/// Writes the non-empty items as an array of strings.
fn array(items: ItemIter<'_>, out: &mut Vec<u8>) {
    out.push(b'[');
    let texts = items.map(|i| i.text()).filter(|v| !v.is_empty());
    for (i, v) in texts.enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        string(v, out);
    }
    out.push(b']');
}

/// Appends one row as a JSON object to `out`; `indent` puts each key on its own line.
/// `joined` is a buffer for list cells written as one string.
fn push_row<'c>(
    names: &[(&str, Column)],
    cells: impl Iterator<Item = CellRef<'c>>,
    indent: Option<&str>,
    joined: &mut String,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (i, ((name, col), v)) in names.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match indent {
            Some(ind) => {
                out.push(b'\n');
                out.extend_from_slice(ind.as_bytes());
                out.extend_from_slice(ind.as_bytes());
            }
            None if i > 0 => out.push(b' '),
            None => {}
        }
        string(name, out);
        out.extend_from_slice(b": ");
        let items = match v {
            // A text (in a field-list column, `-R`'s mark for the whole cell).
            CellRef::Text(t) => {
                match col {
                    Column::EventID | Column::RecordID => scalar(t, out),
                    _ => string(t, out),
                }
                continue;
            }
            CellRef::List(items) => items,
        };
        match col {
            c if c.is_field_list() => object(items, out),
            Column::MitreTactics | Column::MitreTags | Column::OtherTags => array(items, out),
            _ => {
                joined.clear();
                CellRef::List(items).write(LIST_SEPARATOR, "", joined);
                match col {
                    Column::EventID | Column::RecordID => scalar(joined, out),
                    _ => string(joined, out),
                }
            }
        }
    }
    if let Some(ind) = indent {
        out.push(b'\n');
        out.extend_from_slice(ind.as_bytes());
    }
    out.push(b'}');
}

/// Renders one row as a JSON object; `indent` puts each key on its own line.
pub fn row_json(names: &[(&str, Column)], cells: &[Cell], indent: Option<&str>) -> String {
    let mut out = Vec::with_capacity(512);
    let cells = cells.iter().map(Cell::as_ref);
    push_row(names, cells, indent, &mut String::new(), &mut out);
    // Only whole UTF-8 strings and ASCII punctuation were written.
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// The JSON timeline's encoder: a JSON array of objects (each key on its own line), or
/// with `lines`, JSON Lines.
pub struct JsonEncoder<'w, 'a> {
    cells: RowCells<'w, 'a>,
    lines: bool,
    /// No row encoded yet.
    first: bool,
    out: Vec<u8>,
    /// A list cell's items joined.
    joined: String,
}

impl<'w, 'a> JsonEncoder<'w, 'a> {
    /// An encoder of `writer`'s columns, as JSON Lines when `lines`.
    pub fn new(writer: &'w Layout<'a>, lines: bool) -> Self {
        JsonEncoder {
            cells: RowCells::new(writer),
            lines,
            first: true,
            out: Vec::new(),
            joined: String::new(),
        }
    }
}

impl RowEncoder for JsonEncoder<'_, '_> {
    fn begin(&mut self) -> io::Result<()> {
        if !self.lines {
            self.out.push(b'[');
        }
        Ok(())
    }

    fn row(&mut self, r: &DetectInfo) -> io::Result<bool> {
        if !self.cells.fill(r) {
            return Ok(false);
        }
        let names = self.cells.writer().named_columns();
        let (cells, joined) = (self.cells.cells(r), &mut self.joined);
        if self.lines {
            push_row(names, cells, None, joined, &mut self.out);
            self.out.push(b'\n');
        } else {
            self.out
                .extend_from_slice(if self.first { b"\n    " } else { b",\n    " });
            push_row(names, cells, Some("    "), joined, &mut self.out);
        }
        self.first = false;
        Ok(true)
    }

    fn end(&mut self) -> io::Result<()> {
        if !self.lines {
            self.out
                .extend_from_slice(if self.first { b"]\n" } else { b"\n]\n" });
        }
        Ok(())
    }

    fn held(&self) -> usize {
        self.out.len()
    }

    fn take(&mut self, into: &mut Vec<u8>) {
        take_bytes(&mut self.out, into);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_engine::Items;

    #[test]
    fn integers_are_those_that_print_back_as_they_read() {
        let printed_back =
            |v: &str| v.len() <= 18 && v.parse::<i64>().is_ok_and(|n| n.to_string() == v);
        for v in [
            "",
            "0",
            "-0",
            "00",
            "007",
            "-07",
            "7",
            "-7",
            "+7",
            "-",
            "+",
            "12a",
            "1.5",
            "1e3",
            " 1",
            "1 ",
            "٣",
            "123456789012345678",
            "1234567890123456789",
            "-12345678901234567",
            "-123456789012345678",
        ] {
            assert_eq!(canonical_int(v), printed_back(v), "{v:?}");
        }
    }

    #[test]
    fn details_become_objects_with_numbers_and_repeated_names_as_arrays() {
        let names = [
            ("EventID", Column::EventID),
            ("Details", Column::Details),
            ("MitreTags", Column::MitreTags),
            ("RecordID", Column::RecordID),
            ("ExtraFieldInfo", Column::ExtraFieldInfo),
        ];
        let details = [
            "Cmdline: a: b",
            "PID: 2020",
            "LID: 0x3e7",
            "Zero: 007",
            "X: 1",
            "X: two",
        ];
        let cells = [
            Cell::text("4688"),
            Cell::items(&Items::of(details)),
            Cell::items(&Items::of(["T1021.002", "T1570", ""])),
            Cell::text(""),
            Cell::items(&Items::default()),
        ];
        let j = row_json(&names, &cells, None);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["EventID"], 4688);
        assert_eq!(v["Details"]["Cmdline"], "a: b");
        assert_eq!(v["Details"]["PID"], 2020);
        assert_eq!(v["Details"]["LID"], "0x3e7");
        assert_eq!(v["Details"]["Zero"], "007");
        assert_eq!(v["Details"]["X"], serde_json::json!([1, "two"]));
        assert_eq!(v["MitreTags"], serde_json::json!(["T1021.002", "T1570"]));
        assert_eq!(v["RecordID"], "");
        assert_eq!(v["ExtraFieldInfo"], serde_json::json!({}));
        assert!(j.starts_with("{\"EventID\": 4688, \"Details\": {"), "{j}");
        // A list in another column is one string; `-R`'s mark stays a string.
        let names = [("EventID", Column::EventID), ("Details", Column::Details)];
        let cells = [Cell::items(&Items::of(["4624", "4625"])), Cell::text("DUP")];
        let v: serde_json::Value = serde_json::from_str(&row_json(&names, &cells, None)).unwrap();
        assert_eq!(v["EventID"], "4624 ¦ 4625");
        assert_eq!(v["Details"], "DUP");
        let one = [
            Cell::items(&Items::of(["4624"])),
            Cell::items(&Items::of(["x"])),
        ];
        let v: serde_json::Value = serde_json::from_str(&row_json(&names, &one, None)).unwrap();
        assert_eq!(v["EventID"], 4624);
        assert_eq!(v["Details"], serde_json::json!({"x": ""}));
    }
}
