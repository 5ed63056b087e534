//! One row's cells in turn, as the encoders receive them ([`RowCells`]): the cells made
//! for the row in buffers kept from row to row, the row's lists and the rules' tags
//! read where they are ([`CellRef`]).
//!
//! `-X` (rows equal to an earlier one at the same time dropped) and `-R` (field-list
//! cells equal to the previous row's written `DUP`) are decided here, on the cells, for
//! every encoder alike.

use crate::cell::{Cell, CellRef, Slot};
use crate::layout::{Layout, Memo};
use crate::profile::Column;
use scanner_engine::DetectInfo;
use std::collections::HashSet;

/// What `-R` writes in place of a value equal to the previous row's.
pub const DUP: &str = "DUP";

/// One pass's cells: each row's cells in turn, in the profile's column order. It
/// remembers abbreviations and the last timestamp formatted, and, with `-X`, the cells
/// of the current timestamp's rows: a row whose cells (EvtxFile aside) equal those of an
/// earlier row with the same timestamp is dropped (such rows are neighbours in timeline
/// order).
pub struct RowCells<'w, 'a> {
    writer: &'w Layout<'a>,
    cols: Vec<Column>,
    /// Each column's cell for the row, when made for it.
    own: Vec<Cell>,
    /// Where each column's cell is.
    slots: Vec<Slot<'w>>,
    memo: Memo,
    seen: HashSet<Vec<Cell>>,
    group_time: Option<jiff::Timestamp>,
    /// With `-R`, the previous row's value of each column (kept only for the field-list
    /// columns; `None` before the first row).
    previous: Vec<Option<Cell>>,
}

impl<'w, 'a> RowCells<'w, 'a> {
    /// A pass over rows written by `writer`.
    pub fn new(writer: &'w Layout<'a>) -> Self {
        let cols: Vec<Column> = writer.named_columns().iter().map(|(_, c)| *c).collect();
        RowCells {
            writer,
            own: vec![Cell::default(); cols.len()],
            slots: vec![Slot::Own; cols.len()],
            cols,
            memo: Memo::default(),
            seen: HashSet::new(),
            group_time: None,
            previous: Vec::new(),
        }
    }

    /// The writer whose columns these are.
    pub fn writer(&self) -> &'w Layout<'a> {
        self.writer
    }

    /// Renders `r`'s cells ([`Self::cells`]); `false` when `-X` drops the row.
    pub fn fill(&mut self, r: &DetectInfo) -> bool {
        let columns = self.cols.iter().zip(&mut self.own).zip(&mut self.slots);
        for ((&c, cell), slot) in columns {
            *slot = self.writer.cell_into(c, r, &mut self.memo, cell);
        }
        let style = self.writer.style();
        if style.remove_duplicates {
            if self.group_time != Some(r.time) {
                self.group_time = Some(r.time);
                self.seen.clear();
            }
            let key: Vec<Cell> = self
                .cols
                .iter()
                .zip(self.cells(r))
                .filter(|(c, _)| **c != Column::EvtxFile)
                .map(|(_, v)| v.to_cell())
                .collect();
            if !self.seen.insert(key) {
                return false;
            }
        }
        if style.remove_duplicate_data {
            self.mark_repeated_data(r);
        }
        true
    }

    /// `-R`: each field-list cell equal to the previous row's value in its column
    /// becomes [`DUP`]; the value itself is remembered for the next row.
    fn mark_repeated_data(&mut self, r: &DetectInfo) {
        self.previous.resize(self.cols.len(), None);
        for i in 0..self.cols.len() {
            if !self.cols[i].is_field_list() {
                continue;
            }
            let cell = self.cell(i, r).to_cell();
            match &mut self.previous[i] {
                Some(p) if *p == cell => self.slots[i] = Slot::Dup,
                prev => *prev = Some(cell),
            }
        }
    }

    /// Column `i`'s cell of the last row filled, `r`.
    #[inline]
    fn cell<'c>(&'c self, i: usize, r: &'c DetectInfo) -> CellRef<'c> {
        match self.slots[i] {
            Slot::Own => self.own[i].as_ref(),
            Slot::Str(text) => CellRef::Text(text),
            Slot::RowText(text) => CellRef::Text(text.of(r)),
            Slot::Row(list) => CellRef::List(list.of(r)),
            Slot::Items(items) => CellRef::List(items.iter()),
            Slot::Dup => CellRef::Text(DUP),
        }
    }

    /// The cells of the last row filled, `r`, in column order.
    pub fn cells<'c>(&'c self, r: &'c DetectInfo) -> impl Iterator<Item = CellRef<'c>> + 'c {
        (0..self.cols.len()).map(move |i| self.cell(i, r))
    }
}
