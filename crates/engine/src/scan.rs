//! The scan: input files in parallel (large EVTX files chunk-parallel), each record
//! filled into a per-worker [`RecordView`] (from typed values where it can, else by
//! flattening JSON: [`scanner_input::Content::fill`]) and tested by the [`Detector`]; rows
//! go to a [`RowStore`] (which spills sorted runs to disk past its memory bound),
//! correlations are evaluated, and the timeline comes out sorted by time.

use crate::detect::correlate;
use crate::detect::hit_store::{self, HitStore};
use crate::detect::stats::RuleTiming;
use crate::detect::{Detector, Matches};
use crate::pwsh_fields::{self, PwshScratch};
use crate::row::DetectInfo;
use crate::sort::merge::SortedRows;
use crate::sort::{lock, RowStore};
use rayon::prelude::*;
use scanner_input::Flattener;
use scanner_input::RecordView;
use scanner_input::{
    ChunkTally, Format, InputError, InputFile, IntegrityFields, Position, RecordLog, Tally,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How to scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Counters to bump as files are done, for a progress display.
    pub progress: Option<std::sync::Arc<crate::progress::Progress>>,
    /// Also scan records carved from slack space and damaged chunks (EVTX only).
    pub recover_records: bool,
    /// Read an EVTX chunk only when its CRC32s match (`-V`).
    pub validate_checksums: bool,
    /// Count the kinds of event met ([`crate::TypeTally`]).
    pub coverage: bool,
    /// About how many bytes of rows to hold in memory for sorting; past it, sorted runs
    /// are spilled to temporary files. `None`: no bound.
    pub sort_memory: Option<usize>,
    /// Splits classic PowerShell's `key=value` Data element into fields
    /// ([`crate::pwsh_fields`]).
    pub pwsh_fields: bool,
    /// Time each file's scan ([`ScanStats::file_times`]).
    pub file_times: bool,
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
    /// Records tested whose (Channel, EventID) no rule reads.
    pub uncovered: u64,
    /// Records tested whose (Channel, EventID) only rules without a channel read.
    pub channel_less_only: u64,
    /// Wall time of the scan.
    pub elapsed: Duration,
    /// The distribution of the files' scan times in nanoseconds (the histogram
    /// `--rule-stats` keeps per rule), when [`crate::ScannerBuilder::file_times`] is on:
    /// each file timed once, from opening it to its last record, however many threads
    /// read its chunks. Wall time: a thread waiting for the chunks of its file may run
    /// other files' work meanwhile (rayon steals), which then counts in both.
    pub file_times: Option<RuleTiming>,
}

/// What a scan produced: the rows as one vector ([`crate::Scanner::scan`]) or as a
/// stream that may come from disk ([`crate::Scanner::scan_sorted`]).
#[derive(Debug, Default)]
pub struct ScanResult<R = Vec<DetectInfo>> {
    /// Timeline rows, sorted by time ([`DetectInfo::timeline_cmp`]).
    pub rows: R,
    /// Counts.
    pub stats: ScanStats,
    /// Problems met (file, chunk or record, and the reason); the scan went on.
    pub errors: Vec<InputError>,
    /// Per-rule timings, when rule statistics were on.
    pub rule_stats: Option<crate::detect::stats::RuleStats>,
    /// The kinds of event tested, when [`crate::ScannerBuilder::coverage`] is on.
    pub coverage: Option<crate::coverage::TypeTally>,
}

/// Per-worker buffers, reused for every record and, through the [`Pool`], for every
/// file. Rows are handed to the store whenever the worker holds
/// [`RowStore::worker_batch`] bytes of them, and when it is dropped (at the end of the
/// scan); correlation hits likewise to their [`HitStore`]; statistics go to the shared
/// sink when it is dropped.
struct Worker<'s> {
    flat: Flattener,
    view: RecordView,
    pwsh: PwshScratch,
    found: Matches,
    /// Rows of `found` already counted in `bytes`.
    counted: usize,
    bytes: usize,
    /// Hits of `found` already counted in `hit_bytes`.
    hits_counted: usize,
    hit_bytes: usize,
    sink: &'s Mutex<Matches>,
    store: &'s RowStore,
    hits: &'s HitStore,
}

