//! Macro-benchmarks and the regression gate.
//!
//! Measures, interleaved round by round on the same rayon pool: rule loading, a scan of
//! the corpus with `scanner_engine::Scanner`, and the parse-only baseline (the same
//! files read with the `evtx` crate alone). Each of load and scan is expressed as a
//! ratio to the parse-only time of the same round (the median over rounds is kept), so
//! the figure holds across machines; the gate compares those ratios with
//! `benches/baseline.json` and exits 1 when one is more than the tolerance (15%) worse.
//!
//! Flags (after `cargo bench -p scanner-benches --bench macro --`):
//! `--rounds N` (default 7), `--threads N` (default: rayon's, all cores),
//! `--tolerance F` (default 0.15), `--no-gate` (measure and print only),
//! `--save-baseline` (write the measured ratios into `benches/baseline.json`).
//! `SCANNER_BENCH_SLOWDOWN=K` does the load and scan work K times per measurement: a
//! deliberate slowdown to show the gate failing, without touching product code.
//! The global allocator is mimalloc, as in the shipped binary.

use scanner_benches::{median, workload};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Args {
    rounds: usize,
    threads: Option<usize>,
    tolerance: f64,
    gate: bool,
    save: bool,
}

fn args() -> Args {
    let mut a = Args {
        rounds: std::env::var("SCANNER_BENCH_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(7),
        threads: None,
        tolerance: 0.15,
        gate: true,
        save: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut num = |name: &str| -> f64 {
            it.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} needs a number"))
        };
        match x.as_str() {
            "--rounds" => a.rounds = (num("--rounds") as usize).max(1),
            "--threads" => a.threads = Some(num("--threads") as usize),
            "--tolerance" => a.tolerance = num("--tolerance"),
            "--no-gate" => a.gate = false,
            "--save-baseline" => a.save = true,
            // `cargo bench` passes `--bench` and any filter; nothing to do with them.
            _ => {}
        }
    }
    a
}

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn baseline_path() -> PathBuf {
    scanner_benches::root().join("benches/baseline.json")
}

