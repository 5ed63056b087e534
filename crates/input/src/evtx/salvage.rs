//! Damage the `evtx` crate refuses but that leaves records readable: a chunk whose
//! header does not verify, or a truncated last chunk, is read directly from the file
//! ([`salvage`]); a chunk whose string table is damaged is read again without it
//! ([`parseable`]). Also the words for a file that does not open as EVTX.

use super::{at_chunk, CHUNK_SIZE, HEADER_SIZE};
use crate::error::{ErrorKind, InputError};
use evtx::{EvtxChunkData, ParserSettings};
use std::path::Path;
use std::sync::Arc;

/// The string table of a chunk header: 64 offsets at bytes 128..384.
const STRING_TABLE: std::ops::Range<usize> = 128..384;

/// An error and its sources, each source once (the `evtx` crate's messages often
/// repeat their source's text).
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        let t = x.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = x.source();
    }
    s
}

/// Why the parser could not open `path`, in words: empty, not EVTX, too short, or
/// the parser's own reason.
pub(super) fn why_unreadable(path: &Path, e: &evtx::err::EvtxError) -> ErrorKind {
    use std::io::Read;
    let mut head = Vec::with_capacity(8);
    let opened = std::fs::File::open(path).and_then(|f| f.take(8).read_to_end(&mut head));
    match opened {
        Err(io) => ErrorKind::CannotRead(io),
        Ok(0) => ErrorKind::EmptyFile,
        Ok(_) if head != b"ElfFile\0" => ErrorKind::NotEvtx,
        Ok(_) => ErrorKind::UnreadableEvtx(chain(e)),
    }
}

/// Chunk `n` of `path` read directly, padded to a whole chunk, with its magic set:
/// for a chunk whose header the parser refuses, or a truncated last chunk. `None` when
/// nothing is there.
pub(super) fn salvage<E: Fn(InputError)>(path: &Path, n: u64, err: &E) -> Option<EvtxChunkData> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::with_capacity(CHUNK_SIZE as usize);
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(HEADER_SIZE + n * CHUNK_SIZE))?;
        f.take(CHUNK_SIZE).read_to_end(&mut bytes)
    });
    if let Err(e) = read {
        err(at_chunk(path, n, ErrorKind::Io(e)));
        return None;
    }
    if bytes.len() < 512 || bytes.iter().all(|&b| b == 0) {
        return None;
    }
    bytes.resize(CHUNK_SIZE as usize, 0);
    bytes[..8].copy_from_slice(b"ElfChnk\0");
    let mut d = EvtxChunkData::new(bytes, false).ok()?;
    d.number = Some(n);
    Some(d)
}

/// `data` (chunk `data.number` of `path`) once it parses: as it is, or, when its string
/// table is damaged (reported), with the table cleared; `None`, reported, when it does
/// not parse.
pub(super) fn parseable<E: Fn(InputError)>(
    path: &Path,
    mut data: EvtxChunkData,
    settings: &Arc<ParserSettings>,
    err: &E,
) -> Option<EvtxChunkData> {
    let number = data.number.unwrap_or(0);
    let parsed = data.parse(Arc::clone(settings)).err().map(|e| chain(&e));
    match parsed {
        None => Some(data),
        Some(e) if e.contains("string cache") => {
            // A damaged string table: it only caches names that records also point to,
            // so read the chunk again without it.
            err(at_chunk(path, number, ErrorKind::DamagedStringTable(e)));
            let mut bytes = std::mem::take(&mut data.data);
            bytes[STRING_TABLE].fill(0);
            match EvtxChunkData::new(bytes, false) {
                Ok(mut d) => {
                    d.number = data.number;
                    Some(d)
                }
                Err(e) => {
                    err(at_chunk(path, number, ErrorKind::DamagedChunk(chain(&e))));
                    None
                }
            }
        }
        Some(e) => {
            err(at_chunk(path, number, ErrorKind::DamagedChunk(e)));
            None
        }
    }
}