impl<'s> Worker<'s> {
    fn new(
        sink: &'s Mutex<Matches>,
        store: &'s RowStore,
        hits: &'s HitStore,
        det: &Detector<'_>,
    ) -> Self {
        Worker {
            flat: Flattener::default(),
            view: RecordView::default(),
            pwsh: PwshScratch::default(),
            found: det.matches(),
            counted: 0,
            bytes: 0,
            hits_counted: 0,
            hit_bytes: 0,
            sink,
            store,
            hits,
        }
    }

    /// After a record: hands the rows over once they hold enough bytes.
    #[inline]
    fn tested(&mut self) {
        let hits = &self.found.hits;
        if hits.len() != self.hits_counted {
            self.hit_bytes += hits[self.hits_counted..]
                .iter()
                .map(hit_store::approx_bytes)
                .sum::<usize>();
            self.hits_counted = hits.len();
            if self.hit_bytes >= self.hits.worker_batch() {
                self.hand_over_hits();
            }
        }
        let rows = &self.found.rows;
        if rows.len() == self.counted {
            return;
        }
        self.bytes += rows[self.counted..]
            .iter()
            .map(DetectInfo::approx_bytes)
            .sum::<usize>();
        self.counted = rows.len();
        if self.bytes >= self.store.worker_batch() {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        self.store.push(&mut self.found.rows, self.bytes);
        self.counted = 0;
        self.bytes = 0;
    }

    fn hand_over_hits(&mut self) {
        self.hits.push(&mut self.found.hits, self.hit_bytes);
        self.hits_counted = 0;
        self.hit_bytes = 0;
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        self.tested();
        self.hand_over();
        self.hand_over_hits();
        let mut s = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        s.uncovered += self.found.uncovered;
        s.channel_less_only += self.found.channel_less_only;
        if let Some(mine) = self.found.coverage.take() {
            s.coverage.get_or_insert_with(Default::default).merge(mine);
        }
        if let Some(mine) = self.found.stats.take() {
            match &mut s.stats {
                Some(all) => all.merge(&mine),
                None => s.stats = Some(mine),
            }
        }
    }
}

/// Workers between files. Most files are small (the attack corpus copied 30 times
/// averages 30 records a file): a worker made for each would start every file with
/// empty buffers, an empty needle memo and a new rows vector, and hand its few rows over
/// under the store's lock. A file takes an idle worker (or makes one) and gives it back
/// when done; the last ones are dropped when the scan ends, handing over what they hold.
struct Pool<'s> {
    /// Workers count the kinds of event they test.
    coverage: bool,
    /// With `--integrity`: each file's records as the integrity checks keep them, one
    /// per input file, where its leases leave theirs.
    logs: Vec<Mutex<RecordLog>>,
    idle: Mutex<Vec<Worker<'s>>>,
    sink: &'s Mutex<Matches>,
    store: &'s RowStore,
    hits: &'s HitStore,
}

impl<'s> Pool<'s> {
    /// An idle worker, or a new one.
    fn take<'p>(&'p self, det: &Detector<'_>, file: u32) -> Lease<'p, 's> {
        let idle = lock(&self.idle).pop();
        let w = idle.unwrap_or_else(|| {
            let mut w = Worker::new(self.sink, self.store, self.hits, det);
            w.found.coverage = self.coverage.then(Default::default);
            w
        });
        let log = (!self.logs.is_empty()).then(|| (file, RecordLog::default()));
        Lease {
            worker: Some(w),
            pool: self,
            log,
        }
    }
}

/// A worker taken from the [`Pool`]; given back when dropped.
struct Lease<'p, 's> {
    worker: Option<Worker<'s>>,
    pool: &'p Pool<'s>,
    /// With `--integrity`: the file read and its records seen by this lease.
    log: Option<(u32, RecordLog)>,
}

