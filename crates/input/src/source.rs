//! An input's bytes, wherever they are: a file (on disk, or a member's private copy),
//! or a member of an archive copied into memory. The readers take a [`Source`], so a
//! member small enough is read from memory with nothing written anywhere.

use std::fs::File;
use std::io::{self, BufRead, Cursor, Seek};
use std::sync::Arc;

/// An input's bytes: an open file, or bytes held in memory.
pub(crate) enum Source {
    File(File),
    Memory(Bytes),
}

/// Bytes held in memory, shared between the readers of one input.
#[derive(Clone)]
pub(crate) struct Bytes(Arc<Vec<u8>>);

impl Bytes {
    pub(crate) fn new(bytes: Vec<u8>) -> Bytes {
        Bytes(Arc::new(bytes))
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl From<File> for Source {
    fn from(file: File) -> Source {
        Source::File(file)
    }
}

impl Source {
    /// The file it is; an error for bytes in memory.
    pub(crate) fn into_file(self) -> io::Result<File> {
        match self {
            Source::File(f) => Ok(f),
            Source::Memory(_) => Err(io::Error::other("held in memory, not in a file")),
        }
    }

    /// Another handle on the same bytes (a file's handle shares its position).
    pub(crate) fn try_clone(&self) -> io::Result<Source> {
        match self {
            Source::File(f) => f.try_clone().map(Source::File),
            Source::Memory(b) => Ok(Source::Memory(b.clone())),
        }
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> io::Result<u64> {
        match self {
            Source::File(f) => {
                let mut f = f;
                f.seek(io::SeekFrom::End(0))
            }
            Source::Memory(b) => Ok(b.as_ref().len() as u64),
        }
    }

    /// Reads from `at` into `buf` until it is full or the bytes end; returns the bytes
    /// read.
    pub(crate) fn read_at(&self, at: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(f) => read_file_at(f, at, buf),
            Source::Memory(b) => {
                let bytes = b.as_ref();
                let from = usize::try_from(at).unwrap_or(usize::MAX).min(bytes.len());
                let n = buf.len().min(bytes.len() - from);
                buf[..n].copy_from_slice(&bytes[from..from + n]);
                Ok(n)
            }
        }
    }

    /// A buffered reader of its bytes from the start, rewound first.
    pub(crate) fn buffered(self) -> io::Result<Box<dyn BufRead>> {
        match self {
            Source::File(mut f) => {
                f.rewind()?;
                Ok(Box::new(io::BufReader::new(f)))
            }
            Source::Memory(b) => Ok(Box::new(Cursor::new(b))),
        }
    }
}

/// Reads from `file` at `at` into `buf` until it is full or the file ends; returns
/// the bytes read.
fn read_file_at(file: &File, mut at: u64, mut buf: &mut [u8]) -> io::Result<usize> {
    let mut read = 0;
    while !buf.is_empty() {
        match read_once_at(file, at, buf) {
            Ok(0) => break,
            Ok(n) => {
                read += n;
                at += n as u64;
                buf = &mut buf[n..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(read)
}

#[cfg(unix)]
fn read_once_at(file: &File, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_once_at(file: &File, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_reads_at_any_offset_and_stops_at_the_end() {
        let s = Source::Memory(Bytes::new(b"0123456789".to_vec()));
        let mut buf = [0u8; 4];
        assert_eq!(s.read_at(3, &mut buf).unwrap(), 4);
        assert_eq!(&buf, b"3456");
        assert_eq!(s.read_at(8, &mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"89");
        assert_eq!(s.read_at(10, &mut buf).unwrap(), 0);
        assert_eq!(s.read_at(u64::MAX, &mut buf).unwrap(), 0);
        assert_eq!(s.len().unwrap(), 10);
    }
}
