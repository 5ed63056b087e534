//! What an event log's own structure says about whether it is whole: the findings of
//! `log-integrity` (and `--integrity` in the timelines), as typed values.
//!
//! Two sources, read through the same seams as every other command:
//!
//! - the file's structure ([`check_structure`], EVTX only): the file header's CRC32,
//!   dirty flag, chunk count and next record id against what the file holds; each
//!   chunk's header and record CRC32s (the chunks read as the reader reads them);
//! - its records ([`RecordLog`], a [`crate::Tally`] of the record walk; [`analyse`]):
//!   per channel, RecordID gaps and repeats, time running backwards while the ids run
//!   forwards, logs cleared (Security 1102, System 104), logging stopped (Security 1100;
//!   System 6006 until the next 6005) and records recovered from slack space.
//!
//! Every finding has a [`Severity`]: how sure it is that something happened to the log
//! that normal operation does not do. It knows nothing of output formats.

mod records;
mod structure;

pub use records::{analyse, IntegrityFields, RecordLog};
pub use structure::{check_structure, structure_findings, StructureCheck};

use jiff::{SignedDuration, Timestamp};

/// How sure a finding is that the log was tampered with or damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The file says so itself: a CRC32 that does not match, a log cleared.
    Certain,
    /// Normal operation does not do it, though damage can: records missing from the
    /// middle, an id twice, a clean header that disagrees with the file.
    Likely,
    /// Normal operation does it too: the clock set back, logging stopped (a shutdown
    /// does it), records left in slack space.
    Possible,
    /// What normal operation leaves: a dirty header (a log copied while open), a
    /// header out of date in a dirty file, a gap next to a clear.
    Expected,
}

impl Severity {
    /// Its name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Certain => "certain",
            Severity::Likely => "likely",
            Severity::Possible => "possible",
            Severity::Expected => "expected",
        }
    }
}

/// What was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The file header's CRC32 is not that of its first 120 bytes.
    HeaderChecksum {
        /// As stored.
        stored: u32,
        /// As computed.
        computed: u32,
    },
    /// The file header's dirty flag is set: the log was open when copied, or was not
    /// closed cleanly.
    Dirty,
    /// The file header counts other chunks than the file holds.
    ChunkCount {
        /// The header's count.
        header: u64,
        /// Chunks in the file (not all zeros).
        found: u64,
    },
    /// The file header's next record id is not the one after the last record.
    NextRecordId {
        /// The header's.
        header: u64,
        /// One past the highest record id in the file.
        found: u64,
    },
    /// A chunk's header CRC32 does not match.
    ChunkHeaderChecksum {
        /// The chunk's number.
        chunk: u64,
        /// As stored.
        stored: u32,
        /// As computed.
        computed: u32,
    },
    /// A chunk's records CRC32 does not match (its header's does).
    ChunkRecordsChecksum {
        /// The chunk's number.
        chunk: u64,
        /// As stored.
        stored: u32,
        /// As computed.
        computed: u32,
    },
    /// A chunk whose header cannot be read (its magic, or its free space offset).
    ChunkUnreadable {
        /// The chunk's number.
        chunk: u64,
    },
    /// Record ids missing between two records of a channel.
    RecordIdGap {
        /// How many ids are missing.
        missing: u64,
    },
    /// A record id held by more than one record of a channel.
    RecordIdRepeat {
        /// How many records have it.
        records: u64,
    },
    /// A record's time is earlier than the one before it (by id) by more than the
    /// tolerance.
    TimeBackwards {
        /// How far back.
        by: SignedDuration,
    },
    /// The log was cleared (Security 1102, System 104).
    Cleared {
        /// The event's id.
        event_id: u16,
    },
    /// Logging stopped (Security 1100; System 6006), until the next record (for 6006,
    /// the next 6005).
    Stopped {
        /// The event's id.
        event_id: u16,
        /// How long until logging resumed; `None` when nothing follows.
        for_: Option<SignedDuration>,
    },
    /// Records carved from slack space (`-x`).
    Recovered {
        /// How many.
        records: u64,
    },
}

/// Which check a finding comes from: [`Kind`] without its figures (one per variant),
/// small and ordered, for the rows of `--integrity` to name their check by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// [`Kind::HeaderChecksum`].
    HeaderChecksum,
    /// [`Kind::Dirty`].
    Dirty,
    /// [`Kind::ChunkCount`].
    ChunkCount,
    /// [`Kind::NextRecordId`].
    NextRecordId,
    /// [`Kind::ChunkHeaderChecksum`].
    ChunkHeaderChecksum,
    /// [`Kind::ChunkRecordsChecksum`].
    ChunkRecordsChecksum,
    /// [`Kind::ChunkUnreadable`].
    ChunkUnreadable,
    /// [`Kind::RecordIdGap`].
    RecordIdGap,
    /// [`Kind::RecordIdRepeat`].
    RecordIdRepeat,
    /// [`Kind::TimeBackwards`].
    TimeBackwards,
    /// [`Kind::Cleared`].
    Cleared,
    /// [`Kind::Stopped`].
    Stopped,
    /// [`Kind::Recovered`].
    Recovered,
}

