//! One sorted run of a spill store, in a temporary file of the store's private folder,
//! written and read back through the store's [`SpillCodec`]. The file is removed when its
//! [`RunFile`] (or the [`RunReader`] that took it) is dropped, whether the run was read
//! to the end, failed, or was never read; errors name the file.

use crate::sort::codec::SpillCodec;
use crate::sort::spill_dir::SpillDir;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;

/// Write buffer of a run being spilled.
const WRITE_BUFFER: usize = 256 * 1024;
/// Read buffer of each run being merged.
const READ_BUFFER: usize = 64 * 1024;

/// A sorted run of `C`'s items on disk: its path and how many items it holds.
#[derive(Debug)]
pub struct RunFile<C> {
    path: PathBuf,
    items: u64,
    /// The folder the file is in, removed after its last run.
    _dir: Arc<SpillDir>,
    codec: PhantomData<fn() -> C>,
}

impl<C: SpillCodec> RunFile<C> {
    /// Creates a new, empty temporary file in `dir` (never one that already exists).
    fn create(dir: &Arc<SpillDir>) -> io::Result<(RunFile<C>, File)> {
        let mut last = None;
        for _ in 0..64 {
            let path = dir.new_run_path(C::run_name);
            match scanner_files::create_temp_file(&path) {
                Ok(f) => {
                    let run = RunFile {
                        path,
                        items: 0,
                        _dir: Arc::clone(dir),
                        codec: PhantomData,
                    };
                    return Ok((run, f));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!(
                            "cannot create a temporary file for {} in {}: {e}",
                            C::HOLDS,
                            dir.path().display()
                        ),
                    ))
                }
            }
        }
        Err(last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
    }

    /// Writes `items`, already in order, to a new temporary file in `dir` (the merge of
    /// runs into a longer one). On an error the file is removed and the error names it.
    pub fn write<I>(dir: &Arc<SpillDir>, items: I) -> io::Result<RunFile<C>>
    where
        I: IntoIterator<Item = io::Result<C::Item>>,
    {
        let (mut run, file) = RunFile::create(dir)?;
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
        let written = (|| {
            for item in items {
                C::encode(&item?, &mut w)?;
                run.items += 1;
            }
            w.flush()
        })();
        // `run` is dropped (and the file removed) on the way out of an error.
        written.map_err(|e| run.error(&format!("cannot write {} to", C::HOLDS), e))?;
        Ok(run)
    }

    /// Writes a sorted slice (a batch spilled during the scan).
    pub fn write_slice(dir: &Arc<SpillDir>, items: &[C::Item]) -> io::Result<RunFile<C>> {
        let (mut run, file) = RunFile::create(dir)?;
        let mut w = BufWriter::with_capacity(WRITE_BUFFER, file);
        let written = items
            .iter()
            .try_for_each(|item| C::encode(item, &mut w))
            .and_then(|()| w.flush());
        written.map_err(|e| run.error(&format!("cannot write {} to", C::HOLDS), e))?;
        run.items = items.len() as u64;
        Ok(run)
    }

    /// Opens the run for reading from its start.
    pub fn open(self) -> io::Result<RunReader<C>> {
        match File::open(&self.path) {
            Ok(f) => Ok(RunReader {
                reader: BufReader::with_capacity(READ_BUFFER, f),
                left: self.items,
                run: self,
            }),
            Err(e) => Err(self.error(&format!("cannot open {} in", C::READ_BACK), e)),
        }
    }

    fn error(&self, doing: &str, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!("{doing} temporary file {}: {e}", self.path.display()),
        )
    }
}

impl<C> Drop for RunFile<C> {
    fn drop(&mut self) {
        let _ = scanner_files::remove_temp_file(&self.path);
    }
}

/// A run being read back, item by item; it owns the run, whose file goes with it.
#[derive(Debug)]
pub struct RunReader<C> {
    reader: BufReader<File>,
    left: u64,
    run: RunFile<C>,
}

