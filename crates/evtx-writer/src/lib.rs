//! Writes EVTX files: Windows event logs, in the binary format Windows writes.
//!
//! Events come in as a tree of elements whose leaves are typed [`Value`]s: built in
//! code, parsed from the `<Event>` XML that Event Viewer shows ([`Event::from_xml`]), or
//! from the JSON that the `evtx` crate renders with separated attributes
//! ([`Event::from_json`], [`Event::from_json_str`]). [`EvtxWriter`] streams them into
//! 64 KiB chunks with their string and template tables and CRC32s; records of the
//! usual `<Event><System>..` shape become template instances with substitution arrays,
//! as in a log Windows wrote, others plain BinXML elements.
//!
//! [`generate`] writes a deterministic synthetic log (Security, Sysmon, PowerShell,
//! System, Defender, Task Scheduler) with attacks planted at known records, and returns
//! which built-in rules each of those records should fire.
//!
//! It knows nothing of rules or scanning, and reads nothing but what it is given.
//!
//! ```
//! use scanner_evtx_writer::{write_events, Event};
//! let line = r#"{"Event":{"System":{"Provider_attributes":{"Name":"Microsoft-Windows-Sysmon"},
//!   "EventID":1,"Channel":"Microsoft-Windows-Sysmon/Operational",
//!   "TimeCreated_attributes":{"SystemTime":"2024-03-12T09:14:16.5305330Z"}},
//!   "EventData":{"Image":"C:\\Windows\\System32\\whoami.exe","CommandLine":"whoami /all"}}}"#;
//! let event = Event::from_json_str(line).unwrap();
//! let mut file = std::io::Cursor::new(Vec::new());
//! let stats = write_events([&event], &mut file).unwrap();
//! assert_eq!(stats.records, 1);
//! ```

#![warn(missing_docs)]

pub mod event;
pub mod generate;
pub mod json;
pub mod value;
pub mod writer;
pub mod xml;

pub use event::{Attribute, Element, Event, Node, EVENT_NS};
pub use generate::{generate, Generator, GroundTruth, Planted};
pub use value::{parse_filetime, Guid, Sid, SysTime, Value};
pub use writer::{EvtxWriter, WriteStats, WriterOptions};
pub use xml::events_from_xml;

use std::borrow::Borrow;
use std::io::{Seek, Write};

/// What can go wrong writing or reading events.
#[derive(Debug)]
pub enum Error {
    /// Writing failed.
    Io(std::io::Error),
    /// A value BinXML cannot store (a non-ASCII ANSI string, a mixed array, ...).
    InvalidValue(String),
    /// An element or attribute name BinXML cannot store.
    InvalidName(String),
    /// A record that does not fit in a 64 KiB chunk.
    RecordTooLarge,
    /// The record id passed `u64::MAX`.
    RecordIdOverflow,
    /// The writer was already finished.
    Finished,
    /// Source XML that does not parse; the byte offset and what was wrong.
    Xml(usize, String),
    /// Source JSON that is not an event in the `evtx` crate's shape.
    Json(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::InvalidValue(m) => write!(f, "invalid value: {m}"),
            Error::InvalidName(n) => write!(f, "invalid element or attribute name {n:?}"),
            Error::RecordTooLarge => f.write_str("record does not fit in a 64 KiB chunk"),
            Error::RecordIdOverflow => f.write_str("record id overflow"),
            Error::Finished => f.write_str("the writer is already finished"),
            Error::Xml(at, m) => write!(f, "XML at byte {at}: {m}"),
            Error::Json(m) => write!(f, "JSON event: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

/// Writes `events` as an EVTX file to `out` with the default [`WriterOptions`].
pub fn write_events<E: Borrow<Event>>(
    events: impl IntoIterator<Item = E>,
    out: impl Write + Seek,
) -> Result<WriteStats, Error> {
    write_events_with(events, out, WriterOptions::default())
}

/// Writes `events` as an EVTX file to `out`.
pub fn write_events_with<E: Borrow<Event>>(
    events: impl IntoIterator<Item = E>,
    out: impl Write + Seek,
    options: WriterOptions,
) -> Result<WriteStats, Error> {
    let mut writer = EvtxWriter::new(out, options)?;
    for e in events {
        writer.write(e.borrow())?;
    }
    writer.finish()
}
