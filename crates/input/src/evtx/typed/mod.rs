//! The typed record path: a record's [`RecordView`] filled from its template definition
//! and its typed substitution values, without rendering JSON and flattening it again.
//!
//! It produces exactly the leaves that flattening the `evtx` crate's JSON rendering
//! (with separated attributes, [`crate::evtx::settings`]) produces: the same paths
//! (`#text` folded into its element, `<Elem>_attributes`, `_N` suffixes on repeated
//! element names, `Data` keyed by its `Name` inside `EventData`/`UserData`, positional
//! `Data` as a list), values as the crate writes them, elements that depend on a null
//! value left out, optional empty substitutions dropped, elements repeated once per item
//! of a string array, instances nested in BinXML values spliced in, `xmlns` skipped.
//!
//! The values are read from the record's BinXML, as `EvtxRecord::template_instances`
//! reads them, and so are the instances nested in BinXML values (which that API hands
//! over as bytes): the record's own instance and the nested ones go one way.
//!
//! It is not a renderer and covers only what it can reproduce exactly: a record that is
//! one template instance, scalar and string-array values other than floats, templates
//! that `template::parse` reads, `Data` names that do not repeat once the crate
//! would number them. For anything else [`TypedState::prepare`] says no and the caller
//! renders the record to JSON as before, so results never change. Templates are parsed
//! once per [`TypedState`] (the scan keeps one per thread) and kept across chunks and
//! files; per record, nothing is allocated once the buffers are warm.
//!
//! [`TypedState`] (here) reads a record's instances and values and drives the rest:
//! `cache` keeps the parsed templates, `resolve` puts values in place into the tree
//! the crate would walk, `emit` walks that tree into the view, and `plan` records such
//! walks so that later records of the same shape skip resolving and walking.

mod cache;
mod emit;
mod plan;
mod resolve;

use crate::evtx::template::Reader;
use crate::record::RecordView;
use cache::Templates;
use emit::{Emit, LeafIds};
use evtx::EvtxRecord;
use plan::{Plans, Recorder, Shape};
use resolve::{Inst, Resolved, PENDING};
use scanner_rules::FieldTable;

/// Deepest nesting of instances in values the typed path follows.
const MAX_NESTING: usize = 16;
/// What the typed records of one chunk may be estimated to render (bytes, nodes) before
/// the rest of the chunk takes the JSON path, so that typed records never stand in for
/// records whose rendering would have spent the crate's per-chunk budget. Real chunks
/// render at most a few hundred KB.
const CHUNK_OUTPUT: usize = 8 << 20;
const CHUNK_NODES: usize = 200_000;

/// Per-worker state of the typed path: the templates it has parsed, the record being
/// filled and the buffers for its leaves.
#[derive(Debug, Default)]
pub struct TypedState {
    templates: Templates,
    /// The leaves of the shapes of the records seen so far (they name templates by
    /// index, so they go when the templates do).
    plans: Plans,
    /// Estimated (bytes, nodes) the chunk's typed records stand for.
    spent: (usize, usize),
    rec: Resolved,
    path: String,
    leaf: String,
    counts: Vec<(u32, u32)>,
    /// The root template of the record prepared, and its instance.
    root_template: u32,
    root: u32,
    /// The shape of the record prepared, when a plan may stand for it.
    shape: Shape,
    /// The record prepared has a plan (it is not resolved)…
    planned: Option<u32>,
    /// …or is to record one for its shape: where its values' text ends.
    to_plan: Option<u32>,
    /// Values the typed path does not reproduce are read as opaque text
    /// ([`Self::prepare_template`]).
    opaque: bool,
    /// Per root template, the paths of the last record's leaves and the ids the field
    /// table gave them (records of one template mostly repeat them), valid while the
    /// table's version is `ids_version`.
    leaf_ids: Vec<Vec<LeafIds>>,
    ids_version: u64,
}

impl TypedState {
    /// Starts a chunk (its definitions are found by offset afresh): call before its
    /// records.
    pub fn begin_chunk(&mut self) {
        if self.templates.begin_chunk() {
            self.plans = Plans::default();
        }
        self.spent = (0, 0);
    }

