//! A walk over every record of the input, without rules: the files in parallel (EVTX
//! chunk-parallel) through the input layer, each record filled into a reusable view and
//! handed to the caller's visitor with the visitor's own per-worker state.
//!
//! It is the metrics' walk (`metrics/mod.rs`) made generic over the fields read and
//! over what is kept per record, for `search` and `pivot-keywords-list`; when the shared
//! walk lands in `scanner_input`, both move onto it.

use scanner_engine::Progress;
use scanner_input::{Flattener, InputError, InputFile, InputKind, RecordView};
use scanner_rules::FieldTable;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What a walk collects: per-worker state `S`, merged per file.
pub trait Visit: Sync {
    /// One worker's findings (a file, or one chunk run of an EVTX file).
    type State: Default + Send;
    /// Looks at one record of file `file` (an index into the source's files).
    fn record(&self, file: usize, state: &mut Self::State, view: &RecordView);
    /// Adds what another worker of the same file found.
    fn merge(&self, into: &mut Self::State, other: Self::State);
}

/// What the walk found: a state per file (in the order of the files), the input errors
/// (sorted) and the number of records read.
pub struct Walked<S> {
    /// One state per input file, in the order given.
    pub per_file: Vec<S>,
    /// Problems met (file and reason); the walk went on.
    pub errors: Vec<InputError>,
    /// Records read.
    pub records: u64,
}

/// Where the walk reads from and how.
pub struct Source<'a> {
    /// The files, in the order the results are returned.
    pub files: &'a [InputFile],
    /// EVTX or JSON.
    pub kind: InputKind,
    /// Also records carved from slack space (`-x`).
    pub recover: bool,
    /// The fields the visitor reads by id.
    pub table: &'a FieldTable,
    /// Counts finished files for a progress bar.
    pub progress: Option<&'a Progress>,
    /// Only the files whose index this admits are read (the others get an empty state).
    pub only: Option<&'a (dyn Fn(usize) -> bool + Sync)>,
}

struct Worker<'s, V: Visit> {
    flat: Flattener,
    view: RecordView,
    state: V::State,
    visit: &'s V,
    slot: &'s Mutex<V::State>,
}

impl<V: Visit> Drop for Worker<'_, V> {
    fn drop(&mut self) {
        let mine = std::mem::take(&mut self.state);
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        self.visit.merge(&mut slot, mine);
    }
}

/// Reads every record of the source's files in parallel, largest file first, and hands
/// each to `visit`. A record that cannot be read is an input error and the walk goes on.
pub fn walk<V: Visit>(src: &Source<'_>, visit: &V) -> Walked<V::State> {
    use rayon::prelude::*;
    let files = src.files;
    let table = src.table;
    let slots: Vec<Mutex<V::State>> = files.iter().map(|_| Mutex::default()).collect();
    let errors = Mutex::new(Vec::new());
    let records = AtomicU64::new(0);
    let report = |e: InputError| errors.lock().unwrap_or_else(|x| x.into_inner()).push(e);
    let mut order: Vec<usize> = (0..files.len())
        .filter(|&i| src.only.is_none_or(|only| only(i)))
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    order.par_iter().for_each(|&i| {
        let f = &files[i];
        let slot = &slots[i];
        let new_worker = || Worker {
            flat: Flattener::default(),
            view: RecordView::default(),
            state: V::State::default(),
            visit,
            slot,
        };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match src.kind {
            InputKind::Evtx => {
                let read = scanner_input::EvtxRead {
                    recover: src.recover,
                    typed: true,
                };
                let n = scanner_input::read_evtx(
                    &f.path,
                    f.size,
                    read,
                    new_worker,
                    |w, rec| match rec.content.fill(&mut w.flat, table, &mut w.view) {
                        Ok(()) => w.visit.record(i, &mut w.state, &w.view),
                        Err(_) if rec.recovered => {}
                        Err(e) => report(InputError::unreadable_rendering(
                            &f.path,
                            rec.record_id.unwrap_or(0),
                            e,
                        )),
                    },
                    report,
                );
                n.records + n.recovered
            }
            InputKind::Json => {
                let mut w = new_worker();
                scanner_input::read_json(
                    &f.path,
                    &mut w,
                    |w, v| match w.flat.fill_value(v, table, &mut w.view) {
                        Ok(()) => w.visit.record(i, &mut w.state, &w.view),
                        Err(e) => report(InputError::unreadable_event(&f.path, e)),
                    },
                    report,
                )
            }
        }));
        let n = run.unwrap_or_else(|p| {
            report(InputError::internal(
                &f.path,
                scanner_input::panic_message(&*p),
            ));
            0
        });
        records.fetch_add(n, Ordering::Relaxed);
        if let Some(p) = src.progress {
            p.file_done(f.size, n);
        }
    });
    let mut errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    errors.sort_by_cached_key(ToString::to_string);
    Walked {
        per_file: slots
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect(),
        errors,
        records: records.into_inner(),
    }
}
