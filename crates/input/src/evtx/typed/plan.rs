//! Leaf plans: the leaves a record fills, kept per shape, so that a record of a shape
//! seen before fills its view straight from its values, without resolving its tree and
//! walking it again.
//!
//! A record's leaves (their paths, ids, and how each text is made of template text and
//! values) follow from its [`Shape`]: its template instances in reading order (the root
//! and those nested in BinXML values, each with its template and number of values) and,
//! per value, whether it is null, whether it is empty and which instance it holds, when
//! the record has no string arrays and no template that may repeat `Data` names. The
//! walk reads a value's text in one way only that a plan cannot replay: a `Data` name
//! taken from a value, which leaves the record without a plan. For such records the
//! first of each shape is resolved and walked as usual and the walk is recorded; the
//! next ones replay it. Plans hold field ids, so they are dropped when the field table
//! changes. A worker keeps at most 512 shapes per root template and 2,048 plans in all.

use super::resolve::{Kind, Resolved, NONE};
use scanner_rules::{FieldId, FxHashMap};
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers plans in this process, from 1: a plan's number stands for its leaf paths.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Most values a record may have for its shape to key a plan (a value's text is
/// referred to by a 16-bit index).
const MAX_VALUES: usize = 1024;
/// Shapes kept per root template (records whose event data is an instance nested in
/// the root's share one root template across event types); past that its records of
/// new shapes are walked without being recorded, until the plans start afresh.
const PER_TEMPLATE: u16 = 512;
/// Plans a worker keeps in all (a few KB each); past that they start afresh.
const MAX_PLANS: usize = 2048;

/// The shape of a record: what its leaves follow from besides its values' texts, as
/// one key. Per instance in reading order (the root first, then depth first those that
/// values hold) its template and number of values; per value in reading order, the
/// instance it holds, or whether it is null and whether it is empty.
#[derive(Debug, Default)]
pub(super) struct Shape {
    key: Vec<u32>,
}

/// A value's code in a shape's key: null (1) and empty (2), or this plus the index of
/// the instance it holds.
const HOLDS: u32 = 4;

impl Shape {
    /// Reads the shape of the record read into `r`; `false` when no plan may stand for it.
    pub(super) fn read(&mut self, r: &Resolved) -> bool {
        self.key.clear();
        if r.data_names || r.vals.len() > MAX_VALUES {
            return false;
        }
        self.key.push(r.insts.len() as u32);
        for inst in &r.insts {
            self.key.extend([inst.template, inst.vals.1 - inst.vals.0]);
        }
        for v in &r.vals {
            if v.items.is_some() {
                return false;
            }
            self.key.push(match v.nested {
                NONE => u32::from(v.null) | u32::from(v.span.0 == v.span.1) << 1,
                inst => HOLDS + inst,
            });
        }
        true
    }

    /// The root template of the record read.
    fn root_template(&self) -> u32 {
        self.key[1]
    }
}

/// A piece of a leaf's text.
#[derive(Debug)]
enum Part {
    Text(Box<str>),
    /// The text of the record's value with this index.
    Value(u16),
}

#[derive(Debug)]
struct PlanLeaf {
    /// Where its path is in the plan's `paths`.
    path: (u32, u32),
    ids: (Option<FieldId>, Option<FieldId>),
    parts: Box<[Part]>,
    /// An element with no content (`RecordView::push_empty_element`).
    empty: bool,
}

/// The leaves of one shape.
#[derive(Debug)]
pub(super) struct Plan {
    /// Unique in the process: views it fills are given it (`RecordView::set_paths_id`).
    id: u64,
    leaves: Vec<PlanLeaf>,
    /// The leaves' paths, end to end: added to a view at once.
    paths: Box<str>,
    /// The record's rendering cost (see `Resolved::cost`) but for its values' text…
    bytes: usize,
    nodes: usize,
    /// …which counts each value once per node that holds it.
    uses: Box<[u16]>,
}

impl Plan {
    /// What rendering the record in `r` would cost the crate, as `Resolved::cost`
    /// reckons it.
    pub(super) fn cost(&self, r: &Resolved) -> (usize, usize) {
        let text: usize = self.uses.iter().map(|&v| value_len(r, v)).sum();
        (self.bytes + 6 * text, self.nodes)
    }

