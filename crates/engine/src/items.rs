//! Cells whose items are kept apart ([`Items`]): Details, ExtraFieldInfo and
//! AllFieldInfo as `label: value` items, a correlation's computers, channels and
//! EventIDs as lists.
//!
//! A cell is one text buffer holding its items end to end, with nothing between them,
//! and where each item ends and where its label does (u32 offsets): no string per item,
//! and one allocation for the text and one for the ends however many items a cell has
//! (none for an empty cell). Nothing is ever split again: an output's encoder writes the
//! items with its own separator between them, or as `label: value` pairs.
//!
//! The label of an item is its text up to its first `:`, the value what follows that
//! colon (the whole text is the label of an item without one, and its value is empty),
//! as Hayabusa's JSON timeline reads a Details item. The item's text keeps both and the
//! colon, byte for byte, for the outputs that write it whole.

use std::cmp::Ordering;

/// The reads [`Items`] and [`ItemsBuf`] share, over their `text` and `ends`: the items
/// in order, how many (closed, in a buffer), whether none, and the text end to end (a
/// buffer's open item after the closed ones).
macro_rules! item_reads {
    () => {
        /// The items, in order.
        pub fn iter(&self) -> ItemIter<'_> {
            ItemIter::new(&self.text, &self.ends)
        }

        /// How many items there are (closed ones, in a buffer).
        pub fn len(&self) -> usize {
            self.ends.len()
        }

        /// Whether there are none (a cell the outputs show as `-` or leave empty).
        pub fn is_empty(&self) -> bool {
            self.ends.is_empty()
        }

        /// The items' text, end to end (in a buffer, then its open item).
        pub fn text(&self) -> &str {
            &self.text
        }
    };
}

/// Where an item ends in its cell's text, and where its label ends (the offset of the
/// item's first `:`, or the item's end when it has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ItemEnd {
    label: u32,
    end: u32,
}

impl ItemEnd {
    /// The end of an item that ends at `end` with its label ending at `label` (at most
    /// `end`; offsets into the cell's text).
    pub fn new(label: u32, end: u32) -> ItemEnd {
        ItemEnd {
            label: label.min(end),
            end,
        }
    }

    /// Where the label ends: the offset of the item's first `:`, or [`Self::end`].
    pub fn label(self) -> u32 {
        self.label
    }

    /// Where the item ends.
    pub fn end(self) -> u32 {
        self.end
    }
}

/// One item of a cell: its text and where its label ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'a> {
    text: &'a str,
    /// The label's length: the offset of the first `:`, or the text's length.
    label: usize,
}

impl<'a> Item<'a> {
    /// The item's whole text, its colon included.
    pub fn text(self) -> &'a str {
        self.text
    }

    /// The text before the first `:` (all of it when there is none).
    pub fn label(self) -> &'a str {
        &self.text[..self.label]
    }

    /// The text after the first `:` (empty when there is none).
    pub fn value(self) -> &'a str {
        self.text.get(self.label + 1..).unwrap_or("")
    }
}

/// The items of a cell, in order.
#[derive(Debug, Clone)]
pub struct ItemIter<'a> {
    text: &'a str,
    ends: std::slice::Iter<'a, ItemEnd>,
    start: usize,
}

impl<'a> ItemIter<'a> {
    fn new(text: &'a str, ends: &'a [ItemEnd]) -> Self {
        ItemIter {
            text,
            ends: ends.iter(),
            start: 0,
        }
    }
}

impl<'a> ItemIter<'a> {
    /// The text of the items not yet taken, end to end.
    pub fn rest(&self) -> &'a str {
        let end = self
            .ends
            .as_slice()
            .last()
            .map_or(self.start, |e| e.end as usize);
        &self.text[self.start..end]
    }
}

impl<'a> Iterator for ItemIter<'a> {
    type Item = Item<'a>;

    #[inline]
    fn next(&mut self) -> Option<Item<'a>> {
        let e = self.ends.next()?;
        let (start, end) = (self.start, e.end as usize);
        self.start = end;
        Some(Item {
            text: &self.text[start..end],
            label: e.label as usize - start,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ends.size_hint()
    }
}

impl ExactSizeIterator for ItemIter<'_> {}

impl Default for ItemIter<'_> {
    /// No items.
    fn default() -> Self {
        ItemIter::new("", &[])
    }
}

