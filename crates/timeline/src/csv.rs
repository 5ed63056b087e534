//! The CSV timeline's encoder: a header, then one record per row, fields separated by
//! commas, LF line ends, and `NonNumeric` quoting as the `csv` crate does it (a field
//! that reads as a number, integer or float, is bare; any other is quoted, its quotes
//! doubled). A cell of items is written with the style's separator between them
//! ([`crate::Style::separator`]: `-M`'s line breaks, `-S`'s tabs) in the multi-item
//! columns and RuleAuthor's list, with [`LIST_SEPARATOR`] in the others (a correlation's
//! computers, channels, EventIDs and files); a field list without items is `-`.
//!
//! Cells a spreadsheet would take for a formula ([`crate::formula`]) are counted as
//! they are written; with [`crate::Style::excel_safe`] they are written with a leading `'`
//! inside their quotes, their own text (leading whitespace included) kept after it.

use crate::cell::CellRef;
use crate::encoder::RowEncoder;
use crate::formula::is_formula;
use crate::layout::Layout;
use crate::profile::{Column, LIST_SEPARATOR};
use crate::row_cells::RowCells;
use scanner_engine::DetectInfo;
use scanner_engine::ItemIter;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether `field` is written bare: it reads as a float or an integer (`csv`'s test).
/// Such text holds only digits, signs, points and exponents, or is a float's `inf`,
/// `infinity` or `nan` (any case, signed or not); any other is rejected without parsing.
fn is_numeric(field: &str) -> bool {
    // Digits alone (EventIDs, record ids) read as both: decided without parsing.
    if !field.is_empty() && field.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    let unsigned = field.strip_prefix(['+', '-']).unwrap_or(field);
    let may_be = field
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        || ["inf", "infinity", "nan"]
            .iter()
            .any(|w| unsigned.eq_ignore_ascii_case(w));
    !field.is_empty() && may_be && (field.parse::<f64>().is_ok() || field.parse::<i128>().is_ok())
}

/// Appends `field` as a CSV field; `quote` puts a `'` before its text (in the quotes).
fn push_field(field: &str, quote: bool, out: &mut Vec<u8>) {
    if !quote && is_numeric(field) {
        out.extend_from_slice(field.as_bytes());
        return;
    }
    out.push(b'"');
    if quote {
        out.push(b'\'');
    }
    push_quoted(field, out);
    out.push(b'"');
}

/// Appends `text` inside a quoted field, its quotes doubled.
#[inline]
fn push_quoted(text: &str, out: &mut Vec<u8>) {
    let mut rest = text.as_bytes();
    while let Some(at) = memchr::memchr(b'"', rest) {
        out.extend_from_slice(&rest[..=at]);
        out.push(b'"');
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
}

/// Appends the field of a list of two items or more, written straight from the items
/// with `sep` between them; whether the text may be read as a formula (which
/// `excel_safe` quotes). `joined` is a buffer for the rare lists whose first item leaves
/// that question to the text after it.
fn push_items(
    items: ItemIter<'_>,
    sep: &str,
    excel_safe: bool,
    joined: &mut String,
    out: &mut Vec<u8>,
) -> bool {
    // Joined, the text holds a separator: never a number, so always quoted. It may be
    // a formula by its first byte alone when the first item begins with other than
    // whitespace (it is then no lone `-` and no number either).
    let first = items.clone().next().map_or("", |i| i.text());
    let formula = match first.as_bytes().first() {
        Some(b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c) | None => {
            joined.clear();
            CellRef::List(items.clone()).write(sep, "", joined);
            is_formula(joined)
        }
        Some(&b) => matches!(b, b'=' | b'@' | b'+' | b'-'),
    };
    out.push(b'"');
    if formula && excel_safe {
        out.push(b'\'');
    }
    // Quotes are looked for once in all the items' text, not item by item.
    let text = items.rest();
    let quotes = memchr::memchr(b'"', text.as_bytes()).is_some();
    out.reserve(text.len() + items.len() * sep.len() + 1);
    for (i, item) in items.enumerate() {
        if i > 0 {
            push_separator(sep.as_bytes(), out);
        }
        if quotes {
            push_quoted(item.text(), out);
        } else {
            out.extend_from_slice(item.text().as_bytes());
        }
    }
    out.push(b'"');
    formula
}

/// Appends a separator: the styles' are short, copied without a call.
#[inline]
fn push_separator(sep: &[u8], out: &mut Vec<u8>) {
    match *sep {
        [a] => out.push(a),
        [a, b] => out.extend_from_slice(&[a, b]),
        [a, b, c, d] => out.extend_from_slice(&[a, b, c, d]),
        _ => out.extend_from_slice(sep),
    }
}

/// Appends a text field; whether it may be read as a formula (which `excel_safe`
/// quotes).
#[inline]
fn push_text(field: &str, excel_safe: bool, out: &mut Vec<u8>) -> bool {
    let formula = is_formula(field);
    push_field(field, formula && excel_safe, out);
    formula
}

/// Appends a record of `fields`; returns how many of them may be read as formulas
/// (those `excel_safe` quotes).
fn push_record<'f>(
    fields: impl IntoIterator<Item = &'f str>,
    excel_safe: bool,
    out: &mut Vec<u8>,
) -> u64 {
    let mut formulas = 0;
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        formulas += u64::from(push_text(f, excel_safe, out));
    }
    out.push(b'\n');
    formulas
}