    /// Fills `view` (cleared) with the record's leaves; `scratch` holds texts of
    /// several parts.
    pub(super) fn fill(&self, r: &Resolved, scratch: &mut String, view: &mut crate::RecordView) {
        view.defer_lowercase();
        let base = view.push_paths(&self.paths);
        for leaf in &self.leaves {
            let path = (base + leaf.path.0, base + leaf.path.1);
            if leaf.empty {
                view.push_leaf(path, "", leaf.ids, true);
                continue;
            }
            match &*leaf.parts {
                [Part::Value(v)] => view.push_leaf(path, value_text(r, *v), leaf.ids, false),
                parts => {
                    scratch.clear();
                    for p in parts {
                        scratch.push_str(match p {
                            Part::Text(t) => t,
                            Part::Value(v) => value_text(r, *v),
                        });
                    }
                    view.push_leaf(path, scratch, leaf.ids, false);
                }
            }
        }
        view.lowercase_deferred();
        view.set_paths_id(self.id);
    }
}

/// The length of [`value_text`], from its span alone.
fn value_len(r: &Resolved, v: u16) -> usize {
    let (a, b) = r.vals[v as usize].span;
    (b - a) as usize
}

fn value_text(r: &Resolved, v: u16) -> &str {
    let (a, b) = r.vals[v as usize].span;
    &r.text[a as usize..b as usize]
}

/// The value whose text is exactly `text[a..b]` (not empty), when the text is a value's
/// and not template text, which comes after all values (`values_end`). Values are in
/// reading order, their texts one after the other, but those holding instances have
/// empty spans: searched one by one (only while a plan is recorded).
fn value_at(r: &Resolved, (a, b): (u32, u32), values_end: u32) -> Option<Result<u16, ()>> {
    if a == b || a >= values_end {
        return None;
    }
    let found = r.vals.iter().position(|v| v.span == (a, b));
    Some(found.map(|i| i as u16).ok_or(()))
}

/// Per worker: the plans of the shapes it has seen.
#[derive(Debug, Default)]
pub(super) struct Plans {
    /// Each shape's plan, by its index in `list`.
    by_shape: FxHashMap<Box<[u32]>, u32>,
    list: Vec<Plan>,
    /// Plans held per root template (by template index).
    per_template: Vec<u16>,
}

impl Plans {
    /// The index of `shape`'s plan, for [`Self::get`] until the plans are cleared.
    pub(super) fn find(&self, shape: &Shape) -> Option<u32> {
        self.by_shape.get(&shape.key[..]).copied()
    }

    /// The plan at `index` ([`Self::find`]), unless the plans were cleared since.
    pub(super) fn get(&self, index: u32) -> Option<&Plan> {
        self.list.get(index as usize)
    }

    pub(super) fn clear(&mut self) {
        self.by_shape.clear();
        self.list.clear();
        self.per_template.clear();
    }

    fn insert(&mut self, shape: &Shape, plan: Plan) {
        if self.by_shape.len() >= MAX_PLANS {
            self.clear();
        }
        let t = shape.root_template() as usize;
        if self.per_template.len() <= t {
            self.per_template.resize(t + 1, 0);
        }
        if self.per_template[t] >= PER_TEMPLATE {
            return;
        }
        if let Some(&at) = self.by_shape.get(&shape.key[..]) {
            self.list[at as usize] = plan;
        } else {
            self.by_shape
                .insert(shape.key[..].into(), self.list.len() as u32);
            self.list.push(plan);
            self.per_template[t] += 1;
        }
    }
}

/// Records a plan while a record is walked.
#[derive(Debug)]
pub(super) struct Recorder {
    /// Where the values' text ends in `Resolved::text` (template text follows).
    values_end: u32,
    leaves: Vec<PlanLeaf>,
    paths: String,
    /// Cleared when the walk took something from a value that a plan cannot replay.
    ok: bool,
}

impl Recorder {
    pub(super) fn new(values_end: u32) -> Recorder {
        Recorder {
            values_end,
            leaves: Vec::new(),
            paths: String::new(),
            ok: true,
        }
    }

