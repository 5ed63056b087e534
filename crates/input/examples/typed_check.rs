//! The typed path's oracle: fills every record's view both ways, from its typed values
//! ([`TypedState`]) and by flattening its JSON rendering, and compares the ordered
//! (path, value) leaves (an element the typed path knows has no content is the empty
//! value JSON renders it as) and the values linked to every field of a table that holds
//! every path the logs fill. A record filled from a leaf plan is also filled by a fresh
//! state, which resolves and walks it, and the two views must agree exactly (elements
//! with no content included). One state serves every file, as a scan's worker keeps its
//! templates and plans across files, so records of shapes seen before replay plans.
//! Prints per-path totals: records, typed, replayed from a plan, fell back to JSON,
//! mismatches (with the first few shown).
//!
//! `--mutate N` also checks N damaged copies of each file (a few random bytes
//! overwritten in its chunks), where the typed path must still agree or fall back.
//!
//!     cargo run --release -p scanner-input --example typed_check -- [--show-fallback N] [--mutate N] PATH...

use scanner_input::Flattener;
use scanner_input::InputKind;
use scanner_input::RecordView;
use scanner_input::TypedState;
use scanner_rules::{FieldId, FieldTable};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Default)]
struct Tally {
    records: u64,
    typed: u64,
    /// Typed records filled from a leaf plan.
    replayed: u64,
    fallback: u64,
    mismatches: u64,
    /// Typed, but the JSON path failed (rendering or flattening).
    json_failed: u64,
    shown: usize,
    /// Fallback records still to print (their JSON).
    show_fallback: usize,
}

fn main() {
    let mut all = Tally::default();
    // One state for every file, as a scan's worker keeps its templates across files.
    let mut state = TypedState::default();
    let mut show_fallback = 0;
    let mut mutate = 0;
    let mut paths = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--show-fallback" {
            show_fallback = args.next().and_then(|n| n.parse().ok()).unwrap_or(5);
            continue;
        }
        if arg == "--mutate" {
            mutate = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
            continue;
        }
        paths.push(arg);
    }
    let table = table_of_paths(&paths);
    for arg in &paths {
        let files = files_of(arg);
        let mut t = Tally {
            show_fallback,
            ..Tally::default()
        };
        for f in &files {
            let Ok(bytes) = std::fs::read(&f.path) else {
                continue;
            };
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64);
            for _ in 0..mutate {
                check_log(
                    &f.path,
                    damaged(&bytes, &mut rng),
                    &mut state,
                    &table,
                    &mut t,
                );
            }
            check_log(&f.path, bytes, &mut state, &table, &mut t);
        }
        print_tally(arg, files.len(), &t);
        all.records += t.records;
        all.typed += t.typed;
        all.replayed += t.replayed;
        all.fallback += t.fallback;
        all.mismatches += t.mismatches;
        all.json_failed += t.json_failed;
    }
    print_tally("all", 0, &all);
    if all.mismatches > 0 || all.json_failed > 0 {
        std::process::exit(1);
    }
}

fn print_tally(what: &str, files: usize, t: &Tally) {
    let pct = |n: u64| 100.0 * n as f64 / t.records.max(1) as f64;
    println!(
        "{what}: {files} files, {} records, typed {} ({:.2}%), replayed a plan {} ({:.2}%), fallback {} ({:.2}%), mismatches {}, typed but JSON failed {}",
        t.records,
        t.typed,
        pct(t.typed),
        t.replayed,
        pct(t.replayed),
        t.fallback,
        pct(t.fallback),
        t.mismatches,
        t.json_failed
    );
}

/// The EVTX files under (or at) `arg`.
fn files_of(arg: &str) -> Vec<scanner_input::InputFile> {
    let p = PathBuf::from(arg);
    let (files, _) = if p.is_dir() {
        scanner_input::discover(&[p], &[], InputKind::Evtx)
    } else {
        scanner_input::discover(&[], &[p], InputKind::Evtx)
    };
    files
}

/// A field table holding every path that flattening the JSON rendering of the records
/// under `paths` fills, so that every leaf of those records is linked to a field.
fn table_of_paths(paths: &[String]) -> FieldTable {
    let settings = Arc::new(scanner_input::settings());
    let (mut flat, mut view) = (Flattener::default(), RecordView::default());
    let empty = FieldTable::new();
    let mut seen = std::collections::BTreeSet::new();
    for f in paths.iter().flat_map(|p| files_of(p)) {
        let Ok(parser) = evtx::EvtxParser::from_path(&f.path) else {
            continue;
        };
        let mut parser = parser.with_configuration((*settings).clone());
        for r in parser.records_json().flatten() {
            if flat.fill(&r.data, &empty, &mut view).is_ok() {
                seen.extend(view.leaves().map(|(p, _)| p.to_owned()));
            }
        }
    }
    let mut table = FieldTable::new();
    for p in &seen {
        table.intern_path(p);
    }
    table
}