    /// Prepares `record` for [`Self::fill`]; `false` when the typed path does not cover
    /// it (render it to JSON instead).
    pub fn prepare(&mut self, record: &EvtxRecord<'_>) -> bool {
        !record.recovered
            && self.prepare_at(
                record.chunk.data,
                record.binxml_offset as usize,
                record.binxml_size as usize,
            )
    }

    /// [`Self::prepare`] for the live record whose BinXML is `chunk[offset..offset + size]`,
    /// read straight from the chunk without the crate building the record first.
    pub fn prepare_at(&mut self, chunk: &[u8], offset: usize, size: usize) -> bool {
        self.try_prepare(chunk, offset, size).is_some()
    }

    /// Prepares the record `record` (which [`Self::prepare`] declined) for a
    /// [`Self::fill`] that writes its template's structure, with the values the typed
    /// path does not reproduce as opaque text: what [`Content::TemplateJson`] needs to
    /// tell its elements with no content from its empty values. `false` when the typed
    /// path cannot read the template either.
    ///
    /// [`Content::TemplateJson`]: crate::evtx::Content::TemplateJson
    pub fn prepare_template(&mut self, record: &EvtxRecord<'_>) -> bool {
        self.opaque = true;
        let read = self.try_read_template(
            record.chunk.data,
            record.binxml_offset as usize,
            record.binxml_size as usize,
        );
        self.opaque = false;
        read.is_some()
    }

    /// Starts a record: reads its root instance (and those nested in its values).
    fn read_root(&mut self, data: &[u8], offset: usize, size: usize) -> Option<()> {
        self.rec.clear();
        self.planned = None;
        self.to_plan = None;
        self.root = self.read_instance(data, offset, size, 0)?;
        self.root_template = self.rec.insts[self.root as usize].template;
        Some(())
    }

    fn try_read_template(&mut self, data: &[u8], offset: usize, size: usize) -> Option<()> {
        self.read_root(data, offset, size)?;
        let t = self.templates.get(self.root_template);
        self.rec.resolve(&self.templates, self.root, t.root, 0)?;
        // Numbered `Data` names would need the values the crate numbers them by.
        if self.rec.data_names && self.rec.data_names_repeat(&self.templates.names) {
            return None;
        }
        Some(())
    }

    fn try_prepare(&mut self, data: &[u8], offset: usize, size: usize) -> Option<()> {
        self.read_root(data, offset, size)?;
        let shaped = self.shape.read(&self.rec);
        let plans = &self.plans;
        let plan = shaped
            .then(|| plans.find(&self.shape))
            .flatten()
            .and_then(|i| Some((i, plans.get(i)?)));
        let (bytes, nodes) = match plan {
            Some((i, plan)) => {
                self.planned = Some(i);
                plan.cost(&self.rec)
            }
            None => {
                self.resolve_to_walk(shaped)?;
                self.rec.cost(&self.templates.names)
            }
        };
        let (bytes, nodes) = (self.spent.0 + bytes, self.spent.1 + nodes);
        if bytes > CHUNK_OUTPUT || nodes > CHUNK_NODES {
            return None;
        }
        self.spent = (bytes, nodes);
        Some(())
    }

    /// Resolves the record read (its values only) from its root instance, to be walked,
    /// and notes whether a plan for its shape (`shaped`: read into `self.shape`) is to be
    /// recorded as it is walked; `None` when the typed path does not cover it.
    fn resolve_to_walk(&mut self, shaped: bool) -> Option<()> {
        let values_end = self.rec.text.len() as u32;
        let t = self.templates.get(self.root_template);
        self.rec.resolve(&self.templates, self.root, t.root, 0)?;
        if self.rec.data_names && self.rec.data_names_repeat(&self.templates.names) {
            return None;
        }
        self.to_plan = shaped.then_some(values_end);
        Some(())
    }

