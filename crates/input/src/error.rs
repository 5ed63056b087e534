//! [`InputError`]: what went wrong reading an input file, where in the file, and which
//! file. Its text is the message the scan reports (`{file}: chunk 3: …`,
//! `{file}: line 7: invalid JSON: …`); the parts stay apart for callers that group or
//! count errors by file or by kind. Also the text of errors from other crates as it goes
//! into an [`ErrorKind`]: an error with its sources ([`chain`]), a caught panic's message.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A problem with one input file: finding it, opening it, or reading one of its chunks,
/// records, lines or events. Reading goes on past it where it can.
#[derive(Debug)]
pub struct InputError {
    file: PathBuf,
    at: Position,
    kind: ErrorKind,
}

/// What is wrong with an EVTX chunk's checksums (`evtx::chunk_fault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkFault {
    /// Its header does not parse, or its free space offset is past its end.
    Unreadable,
    /// Its header's CRC32 does not match.
    Header {
        /// As stored.
        stored: u32,
        /// As computed.
        computed: u32,
    },
    /// Its records' CRC32 does not match (its header's does).
    Records {
        /// As stored.
        stored: u32,
        /// As computed.
        computed: u32,
    },
}

/// Where in its file an [`InputError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Position {
    /// The file (or folder) as a whole.
    None,
    /// An EVTX chunk, by its number in the file (from 0).
    Chunk(u64),
    /// An EVTX record, by its record id.
    Record(u64),
    /// An EVTX record (by its record id) in a chunk (by its number).
    ChunkRecord {
        /// The chunk's number in the file.
        chunk: u64,
        /// The record's id.
        record: u64,
    },
    /// A line of a JSON Lines file (from 1).
    Line(u64),
    /// An event of a JSON file, by its number in the file (from 1).
    Event(u64),
    /// A JSON array of events, after this many events were read.
    AfterEvents(u64),
}

/// What went wrong. Text from another crate (the `evtx` parser, the JSON reader, a
/// caught panic) is carried as it was written.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An I/O error while reading.
    Io(io::Error),
    /// A named file that does not open.
    CannotOpen(io::Error),
    /// A named folder that does not open.
    CannotOpenFolder(io::Error),
    /// A folder whose entries cannot be listed.
    CannotReadFolder(io::Error),
    /// A file the EVTX parser refused whose first bytes cannot be read either.
    CannotRead(io::Error),
    /// A folder named where a file was expected.
    FolderNotFile,
    /// A named file that is neither a regular file nor a folder.
    NotRegularFile,
    /// A file named where a folder was expected.
    NotFolder,
    /// A folder symlink that leads to a folder holding it: not followed.
    FolderLoop,
    /// An empty file read as EVTX.
    EmptyFile,
    /// A file read as EVTX that does not start with the EVTX signature.
    NotEvtx,
    /// A file with the EVTX signature that the parser does not open.
    UnreadableEvtx(String),
    /// The parser stopped on the file (not one chunk of it).
    Parser(String),
    /// A chunk whose header does not verify; its records are read where intact.
    DamagedChunkHeader(String),
    /// A chunk whose string table is damaged; it is read without the table.
    DamagedStringTable(String),
    /// A chunk that does not parse; its records are skipped.
    DamagedChunk(String),
    /// A chunk whose checksums do not hold (its header or records CRC32 does not match,
    /// or its header does not parse), with checksums validated (`-V`): not read.
    ChunkChecksum(ChunkFault),
    /// A last chunk cut short; its complete records are read.
    TruncatedChunk {
        /// The bytes of the chunk the file holds.
        read: u64,
        /// The bytes of a whole chunk.
        size: u64,
    },
    /// The parser panicked: the rest of the chunk (at a chunk) or of the file is skipped.
    ParserPanicked(String),
    /// A record the parser does not read or render.
    UnreadableRecord(String),
    /// A live record the parser's own walk of the chunk did not reach.
    WalkEnded,
    /// A line of a JSON Lines file that does not parse.
    InvalidJson(String),
    /// A JSON array of events that stops parsing.
    JsonArray(String),
    /// A record's JSON rendering that does not flatten.
    UnreadableRendering(String),
    /// An event of a JSON file that does not flatten.
    UnreadableEvent(String),
    /// Reading the file stopped on a panic (a bug).
    Internal(String),
    /// A JSON event in none of the shapes read (evtx_dump, flat rows, Winlogbeat,
    /// Velociraptor, Azure, Splunk): what it holds instead.
    UnknownShape(String),
    /// An event without a `Channel`: no rule can be picked for it.
    NoChannel,
    /// An event without an `EventID`: no rule can be picked for it.
    NoEventId,
    /// Event XML (a file, or a JSON value holding it) that does not parse.
    InvalidXml(String),
    /// A file that is neither EVTX, JSON nor XML (by its first bytes).
    UnknownFormat,
    /// An XML file that parses but holds no `<Event>` element: not Windows event XML.
    NoXmlEvent,
    /// A gzip file holding EVTX, which is read by random access, not as a stream.
    CompressedEvtx,
    /// An archive, or a member of one, that cannot be read: why.
    Archive(String),
    /// A record with a detection but no `TimeCreated/@SystemTime`: its rows are timed
    /// at the Unix epoch.
    MissingTime,
    /// A record with a detection whose `TimeCreated/@SystemTime` does not parse (the
    /// value, cut to [`MAX_TIME_SHOWN`] characters): its rows are timed at the epoch.
    UnreadableTime(String),
}