impl Check {
    /// Every check, in order ([`Check::index`] is the position here).
    pub const ALL: [Check; 13] = [
        Check::HeaderChecksum,
        Check::Dirty,
        Check::ChunkCount,
        Check::NextRecordId,
        Check::ChunkHeaderChecksum,
        Check::ChunkRecordsChecksum,
        Check::ChunkUnreadable,
        Check::RecordIdGap,
        Check::RecordIdRepeat,
        Check::TimeBackwards,
        Check::Cleared,
        Check::Stopped,
        Check::Recovered,
    ];

    /// Its position in [`Check::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in outputs.
    pub fn name(self) -> &'static str {
        match self {
            Check::HeaderChecksum => "file header checksum",
            Check::Dirty => "dirty file header",
            Check::ChunkCount => "file header chunk count",
            Check::NextRecordId => "file header next record id",
            Check::ChunkHeaderChecksum => "chunk header checksum",
            Check::ChunkRecordsChecksum => "chunk records checksum",
            Check::ChunkUnreadable => "chunk header unreadable",
            Check::RecordIdGap => "record id gap",
            Check::RecordIdRepeat => "record id repeated",
            Check::TimeBackwards => "time backwards",
            Check::Cleared => "log cleared",
            Check::Stopped => "logging stopped",
            Check::Recovered => "records in slack space",
        }
    }
}

impl Severity {
    /// Every severity, surest first.
    pub const ALL: [Severity; 4] = [
        Severity::Certain,
        Severity::Likely,
        Severity::Possible,
        Severity::Expected,
    ];
}

impl Kind {
    /// The check it comes from.
    pub fn check(&self) -> Check {
        match self {
            Kind::HeaderChecksum { .. } => Check::HeaderChecksum,
            Kind::Dirty => Check::Dirty,
            Kind::ChunkCount { .. } => Check::ChunkCount,
            Kind::NextRecordId { .. } => Check::NextRecordId,
            Kind::ChunkHeaderChecksum { .. } => Check::ChunkHeaderChecksum,
            Kind::ChunkRecordsChecksum { .. } => Check::ChunkRecordsChecksum,
            Kind::ChunkUnreadable { .. } => Check::ChunkUnreadable,
            Kind::RecordIdGap { .. } => Check::RecordIdGap,
            Kind::RecordIdRepeat { .. } => Check::RecordIdRepeat,
            Kind::TimeBackwards { .. } => Check::TimeBackwards,
            Kind::Cleared { .. } => Check::Cleared,
            Kind::Stopped { .. } => Check::Stopped,
            Kind::Recovered { .. } => Check::Recovered,
        }
    }

    /// Its name in outputs.
    pub fn name(&self) -> &'static str {
        self.check().name()
    }

    /// The chunk it concerns, if one.
    pub fn chunk(&self) -> Option<u64> {
        match self {
            Kind::ChunkHeaderChecksum { chunk, .. }
            | Kind::ChunkRecordsChecksum { chunk, .. }
            | Kind::ChunkUnreadable { chunk } => Some(*chunk),
            _ => None,
        }
    }
}

impl std::fmt::Display for Kind {
    /// What was found, in words with its figures.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kind::HeaderChecksum { stored, computed }
            | Kind::ChunkHeaderChecksum {
                stored, computed, ..
            }
            | Kind::ChunkRecordsChecksum {
                stored, computed, ..
            } => write!(f, "stored {stored:08x}, computed {computed:08x}"),
            Kind::Dirty => f.write_str("the log was open or not closed cleanly"),
            Kind::ChunkCount { header, found } => {
                write!(f, "header says {header} chunks, the file holds {found}")
            }
            Kind::NextRecordId { header, found } => {
                write!(f, "header says {header}, the records end at {}", found - 1)
            }
            Kind::ChunkUnreadable { .. } => f.write_str("the chunk header does not parse"),
            Kind::RecordIdGap { missing } => write!(f, "{missing} records missing"),
            Kind::RecordIdRepeat { records } => write!(f, "{records} records with this id"),
            Kind::TimeBackwards { by } => write!(f, "back by {}", seconds(*by)),
            Kind::Cleared { event_id } => write!(f, "EventID {event_id}"),
            Kind::Stopped { event_id, for_ } => match for_ {
                Some(d) => write!(f, "EventID {event_id}, for {}", seconds(*d)),
                None => write!(f, "EventID {event_id}, no record after it"),
            },
            Kind::Recovered { records } => write!(f, "{records} records recovered"),
        }
    }
}

/// A duration in whole seconds, as `3600s`.
fn seconds(d: SignedDuration) -> String {
    format!("{}s", d.as_secs())
}

/// One finding about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What.
    pub kind: Kind,
    /// How sure.
    pub severity: Severity,
    /// The channel of the records it concerns (record findings).
    pub channel: Option<String>,
    /// The record ids it concerns: the last before and the first after a gap, the
    /// record itself, the range of a chunk.
    pub records: Option<(u64, u64)>,
    /// The times it concerns: before and after (a gap, a stop, a step back), or the
    /// record's time twice.
    pub times: Option<(Timestamp, Timestamp)>,
}

impl Finding {
    /// The time rows are sorted and shown by: the first of its times.
    pub fn time(&self) -> Option<Timestamp> {
        self.times.map(|t| t.0)
    }
}

#[cfg(test)]
mod tests;
