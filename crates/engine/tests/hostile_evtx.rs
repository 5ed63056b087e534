//! Hostile EVTX input: damaged variants of real files (truncated, bytes flipped in the
//! file header, chunk headers, string/template tables and records, chunks spliced from
//! other files, zero and huge record sizes, files that are not EVTX) go through the
//! scanner's real record path with the built-in rules. For each variant: no panic, no
//! hang, and every record the `evtx` crate itself reads from the file (chunks → records
//! with the scan's settings) is accounted for: scanned, or reported as an error.
//!
//! `damaged_fixtures` runs on our own fixtures (a few hundred variants) in every
//! `cargo test`; the `#[ignore]`d ones read `../shared` and run from `.ci/run`:
//! `damaged_attack_corpus` (at least 10,000 variants of evtx-attack-samples) and
//! `edge_case_corpus` (the real damaged files of evtx-edge-cases).

use evtx::{EvtxParser, ParserSettings};
use scanner_engine::{Scanner, ScannerBuilder};
use scanner_input::{InputFile, InputKind};
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

const CHUNK: usize = 65536;
const HEADER: usize = 4096;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Offsets of record headers (`**\0\0` magic) in `b`.
fn record_offsets(b: &[u8]) -> Vec<usize> {
    let mut v = Vec::new();
    let mut c = HEADER;
    while c + CHUNK <= b.len() {
        if &b[c..c + 8] == b"ElfChnk\0" {
            let mut o = c + 512;
            while o + 8 <= c + CHUNK {
                if &b[o..o + 4] == b"**\0\0" {
                    v.push(o);
                }
                o += 8;
            }
        }
        c += CHUNK;
    }
    v
}

fn chunks(b: &[u8]) -> usize {
    b.len().saturating_sub(HEADER) / CHUNK
}

