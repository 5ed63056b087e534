//! The parse-only baselines: the same EVTX reading as a scan (same parser settings,
//! files and chunks in parallel), with no rules and nothing else done per record.
//!
//! - default: each record rendered to the JSON the scan used to flatten;
//! - `--typed`: each record's typed substitution values (`template_instances()`), no
//!   names, no rendering;
//! - `--view`: what the scan now does before its rules: each record's view filled by the
//!   typed path (JSON for the records it does not cover), with an empty field table;
//! - `--json-view`: what the scan did before: each record rendered to JSON and its view
//!   filled by flattening that.
//!
//!     cargo run --release -p scanner-engine --example parse_only -- PATH... [--threads N] [--typed|--view|--json-view]

use rayon::prelude::*;
use scanner_input::EvtxRead;
use scanner_input::Flattener;
use scanner_input::RecordView;
use scanner_input::{InputFile, InputKind};
use scanner_rules::FieldTable;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Json,
    Typed,
    View,
    JsonView,
}

fn main() {
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut threads = 0;
    let mut mode = Mode::Json;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--threads" => threads = args.next().and_then(|t| t.parse().ok()).unwrap_or(0),
            "--typed" => mode = Mode::Typed,
            "--view" => mode = Mode::View,
            "--json-view" => mode = Mode::JsonView,
            _ => paths.push(a.into()),
        }
    }
    if threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .ok();
    }
    let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) = paths.into_iter().partition(|p| p.is_dir());
    let (files, _) = scanner_input::discover(&dirs, &files, InputKind::Evtx);
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let start = Instant::now();
    let records = AtomicU64::new(0);
    files.par_iter().for_each(|f| {
        let n = match mode {
            Mode::Json => json(f),
            Mode::Typed => typed_values(f),
            Mode::View => view(f, true),
            Mode::JsonView => view(f, false),
        };
        records.fetch_add(n, Ordering::Relaxed);
    });
    let secs = start.elapsed().as_secs_f64();
    let n = records.into_inner();
    let name = match mode {
        Mode::Json => "parse only (JSON)",
        Mode::Typed => "parse only (typed values)",
        Mode::View => "parse only (typed view)",
        Mode::JsonView => "parse only (JSON view)",
    };
    println!(
        "{name}: {} files ({:.1} MiB), {n} records in {secs:.2} s ({:.0} records/s, {:.1} MiB/s)",
        files.len(),
        bytes as f64 / 1048576.0,
        n as f64 / secs,
        bytes as f64 / 1048576.0 / secs
    );
}

/// Every record rendered to JSON, as the scan did before the typed path.
fn json(f: &InputFile) -> u64 {
    let n = scanner_input::read_evtx(
        &f.path,
        f.size,
        EvtxRead::default(),
        || 0u64,
        |len, rec| *len += rec.content.json().map_or(0, str::len) as u64,
        |_| {},
    );
    n.records
}

/// Every record's view filled as the scan fills it: `typed`, or all by JSON.
fn view(f: &InputFile, typed: bool) -> u64 {
    let table = FieldTable::new();
    let read = EvtxRead {
        recover: false,
        typed,
        validate_checksums: false,
    };
    let init = || (Flattener::default(), RecordView::default());
    let each = |(flat, v): &mut (Flattener, RecordView), rec: scanner_input::RawRecord<'_>| {
        let _ = rec.content.fill(flat, &table, v);
    };
    scanner_input::read_evtx(&f.path, f.size, read, init, each, |_| {}).records
}

/// Every record's typed substitution values, chunks in parallel as the scan reads them.
fn typed_values(f: &InputFile) -> u64 {
    let settings = Arc::new(scanner_input::settings());
    let Ok(parser) = evtx::EvtxParser::from_path(&f.path) else {
        return 0;
    };
    let mut parser = parser.with_configuration((*settings).clone());
    let records = AtomicU64::new(0);
    parser.chunks().par_bridge().for_each(|c| {
        let Ok(mut data) = c else { return };
        let Ok(mut chunk) = data.parse(Arc::clone(&settings)) else {
            return;
        };
        let mut n = 0;
        for r in chunk.iter().flatten() {
            if let Ok(t) = r.template_instances() {
                n += 1;
                std::hint::black_box(t);
            }
        }
        records.fetch_add(n, Ordering::Relaxed);
    });
    records.into_inner()
}