    /// A leaf written: its path, ids, and the nodes its text is made of.
    pub(super) fn leaf(
        &mut self,
        r: &Resolved,
        path: &str,
        ids: (Option<FieldId>, Option<FieldId>),
        nodes: impl Iterator<Item = Kind>,
        empty: bool,
    ) {
        if !self.ok {
            return;
        }
        let mut parts = Vec::new();
        for k in nodes {
            match k {
                Kind::Str(a, b) => match value_at(r, (a, b), self.values_end) {
                    Some(Ok(v)) => parts.push(Part::Value(v)),
                    Some(Err(())) => self.ok = false,
                    None if a == b => {}
                    None => parts.push(Part::Text(r.text[a as usize..b as usize].into())),
                },
                Kind::Arr(_) => self.ok = false,
                Kind::Elem(_) => {}
            }
        }
        let p0 = self.paths.len() as u32;
        self.paths.push_str(path);
        self.leaves.push(PlanLeaf {
            path: (p0, self.paths.len() as u32),
            ids,
            parts: parts.into(),
            empty,
        });
    }

    /// A path was made of `nodes` (a `Data` name): a plan cannot take it from a value.
    pub(super) fn key(&mut self, r: &Resolved, nodes: impl Iterator<Item = Kind>) {
        for k in nodes {
            match k {
                Kind::Str(a, b) if value_at(r, (a, b), self.values_end).is_some() => {
                    self.ok = false
                }
                Kind::Arr(_) => self.ok = false,
                _ => {}
            }
        }
    }

    /// Keeps the plan recorded for `shape`, the walked record `r`'s, with its cost.
    pub(super) fn finish(
        self,
        r: &Resolved,
        (bytes, nodes): (usize, usize),
        shape: &Shape,
        plans: &mut Plans,
    ) {
        if !self.ok {
            return;
        }
        let mut uses = Vec::new();
        for n in &r.nodes {
            if let Kind::Str(a, b) = n.kind {
                match value_at(r, (a, b), self.values_end) {
                    Some(Ok(v)) => uses.push(v),
                    Some(Err(())) => return,
                    None => {}
                }
            }
        }
        let text: usize = uses.iter().map(|&v| value_len(r, v)).sum();
        let plan = Plan {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            leaves: self.leaves,
            paths: self.paths.into(),
            bytes: bytes - 6 * text,
            nodes,
            uses: uses.into(),
        };
        plans.insert(shape, plan);
    }
}

#[cfg(test)]
mod tests {
    use super::super::TypedState;
    use super::*;
    use crate::evtx::test_log::{event, first_chunk, log, named};
    use crate::RecordView;
    use scanner_evtx_writer::Element;
    use scanner_rules::FieldTable;

    /// Makes the element named `name` of the template defined in `chunk` depend on value
    /// `value`: left out of the instances where that value is null. (The writer writes
    /// no dependencies; the name follows its element's start in place, at first use.)
    fn depend(chunk: &mut [u8], name: &str, value: u16) {
        let mut needle = (name.len() as u16).to_le_bytes().to_vec();
        needle.extend(name.encode_utf16().flat_map(u16::to_le_bytes));
        let at = chunk
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("the name in place");
        // Token, dependency, size and name offset, then the name's link and hash.
        let start = at - 2 - 4 - 4 - 4 - 2 - 1;
        assert_eq!(chunk[start] & 0x0f, 0x01, "an element's start");
        assert_eq!(chunk[start + 1..start + 3], [0xff, 0xff], "no dependency");
        chunk[start + 1..start + 3].copy_from_slice(&value.to_le_bytes());
    }

    /// Makes value `value` of the record whose BinXML starts at `at` a null one (it must
    /// be empty): its descriptor's type becomes NullType.
    fn make_null(chunk: &mut [u8], at: usize, value: usize) {
        let u32_at = |p: usize| u32::from_le_bytes(chunk[p..p + 4].try_into().unwrap());
        // Fragment header, instance token, a byte, template id, definition offset, and
        // the definition in place at its first use (link, GUID, size, body).
        let mut pos = at + 4 + 1 + 1 + 4;
        let def = u32_at(pos) as usize;
        pos += 4;
        if def == pos {
            pos += 24 + u32_at(pos + 20) as usize;
        }
        let d = pos + 4 + 4 * value;
        assert_eq!(chunk[d..d + 3], [0, 0, 0x01], "an empty string");
        chunk[d + 2] = 0x00;
    }

