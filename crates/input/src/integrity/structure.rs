//! The structure of an EVTX file against what it holds: the file header (CRC32, dirty
//! flag, chunk count, next record id) and each chunk's CRC32s. The file is opened and
//! its chunks read as the reader reads them (`ChunkFile`), one buffer for all.

use super::{Finding, Kind, Severity};
use crate::error::ChunkFault;
use crate::error::{ErrorKind, InputError, Position};
use crate::evtx::{all_zero, chunk_fault, ChunkFile, CHUNK_SIZE};
use crate::Format;
use evtx::{EvtxChunkHeader, EvtxFileHeader, HeaderFlags};
use std::path::Path;

/// The structural findings of the file `path` (none for JSON or XML input), or why it
/// cannot be read (the record walk reports the same file; callers keep one of the two).
pub fn check_structure(path: &Path) -> Result<Vec<Finding>, InputError> {
    let (format, file) = crate::sniff_open(path)?;
    if format != Format::Evtx {
        return Ok(Vec::new());
    }
    let file = ChunkFile::of(crate::source::Source::File(file))
        .map_err(|k| InputError::new(path, Position::None, k))?;
    let io = |n: Option<u64>, e| {
        let at = n.map_or(Position::None, Position::Chunk);
        InputError::new(path, at, ErrorKind::Io(e))
    };
    let mut head = [0u8; 128];
    file.read_header(&mut head).map_err(|e| io(None, e))?;
    let header = EvtxFileHeader::from_bytes(&head).map_err(|e| {
        InputError::new(
            path,
            Position::None,
            ErrorKind::UnreadableEvtx(e.to_string()),
        )
    })?;
    let mut findings = Vec::new();
    let dirty = header.flags.contains(HeaderFlags::DIRTY);
    let file_level = |kind, severity| Finding {
        kind,
        severity,
        channel: None,
        records: None,
        times: None,
    };
    if !header.validate_checksum() {
        let kind = Kind::HeaderChecksum {
            stored: header.checksum,
            computed: header.computed_checksum,
        };
        findings.push(file_level(kind, Severity::Certain));
    }
    if dirty {
        findings.push(file_level(Kind::Dirty, Severity::Expected));
    }
    let mut buf = vec![0u8; CHUNK_SIZE as usize];
    let (mut present, mut last_id) = (0u64, None::<u64>);
    for n in 0..file.chunk_count() {
        let read = file.read_chunk(n, &mut buf).map_err(|e| io(Some(n), e))?;
        if read < buf.len() || all_zero(&buf) {
            continue;
        }
        present += 1;
        let Some((kind, h)) = check_chunk(n, &buf) else {
            if let Ok(h) = EvtxChunkHeader::from_bytes(&buf) {
                if h.first_event_record_id <= h.last_event_record_id {
                    last_id = last_id.max(Some(h.last_event_record_id));
                }
            }
            continue;
        };
        findings.push(Finding {
            kind,
            severity: Severity::Certain,
            channel: None,
            records: h.map(|h| (h.first_event_record_id, h.last_event_record_id)),
            times: None,
        });
    }
    // An out-of-date header is what Windows leaves in a log it had open.
    let stale = if dirty {
        Severity::Expected
    } else {
        Severity::Likely
    };
    let counted = u64::from(header.chunk_count);
    // The count saturates at 65535 (a file over 4 GiB).
    if counted != present && !(counted == 0xffff && present > counted) {
        let kind = Kind::ChunkCount {
            header: counted,
            found: present,
        };
        findings.push(file_level(kind, stale));
    }
    if let Some(last) = last_id {
        if header.next_record_id != last + 1 {
            let kind = Kind::NextRecordId {
                header: header.next_record_id,
                found: last + 1,
            };
            findings.push(file_level(kind, stale));
        }
    }
    Ok(findings)
}

/// What is wrong with chunk `n` (`bytes`, a whole chunk), if anything, as a finding,
/// with its header when that reads.
fn check_chunk(n: u64, bytes: &[u8]) -> Option<(Kind, Option<EvtxChunkHeader>)> {
    let (fault, h) = chunk_fault(bytes)?;
    let kind = match fault {
        ChunkFault::Unreadable => Kind::ChunkUnreadable { chunk: n },
        ChunkFault::Header { stored, computed } => Kind::ChunkHeaderChecksum {
            chunk: n,
            stored,
            computed,
        },
        ChunkFault::Records { stored, computed } => Kind::ChunkRecordsChecksum {
            chunk: n,
            stored,
            computed,
        },
    };
    Some((kind, h))
}
