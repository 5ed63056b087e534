//! The chunks of an EVTX file, in the order the `evtx` crate's `EvtxParser::chunks`
//! walks them (from the chunk holding the oldest records to the end of the file, then
//! from the first chunk up to that one, as Windows reads a log that has wrapped
//! around; chunks of zeros skipped; whole chunks past the count the file's length
//! gives read too, until one fails), with the same chunks and errors, read more
//! cheaply:
//!
//! - one positioned read per chunk, instead of a seek and four growing reads;
//! - into a buffer the thread reuses ([`recycle`]), instead of a new 64 KiB each
//!   (which the allocator often had to fault in afresh);
//! - a chunk of zeros (37% of the attack corpus's chunks: logs are preallocated) is
//!   recognised a block at a time, not byte by byte;
//! - a file of one chunk has no oldest chunk to look for.

use super::ChunkTally;
use super::{CHUNK_SIZE, HEADER_SIZE};
use crate::error::{chain, ErrorKind};
use crate::source::Source;
use evtx::err::{ChunkError, EvtxError};
use evtx::{EvtxChunkData, EvtxChunkHeader, EvtxParser};
use std::cell::Cell;
use std::io;
use std::path::Path;
use std::sync::Mutex;

/// The size of a chunk header: what is read of each chunk to find the oldest.
const CHUNK_HEADER: usize = 512;

/// An EVTX file opened for its chunks.
pub(crate) struct ChunkFile {
    file: Source,
    /// Its length when opened.
    len: u64,
    /// Its header block's size, as its file header says.
    header_block: u64,
}

impl ChunkFile {
    /// Opens `path`, its file header read and checked as the `evtx` crate's parser
    /// reads it; or why it cannot be read.
    pub(crate) fn open(path: &Path) -> Result<ChunkFile, ErrorKind> {
        let file = std::fs::File::open(path).map_err(ErrorKind::CannotRead)?;
        ChunkFile::of(Source::File(file))
    }

    /// [`Self::open`] on `file` (at any position). The crate's parser checks the file
    /// header from one positioned read of it ([`Head`]): a file handle of its own, a
    /// rewind and the parser's seeks cost six system calls a file.
    pub(crate) fn of(file: Source) -> Result<ChunkFile, ErrorKind> {
        let len = file.len().map_err(ErrorKind::CannotRead)?;
        let mut head = [0u8; HEADER_SIZE as usize];
        let read = file.read_at(0, &mut head).map_err(ErrorKind::CannotRead)?;
        let header_block = match EvtxParser::from_read_seek(Head::new(&head[..read], len)) {
            Ok(p) => u64::from(p.header().header_block_size),
            Err(e) => return Err(why_unreadable(&head[..read], &e)),
        };
        Ok(ChunkFile {
            file,
            len,
            header_block,
        })
    }

    /// Reads chunk `n`'s bytes into `buf` (a chunk's length) until it is full or the
    /// file ends; returns the bytes read.
    pub(crate) fn read_chunk(&self, n: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read_at(HEADER_SIZE + n * CHUNK_SIZE, buf)
    }

    /// Reads the file header block's first bytes into `buf` (until full or the file
    /// ends); returns the bytes read.
    pub(crate) fn read_header(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read_at(0, buf)
    }

    /// Whole chunks in the file, as the walk counts them (past its header block).
    pub(crate) fn chunk_count(&self) -> u64 {
        self.len.saturating_sub(self.header_block) / CHUNK_SIZE
    }

    /// Its chunks, in the order the crate's parser walks them.
    pub(crate) fn chunks(&self) -> Chunks<'_> {
        Chunks::new(&self.file, self.len, self.header_block)
    }

    /// [`Self::chunks`], each whole chunk of the file's count also added to `tally` as
    /// it is read (`--integrity`'s structure check, from the scan's one read).
    pub(crate) fn chunks_tallied<'f>(&'f self, tally: &'f Mutex<ChunkTally>) -> Chunks<'f> {
        Chunks {
            tally: Some(tally),
            ..self.chunks()
        }
    }
}

