//! The JSON timeline (`json-timeline`): the same rows and columns as the CSV timeline,
//! one object per detection, keys in the profile's column order. As Hayabusa writes
//! it, Details, ExtraFieldInfo and AllFieldInfo are objects of their `name: value`
//! items, and integer values (EventID, RecordID, `PID: 2020`) are JSON numbers. The
//! MITRE and tag columns are arrays. Output is a JSON array (one object per
//! indented block) or, with `-L`, JSON Lines.

use crate::encoder::{take_bytes, RowEncoder};
use crate::layout::{Layout, RowCells, DUP};
use crate::profile::Column;
use scanner_engine::DetectInfo;
use scanner_engine::DETAILS_SEP as SEP;
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

/// Splits `name: value ¦ name: value` into (name, value) pairs: the name is what
/// precedes the first `:`, trimmed. An item without a colon is a name with an empty
/// value. `-` (nothing) gives no pairs.
pub fn field_pairs(cell: &str) -> Vec<(&str, &str)> {
    if cell == "-" || cell.is_empty() {
        return Vec::new();
    }
    cell.split(SEP)
        .map(|item| match item.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (item.trim(), ""),
        })
        .collect()
}

/// Writes `name: value` items as an object; a name given more than once gets an
/// array of its values, in order.
fn object(cell: &str, out: &mut Vec<u8>) {
    let pairs = field_pairs(cell);
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

fn array(cell: &str, out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, v) in cell.split(SEP).filter(|v| !v.is_empty()).enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        string(v, out);
    }
    out.push(b']');
}

/// Appends one row as a JSON object to `out`; `indent` puts each key on its own line.
fn push_row(names: &[(&str, Column)], cells: &[String], indent: Option<&str>, out: &mut Vec<u8>) {
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
        match col {
            // `-R`'s mark stands for the whole cell.
            c if c.is_field_list() && v == DUP => string(v, out),
            c if c.is_field_list() => object(v, out),
            Column::MitreTactics | Column::MitreTags | Column::OtherTags => array(v, out),
            Column::EventID | Column::RecordID => scalar(v, out),
            _ => string(v, out),
        }
    }
    if let Some(ind) = indent {
        out.push(b'\n');
        out.extend_from_slice(ind.as_bytes());
    }
    out.push(b'}');
}

/// Renders one row as a JSON object; `indent` puts each key on its own line.
pub fn row_json(names: &[(&str, Column)], cells: &[String], indent: Option<&str>) -> String {
    let mut out = Vec::with_capacity(512);
    push_row(names, cells, indent, &mut out);
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
}

impl<'w, 'a> JsonEncoder<'w, 'a> {
    /// An encoder of `writer`'s columns, as JSON Lines when `lines`.
    pub fn new(writer: &'w Layout<'a>, lines: bool) -> Self {
        JsonEncoder {
            cells: RowCells::new(writer),
            lines,
            first: true,
            out: Vec::new(),
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
        if self.lines {
            push_row(names, self.cells.cells(), None, &mut self.out);
            self.out.push(b'\n');
        } else {
            self.out
                .extend_from_slice(if self.first { b"\n    " } else { b",\n    " });
            push_row(names, self.cells.cells(), Some("    "), &mut self.out);
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
        let cells = [
            "4688".to_string(),
            "Cmdline: a: b ¦ PID: 2020 ¦ LID: 0x3e7 ¦ Zero: 007 ¦ X: 1 ¦ X: two".to_string(),
            "T1021.002 ¦ T1570".to_string(),
            "".to_string(),
            "-".to_string(),
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
    }
}