/// The items of a cell, owned: the form a row holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Items {
    text: Box<str>,
    ends: Box<[ItemEnd]>,
}

impl Items {
    /// A cell of `items`, each labelled at its first `:`.
    pub fn of<'s>(items: impl IntoIterator<Item = &'s str>) -> Items {
        let mut b = ItemsBuf::default();
        for i in items {
            b.push(i);
        }
        b.to_items()
    }

    /// The items of `text` ending at `ends`: `None` unless every end is in order, within
    /// the text and on a character boundary, and every label within its item.
    pub fn from_parts(text: String, ends: Vec<ItemEnd>) -> Option<Items> {
        let mut start = 0;
        for e in &ends {
            let (label, end) = (e.label as usize, e.end as usize);
            let fits = start <= label && label <= end && end <= text.len();
            if !fits || !text.is_char_boundary(label) || !text.is_char_boundary(end) {
                return None;
            }
            start = end;
        }
        (start == text.len()).then(|| Items {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        })
    }

    item_reads!();

    /// Where each item ends.
    pub fn ends(&self) -> &[ItemEnd] {
        &self.ends
    }

    /// The items' texts with `sep` between them (an encoder's separator), appended to
    /// `out`.
    pub fn join_into(&self, sep: &str, out: &mut String) {
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            out.push_str(item.text());
        }
    }

    /// [`Self::join_into`] a new string.
    pub fn join(&self, sep: &str) -> String {
        let mut out = String::with_capacity(self.text.len() + self.len() * sep.len());
        self.join_into(sep, &mut out);
        out
    }

    /// The bytes the cell owns.
    pub fn heap_bytes(&self) -> usize {
        self.text.len() + std::mem::size_of_val(&*self.ends)
    }
}

impl Ord for Items {
    /// Item by item, each by its text (then by where labels end, for cells built with
    /// other labels than their colons give).
    fn cmp(&self, other: &Self) -> Ordering {
        self.iter()
            .map(Item::text)
            .cmp(other.iter().map(Item::text))
            .then_with(|| self.ends.cmp(&other.ends))
    }
}

impl PartialOrd for Items {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialOrd for ItemEnd {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ItemEnd {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.end, self.label).cmp(&(other.end, other.label))
    }
}

/// A cell's items being built, in buffers kept from one cell to the next (no allocation
/// once they have grown). Text appended after the last item is the open item, which
/// [`Self::close`] ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ItemsBuf {
    text: String,
    ends: Vec<ItemEnd>,
}

impl ItemsBuf {
    /// Empties the cell.
    pub fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Adds an item.
    pub fn push(&mut self, item: &str) {
        self.text.push_str(item);
        self.close();
    }

    /// The text, to append the open item to.
    pub fn text_mut(&mut self) -> &mut String {
        &mut self.text
    }

    /// Ends the open item (everything appended since the last item), labelled at its
    /// first `:`.
    #[inline]
    pub fn close(&mut self) {
        let start = self.closed();
        let item = &self.text.as_bytes()[start..];
        let label = memchr::memchr(b':', item).map_or(item.len(), |at| at);
        self.ends.push(ItemEnd {
            label: offset(start + label),
            end: offset(self.text.len()),
        });
    }

    /// Ends the open item, its label `label` bytes long (the offset of its first `:`, or
    /// its length when it has none: what the caller knows, which [`Self::close`] finds).
    #[inline]
    pub fn close_labelled(&mut self, label: usize) {
        let start = self.closed();
        let end = self.text.len();
        self.ends.push(ItemEnd {
            label: offset((start + label).min(end)),
            end: offset(end),
        });
    }

    /// Adds `item`, its label as it is (after the closed items: any open text is
    /// part of it).
    pub fn push_labelled(&mut self, item: Item<'_>) {
        let start = self.text.len();
        self.text.push_str(item.text);
        self.close_labelled(start - self.closed() + item.label);
    }

    /// The open item's text.
    pub fn open(&self) -> &str {
        &self.text[self.closed()..]
    }

    /// Drops the open item.
    pub fn discard_open(&mut self) {
        let start = self.closed();
        self.text.truncate(start);
    }