fn main() {
    let a = args();
    if let Some(n) = a.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .expect("rayon pool");
    }
    let threads = rayon::current_num_threads();
    let slowdown: usize = std::env::var("SCANNER_BENCH_SLOWDOWN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);

    let rules = workload::rules();
    let corpus = workload::corpus();
    let key = format!("{} @ {}", rules.name, corpus.name);
    eprintln!(
        "macro: rules {}, corpus {} ({} files), {threads} threads, {} rounds{}",
        rules.name,
        corpus.name,
        corpus.files.len(),
        a.rounds,
        if slowdown > 1 {
            format!(", SLOWDOWN x{slowdown}")
        } else {
            String::new()
        }
    );

    // Warm-up: page cache, allocator arenas, the rayon pool. It also times each
    // workload once, to choose how many times a measurement repeats it: at least
    // MIN_MEASURE seconds, so that small data sets are not measured at timer noise.
    let t = Instant::now();
    let set = workload::load_rules(&rules);
    let load_reps = reps(secs(t));
    let rule_count = set.rules.len();
    let scanner = workload::scanner(set);
    let t = Instant::now();
    let parsed = workload::parse_only(&corpus);
    let parse_reps = reps(secs(t));
    let t = Instant::now();
    let (scanned, detections) = workload::scan(&scanner, &corpus);
    let scan_reps = reps(secs(t));
    eprintln!(
        "macro: {rule_count} rules, {parsed} records parsed, {scanned} scanned, {detections} detections; \
         repetitions per measurement: load {load_reps}, parse-only {parse_reps}, scan {scan_reps}"
    );

    let (mut load, mut scan, mut parse) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..a.rounds {
        // Rotate the order so no workload always runs first (or after the same one).
        for step in 0..3 {
            match (round + step) % 3 {
                0 => {
                    let t = Instant::now();
                    for _ in 0..parse_reps {
                        std::hint::black_box(workload::parse_only(&corpus));
                    }
                    parse.push(secs(t) / parse_reps as f64);
                }
                1 => {
                    let t = Instant::now();
                    for _ in 0..scan_reps * slowdown {
                        std::hint::black_box(workload::scan(&scanner, &corpus));
                    }
                    scan.push(secs(t) / scan_reps as f64);
                }
                _ => {
                    let t = Instant::now();
                    let sets: Vec<_> = (0..load_reps * slowdown)
                        .map(|_| workload::load_rules(&rules))
                        .collect();
                    load.push(secs(t) / load_reps as f64);
                    drop(sets);
                }
            }
        }
    }
    let ratio = |xs: &[f64]| {
        let r: Vec<f64> = xs.iter().zip(&parse).map(|(x, p)| x / p).collect();
        median(&r)
    };
    let measured = [("load", ratio(&load)), ("scan", ratio(&scan))];

    println!(
        "macro-benchmarks: {key}, {threads} threads, median of {} rounds",
        a.rounds
    );
    println!("  parse-only  {:8.3} s  ({parsed} records)", median(&parse));
    println!(
        "  load        {:8.3} s  ratio to parse-only {:.3}  ({rule_count} rules)",
        median(&load),
        measured[0].1
    );
    println!(
        "  scan        {:8.3} s  ratio to parse-only {:.3}  ({scanned} records, {detections} detections)",
        median(&scan),
        measured[1].1
    );
    if let Some(kib) = scanner_benches::peak_rss_kib() {
        println!(
            "  peak RSS    {:8.1} MiB (the whole bench process, several rule sets at once)",
            kib as f64 / 1024.0
        );
    }

    let result = json!({
        "key": key, "threads": threads, "rounds": a.rounds, "slowdown": slowdown,
        "records": parsed, "rules": rule_count, "detections": detections,
        "seconds": {"parse_only": median(&parse), "load": median(&load), "scan": median(&scan)},
        "ratios": {"load": measured[0].1, "scan": measured[1].1},
    });
    let out = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| scanner_benches::root().join("target"))
        .join("scanner-benches");
    let _ = std::fs::create_dir_all(&out);
    let _ = std::fs::write(out.join("macro.json"), format!("{result:#}\n"));

    let path = baseline_path();
    let mut base: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| json!({}));

    if a.save {
        if slowdown > 1 {
            eprintln!("macro: refusing to save a baseline measured with SCANNER_BENCH_SLOWDOWN");
            std::process::exit(2);
        }
        base[&key] = json!({
            "load": round3(measured[0].1), "scan": round3(measured[1].1),
            "threads": threads, "rounds": a.rounds,
            "seconds": {"parse_only": round3(median(&parse)), "load": round3(median(&load)),
                        "scan": round3(median(&scan))},
        });
        std::fs::write(&path, format!("{base:#}\n")).expect("write baseline");
        println!("baseline for '{key}' saved to {}", path.display());
        return;
    }
    if !a.gate {
        return;
    }
    let Some(entry) = base.get(&key) else {
        println!(
            "gate: no baseline for '{key}' in {}; nothing to compare (run benches/gate --save-baseline)",
            path.display()
        );
        return;
    };
    let mut failed = false;
    println!(
        "gate (fails when a ratio is more than {:.0}% above its baseline):",
        a.tolerance * 100.0
    );
    for (name, now) in measured {
        let Some(was) = entry.get(name).and_then(Value::as_f64) else {
            println!("  {name:<5} {now:.3}  (no baseline)");
            continue;
        };
        let change = now / was - 1.0;
        let bad = change > a.tolerance;
        failed |= bad;
        println!(
            "  {name:<5} baseline {was:.3}  now {now:.3}  {:+.1}%  {}",
            change * 100.0,
            if bad { "FAIL" } else { "ok" }
        );
    }
    if failed {
        println!("gate: FAILED");
        std::process::exit(1);
    }
    println!("gate: passed");
}

/// Shortest time one measurement takes: a workload is repeated until it reaches this.
const MIN_MEASURE: f64 = 0.25;

/// Repetitions so that a workload taking `once` seconds is measured for MIN_MEASURE.
fn reps(once: f64) -> usize {
    ((MIN_MEASURE / once.max(1e-6)).ceil() as usize).clamp(1, 1000)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