/// A file's first bytes as the `evtx` crate's parser reads its header from them: the
/// bytes read, at the file's length (past them, a read gives nothing: the parser reads
/// no further than the header).
struct Head<'b> {
    bytes: io::Cursor<&'b [u8]>,
    len: u64,
}

impl<'b> Head<'b> {
    fn new(bytes: &'b [u8], len: u64) -> Self {
        Head {
            bytes: io::Cursor::new(bytes),
            len,
        }
    }
}

impl io::Read for Head<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.bytes.read(buf)
    }
}

impl io::Seek for Head<'_> {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        let at = match to {
            io::SeekFrom::Start(at) => Some(at),
            io::SeekFrom::End(by) => self.len.checked_add_signed(by),
            io::SeekFrom::Current(by) => self.bytes.position().checked_add_signed(by),
        };
        let at = at.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        self.bytes.set_position(at);
        Ok(at)
    }
}

/// The chunks of one EVTX file, read from `file`.
pub(crate) struct Chunks<'f> {
    file: &'f Source,
    /// Whole chunks in the file, as the crate counts them (past its header block).
    count: u64,
    /// The next chunk to look at.
    next: u64,
    /// The chunk holding the oldest records, where the walk starts.
    oldest: u64,
    /// Whether the walk has passed the end of the file, on to its first chunk.
    wrapped: bool,
    /// Where the whole chunks of the file's count go as they are read, if anywhere.
    tally: Option<&'f Mutex<ChunkTally>>,
}

impl<'f> Chunks<'f> {
    /// The chunks of `file`, `len` bytes long, whose header block (as its file header
    /// says) is `header_block` bytes.
    pub(super) fn new(file: &'f Source, len: u64, header_block: u64) -> Self {
        let count = len.saturating_sub(header_block) / CHUNK_SIZE;
        let oldest = if count > 1 { oldest(file, count) } else { 0 };
        Chunks {
            file,
            count,
            next: oldest,
            oldest,
            wrapped: false,
            tally: None,
        }
    }

    /// Chunk `n`: `None` when it is all zeros; an error when it is not whole (the
    /// file ends, or cannot be read, before its end) or does not parse.
    fn read(&self, n: u64) -> Result<Option<EvtxChunkData>, EvtxError> {
        let mut buf = buffer();
        let at = HEADER_SIZE + n * CHUNK_SIZE;
        match self.file.read_at(at, &mut buf) {
            Ok(read) if read == buf.len() => {}
            _ => {
                recycle(buf);
                return Err(chunk_error(n, ChunkError::IncompleteChunk));
            }
        }
        if all_zero(&buf) {
            recycle(buf);
            return Ok(None);
        }
        if let Some(t) = self.tally.filter(|_| n < self.count) {
            t.lock().unwrap_or_else(|e| e.into_inner()).add(n, &buf);
        }
        let mut d = EvtxChunkData::new(buf, false).map_err(|e| chunk_error(n, e))?;
        d.number = Some(n);
        Ok(Some(d))
    }
}

/// The crate's error for chunk `n`.
fn chunk_error(n: u64, e: ChunkError) -> EvtxError {
    EvtxError::FailedToParseChunk {
        chunk_id: n,
        source: Box::new(e),
    }
}

impl Iterator for Chunks<'_> {
    type Item = Result<EvtxChunkData, EvtxError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            // Once it has wrapped around, the walk ends where it started.
            if self.wrapped && self.next >= self.oldest {
                return None;
            }
            let n = self.next;
            self.next += 1;
            let failed = match self.read(n) {
                Ok(Some(d)) => return Some(Ok(d)),
                Ok(None) => continue,
                Err(e) => e,
            };
            if n < self.count {
                return Some(Err(failed));
            }
            // Chunks past the count the file's length gives are read too (a header
            // block that says it is longer leaves whole chunks past it) until one
            // fails, which ends the walk to the end of the file.
            if self.wrapped || self.oldest == 0 {
                return None;
            }
            self.wrapped = true;
            self.next = 0;
        }
    }
}

