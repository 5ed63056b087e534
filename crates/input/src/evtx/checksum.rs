//! A chunk's CRC32s, checked: its header's (bytes 0..120 and 128..512) and its records'
//! (512 to the free space offset), unless its flags say it keeps none. `-V` reads only
//! the chunks that pass; `log-integrity` reports the others.

use crate::error::{ChunkFault, ErrorKind};
use evtx::{ChunkFlags, EvtxChunkHeader};

/// The chunk header's size, where its records start.
const CHUNK_HEADER: usize = 512;

/// What is wrong with the chunk `bytes` (a whole chunk), if anything, with its header
/// when that reads.
pub(crate) fn chunk_fault(bytes: &[u8]) -> Option<(ChunkFault, Option<EvtxChunkHeader>)> {
    let Ok(h) = EvtxChunkHeader::from_bytes(bytes) else {
        return Some((ChunkFault::Unreadable, None));
    };
    if h.flags.contains(ChunkFlags::NO_CRC32) {
        return None;
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[..120]);
    crc.update(&bytes[128..CHUNK_HEADER]);
    let computed = crc.finalize();
    if computed != h.header_chunk_checksum {
        let stored = h.header_chunk_checksum;
        return Some((ChunkFault::Header { stored, computed }, Some(h)));
    }
    let Some(records) = bytes.get(CHUNK_HEADER..h.free_space_offset as usize) else {
        return Some((ChunkFault::Unreadable, Some(h)));
    };
    let computed = crc32fast::hash(records);
    let stored = h.events_checksum;
    (computed != stored).then_some((ChunkFault::Records { stored, computed }, Some(h)))
}

/// Why a chunk must not be read when checksums are validated (`-V`), if it must not.
pub(crate) fn checksum_error(bytes: &[u8]) -> Option<ErrorKind> {
    chunk_fault(bytes).map(|(fault, _)| ErrorKind::ChunkChecksum(fault))
}

/// What the structure check (`log-integrity`, `--integrity`) needs of a file's chunks,
/// gathered as they are read: by the check's own pass, or by the EVTX reader's walk when
/// the timeline's `--integrity` asks, so that the scan reads each chunk once.
#[derive(Debug, Default)]
pub struct ChunkTally {
    /// The first bytes of the file's header (128, as the header's CRC32 covers them).
    pub(crate) head: Vec<u8>,
    /// Whole chunks that are not all zeros.
    pub(crate) present: u64,
    /// The highest last record id of the chunks whose checksums hold.
    pub(crate) last_id: Option<u64>,
    /// The chunks whose checksums do not hold.
    pub(crate) faults: Vec<FaultyChunk>,
}

/// A chunk whose checksums do not hold.
#[derive(Debug)]
pub(crate) struct FaultyChunk {
    /// Its number in the file.
    pub(crate) chunk: u64,
    /// What is wrong.
    pub(crate) fault: ChunkFault,
    /// Its header's first and last record ids, when the header reads.
    pub(crate) records: Option<(u64, u64)>,
}

impl ChunkTally {
    /// Chunk `n` (`bytes`, whole and not all zeros).
    pub(crate) fn add(&mut self, n: u64, bytes: &[u8]) {
        self.present += 1;
        match chunk_fault(bytes) {
            None => {
                if let Ok(h) = EvtxChunkHeader::from_bytes(bytes) {
                    if h.first_event_record_id <= h.last_event_record_id {
                        self.last_id = self.last_id.max(Some(h.last_event_record_id));
                    }
                }
            }
            Some((fault, h)) => {
                let records = h.map(|h| (h.first_event_record_id, h.last_event_record_id));
                self.faults.push(FaultyChunk {
                    chunk: n,
                    fault,
                    records,
                });
            }
        }
    }
}
