//! The timeline written on three threads, once the scan has sorted its rows: one thread
//! merges them (decoding any runs spilled to disk) into batches, one encodes the batches
//! and counts each row written for the summary, and the calling thread writes the
//! bytes. Batches pass over bounded channels, so only a few are in flight at a time;
//! encoded batches go back to the merge, which drops their rows (freeing them is work
//! taken off the encoder, the busiest of the three) and refills them;
//! the bytes are those of encoding and writing the rows on one thread
//! ([`scanner_engine::row_encoder::write_encoded`]).
//!
//! A row that cannot be read back (a damaged run) ends the pass with its error, after
//! the rows before it; a write that fails stops the other two threads, and the merge
//! removes its runs as it stops.

use scanner_engine::row_encoder::RowEncoder;
use scanner_engine::{DetectInfo, SortedRows};
use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// Rows per batch handed from the merge to the encoder.
const BATCH_ROWS: usize = 1024;
/// Encoded bytes handed to the writer at once (about: a row may pass it).
const CHUNK_BYTES: usize = 128 << 10;
/// Batches (of rows, and of bytes) waiting in each channel.
const DEPTH: usize = 2;

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
    enc.begin()?;
    for batch in &batches.full {
        let batch = batch?;
        for r in &batch {
            if enc.row(r)? {
                on_row(r);
                n += 1;
            }
            if enc.held() >= CHUNK_BYTES {
                let mut chunk = spares.try_recv().unwrap_or_default();
                enc.take(&mut chunk);
                if chunks.send(chunk).is_err() {
                    return Ok(n);
                }
            }
        }
        let _ = batches.used.try_send(batch);
    }
    enc.end()?;
    let mut chunk = spares.try_recv().unwrap_or_default();
    enc.take(&mut chunk);
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
