//! Damage the `evtx` crate refuses but that leaves records readable: a chunk whose
//! header does not verify, or a truncated last chunk, is read directly from the file
//! ([`salvage`]); a chunk whose string table is damaged is read again without it
//! ([`mend_string_table`]).

use super::chunks::{all_zero, ChunkFile};
use super::{at_chunk, CHUNK_SIZE};
use crate::error::{chain, ErrorKind, InputError};
use evtx::EvtxChunkData;
use std::path::Path;

/// The string table of a chunk header: 64 offsets at bytes 128..384.
const STRING_TABLE: std::ops::Range<usize> = 128..384;

/// Chunk `n` of `path` (opened as `file`) read directly, padded to a whole chunk, with
/// its magic set: for a chunk whose header the parser refuses, or a truncated last
/// chunk. `None` when nothing is there.
pub(super) fn salvage<E: Fn(InputError)>(
    path: &Path,
    file: &ChunkFile,
    n: u64,
    err: &E,
) -> Option<EvtxChunkData> {
    let mut bytes = vec![0; CHUNK_SIZE as usize];
    let read = match file.read_chunk(n, &mut bytes) {
        Ok(read) => read,
        Err(e) => {
            err(at_chunk(path, n, ErrorKind::Io(e)));
            return None;
        }
    };
    // Past what was read, the buffer holds zeros: the padding.
    if read < 512 || all_zero(&bytes) {
        return None;
    }
    bytes[..8].copy_from_slice(b"ElfChnk\0");
    let mut d = EvtxChunkData::new(bytes, false).ok()?;
    d.number = Some(n);
    Some(d)
}

/// After chunk `data.number` of `path` failed to parse with `e`: when its string table
/// is what is damaged (reported), `data` now holds the chunk with the table cleared,
/// to be parsed again (`true`); otherwise the damage is reported (`false`).
pub(super) fn mend_string_table<E: Fn(InputError)>(
    path: &Path,
    data: &mut EvtxChunkData,
    e: String,
    err: &E,
) -> bool {
    let number = data.number.unwrap_or(0);
    if !e.contains("string cache") {
        err(at_chunk(path, number, ErrorKind::DamagedChunk(e)));
        return false;
    }
    // A damaged string table: it only caches names that records also point to, so
    // read the chunk again without it.
    err(at_chunk(path, number, ErrorKind::DamagedStringTable(e)));
    let mut bytes = std::mem::take(&mut data.data);
    bytes[STRING_TABLE].fill(0);
    match EvtxChunkData::new(bytes, false) {
        Ok(mut d) => {
            d.number = data.number;
            *data = d;
            true
        }
        Err(e) => {
            err(at_chunk(path, number, ErrorKind::DamagedChunk(chain(&e))));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Position;
    use crate::evtx::test_log::{event, log, named, TempFile};
    use crate::evtx::HEADER_SIZE;
    use crate::evtx::{read_evtx, EvtxRead};
    use scanner_evtx_writer::Element;
    use std::sync::Mutex;

    fn events(n: u16) -> Vec<scanner_evtx_writer::Event> {
        let data = |i: u16| Element::new("EventData").child(named("N", format!("n{i}")));
        (0..n).map(|i| event(i, data(i))).collect()
    }

    /// Reads `bytes` as an EVTX file: the records handed and the errors.
    fn read(name: &str, bytes: &[u8]) -> (u64, Vec<InputError>) {
        let file = TempFile::new(name, bytes);
        let errors = Mutex::new(Vec::new());
        let read = EvtxRead {
            recover: false,
            typed: true,
            validate_checksums: false,
        };
        let push = |e| errors.lock().unwrap().push(e);
        let counts = read_evtx(
            file.path(),
            bytes.len() as u64,
            read,
            || (),
            |_, _| {},
            push,
        );
        (counts.records, errors.into_inner().unwrap())
    }

    /// [`read`], which must report one error at chunk 0: the records and the error.
    fn read_chunk_error(name: &str, bytes: &[u8]) -> (u64, InputError) {
        let (n, mut errors) = read(name, bytes);
        assert_eq!(errors.len(), 1, "{errors:?}");
        let e = errors.remove(0);
        assert_eq!(e.position(), Position::Chunk(0), "{e}");
        (n, e)
    }

    #[test]
    fn a_file_that_is_not_evtx_says_why() {
        let (n, errors) = read("empty.evtx", b"");
        assert_eq!(n, 0);
        assert!(matches!(errors[..], [ref e] if matches!(e.kind(), ErrorKind::EmptyFile)));
        let (_, errors) = read("text.evtx", b"not a log at all, but long enough to be read");
        let [e] = &errors[..] else {
            panic!("{errors:?}")
        };
        assert!(matches!(e.kind(), ErrorKind::NotEvtx));
        assert_eq!(e.position(), Position::None);
        assert!(e.to_string().ends_with(
            "text.evtx: not an EVTX file (it does not start with the ElfFile signature)"
        ));
    }

    #[test]
    fn a_damaged_chunk_header_is_reported_with_its_number_and_its_records_read() {
        let mut bytes = log(&events(20));
        // A letter of the chunk's signature.
        bytes[HEADER_SIZE as usize + 2] ^= 0x20;
        let (n, e) = read_chunk_error("header.evtx", &bytes);
        assert_eq!(n, 20, "every record read");
        assert!(matches!(e.kind(), ErrorKind::DamagedChunkHeader(_)), "{e}");
        assert!(
            e.to_string().contains(": chunk 0: damaged chunk header ("),
            "{e}"
        );
    }

    #[test]
    fn a_truncated_last_chunk_is_reported_and_its_complete_records_read() {
        let bytes = log(&events(20));
        let h = HEADER_SIZE as usize;
        let used = u32::from_le_bytes(bytes[h + 48..h + 52].try_into().unwrap()) as usize;
        let cut = &bytes[..h + used];
        let (n, e) = read_chunk_error("cut.evtx", cut);
        assert_eq!(n, 20);
        let want = ErrorKind::TruncatedChunk {
            read: used as u64,
            size: CHUNK_SIZE,
        };
        assert_eq!(e.kind().to_string(), want.to_string());
    }

    #[test]
    fn a_damaged_string_table_is_cleared_and_the_chunk_read() {
        let mut bytes = log(&events(20));
        // A string table entry pointing into the middle of a record.
        let at = HEADER_SIZE as usize + STRING_TABLE.start;
        bytes[at..at + 4].copy_from_slice(&1001u32.to_le_bytes());
        let (n, e) = read_chunk_error("strings.evtx", &bytes);
        assert_eq!(n, 20, "every record read");
        assert!(matches!(e.kind(), ErrorKind::DamagedStringTable(_)), "{e}");
    }

    #[test]
    fn nothing_is_salvaged_where_there_is_no_chunk() {
        let mut bytes = log(&events(2));
        let file = TempFile::new("salvage.evtx", &bytes);
        let errors = Mutex::new(Vec::new());
        let push = |e| errors.lock().unwrap().push(e);
        let opened = ChunkFile::open(file.path()).unwrap();
        assert!(salvage(file.path(), &opened, 0, &push).is_some());
        assert!(
            salvage(file.path(), &opened, 5, &push).is_none(),
            "past the end"
        );
        bytes[HEADER_SIZE as usize..].fill(0);
        let zeroed = TempFile::new("zeroed.evtx", &bytes);
        let opened = ChunkFile::open(zeroed.path()).unwrap();
        assert!(
            salvage(zeroed.path(), &opened, 0, &push).is_none(),
            "all zeros"
        );
        assert!(errors.into_inner().unwrap().is_empty());
    }
}
