//! The timeline's rows in order, one at a time ([`SortedRows`]): the row store's merge of
//! the rows kept in memory and the runs spilled to disk ([`Merge`] on
//! [`DetectInfo::timeline_cmp`]), with what the summary reports of them: how many rows,
//! their first and last time, how many runs were spilled.

use crate::row::DetectInfo;
use crate::sort::kway::Merge;
use crate::sort::row_codec::RowCodec;
use jiff::Timestamp;
use std::io;

/// A scan's rows in timeline order. An `Err` item (a spilled run that cannot be written
/// or read back) ends the stream: what came before it is not the whole timeline.
#[derive(Default)]
pub struct SortedRows {
    rows: Merge<RowCodec>,
    len: u64,
    range: Option<(Timestamp, Timestamp)>,
    spilled: usize,
    correlation_runs: usize,
}

impl SortedRows {
    /// The merged `rows`: `len` in all, first and last time `range`.
    pub(crate) fn new(
        rows: Merge<RowCodec>,
        len: u64,
        range: Option<(Timestamp, Timestamp)>,
    ) -> SortedRows {
        SortedRows {
            rows,
            len,
            range,
            ..SortedRows::default()
        }
    }

    /// Notes that `runs` runs were spilled during the scan (the merge reads fewer when
    /// they were merged into longer ones first).
    pub(crate) fn spilled(mut self, runs: usize) -> Self {
        self.spilled = runs;
        self
    }

    /// Notes that `runs` runs of correlation events were spilled during the scan.
    pub(crate) fn correlation_runs(mut self, runs: usize) -> Self {
        self.correlation_runs = runs;
        self
    }

    /// A stream whose only item is `e`.
    pub(crate) fn failed(e: io::Error, len: u64, range: Option<(Timestamp, Timestamp)>) -> Self {
        SortedRows::new(Merge::failed(e), len, range)
    }

    /// Rows in the stream (before any are taken).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the stream holds no rows.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first and last row's time; `None` without rows.
    pub fn time_range(&self) -> Option<(Timestamp, Timestamp)> {
        self.range
    }

    /// How many sorted runs were spilled to disk during the scan (0: every row was
    /// sorted in memory).
    pub fn spilled_runs(&self) -> usize {
        self.spilled
    }

    /// How many sorted runs of correlation events were spilled to disk during the scan
    /// (0: they were held in memory).
    pub fn spilled_correlation_runs(&self) -> usize {
        self.correlation_runs
    }

    /// Every row, in order, in one vector.
    pub fn into_vec(self) -> io::Result<Vec<DetectInfo>> {
        self.rows.into_vec()
    }
}

impl Iterator for SortedRows {
    type Item = io::Result<DetectInfo>;

    fn next(&mut self) -> Option<Self::Item> {
        self.rows.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::run::RunFile;
    use crate::sort::tests::{debug, files_in, row, scratch};

    /// Rows `0..n`, each in source `i % sources`, every source sorted.
    fn split(n: u64, sources: u64) -> Vec<Vec<DetectInfo>> {
        let mut parts: Vec<Vec<DetectInfo>> = (0..sources).map(|_| Vec::new()).collect();
        for i in 0..n {
            parts[(i % sources) as usize].push(row(i));
        }
        for p in &mut parts {
            p.sort_by(DetectInfo::timeline_cmp);
        }
        parts
    }

    /// The last part kept in memory, the others spilled as runs in a private folder in
    /// `dir`.
    fn merged(dir: &std::path::Path, mut parts: Vec<Vec<DetectInfo>>, n: u64) -> SortedRows {
        let memory = parts.pop().unwrap();
        let spill = crate::sort::spill_dir::SpillDir::create(dir).unwrap();
        let runs = parts
            .iter()
            .map(|p| {
                RunFile::<RowCodec>::write_slice(&spill, p)
                    .unwrap()
                    .open()
                    .unwrap()
            })
            .collect();
        SortedRows::new(Merge::new(Default::default(), memory, runs), n, None)
    }

    #[test]
    fn memory_rows_merged_with_runs_come_in_timeline_order() {
        let dir = scratch("merge-order");
        let n = 600;
        let mut expected: Vec<DetectInfo> = (0..n).map(row).collect();
        expected.sort_by(DetectInfo::timeline_cmp);
        let rows = merged(&dir, split(n, 4), n);
        assert_eq!(rows.len(), n);
        let folder = std::fs::read_dir(&dir).unwrap().next().unwrap();
        assert_eq!(files_in(&folder.unwrap().path()), 3);
        let got = rows.into_vec().unwrap();
        assert_eq!(debug(&got), debug(&expected));
        assert_eq!(
            files_in(&dir),
            0,
            "runs and their folder removed once merged"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_runs_the_memory_rows_come_as_they_are() {
        let memory = split(20, 1).pop().unwrap();
        let range = Some((memory[0].time, memory[19].time));
        let rows = SortedRows::new(
            Merge::new(Default::default(), memory.clone(), Vec::new()),
            20,
            range,
        )
        .spilled(0);
        assert_eq!((rows.len(), rows.is_empty()), (20, false));
        assert_eq!(rows.time_range(), range);
        assert_eq!(rows.spilled_runs(), 0);
        assert_eq!(debug(&rows.into_vec().unwrap()), debug(&memory));
        let none = SortedRows::default();
        assert!(none.is_empty());
        assert_eq!(none.count(), 0);
    }

    #[test]
    fn a_failed_stream_gives_its_error_once_and_then_ends() {
        let e = io::Error::new(io::ErrorKind::StorageFull, "no room for run 3");
        let mut rows = SortedRows::failed(e, 9, None);
        assert_eq!(rows.len(), 9);
        let e = rows.next().unwrap().unwrap_err();
        assert_eq!(e.to_string(), "no room for run 3");
        assert!(rows.next().is_none());
    }

    #[test]
    fn a_run_that_does_not_read_back_ends_the_merge_with_an_error_naming_it() {
        let dir = scratch("merge-truncated");
        let n = 200;
        let rows = merged(&dir, split(n, 2), n);
        let only = |d: &std::path::Path| std::fs::read_dir(d).unwrap().next().unwrap().unwrap();
        let run = only(&only(&dir).path()).path();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&run)
            .unwrap()
            .set_len(10)
            .unwrap();
        let items: Vec<io::Result<DetectInfo>> = rows.collect();
        let e = items.last().unwrap().as_ref().unwrap_err();
        assert!(e.to_string().contains(&run.display().to_string()), "{e}");
        assert!(items[..items.len() - 1].iter().all(Result::is_ok));
        assert!(items.len() < n as usize);
        assert_eq!(files_in(&dir), 0, "runs closed on the error");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