fn put_u32(b: &mut [u8], at: usize, v: u32) {
    if at + 4 <= b.len() {
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    if at + 8 <= b.len() {
        b[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// Flips 1 to `max` random bits in `b[lo..hi]`.
fn flip(b: &mut [u8], rng: &mut Rng, lo: usize, hi: usize, max: usize) {
    let hi = hi.min(b.len());
    if lo >= hi {
        return;
    }
    for _ in 0..1 + rng.below(max) {
        let i = lo + rng.below(hi - lo);
        b[i] ^= 1 << rng.below(8);
    }
}

fn fill(b: &mut [u8], lo: usize, len: usize, v: u8) {
    let hi = (lo + len).min(b.len());
    if lo < hi {
        b[lo..hi].fill(v);
    }
}

/// `n` damaged variants of `orig`, derived deterministically from `seed`; `others` are
/// other files to splice from. Each comes with a short description.
fn variants(orig: &[u8], others: &[&[u8]], seed: u64, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let recs = record_offsets(orig);
    let nchunks = chunks(orig).max(1);
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let mut b = orig.to_vec();
        let chunk_at = HEADER + rng.below(nchunks) * CHUNK;
        let rec_at = if recs.is_empty() {
            chunk_at + 512
        } else {
            recs[rng.below(recs.len())]
        };
        let what = match k % 24 {
            0 => {
                let at = rng.below(b.len() + 1);
                b.truncate(at);
                format!("truncated at {at}")
            }
            1 => {
                // Truncate near a structure boundary.
                let at = [
                    0,
                    1,
                    8,
                    127,
                    128,
                    HEADER - 1,
                    HEADER,
                    HEADER + 8,
                    HEADER + 512,
                ][rng.below(9)]
                .max(chunk_at + rng.below(600).saturating_sub(88))
                .min(b.len());
                b.truncate(at);
                format!("truncated at {at} (near a header)")
            }
            2 => {
                flip(&mut b, &mut rng, 0, 128, 4);
                "file header bits flipped".into()
            }
            3 => {
                // File header fields: first/last chunk, next record id, header size,
                // minor/major version, chunk count, flags.
                let field = [8, 16, 24, 32, 36, 38, 40, 42, 120][rng.below(9)];
                put_u64(&mut b, field, rng.next());
                format!("file header field at {field} set at random")
            }
            4 => {
                flip(&mut b, &mut rng, chunk_at, chunk_at + 8, 1);
                format!("chunk magic damaged at {chunk_at}")
            }
            5 => {
                // Chunk header fields: first/last record number and id, header size,
                // last/free record offsets, CRCs.
                let field = [8, 16, 24, 32, 40, 44, 48, 52, 120, 124][rng.below(10)];
                let v = match rng.below(4) {
                    0 => 0,
                    1 => u64::MAX,
                    2 => rng.next(),
                    _ => rng.below(CHUNK * 2) as u64,
                };
                put_u64(&mut b, chunk_at + field, v);
                format!("chunk header field {field} at {chunk_at} set to {v:#x}")
            }
            6 => {
                flip(&mut b, &mut rng, chunk_at, chunk_at + 128, 8);
                format!("chunk header at {chunk_at} bits flipped")
            }
            7 => {
                // The string table (64 u32 offsets).
                let i = chunk_at + 128 + 4 * rng.below(64);
                let v = match rng.below(3) {
                    0 => rng.below(CHUNK) as u32,
                    1 => u32::MAX,
                    _ => rng.next() as u32,
                };
                put_u32(&mut b, i, v);
                format!("string table entry at {i} set to {v:#x}")
            }
            8 => {
                // The template table (32 u32 offsets).
                let i = chunk_at + 384 + 4 * rng.below(32);
                let v = match rng.below(3) {
                    0 => rng.below(CHUNK) as u32,
                    1 => u32::MAX,
                    _ => 512 + rng.below(1024) as u32,
                };
                put_u32(&mut b, i, v);
                format!("template table entry at {i} set to {v:#x}")
            }
            9 => {
                flip(&mut b, &mut rng, chunk_at + 128, chunk_at + 512, 16);
                format!("string/template tables at {chunk_at} bits flipped")
            }
            10 => {
                let v = [
                    0u32,
                    1,
                    8,
                    23,
                    24,
                    25,
                    0xffff,
                    0x10000,
                    0x7fff_ffff,
                    u32::MAX,
                ][rng.below(10)];
                put_u32(&mut b, rec_at + 4, v);
                format!("record at {rec_at}: size {v:#x}")
            }
            11 => {
                let id = [0u64, 1, u64::MAX, rng.next()][rng.below(4)];
                put_u64(&mut b, rec_at + 8, id);
                format!("record at {rec_at}: id {id:#x}")
            }
            12 => {
                flip(&mut b, &mut rng, rec_at, rec_at + 24, 3);
                format!("record header at {rec_at} bits flipped")
            }
            13 => {
                flip(&mut b, &mut rng, rec_at + 24, rec_at + 400, 6);
                format!("record BinXML at {rec_at} bits flipped")
            }
            14 => {
                let len = 1 + rng.below(256);
                let at = rec_at + 24 + rng.below(200);
                let v = [0u8, 0xff, rng.next() as u8][rng.below(3)];
                fill(&mut b, at, len, v);
                format!("{len} bytes at {at} set to {v:#x}")
            }
            15 => {
                // Random bytes anywhere in a chunk's records.
                let len = 1 + rng.below(64);
                let at = chunk_at + 512 + rng.below(CHUNK - 512);
                for i in at..(at + len).min(b.len()) {
                    b[i] = rng.next() as u8;
                }
                format!("{len} random bytes at {at}")
            }
            16 => {
                // A chunk of another file in place of one of ours.
                let o = others[rng.below(others.len())];
                let oc = chunks(o);
                if oc == 0 || chunk_at + CHUNK > b.len() {
                    b.extend_from_slice(&o[..o.len().min(HEADER + CHUNK)]);
                    "another file appended".into()
                } else {
                    let src = HEADER + rng.below(oc) * CHUNK;
                    b[chunk_at..chunk_at + CHUNK].copy_from_slice(&o[src..src + CHUNK]);
                    format!("chunk at {chunk_at} replaced by another file's at {src}")
                }
            }
            17 => {
                // Another file's chunk appended, with or without updating the count.
                let o = others[rng.below(others.len())];
                let oc = chunks(o);
                if oc > 0 {
                    let src = HEADER + rng.below(oc) * CHUNK;
                    b.extend_from_slice(&o[src..src + CHUNK]);
                }
                if rng.below(2) == 0 && b.len() >= 44 {
                    let c = chunks(&b) as u16;
                    b[42..44].copy_from_slice(&c.to_le_bytes());
                }
                "another file's chunk appended".into()
            }
            18 => {
                // Half a chunk from elsewhere: torn write.
                let o = others[rng.below(others.len())];
                let cut = chunk_at + 512 + rng.below(CHUNK - 512);
                let lo = cut.min(b.len());
                let hi = (chunk_at + CHUNK).min(b.len()).min(o.len());
                if lo < hi {
                    b[lo..hi].copy_from_slice(&o[lo..hi]);
                }
                format!("chunk at {chunk_at} torn at {cut}")
            }
            19 => {
                // Not EVTX at all.
                let len = rng.below(3 * CHUNK);
                let mut v: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
                match rng.below(4) {
                    0 => {}
                    1 => v.iter_mut().for_each(|x| *x = 0),
                    2 => {
                        let text = b"<Event><System/></Event>\n".repeat(len / 24 + 1);
                        v = text;
                    }
                    _ => {
                        // EVTX magic, garbage after it.
                        if v.len() >= 8 {
                            v[..8].copy_from_slice(b"ElfFile\0");
                        }
                    }
                }
                b = v;
                format!("not EVTX ({} bytes)", b.len())
            }
            20 => {
                // A header and zero-filled or garbage chunks.
                b.truncate(HEADER.min(b.len()));
                let extra = 1 + rng.below(3);
                for _ in 0..extra {
                    let mut c = vec![0u8; CHUNK];
                    if rng.below(2) == 0 {
                        c[..8].copy_from_slice(b"ElfChnk\0");
                        for x in c[8..].iter_mut().take(rng.below(CHUNK)) {
                            *x = rng.next() as u8;
                        }
                    }
                    b.extend_from_slice(&c);
                }
                format!("header with {extra} empty or garbage chunks")
            }
            21 => {
                // Every record's size set to one value.
                let v = [0u32, 24, u32::MAX, 0x10000][rng.below(4)];
                for &r in &recs {
                    put_u32(&mut b, r + 4, v);
                }
                format!("every record size {v:#x}")
            }
            22 => {
                // Many flips all over.
                let len = b.len();
                flip(&mut b, &mut rng, 0, len, 64);
                "bits flipped anywhere".into()
            }
            _ => {
                // A range of a record set to a copy of another part of the chunk
                // (offsets inside BinXML pointing to plausible places).
                let len = 2 + rng.below(32);
                let from = chunk_at + 512 + rng.below(CHUNK - 600);
                let to = rec_at + 24 + rng.below(300);
                if from + len <= b.len() && to + len <= b.len() {
                    let tmp = b[from..from + len].to_vec();
                    b[to..to + len].copy_from_slice(&tmp);
                }
                format!("{len} bytes copied from {from} to {to}")
            }
        };
        out.push((what, b));
    }
    out
}

/// What the `evtx` crate itself reads from `path`, with the scan's settings: records
/// yielded (`Ok`), and whether it panicked.
fn crate_records(path: &Path, settings: &ParserSettings) -> (u64, bool) {
    let settings = Arc::new(settings.clone());
    let mut n = 0u64;
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let Ok(p) = EvtxParser::from_path(path) else {
            return;
        };
        let mut p = p.with_configuration((*settings).clone());
        for c in p.chunks() {
            let Ok(mut data) = c else { continue };
            let Ok(mut chunk) = data.parse(Arc::clone(&settings)) else {
                continue;
            };
            for r in chunk.iter() {
                if r.is_ok() {
                    n += 1;
                }
            }
        }
    }))
    .is_err();
    (n, panicked)
}

