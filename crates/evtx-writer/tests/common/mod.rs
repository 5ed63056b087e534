//! Reading written files back with the `evtx` crate, counting its warnings.
#![allow(dead_code)]

use evtx::{EvtxParser, ParserSettings};
use scanner_evtx_writer::{write_events_with, Event, WriterOptions};
use serde_json::Value as J;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

static WARNINGS: AtomicUsize = AtomicUsize::new(0);
static MESSAGES: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Counter;

impl log::Log for Counter {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record) {
        if r.level() <= log::Level::Warn {
            WARNINGS.fetch_add(1, Ordering::SeqCst);
            MESSAGES.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

/// Installs the warning counter (once per test binary).
pub fn count_warnings() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        log::set_logger(&Counter).unwrap();
        log::set_max_level(log::LevelFilter::Warn);
    });
}

/// Warnings logged so far (by any test in this binary).
pub fn warnings() -> Vec<String> {
    MESSAGES.lock().unwrap().clone()
}

pub fn write<'a>(events: impl IntoIterator<Item = &'a Event>, options: WriterOptions) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    write_events_with(events, &mut out, options).unwrap();
    out.into_inner()
}

/// Every record as (record header id, JSON with separated attributes), with
/// checksums validated; panics on any error.
pub fn read_json(bytes: Vec<u8>) -> Vec<(u64, J)> {
    count_warnings();
    let settings = ParserSettings::new()
        .separate_json_attributes(true)
        .validate_checksums(true)
        .num_threads(1);
    let mut p = EvtxParser::from_buffer(bytes)
        .unwrap()
        .with_configuration(settings);
    assert!(p.header().validate_checksum());
    let out: Vec<(u64, J)> = p
        .records_json_value()
        .map(|r| {
            let r = r.unwrap();
            (r.event_record_id, r.data)
        })
        .collect();
    assert!(warnings().is_empty(), "{:?}", warnings());
    out
}

/// Every record as XML.
pub fn read_xml(bytes: Vec<u8>) -> Vec<String> {
    count_warnings();
    let settings = ParserSettings::new()
        .validate_checksums(true)
        .num_threads(1);
    let mut p = EvtxParser::from_buffer(bytes)
        .unwrap()
        .with_configuration(settings);
    p.records().map(|r| r.unwrap().data).collect()
}

/// `v` with every time string (`SystemTime`) reduced to its instant, so that
/// `...02.255511Z` and `...02.2555110Z` compare equal.
pub fn normalize_times(v: &J) -> J {
    match v {
        J::Object(m) => J::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), normalize_times(v)))
                .collect(),
        ),
        J::Array(a) => J::Array(a.iter().map(normalize_times).collect()),
        J::String(s) if s.len() >= 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T' => {
            match s.parse::<jiff::Timestamp>() {
                Ok(t) => J::String(t.to_string()),
                Err(_) => v.clone(),
            }
        }
        other => other.clone(),
    }
}