/// Most characters of an unreadable time an error quotes.
pub const MAX_TIME_SHOWN: usize = 64;

impl InputError {
    /// An error of `kind` at `at` in `file`.
    pub fn new(file: impl Into<PathBuf>, at: Position, kind: ErrorKind) -> InputError {
        InputError {
            file: file.into(),
            at,
            kind,
        }
    }

    /// Record `record` of `file` was rendered to JSON that does not flatten.
    pub fn unreadable_rendering(file: &Path, record: u64, detail: impl fmt::Display) -> Self {
        let kind = ErrorKind::UnreadableRendering(detail.to_string());
        InputError::new(file, Position::Record(record), kind)
    }

    /// An event of JSON file `file` does not flatten.
    pub fn unreadable_event(file: &Path, detail: impl fmt::Display) -> Self {
        let kind = ErrorKind::UnreadableEvent(detail.to_string());
        InputError::new(file, Position::None, kind)
    }

    /// The record at `at` in `file` has a detection but no readable time: `value` is its
    /// `TimeCreated/@SystemTime` when it has one.
    pub fn bad_time(file: &Path, at: Position, value: Option<&str>) -> Self {
        let kind = match value {
            None => ErrorKind::MissingTime,
            Some(v) => {
                let mut shown: String = v.chars().take(MAX_TIME_SHOWN).collect();
                if shown.len() < v.len() {
                    shown.push('…');
                }
                ErrorKind::UnreadableTime(shown)
            }
        };
        InputError::new(file, at, kind)
    }

    /// Reading `file` stopped on a panic whose message is `message`.
    pub fn internal(file: &Path, message: impl Into<String>) -> Self {
        InputError::new(file, Position::None, ErrorKind::Internal(message.into()))
    }

    /// The file (or folder) the error is about, as it was given or found.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Where in the file.
    pub fn position(&self) -> Position {
        self.at
    }

    /// The text after the file name: where in the file (chunk, record, line) and what
    /// went wrong, as the summary lists it under the file.
    pub fn message(&self) -> Message<'_> {
        Message(self)
    }

    /// What went wrong, as text, without where (the text after the position).
    pub fn reason(&self) -> Reason<'_> {
        Reason(self)
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message())
    }
}

/// What went wrong where in a file: an [`InputError`]'s text after its file name.
pub struct Message<'e>(&'e InputError);

impl fmt::Display for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        match e.at {
            Position::None => {}
            Position::Chunk(n) => write!(f, "chunk {n}: ")?,
            Position::Record(id) => write!(f, "record {id}: ")?,
            Position::ChunkRecord { chunk, record } => {
                write!(f, "chunk {chunk}: record {record}: ")?
            }
            Position::Line(n) => write!(f, "line {n}: ")?,
            Position::Event(n) => write!(f, "event {n}: ")?,
            Position::AfterEvents(n) => write!(f, "after {n} events: ")?,
        }
        write!(f, "{}", e.reason())
    }
}

/// What went wrong, without where: an [`InputError`]'s text after its position.
pub struct Reason<'e>(&'e InputError);

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0
            .kind
            .write(f, matches!(self.0.at, Position::Chunk(_)))
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ErrorKind::Io(e)
            | ErrorKind::CannotOpen(e)
            | ErrorKind::CannotOpenFolder(e)
            | ErrorKind::CannotReadFolder(e)
            | ErrorKind::CannotRead(e) => Some(e),
            _ => None,
        }
    }
}