struct Outcome {
    /// Live records scanned with `--recover-records` on.
    scanned_recovering: u64,
    crate_records: u64,
    crate_panicked: bool,
    scanned: u64,
    errors: usize,
    first_error: Option<String>,
}

/// Scans `path` alone (and counts what the crate reads) on another thread; `Err` on a
/// panic or after `limit`.
fn check(scanners: &Arc<[Scanner; 2]>, path: &Path, limit: Duration) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    let s = Arc::clone(scanners);
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let size = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            let files = [InputFile::new(p.clone(), size)];
            let result = s[0].scan(&files).expect("spilled rows read back");
            let recovering = s[1].scan(&files).expect("spilled rows read back");
            let (crate_records, crate_panicked) = crate_records(&p, &scanner_input::settings());
            Outcome {
                scanned_recovering: recovering.stats.records,
                crate_records,
                crate_panicked,
                scanned: result.stats.records,
                errors: result.errors.len(),
                first_error: result.errors.first().map(ToString::to_string),
            }
        }));
        let _ = tx.send(r.map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into())
        }));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(o)) => Ok(o),
        Ok(Err(p)) => Err(format!("panicked: {p}")),
        Err(_) => Err(format!("no result after {limit:?} (hang)")),
    }
}

#[derive(Default)]
struct Tally {
    variants: usize,
    exact: usize,
    more: usize,
    crate_records: u64,
    scanned: u64,
    errors: u64,
    crate_panics: usize,
    with_errors: usize,
    failures: Vec<String>,
}

