//! Sorting that spills to disk: one external sort ([`store::SpillStore`]) over a small
//! codec trait ([`codec::SpillCodec`]: an item's order, its size for the memory bound,
//! its binary form in a run file), used by the timeline's rows ([`RowStore`], here) and
//! by the correlation hits (`detect/hit_store.rs`). The batching, the sorted runs
//! in a private folder (`spill_dir.rs`), their files (`run.rs`) and the k-way merge
//! (`kway.rs`) exist once, so the two stores cannot drift apart.
//!
//! Rows are the scan's bulk and its hot path: a batch of rows is sorted by key and
//! position and then each row moved once (`by_key.rs`), not moved about by the sort.
//! [`RowStore`] spills past half its bound (a batch being gathered and one being
//! written stay under it) and keeps what the summary reports: how many rows, and their
//! first and last time. [`RowStore::finish`] hands everything over as one ordered
//! stream ([`SortedRows`]).

mod by_key;
mod codec;
mod kway;
pub(crate) mod merge;
mod row_codec;
mod run;
pub(crate) mod spill_dir;
mod store;

pub(crate) use codec::{get, get_compact, get_string, get_time, put_str, put_time, SpillCodec};
#[cfg(test)]
pub(crate) use store::FAN_IN;
pub(crate) use store::{lock, SpillStore};

use crate::row::DetectInfo;
use crate::sort::merge::SortedRows;
use crate::sort::row_codec::RowCodec;
use jiff::Timestamp;
use std::io;
use std::path::PathBuf;
use std::sync::Mutex;

/// What the rows pushed so far add up to.
#[derive(Default)]
struct Seen {
    /// Rows pushed in all, spilled or not.
    total: u64,
    range: Option<(Timestamp, Timestamp)>,
}

/// A scan's rows, held in memory up to a bound and spilled to disk past it.
pub struct RowStore {
    store: SpillStore<RowCodec>,
    seen: Mutex<Seen>,
}

fn widen(range: &mut Option<(Timestamp, Timestamp)>, with: Option<(Timestamp, Timestamp)>) {
    if let Some((lo, hi)) = with {
        *range = Some(match *range {
            Some((a, b)) => (a.min(lo), b.max(hi)),
            None => (lo, hi),
        });
    }
}

impl RowStore {
    /// A store keeping about `limit` bytes of rows in memory (`None`: no limit, nothing
    /// is spilled), spilling to files in a private folder it makes in `parent`.
    pub fn new(limit: Option<usize>, parent: PathBuf) -> RowStore {
        RowStore {
            store: SpillStore::with_codec(RowCodec, limit.map(|l| l / 2), parent),
            seen: Mutex::default(),
        }
    }

    /// How many bytes of rows a worker should gather before [`Self::push`]ing them.
    pub fn worker_batch(&self) -> usize {
        self.store.worker_batch()
    }

    /// Takes `rows` (about `bytes` in all), leaving the vector empty.
    pub fn push(&self, rows: &mut Vec<DetectInfo>, bytes: usize) {
        if rows.is_empty() {
            return;
        }
        let mut range = None;
        for r in rows.iter() {
            widen(&mut range, Some((r.time, r.time)));
        }
        {
            let mut seen = lock(&self.seen);
            seen.total += rows.len() as u64;
            widen(&mut seen.range, range);
        }
        self.store.push(rows, bytes);
    }

    /// Makes the scan's result the error `e` (a failure elsewhere that leaves the
    /// rows incomplete), unless it failed already.
    pub(crate) fn fail(&self, e: io::Error) {
        self.store.fail(e);
    }

