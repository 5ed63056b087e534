//! The typed path's oracle: fills every record's view both ways, from its typed values
//! ([`TypedState`]) and by flattening its JSON rendering, and compares the ordered
//! (path, value) leaves. Prints per-path totals: records, typed, fell back to JSON,
//! mismatches (with the first few shown).
//!
//! `--mutate N` also checks N damaged copies of each file (a few random bytes
//! overwritten in its chunks), where the typed path must still agree or fall back.
//!
//!     cargo run --release -p scanner-engine --example typed_check -- [--show-fallback N] [--mutate N] PATH...

use scanner_input::Flattener;
use scanner_input::InputKind;
use scanner_input::RecordView;
use scanner_input::TypedState;
use scanner_rules::FieldTable;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Default)]
struct Tally {
    records: u64,
    typed: u64,
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
        let p = PathBuf::from(&arg);
        let (files, _) = if p.is_dir() {
            scanner_input::discover(&[p], &[], InputKind::Evtx)
        } else {
            scanner_input::discover(&[], &[p], InputKind::Evtx)
        };
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
                check_log(&f.path, damaged(&bytes, &mut rng), &mut state, &mut t);
            }
            check_log(&f.path, bytes, &mut state, &mut t);
        }
        print_tally(&arg, files.len(), &t);
        all.records += t.records;
        all.typed += t.typed;
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
        "{what}: {files} files, {} records, typed {} ({:.2}%), fallback {} ({:.2}%), mismatches {}, typed but JSON failed {}",
        t.records,
        t.typed,
        pct(t.typed),
        t.fallback,
        pct(t.fallback),
        t.mismatches,
        t.json_failed
    );
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

fn check_log(path: &Path, log: Vec<u8>, state: &mut TypedState, t: &mut Tally) {
    let settings = Arc::new(scanner_input::settings());
    let Ok(parser) = evtx::EvtxParser::from_buffer(log) else {
        return;
    };
    let mut parser = parser.with_configuration((*settings).clone());
    let table = FieldTable::new();
    let mut flat = Flattener::default();
    let (mut typed, mut json) = (RecordView::default(), RecordView::default());
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
                state.fill(&table, &mut typed);
                let rendered = r.into_json().ok();
                let flattened = rendered
                    .and_then(|j| flat.fill(&j.data, &table, &mut json).ok().map(|_| j.data));
                let Some(text) = flattened else {
                    t.json_failed += 1;
                    continue;
                };
                if !typed.leaves().eq(json.leaves()) {
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
    let a: Vec<_> = typed.leaves().collect();
    let b: Vec<_> = json.leaves().collect();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i), b.get(i));
        let mark = if x == y { " " } else { "!" };
        eprintln!("  {mark} typed {x:?}\n  {mark} json  {y:?}");
    }
}
