//! A cell as the encoders read it ([`CellRef`]): a text, or items kept apart, which only
//! an encoder joins (with its own separator) or writes as JSON pairs and arrays. Cells
//! made for a row are owned ([`Cell`], in buffers kept from row to row); the row's own
//! lists (Details, ExtraFieldInfo, AllFieldInfo, a correlation's computers and EventIDs)
//! and a rule's MITRE tags are read where they are, never copied.

use scanner_engine::{DetectInfo, ItemIter, Items, ItemsBuf, Origin};

/// A cell, borrowed: what an encoder writes.
#[derive(Debug, Clone)]
pub enum CellRef<'c> {
    /// A text, written as it is.
    Text(&'c str),
    /// A list of items (possibly none).
    List(ItemIter<'c>),
}

impl CellRef<'_> {
    /// Appends the cell to `out`: a text as it is, a list's items with `sep` between
    /// them, or `empty` when it has none.
    pub fn write(&self, sep: &str, empty: &str, out: &mut String) {
        match self {
            CellRef::Text(t) => out.push_str(t),
            CellRef::List(items) => {
                if items.len() == 0 {
                    out.push_str(empty);
                }
                for (i, item) in items.clone().enumerate() {
                    if i > 0 {
                        out.push_str(sep);
                    }
                    out.push_str(item.text());
                }
            }
        }
    }

    /// The cell, owned.
    pub fn to_cell(&self) -> Cell {
        let mut c = Cell::default();
        match self {
            CellRef::Text(t) => c.start_text().push_str(t),
            CellRef::List(items) => {
                let buf = c.start_list();
                for item in items.clone() {
                    buf.push_labelled(item);
                }
            }
        }
        c
    }
}

/// One cell, owned: a text, or a list of items (Details and the other field lists as
/// `label: value` items, MITRE tags, a correlation's computers, channels, EventIDs and
/// files, `-M`/`-S`'s authors).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Cell {
    buf: ItemsBuf,
    list: bool,
}

impl Cell {
    /// A cell of text.
    pub fn text(text: &str) -> Cell {
        let mut c = Cell::default();
        c.start_text().push_str(text);
        c
    }

    /// A cell of `items`.
    pub fn items(items: &Items) -> Cell {
        let mut c = Cell::default();
        c.start_list().extend(items);
        c
    }

    /// The cell, borrowed.
    pub fn as_ref(&self) -> CellRef<'_> {
        if self.list {
            CellRef::List(self.buf.iter())
        } else {
            CellRef::Text(self.buf.text())
        }
    }

    /// Empties the cell as a text, to append to.
    pub(crate) fn start_text(&mut self) -> &mut String {
        self.buf.clear();
        self.list = false;
        self.buf.text_mut()
    }

    /// Empties the cell as a list, to add items to.
    pub(crate) fn start_list(&mut self) -> &mut ItemsBuf {
        self.buf.clear();
        self.list = true;
        &mut self.buf
    }
}

/// A list a row holds, read where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowList {
    Details,
    ExtraFieldInfo,
    AllFieldInfo,
    /// A correlation's computers.
    Computers,
    /// A correlation's EventIDs.
    EventIds,
}

impl RowList {
    /// The list in `r` (none when the row does not hold it).
    pub(crate) fn of(self, r: &DetectInfo) -> ItemIter<'_> {
        let origin = || match &r.origin {
            Origin::Correlation(o) => Some(&**o),
            Origin::Record { .. } => None,
        };
        let items = match self {
            RowList::Details => Some(&r.details),
            RowList::ExtraFieldInfo => r.extra.as_ref(),
            RowList::AllFieldInfo => r.all_fields.as_ref(),
            RowList::Computers => origin().map(|o| &o.computers),
            RowList::EventIds => origin().map(|o| &o.event_ids),
        };
        items.map(Items::iter).unwrap_or_default()
    }
}

/// A text a row holds, read where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowText {
    Computer,
    EventId,
    Provider,
}

impl RowText {
    /// The text in `r`.
    pub(crate) fn of(self, r: &DetectInfo) -> &str {
        match self {
            RowText::Computer => &r.computer,
            RowText::EventId => &r.event_id,
            RowText::Provider => &r.provider,
        }
    }
}

/// Where a column's cell is for the current row.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot<'w> {
    /// In the column's own [`Cell`], made for the row.
    Own,
    /// A text that outlives the rows (a rule's title, an input file's path).
    Str(&'w str),
    /// A text of the row.
    RowText(RowText),
    /// A list of the row.
    Row(RowList),
    /// A list that outlives the rows (a rule's MITRE tags).
    Items(&'w Items),
    /// `-R`'s mark.
    Dup,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_written_with_the_separator_asked_for() {
        let mut c = Cell::default();
        let b = c.start_list();
        b.push("a: 1");
        b.push("b");
        let mut out = String::new();
        c.as_ref().write("\r\n", "-", &mut out);
        assert_eq!(out, "a: 1\r\nb");
        let CellRef::List(items) = c.as_ref() else {
            panic!("a list")
        };
        let labels: Vec<&str> = items.map(|i| i.label()).collect();
        assert_eq!(labels, ["a", "b"]);
        assert_eq!(c.as_ref().to_cell(), c);
        let empty = Cell::items(&Items::default());
        out.clear();
        empty.as_ref().write(" | ", "-", &mut out);
        assert_eq!(out, "-");
        let text = Cell::text("x: y");
        out.clear();
        text.as_ref().write("\t", "-", &mut out);
        assert_eq!(out, "x: y", "a text is never cut");
        assert_eq!(text.as_ref().to_cell(), text);
        assert_ne!(Cell::text("a"), Cell::items(&Items::of(["a"])));
    }
}
