//! The structure of an EVTX file against what it holds: the file header (CRC32, dirty
//! flag, chunk count, next record id) and each chunk's CRC32s. The file is opened and
//! its chunks read as the reader reads them (`ChunkFile`), one buffer for all.

use super::{Finding, Kind, Severity};
use crate::error::ChunkFault;
use crate::error::{ErrorKind, InputError, Position};
use crate::evtx::{all_zero, ChunkFile, ChunkTally, CHUNK_SIZE};
use crate::Format;
use evtx::{EvtxFileHeader, HeaderFlags};
use std::path::Path;

/// A file's structural findings, or why its structure could not be checked.
pub type StructureCheck = Result<Vec<Finding>, InputError>;

/// The structural findings of the file `path` (none for JSON or XML input), or why it
/// cannot be read (the record walk reports the same file; callers keep one of the two).
pub fn check_structure(path: &Path) -> StructureCheck {
    let (format, file) = crate::sniff_open(path)?;
    if format != Format::Evtx {
        return Ok(Vec::new());
    }
    let file = ChunkFile::of(crate::source::Source::File(file))
        .map_err(|k| InputError::new(path, Position::None, k))?;
    let mut tally = ChunkTally::default();
    let mut buf = vec![0u8; CHUNK_SIZE as usize];
    for n in 0..file.chunk_count() {
        let read = file
            .read_chunk(n, &mut buf)
            .map_err(|e| InputError::new(path, Position::Chunk(n), ErrorKind::Io(e)))?;
        if read < buf.len() || all_zero(&buf) {
            continue;
        }
        tally.add(n, &buf);
    }
    tally.head = vec![0u8; 128];
    file.read_header(&mut tally.head)
        .map_err(|e| InputError::new(path, Position::None, ErrorKind::Io(e)))?;
    structure_findings(path, tally)
}

/// The findings of the EVTX file shown as `path`, from the `tally` of its header and
/// chunks: its header against what its chunks hold, and each chunk that fails its
/// checksums, in file order.
pub fn structure_findings(path: &Path, mut tally: ChunkTally) -> StructureCheck {
    let header = EvtxFileHeader::from_bytes(&tally.head).map_err(|e| {
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
    // The reader walks from the oldest chunk, wrapping around: file order here.
    tally.faults.sort_by_key(|f| f.chunk);
    for f in tally.faults {
        findings.push(Finding {
            kind: chunk_kind(f.chunk, f.fault),
            severity: Severity::Certain,
            channel: None,
            records: f.records,
            times: None,
        });
    }
    let (present, last_id) = (tally.present, tally.last_id);
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

/// The finding of chunk `n`, whose checksums fail as `fault` says.
fn chunk_kind(n: u64, fault: ChunkFault) -> Kind {
    match fault {
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
    }
}
