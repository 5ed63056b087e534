//! The scan: input files in parallel (large EVTX files chunk-parallel), each record
//! flattened into a per-worker [`RecordView`] and tested by the [`Detector`]; rows
//! are gathered, correlations evaluated, and the timeline sorted by time.

use crate::correlate;
use crate::detect_info::DetectInfo;
use crate::detector::{Detector, Matches};
use crate::flatten::Flattener;
use crate::input::{InputFile, InputKind};
use crate::record::RecordView;
use crate::source;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How to scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// EVTX or JSON input.
    pub kind: InputKind,
    /// Counters to bump as files are done, for a progress display.
    pub progress: Option<std::sync::Arc<crate::progress::Progress>>,
    /// Also scan records carved from slack space and damaged chunks (EVTX only).
    pub recover_records: bool,
}

/// Counts for the summary.
#[derive(Debug, Clone, Default)]
pub struct ScanStats {
    /// Files scanned.
    pub files: usize,
    /// Bytes of input.
    pub bytes: u64,
    /// Records read.
    pub records: u64,
    /// Records carved and scanned besides them (`--recover-records`).
    pub recovered: u64,
    /// Wall time of the scan.
    pub elapsed: Duration,
}

/// What a scan produced.
#[derive(Debug, Default)]
pub struct ScanResult {
    /// Timeline rows, sorted by time.
    pub rows: Vec<DetectInfo>,
    /// Counts.
    pub stats: ScanStats,
    /// Problems met (file, chunk or record, and the reason); the scan went on.
    pub errors: Vec<String>,
    /// Per-rule timings, when rule statistics were on.
    pub rule_stats: Option<crate::rule_stats::RuleStats>,
}

/// Per-worker buffers, reused for every record; rows are handed to the shared sink
/// when the worker is done (once per file or chunk run, not per record).
struct Worker<'s> {
    flat: Flattener,
    view: RecordView,
    found: Matches,
    sink: &'s Mutex<Matches>,
}

impl<'s> Worker<'s> {
    fn new(sink: &'s Mutex<Matches>, det: &Detector<'_>) -> Self {
        Worker {
            flat: Flattener::default(),
            view: RecordView::default(),
            found: det.matches(),
            sink,
        }
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        if self.found.rows.is_empty() && self.found.hits.is_empty() && self.found.stats.is_none() {
            return;
        }
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        s.rows.append(&mut self.found.rows);
        s.hits.append(&mut self.found.hits);
        if let Some(mine) = self.found.stats.take() {
            match &mut s.stats {
                Some(all) => all.merge(&mine),
                None => s.stats = Some(mine),
            }
        }
    }
}

/// Scans `files` with `det`.
pub fn scan(det: &Detector<'_>, files: &[InputFile], opts: ScanOptions) -> ScanResult {
    let start = Instant::now();
    let sink = Mutex::new(Matches::default());
    let errors = Mutex::new(Vec::new());
    let records = AtomicU64::new(0);
    let table = &det.rules().fields;
    let report = |e: String| errors.lock().unwrap_or_else(|x| x.into_inner()).push(e);

    // Largest files first, so the last worker does not finish alone on a big file.
    let mut order: Vec<u32> = (0..files.len() as u32).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i as usize].size));

    let recovered = AtomicU64::new(0);
    order.par_iter().for_each(|&fi| {
        let f = &files[fi as usize];
        // A panic while reading one file (a bug, in the parser or here) is reported
        // and ends that file only.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match opts.kind {
            InputKind::Evtx => {
                let n = source::evtx(
                    &f.path,
                    f.size,
                    opts.recover_records,
                    || Worker::new(&sink, det),
                    |w, rec| match w.flat.fill(rec.json, table, &mut w.view) {
                        Ok(()) => {
                            w.found.recovered = rec.recovered;
                            det.detect(&w.view, fi, rec.record_id, &mut w.found)
                        }
                        // Carved records are often garbage: not an input error.
                        Err(_) if rec.recovered => {}
                        Err(e) => report(format!(
                            "{}: record {}: unreadable JSON rendering: {e}",
                            f.path.display(),
                            rec.record_id.unwrap_or(0)
                        )),
                    },
                    report,
                );
                recovered.fetch_add(n.recovered, Ordering::Relaxed);
                n.records
            }
            InputKind::Json => {
                let mut w = Worker::new(&sink, det);
                source::json(
                    &f.path,
                    &mut w,
                    |w, v| match w.flat.fill_value(v, table, &mut w.view) {
                        Ok(()) => det.detect(&w.view, fi, None, &mut w.found),
                        Err(e) => report(format!("{}: event: {e}", f.path.display())),
                    },
                    report,
                )
            }
        }));
        let n = match run {
            Ok(n) => n,
            Err(p) => {
                report(format!(
                    "{}: reading stopped by an internal error: {}",
                    f.path.display(),
                    source::panic_message(&*p)
                ));
                0
            }
        };
        records.fetch_add(n, Ordering::Relaxed);
        if let Some(p) = &opts.progress {
            p.file_done(f.size, n);
        }
    });

    let found = sink.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut rows = found.rows;
    let name = |i: u32| files[i as usize].path.display().to_string();
    rows.extend(correlate::evaluate(det.rules(), found.hits, &name));
    rows.par_sort_unstable_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    let mut errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    errors.sort();
    ScanResult {
        rows,
        stats: ScanStats {
            files: files.len(),
            bytes: files.iter().map(|f| f.size).sum(),
            records: records.into_inner(),
            recovered: recovered.into_inner(),
            elapsed: start.elapsed(),
        },
        errors,
        rule_stats: found.stats,
    }
}