impl ErrorKind {
    /// The kind's text; a parser panic in a chunk skips the rest of the chunk, else the
    /// rest of the file.
    fn write(&self, f: &mut fmt::Formatter<'_>, in_chunk: bool) -> fmt::Result {
        match self {
            ErrorKind::Io(e) => write!(f, "{e}"),
            ErrorKind::CannotOpen(e) => write!(f, "cannot open: {e}"),
            ErrorKind::CannotOpenFolder(e) => write!(f, "cannot open folder: {e}"),
            ErrorKind::CannotReadFolder(e) => write!(f, "cannot read folder: {e}"),
            ErrorKind::CannotRead(e) => write!(f, "cannot read: {e}"),
            ErrorKind::FolderNotFile => f.write_str("a folder, not a file (scan folders with -d)"),
            ErrorKind::NotRegularFile => f.write_str("not a regular file"),
            ErrorKind::NotFolder => f.write_str("not a folder (scan single files with -f)"),
            ErrorKind::FolderLoop => f.write_str(
                "symlink loop: this link leads back to a folder that holds it; not followed",
            ),
            ErrorKind::EmptyFile => f.write_str("empty file, not EVTX"),
            ErrorKind::NotEvtx => {
                f.write_str("not an EVTX file (it does not start with the ElfFile signature)")
            }
            ErrorKind::UnreadableEvtx(d) => write!(f, "not a readable EVTX file: {d}"),
            ErrorKind::DamagedChunkHeader(d) => {
                write!(f, "damaged chunk header ({d}); records read where intact")
            }
            ErrorKind::DamagedStringTable(d) => {
                write!(f, "damaged string table ({d}); read without it")
            }
            ErrorKind::ChunkChecksum(fault) => {
                let (part, stored, computed) = match *fault {
                    ChunkFault::Unreadable => {
                        return f.write_str(
                            "its header does not parse, or its free space offset is past its \
                             end; not read (-V)",
                        )
                    }
                    ChunkFault::Header { stored, computed } => ("header's", stored, computed),
                    ChunkFault::Records { stored, computed } => ("records'", stored, computed),
                };
                write!(
                    f,
                    "its {part} CRC32 does not match (stored {stored:08x}, computed \
                     {computed:08x}); not read (-V)"
                )
            }
            ErrorKind::TruncatedChunk { read, size } => write!(
                f,
                "truncated at {read} of its {size} bytes; its complete records read"
            ),
            ErrorKind::ParserPanicked(d) => {
                let skipped = if in_chunk {
                    "the chunk's remaining records are skipped"
                } else {
                    "the file's remaining chunks are skipped"
                };
                write!(f, "the EVTX parser failed (internal error: {d}); {skipped}")
            }
            ErrorKind::Parser(d)
            | ErrorKind::DamagedChunk(d)
            | ErrorKind::UnreadableRecord(d)
            | ErrorKind::JsonArray(d) => f.write_str(d),
            ErrorKind::WalkEnded => f.write_str("the parser's walk ended before it"),
            ErrorKind::InvalidJson(d) => write!(f, "invalid JSON: {d}"),
            ErrorKind::UnreadableRendering(d) => write!(f, "unreadable JSON rendering: {d}"),
            ErrorKind::UnreadableEvent(d) => write!(f, "event: {d}"),
            ErrorKind::Internal(d) => write!(f, "reading stopped by an internal error: {d}"),
            ErrorKind::UnknownShape(d) => {
                write!(f, "not a Windows event in any known shape ({d}); skipped")
            }
            ErrorKind::NoChannel => f.write_str("event without a Channel; skipped"),
            ErrorKind::NoEventId => f.write_str("event without an EventID; skipped"),
            ErrorKind::InvalidXml(d) => write!(f, "invalid event XML: {d}"),
            ErrorKind::UnknownFormat => {
                f.write_str("neither EVTX, JSON nor event XML (by its first bytes); not read")
            }
            ErrorKind::NoXmlEvent => {
                f.write_str("XML without any <Event> element: not Windows event XML; nothing read")
            }
            ErrorKind::Archive(d) => f.write_str(d),
            ErrorKind::CompressedEvtx => {
                f.write_str("gzip-compressed EVTX; not read (decompress it first)")
            }
            ErrorKind::MissingTime => write!(
                f,
                "no TimeCreated SystemTime; its detections are timed {EPOCH}"
            ),
            ErrorKind::UnreadableTime(v) => write!(
                f,
                "unreadable TimeCreated SystemTime {v:?}; its detections are timed {EPOCH}"
            ),
        }
    }
}

