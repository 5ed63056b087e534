//! One sorted run of detections spilled to a temporary file (see [`crate::row_store`]).
//! The file is removed when its [`RunFile`] (or the [`RunReader`] that took it) is
//! dropped, whether the run was read to the end, failed, or was never read.

use crate::row::DetectInfo;
use crate::sort::codec;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Write buffer of a run being spilled.
const WRITE_BUFFER: usize = 256 * 1024;
/// Read buffer of each run being merged.
const READ_BUFFER: usize = 64 * 1024;

/// Numbers the runs of this process, for unique names.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A sorted run on disk: its path and how many rows it holds.
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    rows: u64,
}

impl RunFile {
    /// Creates a new, empty temporary file in `dir` (never one that already exists).
    fn create(dir: &Path) -> io::Result<(RunFile, File)> {
        let pid = std::process::id();
        let mut last = None;
        for _ in 0..64 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("scanner-sort-{pid}-{n}.run"));
            match crate::sort::temp_files::create(&path) {
                Ok(f) => return Ok((RunFile { path, rows: 0 }, f)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "cannot create a temporary file for sorted detections in {}: {e}",
                            dir.display()
                        ),
                    ))
                }
            }
        }
        Err(last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
    }

    /// Writes `rows`, already in timeline order, to a new temporary file in `dir`. On an
    /// error the file is removed and the error names it.
    pub fn write<I>(dir: &Path, rows: I) -> io::Result<RunFile>
    where
        I: IntoIterator<Item = io::Result<DetectInfo>>,
    {
        let (mut run, file) = RunFile::create(dir)?;
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
        let written = (|| {
            for r in rows {
                codec::encode(&r?, &mut w)?;
                run.rows += 1;
            }
            w.flush()
        })();
        // `run` is dropped (and the file removed) on the way out of an error.
        written.map_err(|e| run.error("cannot write sorted detections to", e))?;
        Ok(run)
    }

    /// Writes a sorted slice (a batch spilled during the scan).
    pub fn write_slice(dir: &Path, rows: &[DetectInfo]) -> io::Result<RunFile> {
        let (mut run, file) = RunFile::create(dir)?;
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
        let written = rows
            .iter()
            .try_for_each(|r| codec::encode(r, &mut w))
            .and_then(|()| w.flush());
        written.map_err(|e| run.error("cannot write sorted detections to", e))?;
        run.rows = rows.len() as u64;
        Ok(run)
    }

    /// Opens the run for reading from its start.
    pub fn open(self) -> io::Result<RunReader> {
        match File::open(&self.path) {
            Ok(f) => Ok(RunReader {
                reader: BufReader::with_capacity(READ_BUFFER, f),
                left: self.rows,
                run: self,
            }),
            Err(e) => Err(self.error("cannot open spilled detections in", e)),
        }
    }

    fn error(&self, doing: &str, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!("{doing} temporary file {}: {e}", self.path.display()),
        )
    }
}

impl Drop for RunFile {
    fn drop(&mut self) {
        let _ = crate::sort::temp_files::remove(&self.path);
    }
}

/// A run being read back, row by row; it owns the run, whose file goes with it.
#[derive(Debug)]
pub struct RunReader {
    reader: BufReader<File>,
    left: u64,
    run: RunFile,
}

impl RunReader {
    /// The next row, `None` after the last; an error names the file.
    pub fn next_row(&mut self) -> Option<io::Result<DetectInfo>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(match codec::decode(&mut self.reader) {
            Ok(r) => Ok(r),
            Err(e) => {
                self.left = 0;
                let e = match e.kind() {
                    io::ErrorKind::UnexpectedEof => {
                        io::Error::new(e.kind(), "the file is shorter than what was written to it")
                    }
                    _ => e,
                };
                Err(self
                    .run
                    .error("cannot read spilled detections back from", e))
            }
        })
    }
}
