//! Where a scan's correlation hits wait for the end of the scan: in memory up to a
//! bound, past it in sorted runs in a private folder (as [`crate::RowStore`] does for
//! rows). A run is sorted by (correlation, in evaluation order; group; time; then every
//! other field, so the order is total); at the end the runs and the hits still in
//! memory are merged in that order, so correlations are evaluated one group at a time
//! and memory holds the largest group, not every hit.

use crate::detect::correlate::CorrelationHit;
use crate::sort::spill_dir::SpillDir;
use crate::sort::{lock, FAN_IN, WORKER_BATCH};
use crate::sort::{READ_BUFFER, WRITE_BUFFER};
use compact_str::CompactString;
use jiff::Timestamp;
use rayon::slice::ParallelSliceMut;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as Atomic};
use std::sync::{Arc, Mutex};

static NEXT: AtomicU64 = AtomicU64::new(0);

fn rank_of(rank: &[u32], h: &CorrelationHit) -> u32 {
    rank.get(h.correlation as usize)
        .copied()
        .unwrap_or(u32::MAX)
}

/// The order hits are evaluated in: `rank` gives each correlation's place.
pub fn cmp(rank: &[u32], a: &CorrelationHit, b: &CorrelationHit) -> Ordering {
    ranked(rank_of(rank, a), a, rank_of(rank, b), b)
}

/// [`cmp`] of hits whose correlations' ranks are `ra` and `rb`.
fn ranked(ra: u32, a: &CorrelationHit, rb: u32, b: &CorrelationHit) -> Ordering {
    (ra, a.correlation, &a.group, a.time)
        .cmp(&(rb, b.correlation, &b.group, b.time))
        .then_with(|| {
            (
                a.references,
                &a.value,
                &a.computer,
                &a.channel,
                &a.event_id,
                a.file,
            )
                .cmp(&(
                    b.references,
                    &b.value,
                    &b.computer,
                    &b.channel,
                    &b.event_id,
                    b.file,
                ))
        })
}

/// About how many bytes a hit takes in memory.
pub fn approx_bytes(h: &CorrelationHit) -> usize {
    let heap = |s: &CompactString| if s.is_heap_allocated() { s.len() } else { 0 };
    std::mem::size_of::<CorrelationHit>()
        + h.group.len()
        + h.value.as_ref().map_or(0, heap)
        + heap(&h.computer)
        + heap(&h.channel)
        + heap(&h.event_id)
}

#[derive(Default)]
struct Batch {
    hits: Vec<CorrelationHit>,
    bytes: usize,
}

#[derive(Default)]
struct Spilled {
    dir: Option<Arc<SpillDir>>,
    runs: Vec<HitRun>,
    error: Option<io::Error>,
}

/// A scan's correlation hits, held in memory up to a bound and spilled past it.
pub struct HitStore {
    spill_at: usize,
    parent: PathBuf,
    rank: Vec<u32>,
    batch: Mutex<Batch>,
    spilled: Mutex<Spilled>,
}

impl HitStore {
    /// A store spilling a batch once it holds more than `spill_at` bytes (`None`:
    /// never), to a private folder made in `parent`; `rank` is each correlation's
    /// place in evaluation order.
    pub fn new(spill_at: Option<usize>, parent: PathBuf, rank: Vec<u32>) -> HitStore {
        HitStore {
            spill_at: spill_at.unwrap_or(usize::MAX),
            parent,
            rank,
            batch: Mutex::default(),
            spilled: Mutex::default(),
        }
    }

    /// How many bytes of hits a worker should gather before [`Self::push`]ing them.
    pub fn worker_batch(&self) -> usize {
        (self.spill_at / 8).clamp(1, WORKER_BATCH)
    }

    /// Takes `hits` (about `bytes` in all), leaving the vector empty.
    pub fn push(&self, hits: &mut Vec<CorrelationHit>, bytes: usize) {
        if hits.is_empty() {
            return;
        }
        let full = {
            let mut b = lock(&self.batch);
            b.hits.append(hits);
            b.bytes += bytes;
            if b.bytes > self.spill_at {
                b.bytes = 0;
                Some(std::mem::take(&mut b.hits))
            } else {
                None
            }
        };
        if let Some(batch) = full {
            self.spill(batch);
        }
    }