/// The chunk whose header names the lowest first record id (the first such), among
/// the `count` chunks of `file` whose header reads and whose range is not reversed;
/// 0 when none.
fn oldest(file: &Source, count: u64) -> u64 {
    let mut header = [0; CHUNK_HEADER];
    let mut oldest = (u64::MAX, 0);
    for n in 0..count {
        match file.read_at(HEADER_SIZE + n * CHUNK_SIZE, &mut header) {
            Ok(CHUNK_HEADER) => {}
            _ => break,
        }
        if let Ok(h) = EvtxChunkHeader::from_bytes(&header) {
            if h.first_event_record_id <= h.last_event_record_id
                && h.first_event_record_id < oldest.0
            {
                oldest = (h.first_event_record_id, n);
            }
        }
    }
    oldest.1
}

/// Why the parser could not open a file starting with `head` (its first bytes, as
/// read), in words: empty, not EVTX, too short, or the parser's own reason.
fn why_unreadable(head: &[u8], e: &evtx::err::EvtxError) -> ErrorKind {
    if head.is_empty() {
        ErrorKind::EmptyFile
    } else if head[..head.len().min(8)] != *b"ElfFile\0" {
        ErrorKind::NotEvtx
    } else {
        ErrorKind::UnreadableEvtx(chain(e))
    }
}

/// Whether `bytes` are all zeros, checked a block at a time.
pub(crate) fn all_zero(bytes: &[u8]) -> bool {
    bytes
        .chunks(256)
        .all(|block| block.iter().fold(0, |acc, b| acc | b) == 0)
}

