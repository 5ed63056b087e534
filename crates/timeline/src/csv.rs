//! The CSV timeline's encoder: a header, then one record per row, fields separated by
//! commas, LF line ends, and `NonNumeric` quoting as the `csv` crate does it (a field
//! that reads as a number, integer or float, is bare; any other is quoted, its quotes
//! doubled). `-M`/`-S` put their separator in place of the ` ¦ ` of multi-item cells
//! (and of RuleAuthor's list).

use crate::encoder::{take_bytes, RowEncoder};
use crate::layout::{Layout, RowCells};
use crate::profile::Column;
use scanner_engine::DetectInfo;
use scanner_engine::DETAILS_SEP as SEP;
use std::io;

/// Whether `field` is written bare: it reads as a float or an integer (`csv`'s test).
/// Such text holds only digits, signs, points and exponents, or is a float's `inf`,
/// `infinity` or `nan` (any case, signed or not); any other is rejected without parsing.
fn is_numeric(field: &str) -> bool {
    let unsigned = field.strip_prefix(['+', '-']).unwrap_or(field);
    let may_be = field
        .bytes()
        .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
        || ["inf", "infinity", "nan"]
            .iter()
            .any(|w| unsigned.eq_ignore_ascii_case(w));
    !field.is_empty() && may_be && (field.parse::<f64>().is_ok() || field.parse::<i128>().is_ok())
}

/// Appends `field` as a CSV field.
fn push_field(field: &str, out: &mut Vec<u8>) {
    if is_numeric(field) {
        out.extend_from_slice(field.as_bytes());
        return;
    }
    out.push(b'"');
    let mut rest = field.as_bytes();
    while let Some(at) = memchr::memchr(b'"', rest) {
        out.extend_from_slice(&rest[..=at]);
        out.push(b'"');
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Appends a record of `fields`.
fn push_record<'f>(fields: impl IntoIterator<Item = &'f str>, out: &mut Vec<u8>) {
    for (i, f) in fields.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_field(f, out);
    }
    out.push(b'\n');
}

/// Encodes rows as the CSV timeline.
pub struct CsvEncoder<'w, 'a> {
    cells: RowCells<'w, 'a>,
    out: Vec<u8>,
    /// Cells with the `-M`/`-S` separator in place of ` ¦ `.
    replaced: Vec<String>,
}

impl<'w, 'a> CsvEncoder<'w, 'a> {
    /// An encoder of `writer`'s columns.
    pub fn new(writer: &'w Layout<'a>) -> Self {
        CsvEncoder {
            cells: RowCells::new(writer),
            out: Vec::new(),
            replaced: Vec::new(),
        }
    }
}

impl RowEncoder for CsvEncoder<'_, '_> {
    fn begin(&mut self) -> io::Result<()> {
        let named = self.cells.writer().named_columns();
        push_record(named.iter().map(|(n, _)| *n), &mut self.out);
        Ok(())
    }

    fn row(&mut self, r: &DetectInfo) -> io::Result<bool> {
        if !self.cells.fill(r) {
            return Ok(false);
        }
        let writer = self.cells.writer();
        let cells = self.cells.cells();
        let sep = writer.style().separator();
        if sep == SEP {
            push_record(cells.iter().map(String::as_str), &mut self.out);
        } else {
            self.replaced.clear();
            for ((_, c), v) in writer.named_columns().iter().zip(cells) {
                self.replaced
                    .push(if c.is_multi() || *c == Column::RuleAuthor {
                        v.replace(SEP, sep)
                    } else {
                        v.clone()
                    });
            }
            push_record(self.replaced.iter().map(String::as_str), &mut self.out);
        }
        Ok(true)
    }

    fn end(&mut self) -> io::Result<()> {
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
            push_record([f], &mut ours);
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&csv_crate(&[f])),
                "field {f:?}"
            );
        }
        let mut ours = Vec::new();
        push_record(fields, &mut ours);
        assert_eq!(ours, csv_crate(&fields));
    }
}