    /// Reads the template instance that the BinXML stream `data[start..start + len]` is
    /// (with its nested instances), as the crate does; `None` for any other stream, or
    /// values the typed path leaves to JSON.
    fn read_instance(
        &mut self,
        data: &[u8],
        start: usize,
        len: usize,
        depth: usize,
    ) -> Option<u32> {
        let end = start.checked_add(len)?;
        let stream = data.get(start..end)?;
        let at = match stream {
            [0x0f, _, _, _, 0x0c, _, ..] => 5,
            [0x0c, ..] => 1,
            _ => return None,
        };
        let mut r = Reader {
            data,
            pos: start + at,
        };
        r.bytes(5)?; // unknown byte, template id
        let def = r.u32()?;
        if r.pos == def as usize {
            r.bytes(20)?;
            let size = r.u32()? as usize;
            r.bytes(size)?;
        }
        let count = r.u32()? as usize;
        let descriptors = r.bytes(count.checked_mul(4)?)?;
        let template = self.templates.lookup(data, def)?;
        let v0 = self.rec.vals.len() as u32;
        for d in descriptors.chunks_exact(4) {
            let size = u16::from_le_bytes([d[0], d[1]]) as usize;
            let at = r.pos;
            let bytes = r.bytes(size);
            if self.rec.push_value(d[2], bytes, at).is_none() {
                // A value cut short by the chunk's end is no structure to read either.
                if !self.opaque || bytes.is_none() {
                    return None;
                }
                self.rec.push_opaque();
            }
        }
        // After the instance, nothing or EOF; an instance that reads past the stream is
        // accepted, as the crate does.
        match data.get(r.pos..end) {
            None | Some([]) | Some([0x00, ..]) => {}
            Some(_) => return None,
        }
        let v1 = self.rec.vals.len() as u32;
        let id = self.rec.insts.len() as u32;
        self.rec.data_names |= self.templates.get(template).data_names_may_repeat;
        self.rec.insts.push(Inst {
            template,
            vals: (v0, v1),
        });
        for v in v0..v1 {
            let val = self.rec.vals[v as usize];
            if val.nested != PENDING {
                continue;
            }
            if depth + 1 >= MAX_NESTING {
                return None;
            }
            let (s, e) = (val.span.0 as usize, val.span.1 as usize);
            let nested = self.read_instance(data, s, e - s, depth + 1)?;
            let val = &mut self.rec.vals[v as usize];
            val.nested = nested;
            val.span = (0, 0);
        }
        Some(id)
    }

    /// Whether the record [`Self::prepare`] accepted is to fill its view from a leaf plan
    /// (recorded from an earlier record of its template and shape) rather than by
    /// resolving its tree and walking it.
    pub fn planned(&self) -> bool {
        self.planned.is_some()
    }

    /// Clears `view` and fills it with the leaves of the record [`Self::prepare`] accepted.
    pub fn fill(&mut self, table: &FieldTable, view: &mut RecordView) {
        view.clear(table.len());
        self.path.clear();
        if self.ids_version != table.version() {
            // Ids kept for another table, and the plans holding them, go.
            self.leaf_ids.clear();
            self.plans.clear();
            self.ids_version = table.version();
        }
        if let Some(i) = self.planned {
            if let Some(plan) = self.plans.get(i) {
                plan.fill(&self.rec, &mut self.leaf, view);
                return;
            }
            // Its plan went with the field ids: resolve it and walk it.
            self.planned = None;
            if self.resolve_to_walk(true).is_none() {
                return;
            }
        }
        if self.rec.elems.is_empty() {
            return;
        }
        let t = self.root_template as usize;
        if self.leaf_ids.len() <= t {
            self.leaf_ids.resize_with(t + 1, Vec::new);
        }
        let mut out = Emit {
            names: &self.templates.names,
            r: &self.rec,
            path: &mut self.path,
            leaf: &mut self.leaf,
            counts: &mut self.counts,
            table,
            view,
            memo: &mut self.leaf_ids[t],
            leaf_no: 0,
            recorder: self.to_plan.map(Recorder::new),
        };
        out.view.defer_lowercase();
        out.root();
        out.view.lowercase_deferred();
        if let Some(recorder) = out.recorder.take() {
            let cost = self.rec.cost(&self.templates.names);
            recorder.finish(&self.rec, cost, &self.shape, &mut self.plans);
        }
        self.to_plan = None;
    }
}