impl<C: SpillCodec> RunReader<C> {
    /// The next item, `None` after the last; an error names the file.
    pub fn next_item(&mut self) -> Option<io::Result<C::Item>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(match C::decode(&mut self.reader) {
            Ok(item) => Ok(item),
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
                    .error(&format!("cannot read {} back from", C::READ_BACK), e))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row::DetectInfo;
    use crate::sort::row_codec::RowCodec;
    use crate::sort::tests::{debug, files_in, row, scratch};

    type RowRun = RunFile<RowCodec>;

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

    fn read_all(run: RowRun) -> io::Result<Vec<DetectInfo>> {
        let mut reader = run.open()?;
        std::iter::from_fn(|| reader.next_item()).collect()
    }

    #[test]
    fn a_run_written_and_read_back_gives_the_same_rows() {
        let (dir, sd) = spill("run-roundtrip");
        let rows = sorted(500);
        let from_slice = RowRun::write_slice(&sd, &rows).unwrap();
        let from_iter = RowRun::write(&sd, rows.iter().cloned().map(Ok)).unwrap();
        assert_eq!((from_slice.items, from_iter.items), (500, 500));
        let name = |run: &RowRun| run.path.file_name().unwrap().to_str().unwrap().to_owned();
        let pid = std::process::id();
        assert_eq!(name(&from_slice), format!("scanner-sort-{pid}-0.run"));
        assert_eq!(name(&from_iter), format!("scanner-sort-{pid}-1.run"));
        assert_eq!(files_in(sd.path()), 2);
        assert_eq!(debug(&read_all(from_slice).unwrap()), debug(&rows));
        assert_eq!(debug(&read_all(from_iter).unwrap()), debug(&rows));
        assert_eq!(files_in(sd.path()), 0, "read runs are removed");
        let empty = RowRun::write_slice(&sd, &[]).unwrap();
        assert!(read_all(empty).unwrap().is_empty());
        drop(sd);
        assert_eq!(files_in(&dir), 0, "the folder goes with its last run");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_run_never_read_is_removed_when_dropped() {
        let (dir, sd) = spill("run-dropped");
        let run = RowRun::write_slice(&sd, &sorted(3)).unwrap();
        assert!(run.path.is_file());
        drop(run);
        assert_eq!(files_in(sd.path()), 0);
        // A reader dropped before its end takes its file with it.
        let mut reader = RowRun::write_slice(&sd, &sorted(3))
            .unwrap()
            .open()
            .unwrap();
        drop(sd);
        assert!(reader.next_item().unwrap().is_ok());
        drop(reader);
        assert_eq!(files_in(&dir), 0, "files and folder removed");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_truncated_run_is_an_error_naming_the_file() {
        let (dir, sd) = spill("run-truncated");
        let rows = sorted(50);
        let run = RowRun::write_slice(&sd, &rows).unwrap();
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
            match reader.next_item().expect("an error before the end") {
                Ok(_) => good += 1,
                Err(e) => break e,
            }
        };
        assert!(good < rows.len(), "{good}");
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        let text = e.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("shorter than what was written"), "{text}");
        assert!(reader.next_item().is_none(), "nothing after the error");
        drop(reader);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_error_among_the_rows_written_removes_the_run_and_names_it() {
        let (dir, sd) = spill("run-write-error");
        let rows = vec![Ok(row(0)), Err(io::Error::other("upstream failed"))];
        let e = RowRun::write(&sd, rows).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("cannot write sorted detections to"), "{text}");
        assert!(text.contains(&sd.path().display().to_string()), "{text}");
        assert!(text.contains("upstream failed"), "{text}");
        assert_eq!(files_in(sd.path()), 0);

        // The folder removed under the run: the error names it.
        std::fs::remove_dir(sd.path()).unwrap();
        let e = RowRun::write_slice(&sd, &sorted(1)).unwrap_err();
        assert!(
            e.to_string().contains(&sd.path().display().to_string()),
            "{e}"
        );
        drop(sd);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
