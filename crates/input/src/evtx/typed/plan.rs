//! Leaf plans: the leaves a template's records fill, kept per template and shape, so
//! that a record of a shape seen before fills its view straight from its values, without
//! resolving its tree and walking it again.
//!
//! A record's leaves (their paths, ids, and how each text is made of template text and
//! values) follow from its template and, per value, whether it is null and whether it is
//! empty, when the record is one instance without string arrays whose template cannot
//! repeat `Data` names (no `Data` is named by a value). For such records the first of
//! each shape is resolved and walked as usual and the walk is recorded; the next ones
//! replay it. Plans hold field ids, so they are dropped when the field table changes.
//! A worker keeps at most 8 shapes per template and 2,048 plans in all.

use super::resolve::{Kind, Resolved};
use scanner_rules::FieldId;
use std::sync::atomic::{AtomicU64, Ordering};

/// Numbers plans in this process, from 1: a plan's number stands for its leaf paths.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Most values a record may have for its shape to key a plan (one bit each).
const MAX_VALUES: usize = 64;
/// Shapes kept per template; past that the oldest gives way.
const PER_TEMPLATE: usize = 8;
/// Plans a worker keeps in all (a few KB each); past that they start afresh.
const MAX_PLANS: usize = 2048;

/// Which values of a record are null and which are empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    nulls: u64,
    empties: u64,
}

impl Shape {
    /// The shape of the record read into `r`, if a plan may stand for it.
    pub(super) fn of(r: &Resolved) -> Option<Shape> {
        if r.insts.len() != 1 || r.data_names || r.vals.len() > MAX_VALUES {
            return None;
        }
        let mut shape = Shape {
            nulls: 0,
            empties: 0,
        };
        for (i, v) in r.vals.iter().enumerate() {
            if v.items.is_some() {
                return None;
            }
            shape.nulls |= u64::from(v.null) << i;
            shape.empties |= u64::from(v.span.0 == v.span.1) << i;
        }
        Some(shape)
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
    path: Box<str>,
    ids: (Option<FieldId>, Option<FieldId>),
    parts: Box<[Part]>,
    /// An element with no content (`RecordView::push_empty_element`).
    empty: bool,
}

/// The leaves of one template and shape.
#[derive(Debug)]
pub(super) struct Plan {
    /// Unique in the process: views it fills are given it (`RecordView::set_paths_id`).
    id: u64,
    shape: Shape,
    leaves: Vec<PlanLeaf>,
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
        let text: usize = self.uses.iter().map(|&v| value_text(r, v).len()).sum();
        (self.bytes + 6 * text, self.nodes)
    }

    /// Fills `view` (cleared) with the record's leaves; `scratch` holds texts of
    /// several parts.
    pub(super) fn fill(&self, r: &Resolved, scratch: &mut String, view: &mut crate::RecordView) {
        for leaf in &self.leaves {
            if leaf.empty {
                view.push_empty_linked(&leaf.path, leaf.ids);
                continue;
            }
            match &*leaf.parts {
                [Part::Value(v)] => view.push_linked(&leaf.path, value_text(r, *v), leaf.ids),
                parts => {
                    scratch.clear();
                    for p in parts {
                        scratch.push_str(match p {
                            Part::Text(t) => t,
                            Part::Value(v) => value_text(r, *v),
                        });
                    }
                    view.push_linked(&leaf.path, scratch, leaf.ids);
                }
            }
        }
        view.set_paths_id(self.id);
    }
}

fn value_text(r: &Resolved, v: u16) -> &str {
    let (a, b) = r.vals[v as usize].span;
    &r.text[a as usize..b as usize]
}

/// The value whose text is exactly `text[a..b]` (not empty), when the text is a value's
/// and not template text, which comes after all values (`values_end`).
fn value_at(r: &Resolved, (a, b): (u32, u32), values_end: u32) -> Option<Result<u16, ()>> {
    if a == b || a >= values_end {
        return None;
    }
    let from = r.vals.partition_point(|v| v.span.0 < a);
    let found = r.vals[from..]
        .iter()
        .take_while(|v| v.span.0 == a)
        .position(|v| v.span.1 == b)
        .map(|i| (from + i) as u16);
    Some(found.ok_or(()))
}

/// Per worker: the plans of each template it has parsed (by template index).
#[derive(Debug, Default)]
pub(super) struct Plans {
    by_template: Vec<Vec<Plan>>,
    /// Plans held.
    count: usize,
}

impl Plans {
    pub(super) fn find(&self, template: u32, shape: Shape) -> Option<&Plan> {
        self.by_template
            .get(template as usize)?
            .iter()
            .find(|p| p.shape == shape)
    }

    pub(super) fn clear(&mut self) {
        self.by_template.clear();
        self.count = 0;
    }

    fn insert(&mut self, template: u32, plan: Plan) {
        if self.count >= MAX_PLANS {
            self.clear();
        }
        let t = template as usize;
        if self.by_template.len() <= t {
            self.by_template.resize_with(t + 1, Vec::new);
        }
        let list = &mut self.by_template[t];
        if list.len() >= PER_TEMPLATE {
            list.remove(0);
            self.count -= 1;
        }
        list.push(plan);
        self.count += 1;
    }
}

/// Records a plan while a record of shape `shape` is walked.
#[derive(Debug)]
pub(super) struct Recorder {
    shape: Shape,
    /// Where the values' text ends in `Resolved::text` (template text follows).
    values_end: u32,
    leaves: Vec<PlanLeaf>,
    /// Cleared when the walk took something from a value that a plan cannot replay.
    ok: bool,
}

impl Recorder {
    pub(super) fn new(shape: Shape, values_end: u32) -> Recorder {
        Recorder {
            shape,
            values_end,
            leaves: Vec::new(),
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
        self.leaves.push(PlanLeaf {
            path: path.into(),
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

    /// Keeps the plan recorded for `template`, with the cost of the walked record `r`.
    pub(super) fn finish(
        self,
        r: &Resolved,
        (bytes, nodes): (usize, usize),
        template: u32,
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
        let text: usize = uses.iter().map(|&v| value_text(r, v).len()).sum();
        let plan = Plan {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            shape: self.shape,
            leaves: self.leaves,
            bytes: bytes - 6 * text,
            nodes,
            uses: uses.into(),
        };
        plans.insert(template, plan);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(nulls: u64) -> Plan {
        Plan {
            id: 0,
            shape: Shape { nulls, empties: 0 },
            leaves: Vec::new(),
            bytes: 0,
            nodes: 0,
            uses: Box::new([]),
        }
    }

    #[test]
    fn plans_are_bounded_per_template_and_in_all() {
        let mut p = Plans::default();
        for n in 0..PER_TEMPLATE as u64 + 3 {
            p.insert(1, plan(n));
        }
        let shape = |nulls| Shape { nulls, empties: 0 };
        assert!(p.find(1, shape(0)).is_none(), "the oldest shape gave way");
        assert!(p.find(1, shape(PER_TEMPLATE as u64 + 2)).is_some());
        assert_eq!(p.count, PER_TEMPLATE);
        for t in 2..2 + MAX_PLANS as u32 {
            p.insert(t, plan(0));
            assert!(p.count <= MAX_PLANS);
        }
        assert!(p.find(2 + MAX_PLANS as u32 - 1, shape(0)).is_some());
        p.clear();
        assert_eq!(p.count, 0);
        assert!(p.find(1, shape(PER_TEMPLATE as u64 + 2)).is_none());
    }
}