/// The time rows of a record without a readable time get (see [`crate::missing_timestamp`]).
const EPOCH: &str = "1970-01-01 00:00:00 UTC";

/// The kind's text as it reads in an [`InputError`] at no position in particular.
impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, false)
    }
}

/// An error and its sources, each source once (the `evtx` crate's messages often
/// repeat their source's text).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
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

/// The message of a caught panic.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(at: Position, kind: ErrorKind) -> String {
        InputError::new("logs/a.evtx", at, kind).to_string()
    }

    #[test]
    fn each_position_reads_as_the_scan_has_always_written_it() {
        let d = || ErrorKind::DamagedChunk("bad".into());
        assert_eq!(text(Position::None, d()), "logs/a.evtx: bad");
        assert_eq!(text(Position::Chunk(3), d()), "logs/a.evtx: chunk 3: bad");
        assert_eq!(text(Position::Record(9), d()), "logs/a.evtx: record 9: bad");
        let at = Position::ChunkRecord {
            chunk: 3,
            record: 9,
        };
        assert_eq!(text(at, d()), "logs/a.evtx: chunk 3: record 9: bad");
        assert_eq!(text(Position::Line(7), d()), "logs/a.evtx: line 7: bad");
        assert_eq!(
            text(Position::AfterEvents(2), d()),
            "logs/a.evtx: after 2 events: bad"
        );
    }

    #[test]
    fn a_parser_panic_skips_the_rest_of_its_chunk_or_of_the_file() {
        let p = || ErrorKind::ParserPanicked("boom".into());
        assert_eq!(
            text(Position::Chunk(1), p()),
            "logs/a.evtx: chunk 1: the EVTX parser failed (internal error: boom); \
             the chunk's remaining records are skipped"
        );
        assert_eq!(
            text(Position::None, p()),
            "logs/a.evtx: the EVTX parser failed (internal error: boom); \
             the file's remaining chunks are skipped"
        );
    }

    #[test]
    fn the_engine_messages_keep_their_text_and_parts() {
        let path = Path::new("x.json");
        let e = InputError::unreadable_rendering(Path::new("a.evtx"), 42, "EOF");
        assert_eq!(
            e.to_string(),
            "a.evtx: record 42: unreadable JSON rendering: EOF"
        );
        assert_eq!(e.position(), Position::Record(42));
        assert_eq!(e.file(), Path::new("a.evtx"));
        let e = InputError::unreadable_event(path, "expected value");
        assert_eq!(e.to_string(), "x.json: event: expected value");
        assert!(matches!(e.kind(), ErrorKind::UnreadableEvent(d) if d == "expected value"));
        let e = InputError::internal(path, "index out of bounds");
        assert_eq!(
            e.to_string(),
            "x.json: reading stopped by an internal error: index out of bounds"
        );
    }

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl fmt::Display for Layer {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn a_chain_names_each_source_once() {
        let inner = || Some(Box::new(Layer("bad magic", None)));
        assert_eq!(chain(&Layer("chunk 2", inner())), "chunk 2: bad magic");
        assert_eq!(
            chain(&Layer("chunk 2: bad magic", inner())),
            "chunk 2: bad magic"
        );
        assert_eq!(
            panic_message(&*std::panic::catch_unwind(|| panic!("boom")).unwrap_err()),
            "boom"
        );
    }

    #[test]
    fn io_errors_keep_their_source() {
        use std::error::Error as _;
        let io = io::Error::new(io::ErrorKind::NotFound, "gone");
        let e = InputError::new("d", Position::None, ErrorKind::CannotOpenFolder(io));
        assert_eq!(e.to_string(), "d: cannot open folder: gone");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("gone"));
        let truncated = ErrorKind::TruncatedChunk {
            read: 600,
            size: 65536,
        };
        assert_eq!(
            text(Position::Chunk(4), truncated),
            "logs/a.evtx: chunk 4: truncated at 600 of its 65536 bytes; its complete records read"
        );
    }
}
