//! The record view: one record's fields, as rules and writers read them.
//!
//! A view is reused for every record a worker thread handles: its buffers keep their
//! capacity, so filling it allocates nothing once warm. Each value is stored as
//! written (trimmed) and lowercased once (the EVTX typed path lowercases a record's
//! values together, in one pass when they are ASCII), and each leaf is linked to the
//! [`FieldId`] the rule set interned for its path, so a rule reads a field by index.

use scanner_rules::{Event, FieldId, FieldTable, Value};

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Leaf {
    path: (u32, u32),
    raw: (u32, u32),
    lower: (u32, u32),
    next: u32,
    /// A second entry for a value that also fills another field: not listed as a leaf.
    alias: bool,
    /// An element with no content (`<Param2></Param2>`): matched as an empty value,
    /// but not listed as a leaf nor shown (Hayabusa treats it as absent there).
    empty: bool,
}

/// A reusable view of one record.
#[derive(Debug, Default)]
pub struct RecordView {
    paths: String,
    raw: String,
    lower: String,
    leaves: Vec<Leaf>,
    first: Vec<u32>,
    last: Vec<u32>,
    touched: Vec<FieldId>,
    /// Non-zero when the leaf paths are those of every other view filled with the
    /// same number (set by whoever filled it; see [`Self::set_paths_id`]).
    paths_id: u64,
    /// While lowercasing is deferred ([`Self::defer_lowercase`]): the first leaf, and
    /// the start in `raw` of the first value, not lowercased yet.
    deferred: Option<(u32, u32)>,
}

impl Leaf {
    /// Whether it is listed as a leaf ([`RecordView::leaves`]): neither an alias nor
    /// an element with no content.
    fn listed(&self) -> bool {
        !self.alias && !self.empty
    }
}

#[inline]
fn span(s: &str, start: usize) -> (u32, u32) {
    (start as u32, s.len() as u32)
}

impl RecordView {
    /// Empties the view for a new record of a rule set with `fields` interned fields.
    pub fn clear(&mut self, fields: usize) {
        if self.first.len() != fields {
            self.first.clear();
            self.first.resize(fields, NONE);
            self.last.clear();
            self.last.resize(fields, NONE);
        } else {
            for &f in &self.touched {
                self.first[f as usize] = NONE;
                self.last[f as usize] = NONE;
            }
        }
        self.touched.clear();
        self.paths_id = 0;
        self.deferred = None;
        self.paths.clear();
        self.raw.clear();
        self.lower.clear();
        self.leaves.clear();
    }

    /// Says that the leaf paths pushed since [`Self::clear`] are, in order, those of
    /// every view given the same `id` (non-zero, unique in the process to one sequence
    /// of paths), so that what depends only on them can be kept by `id`.
    pub fn set_paths_id(&mut self, id: u64) {
        self.paths_id = id;
    }

    /// Forgets the id of [`Self::set_paths_id`]: leaves were added that are not those
    /// of the sequence it stands for.
    pub fn forget_paths_id(&mut self) {
        self.paths_id = 0;
    }

    /// The id given by [`Self::set_paths_id`] since the view was cleared, if any.
    pub fn paths_id(&self) -> Option<u64> {
        (self.paths_id != 0).then_some(self.paths_id)
    }

    /// Defers lowercasing the values pushed from now on until
    /// [`Self::lowercase_deferred`], which lowercases them in one pass when they are
    /// all ASCII (most records): one call per record instead of one per value. The
    /// view must not be read in between.
    pub(crate) fn defer_lowercase(&mut self) {
        if self.deferred.is_none() {
            self.deferred = Some((self.leaves.len() as u32, self.raw.len() as u32));
        }
    }

    /// Lowercases the values pushed since [`Self::defer_lowercase`], and pushes the
    /// next ones lowercased again as they come.
    pub(crate) fn lowercase_deferred(&mut self) {
        let Some((first, r0)) = self.deferred.take() else {
            return;
        };
        let pending = &mut self.leaves[first as usize..];
        let tail = &self.raw[r0 as usize..];
        let l0 = self.lower.len();
        if scanner_rules::push_lowercase_same_length(&mut self.lower, tail) {
            // Every character kept its length (all of them, when the text is ASCII):
            // each span moves by the same offset.
            let shift = |(a, b): (u32, u32)| (a - r0 + l0 as u32, b - r0 + l0 as u32);
            for l in pending {
                l.lower = shift(l.raw);
            }
        } else {
            self.lower.truncate(l0);
            // An alias repeats the leaf before it, whose lowercase it shares.
            let mut last = (0, 0);
            for l in pending {
                if !l.alias {
                    let l0 = self.lower.len();
                    let raw = &self.raw[l.raw.0 as usize..l.raw.1 as usize];
                    scanner_rules::push_lowercase(&mut self.lower, raw);
                    last = span(&self.lower, l0);
                }
                l.lower = last;
            }
        }
    }