/// Encodes rows as the CSV timeline.
pub struct CsvEncoder<'w, 'a> {
    cells: RowCells<'w, 'a>,
    /// A list cell's items joined, when its text must be looked at whole.
    joined: String,
    /// Cells of the rows so far that may be read as formulas.
    formulas: u64,
    /// Where [`Self::formulas`] is added at the end.
    formula_count: Option<&'w AtomicU64>,
}

impl<'w, 'a> CsvEncoder<'w, 'a> {
    /// An encoder of `writer`'s columns.
    pub fn new(writer: &'w Layout<'a>) -> Self {
        CsvEncoder {
            cells: RowCells::new(writer),
            joined: String::new(),
            formulas: 0,
            formula_count: None,
        }
    }

    /// Adds to `count`, once the last row is encoded, how many cells written may be
    /// read as formulas by a spreadsheet (those [`crate::Style::excel_safe`] writes as text).
    pub fn count_formula_cells(mut self, count: &'w AtomicU64) -> Self {
        self.formula_count = Some(count);
        self
    }
}

impl RowEncoder for CsvEncoder<'_, '_> {
    fn begin(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        let named = self.cells.writer().named_columns();
        push_record(named.iter().map(|(n, _)| *n), false, out);
        Ok(())
    }

    fn row(&mut self, r: &DetectInfo, out: &mut Vec<u8>) -> io::Result<bool> {
        if !self.cells.fill(r) {
            return Ok(false);
        }
        let writer = self.cells.writer();
        let style = writer.style();
        let columns = writer.named_columns().iter().zip(self.cells.cells(r));
        let joined = &mut self.joined;
        for (i, ((_, c), cell)) in columns.enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let formula = match cell {
                CellRef::Text(t) => push_text(t, style.excel_safe, out),
                // None, or one item: the field is `-` or empty, or the item.
                CellRef::List(mut items) if items.len() < 2 => {
                    let none = if c.is_field_list() { "-" } else { "" };
                    let field = items.next().map_or(none, |i| i.text());
                    push_text(field, style.excel_safe, out)
                }
                CellRef::List(items) => {
                    let sep = if c.is_multi() || *c == Column::RuleAuthor {
                        style.separator()
                    } else {
                        LIST_SEPARATOR
                    };
                    push_items(items, sep, style.excel_safe, joined, out)
                }
            };
            self.formulas += u64::from(formula);
        }
        out.push(b'\n');
        Ok(true)
    }

    fn end(&mut self, _: &mut Vec<u8>) -> io::Result<()> {
        if let Some(count) = self.formula_count {
            count.fetch_add(self.formulas, Ordering::Relaxed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the `csv` crate writes for `fields` as one record, `NonNumeric` quoting.
    fn csv_crate(fields: &[&str]) -> Vec<u8> {
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::NonNumeric)
            .from_writer(Vec::new());
        w.write_record(fields).unwrap();
        w.into_inner().unwrap()
    }

    #[test]
    fn fields_are_quoted_as_the_csv_crate_quotes_them() {
        let fields = [
            "",
            "-",
            "0",
            "007",
            "-12",
            "+3",
            "1.5",
            ".5",
            "5.",
            "1e5",
            "1E+10",
            "-1e-3",
            "inf",
            "-inf",
            "+Infinity",
            "NaN",
            "nan",
            "infinit",
            "i",
            "n",
            "N/A",
            "+",
            "-",
            ".",
            "e5",
            "0x10",
            "1_000",
            " 5",
            "5 ",
            "1,5",
            "12a",
            "170141183460469231731687303715884105728",
            "99999999999999999999999999999999999999999",
            "a\"b",
            "\"",
            "\"\"x\"",
            "x,y",
            "line\nbreak",
            "cr\r\nlf",
            "tab\there",
            "¦",
            "Cmdline: whoami ¦ PID: 0x1fc",
            "ホスト",
            "2024-03-04 02:42:13.619 +00:00",
        ];
        for f in fields {
            let mut ours = Vec::new();
            push_record([f], false, &mut ours);
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&csv_crate(&[f])),
                "field {f:?}"
            );
        }
        let mut ours = Vec::new();
        push_record(fields, false, &mut ours);
        assert_eq!(ours, csv_crate(&fields));
    }

    #[test]
    fn excel_safe_quotes_formula_cells_and_keeps_their_whitespace() {
        let fields = [
            "=cmd|' /C calc'!A0",
            "\t=1+1",
            " @x",
            "-",
            "-12",
            "-1+1",
            "a\"=b",
            "=\"q\"",
            "plain",
        ];
        let mut out = Vec::new();
        let n = push_record(fields, true, &mut out);
        assert_eq!(n, 5);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"'=cmd|' /C calc'!A0\",\"'\t=1+1\",\"' @x\",\"-\",-12,\"'-1+1\",\"a\"\"=b\",\"'=\"\"q\"\"\",\"plain\"\n"
        );
        // A CSV reader gets the text back with the quote in front.
        let mut out = Vec::new();
        push_record(fields, true, &mut out);
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(out.as_slice());
        let rec = r.records().next().unwrap().unwrap();
        let got: Vec<&str> = rec.iter().collect();
        assert_eq!(
            got,
            [
                "'=cmd|' /C calc'!A0",
                "'\t=1+1",
                "' @x",
                "-",
                "-12",
                "'-1+1",
                "a\"=b",
                "'=\"q\"",
                "plain"
            ]
        );
        // Without the option the cells are written as before, and still counted.
        let mut plain = Vec::new();
        assert_eq!(push_record(fields, false, &mut plain), 5);
        assert_eq!(plain, csv_crate(&fields));
    }

    #[test]
    fn a_list_is_written_as_its_items_joined_would_be() {
        use scanner_engine::Items;
        let pieces = [
            "", "a", "=1", "-", "-1", "+x", "@", " =x", "\t", "x\"y", "\"", "12", "1e5", "Cmd: a b",
        ];
        let mut joined = String::new();
        for sep in [" \u{a6} ", "\r\n", "\t"] {
            for a in pieces {
                for b in pieces {
                    for c in [None, Some("z")] {
                        let list: Vec<&str> = [Some(a), Some(b), c].into_iter().flatten().collect();
                        let items = Items::of(list.iter().copied());
                        let text = list.join(sep);
                        for excel_safe in [false, true] {
                            let (mut ours, mut want) = (Vec::new(), Vec::new());
                            let formula =
                                push_items(items.iter(), sep, excel_safe, &mut joined, &mut ours);
                            let expected = push_text(&text, excel_safe, &mut want);
                            assert_eq!(formula, expected, "{list:?} {sep:?}");
                            assert_eq!(
                                String::from_utf8_lossy(&ours),
                                String::from_utf8_lossy(&want),
                                "{list:?} {sep:?} {excel_safe}"
                            );
                        }
                    }
                }
            }
        }
    }
}
