//! The timeline written on three threads, once the scan has sorted its rows: one thread
//! merges them (decoding any runs spilled to disk) into batches, one encodes the batches
//! and counts each row written for the summary, and the calling thread writes the
//! bytes. Batches pass over bounded channels, so only a few are in flight at a time.
//! Encoded batches go back to the merge, which drops their rows (work taken off the
//! encoder, the busiest of the three) and refills them. The bytes are those of encoding
//! and writing the rows on one thread ([`crate::write_encoded`]).
//!
//! A row that cannot be read back (a damaged run) ends the pass with its error, after
//! the rows before it; a write that fails stops the other two threads, and the merge
//! removes its runs as it stops.

use crate::encoder::RowEncoder;
use scanner_engine::{DetectInfo, SortedRows};
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Rows per batch handed from the merge to the encoder.
const BATCH_ROWS: usize = 1024;
/// Encoded bytes handed to the writer at once (about: a row may pass it).
const CHUNK_BYTES: usize = 128 << 10;
/// Batches (of rows, and of bytes) waiting in each channel.
const DEPTH: usize = 8;

type Batch = io::Result<Vec<DetectInfo>>;

/// Encodes `rows` with `enc` and writes them to `out`, calling `on_row` with each row
/// written (after `-X`, on the encoding thread); returns the number of rows written.
pub fn write<E>(
    enc: E,
    out: &mut dyn Write,
    rows: SortedRows,
    on_row: impl FnMut(&DetectInfo) + Send,
) -> io::Result<usize>
where
    E: RowEncoder + Send,
{
    let (batches, batches_rx) = sync_channel::<Batch>(DEPTH);
    let (used, used_rx) = sync_channel::<Vec<DetectInfo>>(DEPTH + 2);
    let (chunks, chunks_rx) = sync_channel::<Vec<u8>>(DEPTH);
    // Written chunks go back to the encoder, so their buffers are reused.
    let (spares, spares_rx) = sync_channel::<Vec<u8>>(DEPTH + 2);
    std::thread::scope(|s| {
        s.spawn(move || merge(rows, batches, used_rx));
        let encoder = s.spawn(move || {
            let batches = Batches {
                full: batches_rx,
                used,
            };
            encode(enc, batches, chunks, spares_rx, on_row)
        });
        let written = write_out(out, chunks_rx, spares);
        let encoded = encoder
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // A failed write stops the encoder early: its count then means nothing.
        written?;
        encoded
    })
}

/// The encoder's ends of the batch channels.
struct Batches {
    full: Receiver<Batch>,
    used: SyncSender<Vec<DetectInfo>>,
}

/// An empty batch: one the encoder is done with (its rows dropped here), or a new one.
fn empty_batch(used: &Receiver<Vec<DetectInfo>>) -> Vec<DetectInfo> {
    match used.try_recv() {
        Ok(mut batch) => {
            batch.clear();
            batch
        }
        Err(_) => Vec::with_capacity(BATCH_ROWS),
    }
}

