//! A metrics table and its two renderings: CSV (Hayabusa's quoting) and aligned text
//! for a terminal (control characters escaped).

use crate::terminal::safe;
use std::borrow::Cow;
use std::io::{self, Write};
use unicode_width::UnicodeWidthStr;

/// One cell: text, or a number (never quoted when numbers go bare).
#[derive(Clone)]
pub enum Cell {
    /// Text (evidence or names).
    Text(String),
    /// A count.
    Number(u64),
}

impl Cell {
    fn text(&self) -> Cow<'_, str> {
        match self {
            Cell::Text(s) => Cow::Borrowed(s),
            Cell::Number(n) => Cow::Owned(n.to_string()),
        }
    }
}

/// How text cells are quoted in the CSV.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Quote {
    /// Only cells that need it (a comma, quote or line break).
    Necessary,
    /// Every text cell, the header too; numbers bare.
    Text,
}

/// A header and rows.
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<Cell>>,
    quote: Quote,
}

impl Table {
    /// An empty table.
    pub fn new(header: &[&'static str], quote: Quote) -> Table {
        Table {
            header: header.to_vec(),
            rows: Vec::new(),
            quote,
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// The same rows with only the columns `keep` (indexes), in that order.
    pub fn project(&self, keep: &[usize]) -> Table {
        Table {
            header: keep.iter().map(|&i| self.header[i]).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
                .collect(),
            quote: self.quote,
        }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Vec<Cell>) {
        self.rows.push(row);
    }

    /// CSV; with `excel_safe`, text cells a spreadsheet would run as a formula get a
    /// leading `'`.
    pub fn write_csv(&self, out: &mut dyn Write, excel_safe: bool) -> io::Result<()> {
        let header = self.header.iter().map(|h| Cell::Text((*h).to_string()));
        self.write_csv_row(out, &header.collect::<Vec<_>>(), false)?;
        for row in &self.rows {
            self.write_csv_row(out, row, excel_safe)?;
        }
        out.flush()
    }

    fn write_csv_row(&self, out: &mut dyn Write, row: &[Cell], excel_safe: bool) -> io::Result<()> {
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            match cell {
                Cell::Number(n) => write!(out, "{n}")?,
                Cell::Text(s) => {
                    let s: Cow<'_, str> = if excel_safe && scanner_timeline::is_formula(s) {
                        Cow::Owned(format!("'{s}"))
                    } else {
                        Cow::Borrowed(s)
                    };
                    let needs = s.is_empty() && row.len() == 1
                        || s.contains([',', '"', '\n', '\r'])
                        || s.starts_with([' ', '\t'])
                        || s.ends_with([' ', '\t']);
                    if self.quote == Quote::Text || needs {
                        write!(out, "\"{}\"", s.replace('"', "\"\""))?;
                    } else {
                        out.write_all(s.as_bytes())?;
                    }
                }
            }
        }
        out.write_all(b"\n")
    }

    /// Aligned columns, two spaces apart, each cell through [`safe`]. Widths are what a
    /// terminal shows (a CJK character takes two columns, a combining mark none), so
    /// columns stay aligned on wide file and computer names.
    pub fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        let cells: Vec<Vec<String>> = std::iter::once(
            self.header
                .iter()
                .map(|h| (*h).to_string())
                .collect::<Vec<_>>(),
        )
        .chain(
            self.rows
                .iter()
                .map(|r| r.iter().map(|c| safe(&c.text()).into_owned()).collect()),
        )
        .collect();
        let mut widths = vec![0; self.header.len()];
        for row in &cells {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.width());
            }
        }
        for row in &cells {
            let mut line = String::new();
            for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(c);
                if i + 1 < row.len() {
                    line.extend(std::iter::repeat_n(' ', w - c.width()));
                }
            }
            writeln!(out, "{line}")?;
        }
        if self.rows.is_empty() {
            writeln!(out, "(no events)")?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(t: &Table, excel_safe: bool) -> String {
        let mut out = Vec::new();
        t.write_csv(&mut out, excel_safe).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn quotes_as_hayabusa_does() {
        let mut t = Table::new(&["A", "B"], Quote::Necessary);
        t.push(vec![Cell::Text("1,537".into()), Cell::Text("x\"y".into())]);
        t.push(vec![Cell::Text("=1+1".into()), Cell::Number(3)]);
        assert_eq!(csv(&t, false), "A,B\n\"1,537\",\"x\"\"y\"\n=1+1,3\n");
        assert_eq!(csv(&t, true), "A,B\n\"1,537\",\"x\"\"y\"\n'=1+1,3\n");
        let mut t = Table::new(&["A", "B"], Quote::Text);
        t.push(vec![Cell::Text(String::new()), Cell::Number(3)]);
        assert_eq!(csv(&t, false), "\"A\",\"B\"\n\"\",3\n");
    }

    #[test]
    fn text_is_aligned_and_escaped() {
        let mut t = Table::new(&["Name", "N"], Quote::Necessary);
        t.push(vec![Cell::Text("a\x1b[2Jb".into()), Cell::Number(12)]);
        let mut out = Vec::new();
        t.write_text(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('\x1b'), "{text:?}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        // The second column starts at the same place on both lines.
        assert_eq!(lines[0].rfind('N'), lines[1].find("12"), "{text}");
    }

    #[test]
    fn wide_characters_take_two_columns() {
        let mut t = Table::new(&["Filename", "Events"], Quote::Necessary);
        t.push(vec![
            Cell::Text("セキュリティ.evtx".into()),
            Cell::Number(7),
        ]);
        t.push(vec![
            Cell::Text("e\u{301}te\u{301}.evtx".into()),
            Cell::Number(8),
        ]);
        t.push(vec![Cell::Text("Security.evtx".into()), Cell::Number(9)]);
        let mut out = Vec::new();
        t.write_text(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // The count starts at the same terminal column on every line.
        let columns: Vec<usize> = text
            .lines()
            .map(|l| {
                let cut = l.rfind("  ").unwrap() + 2;
                l[..cut].width()
            })
            .collect();
        assert_eq!(columns, [19, 19, 19, 19], "{text}");
    }
}