thread_local! {
    /// A chunk buffer done with, for this thread's next chunk.
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A chunk-sized buffer: this thread's spare, or a new one.
fn buffer() -> Vec<u8> {
    let mut buf = SPARE.take();
    buf.resize(CHUNK_SIZE as usize, 0);
    buf
}

/// Keeps `buf`, a chunk's bytes done with, for this thread's next chunk.
pub(super) fn recycle(buf: Vec<u8>) {
    if buf.len() == CHUNK_SIZE as usize {
        SPARE.set(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evtx::test_log::{event, log, named, TempFile};

    /// The chunks as the crate's parser hands them: number, or the error's text.
    fn crate_walk(bytes: &[u8]) -> Vec<Result<(u64, u64), String>> {
        let mut parser = evtx::EvtxParser::from_buffer(bytes.to_vec()).expect("a log");
        parser
            .chunks()
            .map(|c| {
                c.map(|d| (d.number.unwrap(), d.header.first_event_record_id))
                    .map_err(|e| format!("{e:?}"))
            })
            .collect()
    }

    /// The chunks as [`Chunks`] reads them from a file holding `bytes`.
    fn our_walk(bytes: &[u8]) -> Vec<Result<(u64, u64), String>> {
        let t = TempFile::new("chunks-walk.evtx", bytes);
        let file = Source::File(std::fs::File::open(t.path()).unwrap());
        let header = evtx::EvtxParser::from_buffer(bytes.to_vec()).expect("a log");
        let block = u64::from(header.header().header_block_size);
        let walk = |file: &Source| -> Vec<Result<(u64, u64), String>> {
            Chunks::new(file, bytes.len() as u64, block)
                .map(|c| {
                    c.map(|d| (d.number.unwrap(), d.header.first_event_record_id))
                        .map_err(|e| format!("{e:?}"))
                })
                .collect()
        };
        // The same bytes in memory (an archive's member) walk the same way.
        let in_memory = Source::Memory(crate::source::Bytes::new(bytes.to_vec()));
        assert_eq!(walk(&file), walk(&in_memory));
        walk(&file)
    }

    /// A log of `chunks` chunks of one record each, numbered 1 up in file order.
    fn chunked(chunks: usize) -> Vec<u8> {
        let one = log(&[event(4624, named("User", "bob"))]);
        let chunk = &one[HEADER_SIZE as usize..HEADER_SIZE as usize + CHUNK_SIZE as usize];
        let mut bytes = one[..HEADER_SIZE as usize].to_vec();
        for _ in 0..chunks {
            bytes.extend_from_slice(chunk);
        }
        bytes
    }

    /// Sets chunk `n`'s record ids (its header's, and its one record's) to `id`.
    fn renumber(bytes: &mut [u8], n: usize, id: u64) {
        let at = HEADER_SIZE as usize + n * CHUNK_SIZE as usize;
        for field in [8, 16, 24, 32] {
            bytes[at + field..at + field + 8].copy_from_slice(&id.to_le_bytes());
        }
    }

    #[test]
    fn the_walk_is_the_crates_for_plain_wrapped_empty_damaged_and_short_logs() {
        let mut cases = vec![log(&[event(4624, named("User", "bob"))]), chunked(3)];
        // Wrapped around: the oldest records in chunk 2 of 4.
        let mut wrapped = chunked(4);
        for (n, id) in [(0, 30), (1, 40), (2, 10), (3, 20)] {
            renumber(&mut wrapped, n, id);
        }
        cases.push(wrapped.clone());
        // Chunks of zeros, at the start, between, and after a wrap.
        let mut zeros = wrapped.clone();
        let z = |n: usize| HEADER_SIZE as usize + n * CHUNK_SIZE as usize;
        zeros[z(0)..z(1)].fill(0);
        cases.push(zeros.clone());
        zeros.extend(std::iter::repeat_n(0, CHUNK_SIZE as usize));
        cases.push(zeros);
        // A damaged chunk header (not zeros, no magic).
        let mut damaged = chunked(3);
        damaged[z(1)..z(1) + 8].copy_from_slice(b"garbage!");
        cases.push(damaged);
        // A reversed range, which does not count for the oldest.
        let mut reversed = chunked(3);
        for (n, id) in [(0, 50), (1, 5), (2, 60)] {
            renumber(&mut reversed, n, id);
        }
        let at = z(1) + 32;
        reversed[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
        cases.push(reversed.clone());
        // A header block said to be longer than it is: whole chunks past the count
        // its length gives are read, until one fails to parse.
        let mut long_header = chunked(3);
        long_header[40..42].copy_from_slice(&0x8000u16.to_le_bytes());
        cases.push(long_header.clone());
        long_header[z(2)..z(2) + 8].copy_from_slice(b"garbage!");
        cases.push(long_header.clone());
        // A partial last chunk, which neither walk reaches.
        let mut short = chunked(2);
        short.truncate(short.len() - 1000);
        cases.push(short);
        for (i, bytes) in cases.iter().enumerate() {
            let ours = our_walk(bytes);
            assert_eq!(ours, crate_walk(bytes), "case {i}");
            assert!(!ours.is_empty(), "case {i}");
        }
        // The wrapped log starts at its oldest chunk; a reversed range is not oldest.
        assert_eq!(our_walk(&wrapped)[0], Ok((2, 10)));
        assert_eq!(our_walk(&reversed)[0], Ok((0, 50)));
        assert_eq!(
            our_walk(&long_header).len(),
            2,
            "the garbage past the count ends it"
        );
    }

    #[test]
    fn a_chunk_buffer_is_reused_by_its_thread() {
        let bytes = chunked(2);
        let t = TempFile::new("chunks-reuse.evtx", &bytes);
        let file = Source::File(std::fs::File::open(t.path()).unwrap());
        let mut chunks = Chunks::new(&file, bytes.len() as u64, HEADER_SIZE);
        let first = chunks.next().unwrap().unwrap();
        let at = first.data.as_ptr();
        recycle(first.data);
        let second = chunks.next().unwrap().unwrap();
        assert_eq!(second.data.as_ptr(), at);
        assert_eq!(second.number, Some(1));
    }

    #[test]
    fn zeros_are_found_a_block_at_a_time_wherever_a_byte_is_set() {
        let mut bytes = vec![0u8; CHUNK_SIZE as usize];
        assert!(all_zero(&bytes));
        for at in [0, 255, 256, 4097, CHUNK_SIZE as usize - 1] {
            bytes[at] = 1;
            assert!(!all_zero(&bytes), "byte {at}");
            bytes[at] = 0;
        }
    }
}