/// Sends `rows` in batches, then, if the stream failed, its error; stops early when
/// the encoder is gone. Dropping `rows` removes its runs' files.
fn merge(rows: SortedRows, batches: SyncSender<Batch>, used: Receiver<Vec<DetectInfo>>) {
    let mut batch = empty_batch(&used);
    for r in rows {
        match r {
            Ok(r) => {
                batch.push(r);
                if batch.len() == BATCH_ROWS {
                    let full = std::mem::replace(&mut batch, empty_batch(&used));
                    if batches.send(Ok(full)).is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                if batches.send(Ok(batch)).is_ok() {
                    let _ = batches.send(Err(e));
                }
                return;
            }
        }
    }
    let _ = batches.send(Ok(batch));
}

/// Encodes the batches in order, handing the bytes on in chunks of about
/// [`CHUNK_BYTES`]; stops early (with the count so far) when the writer is gone.
fn encode<E: RowEncoder>(
    mut enc: E,
    batches: Batches,
    chunks: SyncSender<Vec<u8>>,
    spares: Receiver<Vec<u8>>,
    mut on_row: impl FnMut(&DetectInfo),
) -> io::Result<usize> {
    let mut n = 0;
    let mut chunk = Vec::new();
    enc.begin(&mut chunk)?;
    for batch in &batches.full {
        let batch = batch?;
        for r in &batch {
            if enc.row(r, &mut chunk)? {
                on_row(r);
                n += 1;
            }
            if chunk.len() >= CHUNK_BYTES {
                let next = spares.try_recv().unwrap_or_default();
                if chunks.send(std::mem::replace(&mut chunk, next)).is_err() {
                    return Ok(n);
                }
            }
        }
        let _ = batches.used.try_send(batch);
    }
    enc.end(&mut chunk)?;
    let _ = chunks.send(chunk);
    Ok(n)
}

/// Writes the chunks to `out` as they come, and flushes it; returns the chunks'
/// buffers (emptied) to the encoder.
fn write_out(
    out: &mut dyn Write,
    chunks: Receiver<Vec<u8>>,
    spares: SyncSender<Vec<u8>>,
) -> io::Result<()> {
    for mut chunk in chunks {
        out.write_all(&chunk)?;
        chunk.clear();
        let _ = spares.try_send(chunk);
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoder::write_encoded;
    use jiff::Timestamp;
    use scanner_engine::{Items, Origin, RowStore, RuleRef};
    use std::path::{Path, PathBuf};

    /// Writes each row's record id, padded to 64 bytes; drops every seventh row, as
    /// `-X` drops rows.
    struct Ids;

    impl RowEncoder for Ids {
        fn begin(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
            out.extend_from_slice(b"ids\n");
            Ok(())
        }

        fn row(&mut self, r: &DetectInfo, out: &mut Vec<u8>) -> io::Result<bool> {
            let Origin::Record { record_id, .. } = r.origin else {
                return Ok(false);
            };
            if record_id % 7 == 0 {
                return Ok(false);
            }
            out.extend_from_slice(format!("{record_id:>63}\n").as_bytes());
            Ok(true)
        }

        fn end(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
            out.extend_from_slice(b"end\n");
            Ok(())
        }
    }

    fn row(i: u64) -> DetectInfo {
        DetectInfo {
            time: Timestamp::new((i * 7919 % 1000) as i64, 0).unwrap(),
            rule: RuleRef::Rule(0),
            recovered: false,
            origin: Origin::Record {
                file: 0,
                record_id: i,
            },
            computer: "host".into(),
            channel: "Security".into(),
            event_id: "4624".into(),
            provider: "-".into(),
            details: Items::of([format!("n: {i}").as_str()]),
            extra: None,
            all_fields: None,
            geo: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "scanner-write-pipeline-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The files in `d` and in its folders (spilled runs are in a private folder).
    fn files_in(d: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files.extend(files_in(&p));
            } else {
                files.push(p);
            }
        }
        files
    }

    /// `n` rows, pushed 1000 at a time into a store spilling past `limit` bytes to
    /// `dir` (in several runs, and a rest kept in memory).
    fn rows(dir: &Path, n: u64, limit: Option<usize>) -> SortedRows {
        let store = RowStore::new(limit, dir.to_path_buf());
        for from in (0..n).step_by(1000) {
            let mut batch: Vec<DetectInfo> = (from..n.min(from + 1000)).map(row).collect();
            let bytes = batch.iter().map(DetectInfo::approx_bytes).sum();
            store.push(&mut batch, bytes);
        }
        store.finish()
    }

    #[test]
    fn the_bytes_and_rows_are_those_of_one_thread() {
        let dir = scratch("same");
        // Past several batches and chunks, from memory and from spilled runs.
        for limit in [None, Some(64 << 10)] {
            let n = 20_000;
            let mut serial = Vec::new();
            let mut serial_ids = Vec::new();
            let written = write_encoded(Ids, &mut serial, rows(&dir, n, limit), |r| {
                serial_ids.push(r.origin.clone())
            })
            .unwrap();
            let mut threaded = Vec::new();
            let mut threaded_ids = Vec::new();
            let rows = rows(&dir, n, limit);
            assert_eq!(rows.spilled_runs() > 2, limit.is_some());
            let n_threaded = write(Ids, &mut threaded, rows, |r| {
                threaded_ids.push(r.origin.clone())
            })
            .unwrap();
            assert_eq!(n_threaded, written);
            assert_eq!(written, (n - n.div_ceil(7)) as usize);
            assert!(threaded == serial, "the bytes differ");
            assert_eq!(threaded_ids, serial_ids);
            assert!(threaded.len() > 4 * CHUNK_BYTES);
            assert_eq!(files_in(&dir), Vec::<PathBuf>::new());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_damaged_run_ends_the_pass_with_an_error_naming_it() {
        let dir = scratch("damaged");
        let rows = rows(&dir, 20_000, Some(64 << 10));
        let victim = files_in(&dir)
            .into_iter()
            .max_by_key(|p| std::fs::metadata(p).unwrap().len())
            .unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&victim)
            .unwrap();
        f.set_len(f.metadata().unwrap().len() / 2).unwrap();
        drop(f);
        let mut out = Vec::new();
        let err = write(Ids, &mut out, rows, |_| {}).unwrap_err();
        assert!(
            err.to_string().contains(&victim.display().to_string()),
            "{err}"
        );
        assert!(!out.ends_with(b"end\n"), "the pass was not finished");
        assert_eq!(files_in(&dir), Vec::<PathBuf>::new());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Takes `room` bytes, then fails.
    struct Full {
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if buf.len() > self.room {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            self.room -= buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_failed_write_stops_the_pass_and_removes_the_runs() {
        let dir = scratch("full");
        let rows = rows(&dir, 20_000, Some(64 << 10));
        assert!(!files_in(&dir).is_empty());
        let mut out = Full { room: 1000 };
        let err = write(Ids, &mut out, rows, |_| {}).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert_eq!(files_in(&dir), Vec::<PathBuf>::new());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