/// A scanner of live records and one that also carves, both with the built-in rules.
fn scanners() -> Arc<[Scanner; 2]> {
    let scanner = |recover| {
        ScannerBuilder::new()
            .extra_field_info(true)
            .recover_records(recover)
            .build(load(&[RuleSource::Builtin], &LoadOptions::default()))
    };
    Arc::new([scanner(false), scanner(true)])
}

fn run(sources: &[PathBuf], per_file: usize, limit: Duration, max_failures: usize) -> Tally {
    let scanners = scanners();
    let originals: Vec<Vec<u8>> = sources
        .iter()
        .map(|p| std::fs::read(p).expect("read source"))
        .collect();
    let tmp = std::env::temp_dir().join(format!("scanner-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut t = Tally::default();
    let show_errors = std::env::var_os("HOSTILE_SHOW_ERRORS").is_some();
    for (i, orig) in originals.iter().enumerate() {
        let others: Vec<&[u8]> = [(i + 1) % originals.len(), (i + 7) % originals.len()]
            .iter()
            .map(|&j| originals[j].as_slice())
            .collect();
        for (k, (what, bytes)) in variants(orig, &others, i as u64 * 1_000_003 + 17, per_file)
            .into_iter()
            .enumerate()
        {
            let path = tmp.join(format!("v{i}-{k}.evtx"));
            std::fs::write(&path, &bytes).unwrap();
            let name = format!("{} variant {k} ({what})", sources[i].display());
            t.variants += 1;
            match check(&scanners, &path, limit) {
                Ok(o) => {
                    t.crate_records += o.crate_records;
                    t.scanned += o.scanned;
                    t.errors += o.errors as u64;
                    t.crate_panics += o.crate_panicked as usize;
                    t.with_errors += (o.errors > 0) as usize;
                    if let (Some(e), true) = (&o.first_error, show_errors) {
                        eprintln!("{what}: {e}");
                    }
                    if o.scanned == o.crate_records {
                        t.exact += 1;
                    } else if o.scanned > o.crate_records {
                        t.more += 1;
                    }
                    if o.scanned + (o.errors as u64) < o.crate_records {
                        t.failures.push(format!(
                            "{name}: the crate reads {} records, the scan {} with {} errors",
                            o.crate_records, o.scanned, o.errors
                        ));
                    }
                    if o.scanned_recovering != o.scanned {
                        t.failures.push(format!(
                            "{name}: {} live records scanned, {} with recovery on",
                            o.scanned, o.scanned_recovering
                        ));
                    }
                    if o.crate_panicked && o.first_error.is_none() {
                        t.failures.push(format!(
                            "{name}: the crate panics, the scan reports nothing"
                        ));
                    }
                }
                Err(e) => {
                    t.failures.push(format!("{name}: {e}"));
                    let keep = tmp.join(format!("failing-{i}-{k}.evtx"));
                    let _ = std::fs::rename(&path, &keep);
                    eprintln!("{name}: {e}; kept as {}", keep.display());
                }
            }
            let _ = std::fs::remove_file(&path);
            if t.failures.len() >= max_failures {
                break;
            }
        }
    }
    if t.failures.is_empty() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    eprintln!(
        "{} variants: crate read {} records, scan {} (+{} errors); scan count equal on {}, \
         higher on {} (damaged chunks the crate skips, read where intact); {} variants had reported errors; the crate panicked on {}",
        t.variants,
        t.crate_records,
        t.scanned,
        t.errors,
        t.exact,
        t.more,
        t.with_errors,
        t.crate_panics
    );
    t
}

fn assert_clean(t: &Tally) {
    assert!(
        t.failures.is_empty(),
        "{} failures:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
}

fn evtx_files(dir: &Path) -> Vec<PathBuf> {
    let (files, _) = scanner_input::discover(&[dir.to_path_buf()], &[], InputKind::Evtx);
    files.into_iter().map(|f| f.path).collect()
}

#[test]
fn damaged_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/evtx");
    let files = evtx_files(&dir);
    assert!(files.len() >= 2, "fixtures: {files:?}");
    let start = Instant::now();
    let t = run(&files, 150, Duration::from_secs(60), 20);
    eprintln!("in {:.1} s", start.elapsed().as_secs_f64());
    assert!(t.variants >= 300);
    assert_clean(&t);
}

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus")
}

#[test]
#[ignore = "reads ../shared/corpus; run by .ci/run in release mode"]
fn damaged_attack_corpus() {
    let files = evtx_files(&shared().join("evtx-attack-samples"));
    assert!(!files.is_empty(), "no evtx-attack-samples in ../shared");
    // HOSTILE_VARIANTS raises the count for a longer hunt.
    let total: usize = std::env::var("HOSTILE_VARIANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let per_file = total.div_ceil(files.len()) + 1;
    let start = Instant::now();
    let t = run(&files, per_file, Duration::from_secs(30), 50);
    eprintln!("in {:.1} s", start.elapsed().as_secs_f64());
    assert!(t.variants >= total);
    assert_clean(&t);
}

#[test]
#[ignore = "reads ../shared/corpus; run by .ci/run in release mode"]
fn edge_case_corpus() {
    let files = evtx_files(&shared().join("evtx-edge-cases"));
    assert!(files.len() >= 6, "evtx-edge-cases: {files:?}");
    let scanners = scanners();
    let mut failures = Vec::new();
    for p in &files {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let o = match check(&scanners, p, Duration::from_secs(60)) {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        eprintln!(
            "{name}: crate {} records, scanned {} ({} with recovery on), {} errors{}",
            o.crate_records,
            o.scanned,
            o.scanned_recovering,
            o.errors,
            o.first_error
                .as_deref()
                .map(|e| format!(", first: {e}"))
                .unwrap_or_default()
        );
        if o.scanned < o.crate_records {
            failures.push(format!(
                "{name}: the crate reads {} records, the scan {}",
                o.crate_records, o.scanned
            ));
        }
        if o.scanned_recovering != o.scanned {
            failures.push(format!("{name}: live records differ with recovery on"));
        }
    }
    // The damaged ones: an error naming the file and the chunk (and record).
    let s = &scanners[0];
    let scan_one = |n: &str| {
        let p = shared().join("evtx-edge-cases").join(n);
        let size = std::fs::metadata(&p).unwrap().len();
        s.scan(&[InputFile::new(p, size)])
            .expect("spilled rows read back")
    };
    let r = scan_one("sample_with_a_bad_chunk_magic.evtx");
    for chunk in [
        "chunk 6: damaged chunk header",
        "chunk 10: damaged chunk header",
    ] {
        if !r
            .errors
            .iter()
            .map(ToString::to_string)
            .any(|e| e.contains("sample_with_a_bad_chunk_magic.evtx") && e.contains(chunk))
        {
            failures.push(format!(
                "bad chunk magic: no error with {chunk:?}: {:?}",
                r.errors
            ));
        }
    }
    let r = scan_one("sample-with-zero-data-size-event.evtx");
    if !r.errors.iter().map(ToString::to_string).any(|e| {
        e.contains("sample-with-zero-data-size-event.evtx: chunk 0:")
            && e.contains("record data size")
    }) {
        failures.push(format!("zero data size: {:?}", r.errors));
    }
    // Recovery carves records from the two damaged chunks.
    let p = shared().join("evtx-edge-cases/sample_with_a_bad_chunk_magic.evtx");
    let size = std::fs::metadata(&p).unwrap().len();
    let r = scanners[1]
        .scan(&[InputFile::new(p, size)])
        .expect("spilled rows read back");
    if r.stats.recovered == 0 {
        failures.push("bad chunk magic: nothing carved with recovery on".into());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