    /// Where the open item starts: the end of the last item.
    fn closed(&self) -> usize {
        self.ends.last().map_or(0, |e| e.end as usize)
    }

    /// Appends `items` (their labels as they are).
    pub fn extend(&mut self, items: &Items) {
        let base = offset(self.text.len());
        self.text.push_str(&items.text);
        self.ends.extend(items.ends.iter().map(|e| ItemEnd {
            label: base + e.label,
            end: base + e.end,
        }));
    }

    item_reads!();

    /// The closed items, owned (copied into buffers of their size).
    pub fn to_items(&self) -> Items {
        let end = self.closed();
        Items {
            text: self.text[..end].into(),
            ends: self.ends.as_slice().into(),
        }
    }
}

/// A text offset as an item end. Cells are far below 4 GiB (a row's text comes from
/// one record); a longer one would only misplace its last ends, never panic, as
/// offsets are used through checked slicing.
fn offset(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(i: ItemIter<'_>) -> Vec<(&str, &str, &str)> {
        i.map(|i| (i.text(), i.label(), i.value())).collect()
    }

    #[test]
    fn items_keep_their_text_and_split_label_and_value_at_the_first_colon() {
        let mut b = ItemsBuf::default();
        b.push("Cmdline: a: b");
        b.push("NoColon");
        b.text_mut().push_str("Count:");
        b.text_mut().push('3');
        b.close();
        b.push("");
        b.push(":v");
        let want = [
            ("Cmdline: a: b", "Cmdline", " a: b"),
            ("NoColon", "NoColon", ""),
            ("Count:3", "Count", "3"),
            ("", "", ""),
            (":v", "", "v"),
        ];
        assert_eq!(texts(b.iter()), want);
        let mut rest = b.iter();
        assert_eq!(rest.rest(), "Cmdline: a: bNoColonCount:3:v");
        rest.next();
        assert_eq!(rest.rest(), "NoColonCount:3:v");
        let owned = b.to_items();
        assert_eq!(texts(owned.iter()), want);
        assert_eq!(owned.len(), 5);
        assert_eq!(owned.text(), "Cmdline: a: bNoColonCount:3:v");
        let again = Items::from_parts(owned.text().to_string(), owned.ends().to_vec());
        assert_eq!(again.as_ref(), Some(&owned));
    }

    #[test]
    fn the_open_item_is_not_an_item_until_closed() {
        let mut b = ItemsBuf::default();
        b.push("a");
        b.text_mut().push_str("b: c");
        assert_eq!(b.open(), "b: c");
        assert_eq!(b.len(), 1);
        assert_eq!(b.to_items(), Items::of(["a"]));
        b.discard_open();
        assert_eq!(b.text(), "a");
        let mut c = ItemsBuf::default();
        c.push("x");
        c.extend(&Items::of(["y: 1", "z"]));
        assert_eq!(
            texts(c.iter()),
            [("x", "x", ""), ("y: 1", "y", " 1"), ("z", "z", "")]
        );
    }

    #[test]
    fn damaged_ends_are_refused() {
        let ok = |text: &str, ends: &[(u32, u32)]| {
            let ends = ends.iter().map(|&(l, e)| ItemEnd { label: l, end: e });
            Items::from_parts(text.to_string(), ends.collect()).is_some()
        };
        assert!(ok("ab", &[(1, 1), (2, 2)]));
        assert!(ok("", &[]));
        assert!(ok("", &[(0, 0)]));
        assert!(!ok("ab", &[(1, 1)]), "text left over");
        assert!(!ok("ab", &[(1, 3)]), "past the end");
        assert!(!ok("ab", &[(2, 1), (2, 2)]), "label past its item");
        assert!(!ok("ab", &[(1, 2), (1, 2)]), "label before its item");
        assert!(!ok("é", &[(1, 2)]), "inside a character");
    }

    #[test]
    fn cells_are_ordered_item_by_item() {
        let a = Items::of(["a", "c"]);
        let b = Items::of(["ab"]);
        assert!(a < b);
        assert!(Items::of(["a"]) < Items::of(["a", ""]));
        assert!(Items::default() < Items::of([""]));
        assert_eq!(
            Items::of(["x: 1"]).cmp(&Items::of(["x: 1"])),
            Ordering::Equal
        );
    }
}
