//! The external sort every spilling store is: items held in memory up to a bound, past it
//! in sorted runs on disk, and at the end one stream in order ([`Merge`]). What the items
//! are is the [`SpillCodec`]'s business; the batching, the runs, their private folder
//! and the merge are written here once.
//!
//! Items arrive in batches from the scan's workers. When the batch passes the bound it
//! is swapped out under the lock, then sorted and written as a run without it, so other
//! workers keep filling the next batch meanwhile and the two stay within twice the
//! bound. The folder of the runs is made on the first spill; the first failure to spill
//! is kept and becomes the store's result (the items are then incomplete, so later
//! spills are skipped). At the end, runs past [`FAN_IN`] are first merged into longer
//! ones, which bounds open files and read buffers.

use crate::sort::codec::SpillCodec;
use crate::sort::kway::Merge;
use crate::sort::run::{RunFile, RunReader};
use crate::sort::spill_dir::SpillDir;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// The most runs read at once; past it, runs are first merged into longer ones.
pub(crate) const FAN_IN: usize = 64;
/// The most a worker gathers before handing its items over.
pub(crate) const WORKER_BATCH: usize = 1 << 20;

/// The lock's value, also after a panic elsewhere while it was held.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The items gathered since the last spill.
struct Batch<T> {
    items: Vec<T>,
    /// Approximate bytes of `items` ([`SpillCodec::approx_bytes`]).
    bytes: usize,
}

/// What was spilled.
struct Spilled<C> {
    /// The private folder of the runs, made on the first spill.
    dir: Option<Arc<SpillDir>>,
    runs: Vec<RunFile<C>>,
    /// The first spill that failed; the store's items are then incomplete.
    error: Option<io::Error>,
}

/// Items of codec `C` held in memory up to a bound and spilled to disk in sorted runs
/// past it; [`Self::finish`] gives them all back in order.
pub struct SpillStore<C: SpillCodec> {
    /// A batch is spilled once its items hold more than this many bytes.
    spill_at: usize,
    /// Where the private folder of the runs is made.
    parent: PathBuf,
    codec: Arc<C>,
    batch: Mutex<Batch<C::Item>>,
    spilled: Mutex<Spilled<C>>,
}

impl<C: SpillCodec> SpillStore<C> {
    /// A store of `codec`'s items spilling a batch once it holds more than `spill_at`
    /// bytes (`None`: never), to a private folder it makes in `parent`.
    pub fn with_codec(codec: C, spill_at: Option<usize>, parent: PathBuf) -> Self {
        SpillStore {
            spill_at: spill_at.unwrap_or(usize::MAX),
            parent,
            codec: Arc::new(codec),
            batch: Mutex::new(Batch {
                items: Vec::new(),
                bytes: 0,
            }),
            spilled: Mutex::new(Spilled {
                dir: None,
                runs: Vec::new(),
                error: None,
            }),
        }
    }

    /// How many bytes of items a worker should gather before [`Self::push`]ing them.
    pub fn worker_batch(&self) -> usize {
        (self.spill_at / 8).clamp(1, WORKER_BATCH)
    }

    /// Takes `items` (about `bytes` in all, by [`SpillCodec::approx_bytes`]), leaving
    /// the vector empty.
    pub fn push(&self, items: &mut Vec<C::Item>, bytes: usize) {
        if items.is_empty() {
            return;
        }
        let full = {
            let mut b = lock(&self.batch);
            b.items.append(items);
            b.bytes += bytes;
            if b.bytes > self.spill_at {
                b.bytes = 0;
                let room = b.items.len();
                Some(std::mem::replace(&mut b.items, Vec::with_capacity(room)))
            } else {
                None
            }
        };
        if let Some(batch) = full {
            self.spill(batch);
        }
    }

    /// Sorts `batch` and writes it as a run (outside the batch's lock).
    fn spill(&self, mut batch: Vec<C::Item>) {
        if lock(&self.spilled).error.is_some() {
            // The result is an error already: the items are not needed.
            return;
        }
        let dir = match self.spill_dir() {
            Ok(dir) => dir,
            Err(e) => {
                lock(&self.spilled).error.get_or_insert(e);
                return;
            }
        };
        self.codec.sort(&mut batch, false);
        let run = RunFile::write_slice(&dir, &batch);
        drop(batch);
        let mut s = lock(&self.spilled);
        match run {
            Ok(run) => s.runs.push(run),
            Err(e) => {
                s.error.get_or_insert(e);
            }
        }
    }

    /// The runs' private folder, made on first use.
    fn spill_dir(&self) -> io::Result<Arc<SpillDir>> {
        SpillDir::get_or_create(&mut lock(&self.spilled).dir, &self.parent, C::HOLDS)
    }

    /// Makes the store's result the error `e` (a failure elsewhere that leaves the
    /// items incomplete), unless it failed already.
    pub fn fail(&self, e: io::Error) {
        lock(&self.spilled).error.get_or_insert(e);
    }

    /// How many runs were spilled so far.
    pub fn runs(&self) -> usize {
        lock(&self.spilled).runs.len()
    }

    /// Every item, in order; a failed spill, or a failure to merge or open the runs, is
    /// the error.
    pub fn finish(self) -> io::Result<Merge<C>> {
        let batch = self.batch.into_inner().unwrap_or_else(|e| e.into_inner());
        let spilled = self.spilled.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = spilled.error {
            return Err(e);
        }
        let (codec, mut items, mut runs) = (self.codec, batch.items, spilled.runs);
        let Some(dir) = spilled.dir.filter(|_| !runs.is_empty()) else {
            codec.sort(&mut items, true);
            return Ok(Merge::new(codec, items, Vec::new()));
        };
        narrow(&codec, &dir, &mut runs)?;
        let readers = runs
            .into_iter()
            .map(RunFile::open)
            .collect::<io::Result<Vec<RunReader<C>>>>()?;
        codec.sort(&mut items, true);
        Ok(Merge::new(codec, items, readers))
    }
}

/// Merges runs into longer ones until at most [`FAN_IN`] are left.
fn narrow<C: SpillCodec>(
    codec: &Arc<C>,
    dir: &Arc<SpillDir>,
    runs: &mut Vec<RunFile<C>>,
) -> io::Result<()> {
    while runs.len() > FAN_IN {
        let group = runs
            .drain(..FAN_IN)
            .map(RunFile::open)
            .collect::<io::Result<Vec<RunReader<C>>>>()?;
        let merged = RunFile::write(dir, Merge::new(Arc::clone(codec), Vec::new(), group))?;
        runs.push(merged);
    }
    Ok(())
}