    /// Adds a leaf value at `path` (e.g. `Event.EventData.CommandLine`).
    pub fn push(&mut self, table: &FieldTable, path: &str, value: &str) {
        self.push_linked(path, value, table.lookup_leaf(path));
    }

    /// [`Self::push`] with the ids `table.lookup_leaf(path)` gave (kept by the caller).
    pub fn push_linked(
        &mut self,
        path: &str,
        value: &str,
        ids: (Option<FieldId>, Option<FieldId>),
    ) {
        let path = self.push_path(path);
        self.push_leaf(path, value, ids, false);
    }

    /// Appends leaf paths, end to end, for leaves [`Self::push_leaf`] then adds; returns
    /// where they start in the view's paths.
    pub(crate) fn push_paths(&mut self, paths: &str) -> u32 {
        let start = self.paths.len() as u32;
        self.paths.push_str(paths);
        start
    }

    fn push_path(&mut self, path: &str) -> (u32, u32) {
        let p0 = self.paths.len();
        self.paths.push_str(path);
        span(&self.paths, p0)
    }

    /// [`Self::push_empty_element`] with the ids `table.lookup_leaf(path)` gave.
    pub fn push_empty_linked(&mut self, path: &str, ids: (Option<FieldId>, Option<FieldId>)) {
        let path = self.push_path(path);
        self.push_leaf(path, "", ids, true);
    }

    /// [`Self::push_linked`] (or, when `empty`, [`Self::push_empty_linked`]) of a leaf
    /// whose path is already in the view's paths, at `path` (see [`Self::push_paths`]).
    pub(crate) fn push_leaf(
        &mut self,
        path: (u32, u32),
        value: &str,
        (exact, by_name): (Option<FieldId>, Option<FieldId>),
        empty: bool,
    ) {
        // Most values start and end with printable ASCII: nothing to trim.
        let edge = |b: Option<&u8>| b.is_some_and(|&c| (0x21..0x7f).contains(&c));
        let b = value.as_bytes();
        let value = if edge(b.first()) && edge(b.last()) {
            value
        } else {
            value.trim()
        };
        let r0 = self.raw.len();
        self.raw.push_str(value);
        let lower = if self.deferred.is_some() {
            (0, 0)
        } else {
            let l0 = self.lower.len();
            scanner_rules::push_lowercase(&mut self.lower, value);
            span(&self.lower, l0)
        };
        let leaf = Leaf {
            path,
            raw: span(&self.raw, r0),
            lower,
            next: NONE,
            alias: false,
            empty,
        };
        self.leaves.push(leaf);
        if let Some(f) = exact {
            self.link(f, self.leaves.len() - 1);
        }
        if let Some(f) = by_name {
            self.leaves.push(Leaf {
                alias: true,
                ..leaf
            });
            self.link(f, self.leaves.len() - 1);
        }
    }

    /// Adds an element with no content at `path`: rules see an empty value (Sigma's
    /// `''`), while [`Self::leaves`] and [`Self::shown_values`] leave it out.
    pub fn push_empty_element(&mut self, table: &FieldTable, path: &str) {
        self.push_empty_linked(path, table.lookup_leaf(path));
    }

