//! The macro workloads: rule loading, a scan with [`Scanner`], and the parse-only
//! baseline a scan is measured against.
//!
//! Data: the hayabusa rules (`../shared/rules/hayabusa-rules`) when present, else the
//! built-in set; the attack corpus (`../shared/corpus/evtx-attack-samples`, EVTX) when
//! present, else the demo corpus (`testdata/demo/attack.jsonl`) copied into a temporary
//! folder often enough to make a measurable JSON corpus. Environment variables
//! `SCANNER_BENCH_RULES` and `SCANNER_BENCH_CORPUS` (a folder) override the choice.
//! The big workload ([`copies`]) is an EVTX corpus copied 30 times into a temporary
//! folder, measured against its typed parse floor ([`parse_typed`]).

use scanner_engine::{Scanner, ScannerBuilder};
use scanner_input::{discover, Format, InputFile, InputKind};
use scanner_rules::{load, LoadOptions, RuleSet, RuleSource};
use scanner_timeline::Profile;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The rules a macro-benchmark loads.
pub struct Rules {
    /// What to load.
    pub source: RuleSource,
    /// A short name for reports and the baseline key.
    pub name: String,
}

/// The rules to benchmark with.
pub fn rules() -> Rules {
    let path = std::env::var_os("SCANNER_BENCH_RULES")
        .map(PathBuf::from)
        .or_else(|| Some(crate::shared().join("rules/hayabusa-rules")).filter(|p| p.is_dir()));
    match path {
        Some(p) => Rules {
            name: name_of(&p),
            source: RuleSource::Path(p),
        },
        None => Rules {
            source: RuleSource::Builtin,
            name: "builtin".into(),
        },
    }
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// Loads the rules as the CLI does by default (`csv-timeline` without level flags).
pub fn load_rules(r: &Rules) -> RuleSet {
    load(std::slice::from_ref(&r.source), &LoadOptions::default())
}

/// The corpus a macro-benchmark scans.
pub struct Corpus {
    /// Its files, as the engine discovers them.
    pub files: Vec<InputFile>,
    /// EVTX or JSON.
    pub kind: InputKind,
    /// A short name for reports and the baseline key.
    pub name: String,
    /// A temporary folder to remove when done, if one was made.
    temp: Option<PathBuf>,
}

impl Drop for Corpus {
    fn drop(&mut self) {
        if let Some(t) = &self.temp {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

/// Copies of the demo corpus in the fallback JSON corpus: 8 files of 30 copies each,
/// 16,560 events.
const FALLBACK_FILES: usize = 8;
const FALLBACK_COPIES: usize = 30;

/// The corpus to benchmark with.
pub fn corpus() -> Corpus {
    let dir = std::env::var_os("SCANNER_BENCH_CORPUS")
        .map(PathBuf::from)
        .or_else(|| {
            Some(crate::shared().join("corpus/evtx-attack-samples")).filter(|p| p.is_dir())
        });
    if let Some(d) = dir {
        // A folder search takes every known extension whatever the kind: the kind is
        // what the files' first bytes show (EVTX when all of them are).
        let (files, _) = discover(std::slice::from_ref(&d), &[], InputKind::Evtx);
        let evtx = !files.is_empty()
            && files
                .iter()
                .all(|f| matches!(scanner_input::sniff(&f.path), Ok(Format::Evtx)));
        return Corpus {
            files,
            kind: if evtx {
                InputKind::Evtx
            } else {
                InputKind::Json
            },
            name: name_of(&d),
            temp: None,
        };
    }
    let t = std::env::temp_dir().join(format!("scanner-benches-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&t).expect("temporary folder");
    let body = crate::data::DEMO_JSONL.repeat(FALLBACK_COPIES);
    for i in 0..FALLBACK_FILES {
        std::fs::write(t.join(format!("demo-{i}.jsonl")), &body).expect("temporary corpus");
    }
    let (files, _) = discover(std::slice::from_ref(&t), &[], InputKind::Json);
    Corpus {
        files,
        kind: InputKind::Json,
        name: format!("demo-jsonl-x{}", FALLBACK_FILES * FALLBACK_COPIES),
        temp: Some(t),
    }
}

/// Copies of the corpus in the big workload: the attack corpus 30 times is 8,310 files,
/// 247,650 records, 1.1 GB.
pub const BIG_COPIES: usize = 30;

/// The big workload's corpus: the EVTX files of `c` copied `copies` times into a
/// temporary folder (one subfolder per copy), removed when the returned corpus is
/// dropped. Only an EVTX corpus is copied (the workload's floor is the typed EVTX
/// parse): for a JSON corpus this says why it is skipped.
pub fn copies(c: &Corpus, copies: usize) -> Result<Corpus, Skipped> {
    if copies == 0 {
        return Err(Skipped::NoCopies);
    }
    if c.kind != InputKind::Evtx {
        return Err(Skipped::NotEvtx(c.name.clone()));
    }
    remove_stale_copies();
    let t = std::env::temp_dir().join(format!("{BIG_PREFIX}{}", std::process::id()));
    // Made before the first copy so that a failed copy still removes what was written.
    let mut big = Corpus {
        files: Vec::new(),
        kind: InputKind::Evtx,
        name: format!("{} x{copies}", c.name),
        temp: Some(t.clone()),
    };
    for i in 0..copies {
        let dir = t.join(format!("copy-{i:02}"));
        std::fs::create_dir_all(&dir).map_err(Skipped::Io)?;
        // Numbered, so that files of the same name in different subfolders stay apart.
        for (n, f) in c.files.iter().enumerate() {
            let name = f.path.file_name().map(|x| x.to_string_lossy().into_owned());
            let to = dir.join(format!("{n:04}-{}", name.unwrap_or_default()));
            std::fs::copy(&f.path, to).map_err(Skipped::Io)?;
        }
    }
    big.files = discover(std::slice::from_ref(&t), &[], InputKind::Evtx).0;
    Ok(big)
}

/// The big workload's temporary folder: this prefix and the bench's process id.
const BIG_PREFIX: &str = "scanner-benches-big-";

/// Removes the big workload's folders left by bench processes that no longer run (a
/// gate stopped by Ctrl-C leaves 1.1 GB behind). Linux only: elsewhere nothing tells
/// whether a process runs, and nothing is removed.
fn remove_stale_copies() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix(BIG_PREFIX));
        if let Some(pid) = pid.filter(|p| p.parse::<u32>().is_ok()) {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// Why the big workload is not measured.
#[derive(Debug)]
pub enum Skipped {
    /// Asked for no copies (`--big-copies 0`).
    NoCopies,
    /// The corpus (named) is not EVTX.
    NotEvtx(String),
    /// Copying failed (disk full, no temporary folder).
    Io(std::io::Error),
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skipped::NoCopies => write!(f, "--big-copies 0"),
            Skipped::NotEvtx(name) => write!(
                f,
                "the corpus {name} is not EVTX (the big workload copies an EVTX corpus, \
                 ../shared/corpus/evtx-attack-samples by default, and measures its scan against \
                 the typed EVTX parse)"
            ),
            Skipped::Io(e) => write!(f, "cannot copy the corpus into a temporary folder: {e}"),
        }
    }
}

/// A scanner over `set` as `csv-timeline -p verbose` prepares it.
pub fn scanner(set: RuleSet) -> Scanner {
    ScannerBuilder::new()
        .extra_field_info(Profile::Verbose.has_extra())
        .build(set)
}

/// Scans the corpus; returns (records, detections).
pub fn scan(s: &Scanner, c: &Corpus) -> (u64, usize) {
    let r = s.scan(&c.files).expect("spilled rows read back");
    (r.stats.records, black_box(r.rows.len()))
}

/// Same as the engine (`crates/input/src/evtx/`): files with more chunks than this
/// are read chunk-parallel.
const PARALLEL_CHUNKS: u64 = 8;
const CHUNK_SIZE: u64 = 64 * 1024;

/// The parse-only baseline: every record of the corpus read as the engine reads it,
/// with no rules. EVTX: the `evtx` crate alone, with the engine's parser settings,
/// chunks → records → `into_json()`; files on the rayon pool largest first, files over
/// 8 chunks chunk-parallel, as the engine distributes them. JSON: every event parsed
/// into a `serde_json::Value`, one file per task. Returns the records read.
pub fn parse_only(c: &Corpus) -> u64 {
    use rayon::prelude::*;
    let order = largest_first(c);
    match c.kind {
        InputKind::Evtx => order.par_iter().map(|f| parse_evtx(f, Parse::Json)).sum(),
        InputKind::Json => order.par_iter().map(|f| parse_json(&f.path)).sum(),
    }
}

/// The parse floor of an EVTX corpus: each record's typed substitution values
/// (`template_instances()`: no names, no rendering), with the engine's parser settings
/// and the same distribution over files and chunks as [`parse_only`]; what
/// `crates/input/examples/parse_only.rs --typed` measures. A scan cannot read records
/// more cheaply than this. Returns the records read (0 for a JSON corpus).
pub fn parse_typed(c: &Corpus) -> u64 {
    use rayon::prelude::*;
    match c.kind {
        InputKind::Evtx => largest_first(c)
            .par_iter()
            .map(|f| parse_evtx(f, Parse::Typed))
            .sum(),
        InputKind::Json => 0,
    }
}

fn largest_first(c: &Corpus) -> Vec<&InputFile> {
    let mut order: Vec<&InputFile> = c.files.iter().collect();
    order.sort_by_key(|f| std::cmp::Reverse(f.size));
    order
}

/// What the parse-only workloads make of each EVTX record.
#[derive(Clone, Copy)]
enum Parse {
    /// Rendered to JSON.
    Json,
    /// Its typed substitution values only.
    Typed,
}

fn parse_evtx(f: &InputFile, how: Parse) -> u64 {
    use rayon::prelude::*;
    let settings = Arc::new(scanner_input::settings());
    let Ok(parser) = evtx::EvtxParser::from_path(&f.path) else {
        return 0;
    };
    let mut parser = parser.with_configuration((*settings).clone());
    let chunk = |c: Result<evtx::EvtxChunkData, evtx::err::EvtxError>| -> u64 {
        let Ok(mut data) = c else { return 0 };
        let Ok(mut chunk) = data.parse(Arc::clone(&settings)) else {
            return 0;
        };
        let mut n = 0;
        for rec in chunk.iter().flatten() {
            let read = match how {
                Parse::Json => rec.into_json().map(|j| black_box(j.data.len())).is_ok(),
                Parse::Typed => rec.template_instances().map(black_box).is_ok(),
            };
            n += u64::from(read);
        }
        n
    };
    if f.size / CHUNK_SIZE > PARALLEL_CHUNKS {
        parser.chunks().par_bridge().map(chunk).sum()
    } else {
        parser.chunks().map(chunk).sum()
    }
}

fn parse_json(p: &Path) -> u64 {
    use std::io::BufRead;
    let Ok(f) = std::fs::File::open(p) else {
        return 0;
    };
    let mut n = 0;
    for line in std::io::BufReader::new(f).lines().map_while(Result::ok) {
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            black_box(&v);
            n += 1;
        }
    }
    n
}

/// The allocator benches' body: `SCANNER_BENCH_ROUNDS` rounds (default 3) of loading the
/// rules and scanning the corpus in a fresh process state; prints one JSON line with
/// the median load and scan times and the peak RSS, under the allocator's name.
pub fn alloc_bench(allocator: &str) {
    use std::time::Instant;
    let rounds: usize = std::env::var("SCANNER_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1);
    let r = rules();
    let c = corpus();
    let (mut load, mut scan_s) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let set = load_rules(&r);
        load.push(t.elapsed().as_secs_f64());
        let s = scanner(set);
        let t = Instant::now();
        black_box(scan(&s, &c));
        scan_s.push(t.elapsed().as_secs_f64());
    }
    println!(
        "{}",
        serde_json::json!({
            "allocator": allocator, "key": format!("{} @ {}", r.name, c.name),
            "threads": rayon::current_num_threads(), "rounds": rounds,
            "load": crate::median(&load), "scan": crate::median(&scan_s),
            "peak_rss_mib": crate::peak_rss_kib().map(|k| k as f64 / 1024.0),
        })
    );
}