    fn spill(&self, mut batch: Vec<CorrelationHit>) {
        if lock(&self.spilled).error.is_some() {
            return;
        }
        let dir = match self.spill_dir() {
            Ok(d) => d,
            Err(e) => {
                lock(&self.spilled).error.get_or_insert(e);
                return;
            }
        };
        batch.sort_unstable_by(|a, b| cmp(&self.rank, a, b));
        let run = HitRun::write(&dir, batch.into_iter().map(Ok));
        let mut s = lock(&self.spilled);
        match run {
            Ok(run) => s.runs.push(run),
            Err(e) => {
                s.error.get_or_insert(e);
            }
        }
    }

    fn spill_dir(&self) -> io::Result<Arc<SpillDir>> {
        SpillDir::get_or_create(
            &mut lock(&self.spilled).dir,
            &self.parent,
            "correlation events",
        )
    }

    /// How many runs were spilled so far.
    pub fn runs(&self) -> usize {
        lock(&self.spilled).runs.len()
    }

    /// Every hit, in evaluation order; a failed spill is an error here.
    pub fn finish(self) -> io::Result<SortedHits> {
        let batch = self.batch.into_inner().unwrap_or_else(|e| e.into_inner());
        let spilled = self.spilled.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = spilled.error {
            return Err(e);
        }
        let mut hits = batch.hits;
        let rank = self.rank;
        hits.par_sort_unstable_by(|a, b| cmp(&rank, a, b));
        let mut runs = spilled.runs;
        if let Some(dir) = spilled.dir {
            while runs.len() > FAN_IN {
                let group: Vec<HitRun> = runs.drain(..FAN_IN).collect();
                let merged = SortedHits::new(Vec::new(), group, rank.clone())?;
                runs.push(HitRun::write(&dir, merged)?);
            }
        }
        SortedHits::new(hits, runs, rank)
    }
}

/// A run of hits on disk, removed when dropped.
struct HitRun {
    path: PathBuf,
    hits: u64,
    _dir: Arc<SpillDir>,
}

impl HitRun {
    fn write(
        dir: &Arc<SpillDir>,
        hits: impl Iterator<Item = io::Result<CorrelationHit>>,
    ) -> io::Result<HitRun> {
        let n = NEXT.fetch_add(1, Atomic::Relaxed);
        let path = dir
            .path()
            .join(format!("scanner-sort-{}-c{n:x}.run", std::process::id()));
        let file = scanner_files::create_temp_file(&path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create temporary file {}: {e}", path.display()),
            )
        })?;
        let mut run = HitRun {
            path,
            hits: 0,
            _dir: Arc::clone(dir),
        };
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
        let written = (|| {
            for h in hits {
                encode(&h?, &mut w)?;
                run.hits += 1;
            }
            w.flush()
        })();
        written.map_err(|e| run.error("cannot write correlation events to", e))?;
        Ok(run)
    }

    fn error(&self, doing: &str, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!("{doing} temporary file {}: {e}", self.path.display()),
        )
    }
}

impl Drop for HitRun {
    fn drop(&mut self) {
        let _ = scanner_files::remove_temp_file(&self.path);
    }
}

struct Reader {
    reader: BufReader<File>,
    left: u64,
    run: HitRun,
}

impl Reader {
    fn next_hit(&mut self) -> Option<io::Result<CorrelationHit>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(decode(&mut self.reader).map_err(|e| {
            self.left = 0;
            self.run
                .error("cannot read correlation events back from", e)
        }))
    }
}

fn put_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    w.write_all(&(s.len() as u64).to_le_bytes())?;
    w.write_all(s.as_bytes())
}

fn encode(h: &CorrelationHit, w: &mut impl Write) -> io::Result<()> {
    w.write_all(&h.correlation.to_le_bytes())?;
    w.write_all(&h.references.to_le_bytes())?;
    w.write_all(&h.time.as_second().to_le_bytes())?;
    w.write_all(&h.time.subsec_nanosecond().to_le_bytes())?;
    w.write_all(&h.file.to_le_bytes())?;
    put_str(w, &h.group)?;
    match &h.value {
        Some(v) => {
            w.write_all(&[1])?;
            put_str(w, v)?;
        }
        None => w.write_all(&[0])?,
    }
    put_str(w, &h.computer)?;
    put_str(w, &h.channel)?;
    put_str(w, &h.event_id)
}