    #[test]
    fn a_null_value_and_an_empty_one_have_plans_of_their_own() {
        // `Dep` depends on `A`'s value (the fourth: Provider's name, EventID and
        // Channel come first): a null `A` leaves it out, an empty one does not. The
        // writer gives a null value a template of its own: it writes an empty string,
        // made null here.
        let rec = |a: &str| {
            let data = Element::new("EventData")
                .child(named("A", a))
                .child(Element::new("Dep").text("d"));
            event(1, data)
        };
        let events: Vec<_> = ["", "", "x"].repeat(3).into_iter().map(rec).collect();
        let (mut chunk, records) = first_chunk(&log(&events));
        depend(&mut chunk, "Dep", 3);
        for at in records.iter().step_by(3) {
            make_null(&mut chunk, at.offset, 3);
        }
        let table = FieldTable::new();
        let mut state = TypedState::default();
        state.begin_chunk();
        let (mut replayed, mut walked) = (RecordView::default(), RecordView::default());
        let (mut plans, mut kept) = (0, Vec::new());
        let dep = |v: &RecordView| v.leaves().any(|(p, _)| p == "Event.EventData.Dep");
        for at in &records {
            assert!(state.prepare_at(&chunk, at.offset, at.size));
            plans += usize::from(state.planned());
            state.fill(&table, &mut replayed);
            let mut fresh = TypedState::default();
            fresh.begin_chunk();
            assert!(fresh.prepare_at(&chunk, at.offset, at.size));
            fresh.fill(&table, &mut walked);
            assert!(
                replayed
                    .leaves_and_empty_elements()
                    .eq(walked.leaves_and_empty_elements()),
                "record {}: {:?} walked {:?}",
                at.id,
                replayed.leaves_and_empty_elements().collect::<Vec<_>>(),
                walked.leaves_and_empty_elements().collect::<Vec<_>>()
            );
            kept.push(dep(&replayed));
        }
        assert_eq!(plans, 6, "three shapes, each walked once");
        assert_eq!(kept, [false, true, true].repeat(3));
    }

    fn plan() -> Plan {
        Plan {
            id: 0,
            leaves: Vec::new(),
            paths: "".into(),
            bytes: 0,
            nodes: 0,
            uses: Box::new([]),
        }
    }

    /// The shape of a one-instance record of `template` whose `n`th value is null.
    fn shape(template: u32, n: u32) -> Shape {
        Shape {
            key: vec![1, template, 1, n],
        }
    }

    #[test]
    fn plans_are_bounded_per_root_template_and_in_all() {
        let mut p = Plans::default();
        for n in 0..u32::from(PER_TEMPLATE) + 3 {
            p.insert(&shape(1, n), plan());
        }
        let kept = u32::from(PER_TEMPLATE);
        assert!(p.find(&shape(1, 0)).is_some(), "the first shapes stay");
        assert!(p.find(&shape(1, kept - 1)).is_some());
        assert!(
            p.find(&shape(1, kept)).is_none(),
            "no more for that template"
        );
        assert_eq!(p.by_shape.len(), usize::from(PER_TEMPLATE));
        p.insert(&shape(2, 0), plan());
        assert!(
            p.find(&shape(2, 0)).is_some(),
            "other templates still get plans"
        );
        for t in 3..3 + MAX_PLANS as u32 {
            p.insert(&shape(t, 0), plan());
            assert!(p.by_shape.len() <= MAX_PLANS);
        }
        assert!(p.find(&shape(3 + MAX_PLANS as u32 - 1, 0)).is_some());
        assert!(p.find(&shape(1, 0)).is_none(), "started afresh");
        p.clear();
        assert!(p.by_shape.is_empty() && p.per_template.is_empty());
    }
}
