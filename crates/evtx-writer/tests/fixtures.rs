//! The committed fixtures in `testdata/evtx/`: each `.evtx` is what this writer makes
//! of the source beside it (`.xml` or `.jsonl`), byte for byte, and reads back with the
//! `evtx` crate as exactly its source events.
//!
//! `UPDATE_FIXTURES=1 cargo test -p scanner-evtx-writer --test fixtures` rewrites them.

mod common;

use common::*;
use scanner_evtx_writer::{events_from_xml, Event, Generator, WriterOptions};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/evtx")
}

fn sources() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("xml" | "jsonl")
            )
        })
        .collect();
    v.sort();
    v
}

fn events(source: &Path) -> Vec<Event> {
    let text = std::fs::read_to_string(source).unwrap();
    if source.extension().unwrap() == "xml" {
        events_from_xml(&text).unwrap()
    } else {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| Event::from_json_str(l).unwrap())
            .collect()
    }
}

#[test]
fn fixtures_regenerate_byte_for_byte() {
    let sources = sources();
    assert!(sources.len() >= 2, "{sources:?}");
    for source in sources {
        let bytes = write(&events(&source), WriterOptions::default());
        let evtx = source.with_extension("evtx");
        if std::env::var_os("UPDATE_FIXTURES").is_some() {
            std::fs::write(&evtx, &bytes).unwrap();
        }
        let committed = std::fs::read(&evtx).unwrap_or_else(|e| panic!("{}: {e}", evtx.display()));
        assert!(
            committed == bytes,
            "{} differs from what the writer makes of {}",
            evtx.display(),
            source.display()
        );
    }
}

#[test]
fn fixtures_read_back_as_their_sources() {
    for source in sources() {
        let evtx = std::fs::read(source.with_extension("evtx")).unwrap();
        let events = events(&source);
        if source.extension().unwrap() == "jsonl" {
            let text = std::fs::read_to_string(&source).unwrap();
            let back = read_json(evtx);
            assert_eq!(back.len(), events.len());
            for ((_, got), line) in back.iter().zip(text.lines()) {
                let want: serde_json::Value = serde_json::from_str(line).unwrap();
                assert_eq!(got, &want, "{}", source.display());
            }
        } else {
            let back = read_xml(evtx.clone());
            assert_eq!(back.len(), events.len());
            for (got, want) in back.iter().zip(&events) {
                assert_eq!(
                    Event::from_xml(got).unwrap().to_xml(),
                    want.to_xml(),
                    "{}",
                    source.display()
                );
            }
            // And as JSON, the rendering of the source.
            for ((_, got), want) in read_json(evtx).iter().zip(&events) {
                assert_eq!(got, &want.to_json());
            }
        }
    }
}

/// Writes `testdata/evtx/generated.jsonl`: the first 60 events of the generator (seed
/// 5) as the `evtx` crate renders them.
#[test]
#[ignore]
fn make_generated_source() {
    let mut g = Generator::new(5).unwrap();
    let mut out = String::new();
    for _ in 0..60 {
        let (e, _) = g.next_event();
        out.push_str(&serde_json::to_string(&e.to_json()).unwrap());
        out.push('\n');
    }
    std::fs::write(dir().join("generated.jsonl"), out).unwrap();
}
