//! One sorted run of detections spilled to a temporary file (see [`crate::row_store`]).
//! The file is removed when its [`RunFile`] (or the [`RunReader`] that took it) is
//! dropped, whether the run was read to the end, failed, or was never read.

use crate::row::DetectInfo;
use crate::sort::codec;
use crate::sort::spill_dir::SpillDir;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Write buffer of a run being spilled.
pub(crate) const WRITE_BUFFER: usize = 256 * 1024;
/// Read buffer of each run being merged.
pub(crate) const READ_BUFFER: usize = 64 * 1024;

/// Numbers the runs of this process, for unique names.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A sorted run on disk: its path and how many rows it holds.
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    rows: u64,
    /// The folder the file is in, removed after its last run.
    _dir: Arc<SpillDir>,
}

impl RunFile {
    /// Creates a new, empty temporary file in `dir` (never one that already exists).
    fn create(dir: &Arc<SpillDir>) -> io::Result<(RunFile, File)> {
        let pid = std::process::id();
        let mut last = None;
        for _ in 0..64 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.path().join(format!("scanner-sort-{pid}-{n}.run"));
            match scanner_files::create_temp_file(&path) {
                Ok(f) => {
                    let run = RunFile {
                        path,
                        rows: 0,
                        _dir: Arc::clone(dir),
                    };
                    return Ok((run, f));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "cannot create a temporary file for sorted detections in {}: {e}",
                            dir.path().display()
                        ),
                    ))
                }
            }
        }
        Err(last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
    }

    /// Writes `rows`, already in timeline order, to a new temporary file in `dir`. On an
    /// error the file is removed and the error names it.
    pub fn write<I>(dir: &Arc<SpillDir>, rows: I) -> io::Result<RunFile>
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
    pub fn write_slice(dir: &Arc<SpillDir>, rows: &[DetectInfo]) -> io::Result<RunFile> {
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
        let _ = scanner_files::remove_temp_file(&self.path);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::tests::{debug, files_in, row, scratch};

    /// A private spill folder in a new scratch folder.
    fn spill(name: &str) -> (PathBuf, Arc<SpillDir>) {
        let dir = scratch(name);
        let spill = SpillDir::create(&dir).unwrap();
        (dir, spill)
    }

    fn sorted(n: u64) -> Vec<DetectInfo> {
        let mut rows: Vec<DetectInfo> = (0..n).map(row).collect();
        rows.sort_by(DetectInfo::timeline_cmp);
        rows
    }

    fn read_all(run: RunFile) -> io::Result<Vec<DetectInfo>> {
        let mut reader = run.open()?;
        std::iter::from_fn(|| reader.next_row()).collect()
    }

    #[test]
    fn a_run_written_and_read_back_gives_the_same_rows() {
        let (dir, sd) = spill("run-roundtrip");
        let rows = sorted(500);
        let from_slice = RunFile::write_slice(&sd, &rows).unwrap();
        let from_iter = RunFile::write(&sd, rows.iter().cloned().map(Ok)).unwrap();
        assert_eq!((from_slice.rows, from_iter.rows), (500, 500));
        assert_ne!(from_slice.path, from_iter.path);
        assert_eq!(files_in(sd.path()), 2);
        assert_eq!(debug(&read_all(from_slice).unwrap()), debug(&rows));
        assert_eq!(debug(&read_all(from_iter).unwrap()), debug(&rows));
        assert_eq!(files_in(sd.path()), 0, "read runs are removed");
        let empty = RunFile::write_slice(&sd, &[]).unwrap();
        assert!(read_all(empty).unwrap().is_empty());
        drop(sd);
        assert_eq!(files_in(&dir), 0, "the folder goes with its last run");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_never_read_is_removed_when_dropped() {
        let (dir, sd) = spill("run-dropped");
        let run = RunFile::write_slice(&sd, &sorted(3)).unwrap();
        assert!(run.path.is_file());
        drop(run);
        assert_eq!(files_in(sd.path()), 0);
        // A reader dropped before its end takes its file with it.
        let mut reader = RunFile::write_slice(&sd, &sorted(3))
            .unwrap()
            .open()
            .unwrap();
        drop(sd);
        assert!(reader.next_row().unwrap().is_ok());
        drop(reader);
        assert_eq!(files_in(&dir), 0, "files and folder removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_truncated_run_is_an_error_naming_the_file() {
        let (dir, sd) = spill("run-truncated");
        let rows = sorted(50);
        let run = RunFile::write_slice(&sd, &rows).unwrap();
        let path = run.path.clone();
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        let mut reader = run.open().unwrap();
        let mut good = 0;
        let e = loop {
            match reader.next_row().expect("an error before the end") {
                Ok(_) => good += 1,
                Err(e) => break e,
            }
        };
        assert!(good < rows.len(), "{good}");
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        let text = e.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("shorter than what was written"), "{text}");
        assert!(reader.next_row().is_none(), "nothing after the error");
        drop(reader);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_error_among_the_rows_written_removes_the_run_and_names_it() {
        let (dir, sd) = spill("run-write-error");
        let rows = vec![Ok(row(0)), Err(io::Error::other("upstream failed"))];
        let e = RunFile::write(&sd, rows).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("cannot write sorted detections to"), "{text}");
        assert!(text.contains(&sd.path().display().to_string()), "{text}");
        assert!(text.contains("upstream failed"), "{text}");
        assert_eq!(files_in(sd.path()), 0);

        // The folder removed under the run: the error names it.
        std::fs::remove_dir(sd.path()).unwrap();
        let e = RunFile::write_slice(&sd, &sorted(1)).unwrap_err();
        assert!(
            e.to_string().contains(&sd.path().display().to_string()),
            "{e}"
        );
        drop(sd);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
