//! Logs for the unit tests of the EVTX modules, written with the workspace's EVTX writer,
//! and the chunk and record positions the tests read them at.

use evtx::{EvtxParser, ParserSettings};
use scanner_evtx_writer::{write_events, Element, Event, Value};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `<Event><System><Provider Name="P"/><EventID>id</EventID><Channel>Security</Channel>
/// </System>{data}</Event>`.
pub(crate) fn event(id: u16, data: Element) -> Event {
    let system = Element::new("System")
        .child(Element::new("Provider").attr("Name", "P"))
        .child(Element::new("EventID").text(Value::U16(id)))
        .child(Element::new("Channel").text("Security"));
    let root = Element::new("Event")
        .attr("xmlns", scanner_evtx_writer::EVENT_NS)
        .child(system)
        .child(data);
    Event { root }
}

/// A `Data` element named `name` holding `v`.
pub(crate) fn named(name: &str, v: impl Into<Value>) -> Element {
    Element::new("Data").attr("Name", name).text(v)
}

/// `events` written as an EVTX log.
pub(crate) fn log(events: &[Event]) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    write_events(events, &mut out).expect("written");
    out.into_inner()
}

/// Where a record is in its chunk: its BinXML and its header's record id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct At {
    pub(crate) offset: usize,
    pub(crate) size: usize,
    pub(crate) id: u64,
}

/// The first chunk of `log`: its bytes, and its records as the `evtx` crate finds them.
pub(crate) fn first_chunk(log: &[u8]) -> (Vec<u8>, Vec<At>) {
    let settings = Arc::new(ParserSettings::default().num_threads(1));
    let mut parser = EvtxParser::from_buffer(log.to_vec()).expect("a log");
    let mut data = parser.chunks().next().expect("a chunk").expect("read");
    let bytes = data.data.clone();
    let mut chunk = data.parse(settings).expect("parsed");
    let records = chunk
        .iter()
        .map(|r| {
            let r = r.expect("a record");
            At {
                offset: r.binxml_offset as usize,
                size: r.binxml_size as usize,
                id: r.event_record_id,
            }
        })
        .collect();
    (bytes, records)
}

/// A file in the temp folder, removed when dropped.
pub(crate) struct TempFile(pub(crate) PathBuf);

impl TempFile {
    /// `bytes` written to a file named for `name` and this process.
    pub(crate) fn new(name: &str, bytes: &[u8]) -> TempFile {
        let path =
            std::env::temp_dir().join(format!("scanner-input-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).expect("written");
        TempFile(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        std::fs::remove_file(&self.0).ok();
    }
}