/// Whether `typed` and `json` link the same values to every field of `table`.
fn same_links(table: &FieldTable, typed: &RecordView, json: &RecordView) -> bool {
    use scanner_rules::Event as _;
    (0..table.len() as FieldId).all(|f| {
        typed
            .values(f)
            .map(|v| (v.raw, v.lower))
            .eq(json.values(f).map(|v| (v.raw, v.lower)))
    })
}

/// Xorshift: damage that repeats from run to run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `log` with 1 to 8 random bytes of its chunks (past their headers) overwritten.
fn damaged(log: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = log.to_vec();
    let from = 4096 + 512;
    if out.len() <= from {
        return out;
    }
    for _ in 0..1 + rng.next() % 8 {
        let at = from + (rng.next() as usize) % (out.len() - from);
        out[at] = rng.next() as u8;
    }
    out
}

fn check_log(path: &Path, log: Vec<u8>, state: &mut TypedState, table: &FieldTable, t: &mut Tally) {
    let settings = Arc::new(scanner_input::settings());
    let Ok(parser) = evtx::EvtxParser::from_buffer(log) else {
        return;
    };
    let mut parser = parser.with_configuration((*settings).clone());
    let mut flat = Flattener::default();
    let (mut typed, mut json) = (RecordView::default(), RecordView::default());
    let mut walked = RecordView::default();
    for c in parser.chunks() {
        let Ok(mut data) = c else { continue };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let Ok(mut chunk) = data.parse(Arc::clone(&settings)) else {
                return;
            };
            state.begin_chunk();
            for r in chunk.iter().flatten() {
                let id = r.event_record_id;
                t.records += 1;
                if !state.prepare(&r) {
                    t.fallback += 1;
                    if t.show_fallback > 0 {
                        t.show_fallback -= 1;
                        let json = r.into_json().map(|j| j.data);
                        eprintln!("FALLBACK {} record {id}: {json:?}", path.display());
                    }
                    continue;
                }
                t.typed += 1;
                let planned = state.planned();
                state.fill(table, &mut typed);
                // A replayed plan must fill what resolving and walking the record fills.
                let mut replay_differs = false;
                if planned {
                    t.replayed += 1;
                    let mut fresh = TypedState::default();
                    fresh.begin_chunk();
                    replay_differs = !fresh.prepare(&r) || {
                        fresh.fill(table, &mut walked);
                        !typed
                            .leaves_and_empty_elements()
                            .eq(walked.leaves_and_empty_elements())
                            || !same_links(table, &typed, &walked)
                    };
                    if replay_differs {
                        eprintln!("REPLAY DIFFERS {} record {id}", path.display());
                    }
                }
                let rendered = r.into_json().ok();
                let flattened = rendered
                    .and_then(|j| flat.fill(&j.data, table, &mut json).ok().map(|_| j.data));
                let Some(text) = flattened else {
                    t.json_failed += 1;
                    continue;
                };
                // JSON renders an element with no content as null: an empty value.
                let agree = json.empty_elements().next().is_none()
                    && typed
                        .leaves_and_empty_elements()
                        .map(|(p, v, _)| (p, v))
                        .eq(json.leaves())
                    && same_links(table, &typed, &json);
                if !agree || replay_differs {
                    t.mismatches += 1;
                    if t.shown < 5 {
                        t.shown += 1;
                        show(path, id, &text, &typed, &json);
                    }
                }
            }
        }));
        if run.is_err() {
            eprintln!("{}: panic in a chunk", path.display());
            t.mismatches += 1;
        }
    }
}

fn show(path: &Path, id: u64, text: &str, typed: &RecordView, json: &RecordView) {
    eprintln!("MISMATCH {} record {id}\n  json: {text}", path.display());
    let a: Vec<_> = typed.leaves_and_empty_elements().collect();
    let b: Vec<_> = json.leaves().collect();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i), b.get(i));
        let mark = if x.map(|&(p, v, _)| (p, v)) == y.copied() {
            " "
        } else {
            "!"
        };
        eprintln!("  {mark} typed {x:?}\n  {mark} json  {y:?}");
    }
}
