//! Output formats as encoders: a pass over the timeline's rows, in order, turned into
//! bytes that gather in the encoder until taken, so that rows can be encoded on one
//! thread and written on another. [`write_encoded`] does both on the calling thread.

use scanner_engine::DetectInfo;
use std::io::{self, Write};

/// One output format's encoder, for one pass over the rows.
/// Each call appends its bytes to `out`, a buffer the caller owns and writes out.
pub trait RowEncoder {
    /// Encodes what comes before the first row (a header); nothing by default.
    fn begin(&mut self, _out: &mut Vec<u8>) -> io::Result<()> {
        Ok(())
    }
    /// Encodes `r`; `false` when the row is dropped (`-X`) and nothing was added.
    fn row(&mut self, r: &DetectInfo, out: &mut Vec<u8>) -> io::Result<bool>;
    /// Encodes what comes after the last row; nothing by default.
    fn end(&mut self, _out: &mut Vec<u8>) -> io::Result<()> {
        Ok(())
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
    enc.begin(&mut chunk)?;
    for r in rows {
        let r = r?;
        if enc.row(&r, &mut chunk)? {
            on_row(&r);
            n += 1;
        }
        if chunk.len() >= WRITE_CHUNK {
            out.write_all(&chunk)?;
            chunk.clear();
        }
    }
    enc.end(&mut chunk)?;
    out.write_all(&chunk)?;
    out.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_row::row;
    use scanner_engine::Origin;
    use std::cell::RefCell;

    /// Encodes `begin;`, `<record id>,` per row (padded to `width` bytes) and `end;`,
    /// dropping rows with odd record ids; logs each call in `calls`.
    struct Recorder<'c> {
        width: usize,
        calls: &'c RefCell<Vec<String>>,
    }

    impl<'c> Recorder<'c> {
        fn new(width: usize, calls: &'c RefCell<Vec<String>>) -> Self {
            Recorder { width, calls }
        }
    }

    fn id(r: &DetectInfo) -> u64 {
        match r.origin {
            Origin::Record { record_id, .. } => record_id,
            Origin::Correlation { .. } => u64::MAX,
        }
    }

    impl RowEncoder for Recorder<'_> {
        fn begin(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
            self.calls.borrow_mut().push("begin".into());
            out.extend_from_slice(b"begin;");
            Ok(())
        }

        fn row(&mut self, r: &DetectInfo, out: &mut Vec<u8>) -> io::Result<bool> {
            let id = id(r);
            self.calls.borrow_mut().push(format!("row {id}"));
            if id % 2 == 1 {
                return Ok(false);
            }
            let cell = format!("{id:>w$},", w = self.width);
            out.extend_from_slice(cell.as_bytes());
            Ok(true)
        }

        fn end(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
            self.calls.borrow_mut().push("end".into());
            out.extend_from_slice(b"end;");
            Ok(())
        }
    }

    /// A writer that counts its `write` calls.
    #[derive(Default)]
    struct Counting {
        bytes: Vec<u8>,
        writes: usize,
    }

    impl Write for Counting {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn header_then_kept_rows_then_end_are_written_and_dropped_rows_not_counted() {
        let calls = RefCell::new(Vec::new());
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let rows = (0..5).map(|i| Ok(row(i, i as u64)));
        let n = write_encoded(Recorder::new(1, &calls), &mut out, rows, |r| {
            seen.push(id(r))
        })
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "begin;0,2,4,end;");
        assert_eq!(n, 3);
        assert_eq!(seen, [0, 2, 4], "on_row sees only the rows written");
        assert_eq!(
            calls.into_inner(),
            ["begin", "row 0", "row 1", "row 2", "row 3", "row 4", "end"]
        );
    }

    #[test]
    fn without_rows_only_the_header_and_end_are_written() {
        let calls = RefCell::new(Vec::new());
        let mut out = Vec::new();
        let n = write_encoded(Recorder::new(1, &calls), &mut out, [], |_| {}).unwrap();
        assert_eq!(n, 0);
        assert_eq!(out, b"begin;end;");
    }

    #[test]
    fn an_error_in_the_row_stream_ends_the_pass_with_that_error() {
        let calls = RefCell::new(Vec::new());
        let rows = vec![
            Ok(row(0, 0)),
            Err(io::Error::new(io::ErrorKind::InvalidData, "run 7 is short")),
            Ok(row(1, 2)),
        ];
        let mut written = 0;
        let e = write_encoded(Recorder::new(1, &calls), Vec::new(), rows, |_| written += 1)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(e.to_string(), "run 7 is short");
        assert_eq!(written, 1);
        assert_eq!(
            calls.into_inner(),
            ["begin", "row 0"],
            "no row after the error, and no end"
        );
    }

    #[test]
    fn a_writer_error_is_returned() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let calls = RefCell::new(Vec::new());
        let rows = (0..3).map(|i| Ok(row(i, i as u64)));
        let e = write_encoded(Recorder::new(1, &calls), Full, rows, |_| {}).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
    }

    #[test]
    fn output_larger_than_a_chunk_is_written_in_several_writes_with_nothing_lost() {
        let calls = RefCell::new(Vec::new());
        let mut out = Counting::default();
        let rows = (0..400u64).map(|i| Ok(row(i as i64, i)));
        let n = write_encoded(Recorder::new(999, &calls), &mut out, rows, |_| {}).unwrap();
        assert_eq!(n, 200);
        let mut expected = String::from("begin;");
        for i in (0..400).step_by(2) {
            expected.push_str(&format!("{i:>999},"));
        }
        expected.push_str("end;");
        assert!(expected.len() > 2 * WRITE_CHUNK);
        assert_eq!(String::from_utf8(out.bytes).unwrap(), expected);
        assert!(out.writes >= 3, "{} writes", out.writes);
    }
}