    /// The values of a field as shown in Details: elements with no content left out.
    pub fn shown_values(&self, field: FieldId) -> impl Iterator<Item = Value<'_>> {
        let mut at = self.first.get(field as usize).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            while at != NONE {
                let l = &self.leaves[at as usize];
                at = l.next;
                if !l.empty {
                    return Some(self.value(l));
                }
            }
            None
        })
    }

    fn link(&mut self, f: FieldId, idx: usize) {
        let f = f as usize;
        let idx = idx as u32;
        if self.first[f] == NONE {
            self.first[f] = idx;
            self.touched.push(f as FieldId);
        } else {
            let last = self.last[f] as usize;
            self.leaves[last].next = idx;
        }
        self.last[f] = idx;
    }

    #[inline]
    fn value(&self, l: &Leaf) -> Value<'_> {
        Value {
            raw: &self.raw[l.raw.0 as usize..l.raw.1 as usize],
            lower: &self.lower[l.lower.0 as usize..l.lower.1 as usize],
        }
    }

    /// The first value of a field, as written.
    pub fn first(&self, field: FieldId) -> Option<&str> {
        self.values(field).next().map(|v| v.raw)
    }

    /// The first value of a field, lowercased.
    pub fn first_lower(&self, field: FieldId) -> Option<&str> {
        self.values(field).next().map(|v| v.lower)
    }

    /// Every leaf as (path, value), in record order.
    pub fn leaves(&self) -> impl Iterator<Item = (&str, &str)> {
        self.leaves.iter().filter(|l| l.listed()).map(|l| {
            (
                &self.paths[l.path.0 as usize..l.path.1 as usize],
                &self.raw[l.raw.0 as usize..l.raw.1 as usize],
            )
        })
    }

    /// Every leaf from position `from` of the view on (positions count every value
    /// pushed, aliases and elements with no content included, which are not listed), as
    /// (position, path, value), in record order: [`Self::leaves`] from there.
    pub fn leaves_from(&self, from: usize) -> impl Iterator<Item = (usize, &str, &str)> {
        let rest = self.leaves.get(from..).unwrap_or_default();
        rest.iter()
            .enumerate()
            .filter(|(_, l)| l.listed())
            .map(move |(i, l)| {
                (
                    from + i,
                    &self.paths[l.path.0 as usize..l.path.1 as usize],
                    &self.raw[l.raw.0 as usize..l.raw.1 as usize],
                )
            })
    }

    /// The values of [`Self::leaves_from`], without their paths.
    pub fn values_from(&self, from: usize) -> impl Iterator<Item = &str> {
        let rest = self.leaves.get(from..).unwrap_or_default();
        rest.iter()
            .filter(|l| l.listed())
            .map(|l| &self.raw[l.raw.0 as usize..l.raw.1 as usize])
    }

    /// Every leaf and every element with no content as (path, value, whether it is an
    /// element with no content), in record order: [`Self::leaves`] and
    /// [`Self::empty_elements`] together (an element with no content has value `""`).
    pub fn leaves_and_empty_elements(&self) -> impl Iterator<Item = (&str, &str, bool)> {
        self.leaves.iter().filter(|l| !l.alias).map(|l| {
            (
                &self.paths[l.path.0 as usize..l.path.1 as usize],
                &self.raw[l.raw.0 as usize..l.raw.1 as usize],
                l.empty,
            )
        })
    }

    /// The paths of the elements with no content ([`Self::push_empty_element`]), in
    /// record order: matched as empty values, but not among [`Self::leaves`].
    pub fn empty_elements(&self) -> impl Iterator<Item = &str> {
        self.leaves
            .iter()
            .filter(|l| !l.alias && l.empty)
            .map(|l| &self.paths[l.path.0 as usize..l.path.1 as usize])
    }

    /// Every leaf's value, lowercased, in record order (as [`Self::leaves`] lists them).
    pub fn values_lower(&self) -> impl Iterator<Item = &str> {
        self.leaves
            .iter()
            .filter(|l| l.listed())
            .map(|l| &self.lower[l.lower.0 as usize..l.lower.1 as usize])
    }

    /// The values at exactly `path`, in record order.
    pub fn values_at<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.leaves()
            .filter(move |(p, _)| *p == path)
            .map(|(_, v)| v)
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.leaves.iter().filter(|l| l.listed()).count()
    }

    /// Whether the record has no leaves.
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }
}

/// Values of one field, following the leaf chain.
pub struct FieldValues<'a> {
    view: &'a RecordView,
    at: u32,
}

impl<'a> Iterator for FieldValues<'a> {
    type Item = Value<'a>;
    #[inline]
    fn next(&mut self) -> Option<Value<'a>> {
        if self.at == NONE {
            return None;
        }
        let l = &self.view.leaves[self.at as usize];
        self.at = l.next;
        Some(self.view.value(l))
    }
}

