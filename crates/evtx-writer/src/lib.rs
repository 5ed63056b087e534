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
//! [`generate()`] writes a deterministic synthetic log (Security, Sysmon, PowerShell,
//! System, Defender, Task Scheduler) with attacks planted at known records, and returns
//! which built-in rules each of those records should fire.
//!
//! It knows nothing of rules or scanning, and reads nothing but what it is given.
//!
//! Design decisions:
//!
//! - **One chunk in memory.** The writer fills one 64 KiB chunk, writes it out and
//!   reuses its buffer; the file header is written last, by seeking back. Millions of
//!   records (and [`Generator`]'s endless stream) cost the memory of one chunk.
//! - **Templates from shapes.** A template is keyed by its shape (names, literal
//!   attributes and value types); its id and GUID are a hash of that shape, so the same
//!   events give the same bytes on every run and every machine.
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

mod chunk;
mod error;
mod event;
mod faults;
mod generate;
mod json;
mod template;
mod value;
mod writer;
mod xml;

pub use crate::{
    error::Error,
    event::{Attribute, Element, Event, Node, EVENT_NS},
    faults::{flip_byte, to_slack},
    generate::{generate, Generator, GroundTruth, Planted},
    json::OrderedJson,
    value::{parse_filetime, Guid, Sid, SysTime, Value},
    writer::{write_events, write_events_with, EvtxWriter, WriteStats, WriterOptions},
    xml::events_from_xml,
};