impl scanner_input::RecordWorker for Lease<'_, '_> {
    fn buffers(&mut self) -> (&mut Flattener, &mut RecordView) {
        let w: &mut Worker = self;
        (&mut w.flat, &mut w.view)
    }
}

impl<'s> std::ops::Deref for Lease<'_, 's> {
    type Target = Worker<'s>;
    fn deref(&self) -> &Worker<'s> {
        self.worker
            .as_ref()
            .expect("a lease holds its worker until dropped")
    }
}

impl<'s> std::ops::DerefMut for Lease<'_, 's> {
    fn deref_mut(&mut self) -> &mut Worker<'s> {
        self.worker
            .as_mut()
            .expect("a lease holds its worker until dropped")
    }
}

impl Drop for Lease<'_, '_> {
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            lock(&self.pool.idle).push(w);
        }
        if let Some((file, log)) = self.log.take() {
            if let Some(slot) = self.pool.logs.get(file as usize) {
                lock(slot).merge(log);
            }
        }
    }
}

/// Scans `files` with `det`; with `integrity`, each file's records are also kept for
/// the integrity checks, which run on the file once its records are read, their
/// findings joining the rows ([`crate::integrity`]).
pub fn scan(
    det: &Detector<'_>,
    files: &[InputFile],
    opts: ScanOptions,
    integrity: Option<&IntegrityFields>,
) -> ScanResult<SortedRows> {
    let start = Instant::now();
    let sink = Mutex::new(Matches::default());
    let store = RowStore::new(opts.sort_memory, std::env::temp_dir());
    // Correlation hits spill past a quarter of the bound (a batch being gathered and
    // one being written stay within half of it; the rows' store has the other half).
    let hits = HitStore::new(
        opts.sort_memory.map(|m| m / 4),
        std::env::temp_dir(),
        correlate::ranks(det.rules()),
    );
    let errors = Mutex::new(Vec::new());
    let records = AtomicU64::new(0);
    let table = det.rules().fields();
    let report = |e: InputError| errors.lock().unwrap_or_else(|x| x.into_inner()).push(e);

    // Largest files first, so the last worker does not finish alone on a big file.
    let mut order: Vec<u32> = (0..files.len() as u32).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i as usize].size));

    let recovered = AtomicU64::new(0);
    let file_times = opts.file_times.then(|| Mutex::new(RuleTiming::default()));
    let pool = Pool {
        coverage: opts.coverage,
        logs: match integrity {
            Some(_) => files.iter().map(|_| Mutex::default()).collect(),
            None => Vec::new(),
        },
        idle: Mutex::new(Vec::new()),
        sink: &sink,
        store: &store,
        hits: &hits,
    };
    let read = scanner_input::ReadSettings {
        fields: table,
        recover: opts.recover_records,
        validate_checksums: opts.validate_checksums,
        structure: integrity.is_some(),
    };
    let scan_file = |fi: u32| {
        let f = &files[fi as usize];
        let mut n = scanner_input::read_file(
            f,
            read,
            || pool.take(det, fi),
            |lease: &mut Lease, at| {
                if let (Some((_, log)), Some(cx)) = (lease.log.as_mut(), integrity) {
                    let w = lease.worker.as_ref().expect("a lease holds its worker");
                    log.add_at(&w.view, &at, cx);
                }
                let w: &mut Worker = lease;
                if opts.pwsh_fields {
                    pwsh_fields::extract(&mut w.view, table, &mut w.pwsh);
                }
                w.found.recovered = at.recovered;
                let before = w.found.rows.len();
                det.detect(&w.view, fi, at.record_id, &mut w.found);
                if let Some(c) = w.found.coverage.as_mut() {
                    let rows = (w.found.rows.len() - before) as u64;
                    c.add(&w.view, det.kind_fields(), rows);
                }
                if let Some(b) = w.found.bad_time.take() {
                    // An EVTX record is named by its EventRecordID, as the row is; a JSON
                    // line or XML event by where it stands.
                    let place = match at.format {
                        Format::Evtx => Position::Record(b.record_id),
                        Format::Json | Format::Xml | Format::EvtxECmdCsv => at.position,
                    };
                    report(InputError::bad_time(f.name(), place, b.value.as_deref()));
                }
                w.tested();
            },
            report,
        );
        if let (Some(slot), Some(cx)) = (pool.logs.get(fi as usize), integrity) {
            let log = std::mem::take(&mut *lock(slot));
            let structure = n.structure.take();
            let mut rows = integrity_rows(f, fi, log, structure, cx, &errors);
            let bytes = rows.iter().map(DetectInfo::approx_bytes).sum();
            store.push(&mut rows, bytes);
        }
        recovered.fetch_add(n.recovered, Ordering::Relaxed);
        records.fetch_add(n.records, Ordering::Relaxed);
        if let Some(p) = &opts.progress {
            p.file_done(f.size, n.records);
        }
    };
    order.par_iter().for_each(|&fi| match &file_times {
        None => scan_file(fi),
        Some(times) => {
            let t = Instant::now();
            scan_file(fi);
            let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
            times.lock().unwrap_or_else(|e| e.into_inner()).add(ns);
        }
    });
    // The idle workers hand over their rows, hits and statistics.
    drop(pool);

    let found = sink.into_inner().unwrap_or_else(|e| e.into_inner());
    let name = |i: u32| files[i as usize].name().display().to_string();
    let hit_runs = hits.runs();
    // Correlation rows join the store in batches as they are made.
    let (mut batch, mut bytes, limit) = (Vec::new(), 0, store.worker_batch());
    let correlated = hits.finish().and_then(|hits| {
        correlate::evaluate_sorted(det.rules(), hits, &name, &mut |row| {
            bytes += row.approx_bytes();
            batch.push(row);
            if bytes >= limit {
                store.push(&mut batch, bytes);
                bytes = 0;
            }
        })
    });
    match correlated {
        Ok(()) => store.push(&mut batch, bytes),
        Err(e) => store.fail(e),
    }
    let rows = store.finish().correlation_runs(hit_runs);
    let mut errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    // In the order of their text, as the summary and `-N` list them.
    errors.sort_by_cached_key(ToString::to_string);
    ScanResult {
        rows,
        stats: ScanStats {
            files: files.len(),
            bytes: files.iter().map(|f| f.size).sum(),
            records: records.into_inner(),
            recovered: recovered.into_inner(),
            uncovered: found.uncovered,
            channel_less_only: found.channel_less_only,
            elapsed: start.elapsed(),
            file_times: file_times.map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner())),
        },
        errors,
        rule_stats: found.stats,
        coverage: found.coverage,
    }
}

/// The integrity rows of file `f` (number `fi`), its records `log` read: the
/// `structure`'s findings, taken as the read went (EVTX files; not an archive's
/// members, as log-integrity), and the records'. A structure that could not be checked
/// joins `errors`, unless the read reported the file already.
fn integrity_rows(
    f: &InputFile,
    fi: u32,
    log: RecordLog,
    structure: Option<ChunkTally>,
    cx: &IntegrityFields,
    errors: &Mutex<Vec<InputError>>,
) -> Vec<DetectInfo> {
    let checked = structure
        .filter(|_| f.member.is_none())
        .map(|t| scanner_input::structure_findings(f.name(), t));
    let structure = match checked {
        Some(Ok(found)) => found,
        Some(Err(e)) => {
            let mut errors = errors.lock().unwrap_or_else(|x| x.into_inner());
            if !errors.iter().any(|x| x.file() == e.file()) {
                errors.push(e);
            }
            Vec::new()
        }
        None => Vec::new(),
    };
    log.finish(structure, cx)
        .iter()
        .map(|finding| crate::integrity::row(fi, finding))
        .collect()
}
