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