    /// Every row, in timeline order. A failed spill, or a failure to merge or open the
    /// runs, is the stream's first (and only) item.
    pub fn finish(self) -> SortedRows {
        let Seen { total, range } = self.seen.into_inner().unwrap_or_else(|e| e.into_inner());
        let written = self.store.runs();
        match self.store.finish() {
            Ok(rows) => SortedRows::new(rows, total, range).spilled(written),
            Err(e) => SortedRows::failed(e, total, range),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::items::Items;
    use crate::row::{CorrelationOrigin, Origin, RuleRef};

    /// Row `i` of a set with many equal times and keys (ties in every part of the order).
    pub(crate) fn row(i: u64) -> DetectInfo {
        DetectInfo {
            // Many equal times and keys, so that the order within ties is tested too.
            time: Timestamp::new((i % 7) as i64, 0).unwrap(),
            rule: if i % 11 == 0 {
                RuleRef::Correlation((i % 3) as u32)
            } else {
                RuleRef::Rule((i % 3) as u32)
            },
            recovered: i % 5 == 0,
            origin: if i % 13 == 0 {
                Origin::Correlation(Box::new(CorrelationOrigin {
                    files: [(i % 2) as u32].into(),
                    computers: Items::of([format!("host-{}", i % 3).as_str()]),
                    ..CorrelationOrigin::default()
                }))
            } else {
                Origin::Record {
                    file: (i % 2) as u32,
                    record_id: i % 4,
                }
            },
            computer: format!("host-{}", i % 3).into(),
            channel: "Security".into(),
            event_id: "4624".into(),
            provider: "-".into(),
            details: Items::of([format!("n: {i}").as_str()]),
            extra: (i % 2 == 0).then(|| Items::of([format!("e{i}").as_str()])),
            all_fields: None,
            geo: None,
        }
    }

    /// An empty folder named for `name` and this process, under the temp folder.
    pub(crate) fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("scanner-row-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    pub(crate) fn files_in(d: &std::path::Path) -> usize {
        std::fs::read_dir(d).unwrap().count()
    }

    /// The run files in the private folders under `d`.
    fn runs_in(d: &std::path::Path) -> Vec<PathBuf> {
        let mut runs = Vec::new();
        for sub in std::fs::read_dir(d).unwrap() {
            let sub = sub.unwrap().path();
            assert!(
                sub.is_dir(),
                "runs are in a private folder: {}",
                sub.display()
            );
            runs.extend(std::fs::read_dir(&sub).unwrap().map(|e| e.unwrap().path()));
        }
        runs
    }

    /// Pushes rows 0..n in batches of 3 (from two threads) into a store.
    fn fill(store: &RowStore, n: u64) {
        std::thread::scope(|s| {
            for half in 0..2 {
                s.spawn(move || {
                    let mut batch = Vec::new();
                    for i in (half..n).step_by(2) {
                        batch.push(row(i));
                        if batch.len() == 3 {
                            let bytes = batch.iter().map(DetectInfo::approx_bytes).sum();
                            store.push(&mut batch, bytes);
                        }
                    }
                    let bytes = batch.iter().map(DetectInfo::approx_bytes).sum();
                    store.push(&mut batch, bytes);
                });
            }
        });
    }

    pub(crate) fn debug(rows: &[DetectInfo]) -> Vec<String> {
        rows.iter().map(|r| format!("{r:?}")).collect()
    }

    #[test]
    fn spilled_and_in_memory_give_the_same_order() {
        let dir = scratch("order");
        let n = 2000;
        let memory = RowStore::new(None, dir.clone());
        fill(&memory, n);
        let memory = memory.finish();
        assert_eq!(memory.spilled_runs(), 0);
        assert_eq!(memory.len(), n);
        let expected = memory.into_vec().unwrap();

        // A tiny bound: many runs, merged in several rounds (more than FAN_IN).
        let spilled = RowStore::new(Some(1), dir.clone());
        fill(&spilled, n);
        assert_eq!(files_in(&dir), 1, "one private folder");
        assert!(runs_in(&dir).len() > FAN_IN, "{}", runs_in(&dir).len());
        let spilled = spilled.finish();
        assert!(spilled.spilled_runs() > FAN_IN);
        assert!(runs_in(&dir).len() > 1 && runs_in(&dir).len() <= FAN_IN);
        assert_eq!(spilled.len(), n);
        let range = spilled.time_range();
        let got = spilled.into_vec().unwrap();
        assert_eq!(debug(&got), debug(&expected));
        assert!(got.windows(2).all(|w| w[0].timeline_cmp(&w[1]).is_le()));
        assert_eq!(
            range,
            Some((Timestamp::new(0, 0).unwrap(), Timestamp::new(6, 0).unwrap()))
        );
        assert_eq!(files_in(&dir), 0, "runs removed after the merge");

        // A medium bound: a few runs and an in-memory remainder.
        let some = RowStore::new(Some(64 * 1024), dir.clone());
        fill(&some, n);
        let some = some.finish();
        assert!(some.spilled_runs() >= 1);
        assert_eq!(debug(&some.into_vec().unwrap()), debug(&expected));
        assert_eq!(files_in(&dir), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_run_is_an_error_naming_its_file_and_files_are_removed() {
        let dir = scratch("damaged");
        let store = RowStore::new(Some(1), dir.clone());
        fill(&store, 300);
        let mut rows = store.finish();
        let victim = runs_in(&dir)
            .into_iter()
            .max_by_key(|p| std::fs::metadata(p).unwrap().len())
            .unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&victim)
            .unwrap();
        f.set_len(f.metadata().unwrap().len() / 2).unwrap();
        drop(f);
        let mut seen = 0;
        let err = loop {
            match rows.next() {
                Some(Ok(_)) => seen += 1,
                Some(Err(e)) => break e,
                None => panic!("no error after {seen} rows"),
            }
        };
        assert!(seen < 300);
        let msg = err.to_string();
        assert!(msg.contains(&victim.display().to_string()), "{msg}");
        assert!(rows.next().is_none(), "the stream ends at the error");
        assert_eq!(files_in(&dir), 0, "runs and folder removed after the error");
        drop(rows);

        // Dropped unread: the files go too.
        let store = RowStore::new(Some(1), dir.clone());
        fill(&store, 50);
        let rows = store.finish();
        assert!(files_in(&dir) > 0);
        drop(rows);
        assert_eq!(files_in(&dir), 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_spill_that_cannot_be_written_is_the_only_item() {
        let root = scratch("unwritable");
        let dir = root.join("missing");
        let store = RowStore::new(Some(1), dir.clone());
        fill(&store, 20);
        let mut rows = store.finish();
        assert_eq!(rows.len(), 20);
        let err = rows.next().unwrap().unwrap_err();
        assert!(
            err.to_string().contains(&dir.display().to_string()),
            "{err}"
        );
        assert!(rows.next().is_none());
        let _ = std::fs::remove_dir_all(&root);
    }
}
