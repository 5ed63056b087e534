//! Scan progress, shared with whoever draws it: counters the scan bumps as each file
//! is done, read from another thread. The scan never waits on the reader.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of work done so far.
#[derive(Debug, Default)]
pub struct Progress {
    files: AtomicU64,
    bytes: AtomicU64,
    records: AtomicU64,
}

/// A snapshot of [`Progress`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgressSnapshot {
    /// Files finished.
    pub files: u64,
    /// Bytes of the finished files.
    pub bytes: u64,
    /// Records read in the finished files.
    pub records: u64,
}

impl Progress {
    /// Records that a file of `bytes` bytes and `records` records is done.
    pub fn file_done(&self, bytes: u64, records: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.records.fetch_add(records, Ordering::Relaxed);
        self.files.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn snapshot(&self) -> ProgressSnapshot {
        ProgressSnapshot {
            files: self.files.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            records: self.records.load(Ordering::Relaxed),
        }
    }
}
