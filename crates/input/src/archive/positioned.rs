//! A zip on disk as the `zip` crate reads it: through a buffer that seeks within
//! itself, with positioned reads. The crate reads each field of a central directory
//! entry or local header with a read of its own and asks for its position and seeks
//! between entries; on the bare file that is a system call each (about 28 a member on
//! an archive of 8,310), and a `BufReader` drops its buffer at every seek.

use crate::source::Source;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::Arc;

/// Bytes read ahead at a time (a few dozen central directory entries).
const AHEAD: usize = 8 << 10;

/// A file read at a position of its own, through a buffer of [`AHEAD`] bytes. Clones
/// share the file (positioned reads move no shared cursor), each with its own buffer
/// and position.
#[derive(Clone)]
pub(super) struct Positioned {
    file: Arc<Source>,
    /// The file's length, taken when opened.
    len: u64,
    /// Where the next read starts.
    pos: u64,
    buf: Box<[u8]>,
    /// Where in the file `buf` starts, and how many of its bytes hold the file's.
    at: u64,
    held: usize,
}

impl Positioned {
    /// `file` from its start.
    pub(super) fn new(file: File) -> io::Result<Positioned> {
        let len = file.metadata()?.len();
        Ok(Positioned {
            file: Arc::new(Source::File(file)),
            len,
            pos: 0,
            buf: vec![0; AHEAD].into_boxed_slice(),
            at: 0,
            held: 0,
        })
    }
}

impl Read for Positioned {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        let held = self.at..self.at + self.held as u64;
        if !held.contains(&self.pos) {
            if out.len() >= AHEAD {
                // Past the buffer's size: straight into `out`.
                let n = self.file.read_at(self.pos, out)?;
                self.pos += n as u64;
                return Ok(n);
            }
            self.held = self.file.read_at(self.pos, &mut self.buf)?;
            self.at = self.pos;
        }
        let from = (self.pos - self.at) as usize;
        let n = out.len().min(self.held - from);
        out[..n].copy_from_slice(&self.buf[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Positioned {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start")
        })?;
        Ok(self.pos)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evtx::test_log::TempFile;

    #[test]
    fn reads_and_seeks_as_the_file_does() {
        let bytes: Vec<u8> = (0..50_000u32).map(|i| (i % 253) as u8).collect();
        let t = TempFile::new("positioned.bin", &bytes);
        let mut p = Positioned::new(File::open(t.path()).unwrap()).unwrap();
        let mut f = File::open(t.path()).unwrap();
        // Small reads, seeks inside and outside what is held, a large read, the end.
        let steps: [(SeekFrom, usize); 7] = [
            (SeekFrom::Start(0), 30),
            (SeekFrom::Current(5), 100),
            (SeekFrom::Start(10), 7),
            (SeekFrom::End(-20), 64),
            (SeekFrom::Start(9_000), 20_000),
            (SeekFrom::Current(-3), 1),
            (SeekFrom::Start(60_000), 10),
        ];
        for (to, n) in steps {
            assert_eq!(p.seek(to).unwrap(), f.seek(to).unwrap());
            let (mut a, mut b) = (Vec::new(), Vec::new());
            (&mut p).take(n as u64).read_to_end(&mut a).unwrap();
            (&mut f).take(n as u64).read_to_end(&mut b).unwrap();
            assert_eq!(a, b, "{to:?} {n}");
            assert_eq!(p.stream_position().unwrap(), f.stream_position().unwrap());
        }
        assert!(p.seek(SeekFrom::Current(-100_000)).is_err());
        // A clone reads from its own position.
        p.seek(SeekFrom::Start(7)).unwrap();
        let mut q = p.clone();
        q.seek(SeekFrom::Start(40_000)).unwrap();
        let (mut a, mut b) = ([0u8; 3], [0u8; 3]);
        p.read_exact(&mut a).unwrap();
        q.read_exact(&mut b).unwrap();
        assert_eq!(
            (a.to_vec(), b.to_vec()),
            (bytes[7..10].to_vec(), bytes[40_000..40_003].to_vec())
        );
    }
}