impl Event for RecordView {
    #[inline]
    fn values(&self, field: FieldId) -> impl Iterator<Item = Value<'_>> {
        FieldValues {
            view: self,
            at: self.first.get(field as usize).copied().unwrap_or(NONE),
        }
    }

    fn all_values(&self) -> impl Iterator<Item = Value<'_>> {
        self.leaves
            .iter()
            .filter(|l| !l.alias)
            .map(|l| self.value(l))
    }

    /// The `raw` and `lower` buffers hold every value end to end, in leaf order.
    #[inline]
    fn joined(&self, cased: bool) -> Option<&str> {
        Some(if cased { &self.raw } else { &self.lower })
    }

    fn within_one_value(&self, cased: bool, start: usize, end: usize) -> bool {
        let span = |l: &Leaf| if cased { l.raw } else { l.lower };
        // Spans follow each other in leaf order (an alias repeats its leaf's span), so
        // the first leaf ending after `start` is the one holding it.
        let i = self.leaves.partition_point(|l| span(l).1 as usize <= start);
        self.leaves
            .get(i)
            .is_some_and(|l| end <= span(l).1 as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_chain_in_order_and_reset() {
        let mut t = FieldTable::new();
        let data = t.intern("Data");
        let cmd = t.intern("CommandLine");
        let mut v = RecordView::default();
        v.clear(t.len());
        v.push(&t, "Event.EventData.Data", " A ");
        v.push(&t, "Event.EventData.Other", "x");
        v.push(&t, "Event.EventData.Data", "Ü");
        let got: Vec<_> = v.values(data).map(|x| (x.raw, x.lower)).collect();
        assert_eq!(got, vec![("A", "a"), ("Ü", "ü")]);
        assert!(!v.has(cmd));
        assert_eq!(v.all_values().count(), 3);
        v.clear(t.len());
        assert!(!v.has(data));
        assert!(v.is_empty());
    }

    #[test]
    fn an_element_without_content_matches_empty_but_is_not_listed_or_shown() {
        let mut t = FieldTable::new();
        let p2 = t.intern("Param2");
        let mut v = RecordView::default();
        v.clear(t.len());
        v.push(&t, "Event.EventData.Param1", "x");
        v.push_empty_element(&t, "Event.EventData.Param2");
        assert_eq!(v.values(p2).map(|x| x.raw).collect::<Vec<_>>(), [""]);
        assert_eq!(v.shown_values(p2).count(), 0);
        assert_eq!(v.leaves().count(), 1);
        assert_eq!(v.len(), 1);
        assert!(v.empty_elements().eq(["Event.EventData.Param2"]));
    }

    #[test]
    fn deferred_lowercasing_gives_the_view_lowercasing_each_value_gives() {
        let mut t = FieldTable::new();
        let fields = [
            "Image",
            "ThreatName",
            "Param2",
            "User",
            "Event.UserData.Log.User",
        ];
        let ids: Vec<FieldId> = fields.iter().map(|f| t.intern(f)).collect();
        let ascii: &[(&str, &str)] = &[
            ("Event.EventData.Image", "C:\\Windows\\CMD.EXE"),
            ("Event.EventData.Threat Name", " HackTool:Win32/Mimikatz "),
            ("Event.EventData.Param2", ""),
            ("Event.UserData.Log.User", "SYSTEM"),
            ("Event.EventData.Image", "x"),
        ];
        // Non-ASCII letters whose lowercase keeps their length (À, É, Ω), and some
        // whose lowercase does not (İ: 2 bytes to 3; ẞ: 3 to 2).
        let mut same_length = ascii.to_vec();
        same_length.insert(2, ("Event.EventData.User", "ÀDMIN ÉCOLE ΩMEGA ¦ x"));
        let mut mixed = ascii.to_vec();
        mixed.insert(2, ("Event.EventData.User", "ÀDMIN İİ ẞ"));
        for leaves in [ascii, &same_length[..], &mixed[..]] {
            let fill = |defer: bool, split: bool| {
                let mut v = RecordView::default();
                v.clear(t.len());
                if defer {
                    v.defer_lowercase();
                }
                for (i, &(path, value)) in leaves.iter().enumerate() {
                    if split && i == 2 {
                        // Values pushed lowercased in the middle of a deferred run.
                        v.lowercase_deferred();
                    }
                    if split && i == 3 {
                        v.defer_lowercase();
                    }
                    if value.is_empty() {
                        v.push_empty_element(&t, path);
                    } else {
                        v.push(&t, path, value);
                    }
                }
                v.lowercase_deferred();
                v
            };
            let want = fill(false, false);
            for got in [fill(true, false), fill(true, true)] {
                for &f in &ids {
                    let pairs = |v: &RecordView| -> Vec<(String, String)> {
                        v.values(f)
                            .map(|x| (x.raw.into(), x.lower.into()))
                            .collect()
                    };
                    assert_eq!(pairs(&got), pairs(&want), "field {f}");
                }
                assert_eq!(got.joined(false), want.joined(false));
                assert!(got.values_lower().eq(want.values_lower()));
                assert!(got
                    .all_values()
                    .map(|x| x.lower)
                    .eq(want.all_values().map(|x| x.lower)));
                let lower = want.joined(false).unwrap_or("");
                for start in 0..lower.len() {
                    for end in start..=lower.len() {
                        assert_eq!(
                            got.within_one_value(false, start, end),
                            want.within_one_value(false, start, end),
                            "{start}..{end}"
                        );
                    }
                }
            }
            assert!(want
                .values(ids[1])
                .any(|x| x.lower == "hacktool:win32/mimikatz"));
        }
    }
}