fn get<const N: usize>(r: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn get_str(r: &mut impl Read) -> io::Result<String> {
    let n = u64::from_le_bytes(get(r)?);
    let mut v = Vec::new();
    r.take(n).read_to_end(&mut v)?;
    if v.len() as u64 != n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    String::from_utf8(v).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn decode(r: &mut impl Read) -> io::Result<CorrelationHit> {
    let correlation = u32::from_le_bytes(get(r)?);
    let references = u32::from_le_bytes(get(r)?);
    let secs = i64::from_le_bytes(get(r)?);
    let nanos = i32::from_le_bytes(get(r)?);
    let time =
        Timestamp::new(secs, nanos).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let file = u32::from_le_bytes(get(r)?);
    let group = get_str(r)?.into_boxed_str();
    let value = match get::<1>(r)?[0] {
        0 => None,
        _ => Some(get_str(r)?.into()),
    };
    Ok(CorrelationHit {
        correlation,
        references,
        time,
        group,
        value,
        computer: get_str(r)?.into(),
        channel: get_str(r)?.into(),
        event_id: get_str(r)?.into(),
        file,
    })
}

/// The head of one source in the merge: its hit and the hit's correlation's rank.
struct Head {
    rank: u32,
    hit: CorrelationHit,
    source: usize,
}

impl Ord for Head {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: the heap gives the smallest first; ties go to the earlier source.
        ranked(self.rank, &self.hit, o.rank, &o.hit)
            .then(self.source.cmp(&o.source))
            .reverse()
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Head {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}

impl Eq for Head {}

/// Every hit of a store, merged in evaluation order.
pub struct SortedHits {
    rank: Vec<u32>,
    memory: std::vec::IntoIter<CorrelationHit>,
    readers: Vec<Reader>,
    heads: BinaryHeap<Head>,
    failed: Option<io::Error>,
}

impl SortedHits {
    fn new(memory: Vec<CorrelationHit>, runs: Vec<HitRun>, rank: Vec<u32>) -> io::Result<Self> {
        let mut readers = Vec::with_capacity(runs.len());
        for run in runs {
            let f = File::open(&run.path)
                .map_err(|e| run.error("cannot open correlation events in", e))?;
            readers.push(Reader {
                reader: BufReader::with_capacity(READ_BUFFER, f),
                left: run.hits,
                run,
            });
        }
        let mut s = SortedHits {
            rank,
            memory: memory.into_iter(),
            readers,
            heads: BinaryHeap::new(),
            failed: None,
        };
        // Without runs, the hits in memory are the stream as they are.
        if !s.readers.is_empty() {
            for i in 0..=s.readers.len() {
                s.refill(i);
            }
        }
        Ok(s)
    }

    /// Puts source `i`'s next hit in the heap (`i == readers.len()`: memory).
    fn refill(&mut self, i: usize) {
        let next = match self.readers.get_mut(i) {
            Some(r) => r.next_hit(),
            None => self.memory.next().map(Ok),
        };
        match next {
            Some(Ok(hit)) => {
                let rank = rank_of(&self.rank, &hit);
                self.heads.push(Head {
                    rank,
                    hit,
                    source: i,
                });
            }
            Some(Err(e)) => {
                self.failed.get_or_insert(e);
            }
            None => {}
        }
    }
}

impl Iterator for SortedHits {
    type Item = io::Result<CorrelationHit>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.readers.is_empty() {
            return self.memory.next().map(Ok);
        }
        let hit = match self.heads.pop() {
            Some(Head { hit, source, .. }) => {
                self.refill(source);
                Some(Ok(hit))
            }
            None => None,
        };
        match self.failed.take() {
            // The stream ends at its first error (the runs go with their readers).
            Some(e) => {
                self.heads.clear();
                self.readers.clear();
                self.memory = Vec::new().into_iter();
                Some(Err(e))
            }
            None => hit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::correlate::{collect_sorted, evaluate, ranks};
    use crate::sort::tests::{files_in, scratch};
    use scanner_rules::{load, LoadOptions, RuleSet, RuleSource};

    const RULES: &str = "title: Logon failed
name: failed_logon
detection: {sel: {EventID: 4625}, condition: sel}
---
title: Logon succeeded
name: good_logon
detection: {sel: {EventID: 4624}, condition: sel}
---
title: Many failures
name: many_failures
correlation: {type: event_count, rules: failed_logon, group-by: [IpAddress], timespan: 5m, condition: {gte: 3}}
---
title: Many users
correlation: {type: value_count, rules: failed_logon, group-by: [IpAddress], timespan: 10m, condition: {gte: 2, field: TargetUserName}}
---
title: Both
correlation: {type: temporal, rules: [failed_logon, good_logon], group-by: [IpAddress], timespan: 5m}
---
title: Failure then success
correlation: {type: temporal_ordered, rules: [failed_logon, good_logon], group-by: [IpAddress], timespan: 5m}
---
title: Repeated bursts
correlation: {type: event_count, rules: many_failures, group-by: [IpAddress], timespan: 1h, condition: {gte: 2}}
";

    fn rules() -> RuleSet {
        let text = RULES.to_string();
        let name = "hit-store-test.yml".to_string();
        let set = load(&[RuleSource::Text { name, text }], &LoadOptions::default());
        assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
        set
    }

    /// `n` hits of every record-fed correlation of [`RULES`], from a fixed
    /// pseudo-random sequence: 40 groups, times in whole minutes (many ties), a few
    /// users, files and computers.
    fn hits(set: &RuleSet, n: u64) -> Vec<CorrelationHit> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let fed: Vec<usize> = set
            .correlations()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.meta.title != "Repeated bursts")
            .map(|(i, _)| i)
            .collect();
        (0..n)
            .map(|_| {
                let ci = fed[next(fed.len() as u64) as usize];
                let refs = set.correlations()[ci].rule_refs.len() as u64;
                CorrelationHit {
                    correlation: ci as u32,
                    references: 1 << next(refs),
                    time: Timestamp::new(next(90) as i64 * 60, 0).unwrap(),
                    group: format!("10.0.0.{}", next(40)).into(),
                    value: Some(format!("user{}", next(4)).into()),
                    computer: format!("WS{}", next(3)).into(),
                    channel: "Security".into(),
                    event_id: if next(2) == 0 { "4624" } else { "4625" }.into(),
                    file: next(3) as u32,
                }
            })
            .collect()
    }

    fn name(f: u32) -> String {
        format!("f{f}.evtx")
    }

    #[test]
    fn spilled_hits_give_the_rows_of_hits_evaluated_in_memory() {
        let set = rules();
        let all = hits(&set, 3000);
        let expected = format!("{:?}", evaluate(&set, all.clone(), &name));
        let chained = evaluate(&set, all.clone(), &name)
            .iter()
            .filter(|r| set.correlations()[r.rule as usize].meta.title == "Repeated bursts")
            .count();
        assert!(chained > 0, "the chained correlation fires");

        let dir = scratch("hit-store-spill");
        // A bound of one byte: every push is a run, more than the fan-in.
        let store = HitStore::new(Some(1), dir.clone(), ranks(&set));
        for chunk in all.chunks(37) {
            let mut v = chunk.to_vec();
            let bytes = v.iter().map(approx_bytes).sum();
            store.push(&mut v, bytes);
        }
        let runs = store.runs();
        assert!(runs > FAN_IN, "{runs} runs");
        let sorted = store.finish().unwrap();
        let rows = collect_sorted(&set, sorted, &name).unwrap();
        assert_eq!(format!("{rows:?}"), expected);
        assert_eq!(files_in(&dir), 0, "no run left behind");

        // Held in memory (no bound), through the same path.
        let store = HitStore::new(None, dir.clone(), ranks(&set));
        let mut v = all;
        store.push(&mut v, 0);
        assert_eq!(store.runs(), 0);
        let rows = collect_sorted(&set, store.finish().unwrap(), &name).unwrap();
        assert_eq!(format!("{rows:?}"), expected);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_that_cannot_be_read_back_is_an_error_naming_its_file() {
        let set = rules();
        let dir = scratch("hit-store-truncated");
        let store = HitStore::new(Some(1), dir.clone(), ranks(&set));
        let mut v = hits(&set, 50);
        store.push(&mut v, 1000);
        let run = lock(&store.spilled).runs[0].path.clone();
        let f = std::fs::OpenOptions::new().write(true).open(&run).unwrap();
        f.set_len(10).unwrap();
        let err = collect_sorted(&set, store.finish().unwrap(), &name).unwrap_err();
        assert!(
            err.to_string().contains(&run.display().to_string()),
            "{err}"
        );
        assert_eq!(files_in(&dir), 0, "no run left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
