//! Output formats as encoders: a pass over the timeline's rows, in order, turned into
//! bytes that gather in the encoder until taken, so that rows can be encoded on one
//! thread and written on another. [`write_encoded`] does both on the calling thread.

use scanner_engine::DetectInfo;
use std::io::{self, Write};

/// One output format's encoder, for one pass over the rows.
pub trait RowEncoder {
    /// Encodes what comes before the first row (a header, an opening bracket).
    fn begin(&mut self) -> io::Result<()>;
    /// Encodes `r`; `false` when the row is dropped (`-X`) and nothing was added.
    fn row(&mut self, r: &DetectInfo) -> io::Result<bool>;
    /// Encodes what comes after the last row.
    fn end(&mut self) -> io::Result<()>;
    /// How many bytes are held, not yet taken.
    fn held(&self) -> usize;
    /// Moves the bytes held to the end of `into`.
    fn take(&mut self, into: &mut Vec<u8>);
}

/// Moves `held` to the end of `into`: by a swap when `into` is empty (no copy; the
/// encoder goes on in the buffer `into` had).
pub fn take_bytes(held: &mut Vec<u8>, into: &mut Vec<u8>) {
    if into.is_empty() {
        std::mem::swap(held, into);
    } else {
        into.append(held);
    }
}

/// The bytes [`write_encoded`] gathers before writing them.
const WRITE_CHUNK: usize = 1 << 16;

/// Encodes `rows` with `enc` and writes them to `out`, on the calling thread, calling
/// `on_row` with each row written (after `-X`); returns the number of rows written. An
/// `Err` row ends the pass with that error.
pub fn write_encoded<E, W, I>(
    mut enc: E,
    mut out: W,
    rows: I,
    mut on_row: impl FnMut(&DetectInfo),
) -> io::Result<usize>
where
    E: RowEncoder,
    W: Write,
    I: IntoIterator<Item = io::Result<DetectInfo>>,
{
    let mut chunk = Vec::with_capacity(WRITE_CHUNK * 2);
    let mut n = 0;
    enc.begin()?;
    for r in rows {
        let r = r?;
        if enc.row(&r)? {
            on_row(&r);
            n += 1;
        }
        if enc.held() >= WRITE_CHUNK {
            enc.take(&mut chunk);
            out.write_all(&chunk)?;
            chunk.clear();
        }
    }
    enc.end()?;
    enc.take(&mut chunk);
    out.write_all(&chunk)?;
    out.flush()?;
    Ok(n)
}
