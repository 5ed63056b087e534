//! Macro-benchmarks and the regression gate.
//!
//! Measures, interleaved round by round on the same rayon pool: rule loading, a scan of
//! the corpus with `scanner_engine::Scanner`, and the parse-only baseline (the same
//! files read with the `evtx` crate alone). Each of load and scan is expressed as a
//! ratio to the parse-only time of the same run (fastest over rounds / fastest
//! parse-only), so the figure holds across machines; the gate compares those ratios
//! with `benches/baseline.json` and fails when one is more than the tolerance (15%)
//! worse. A failed comparison is measured once more (`--retries 1`): other processes
//! only ever slow a measurement down, so a real regression fails both attempts, while a
//! burst of load on a shared machine rarely spans both.
//!
//! Flags (after `cargo bench -p scanner-benches --bench macro --`):
//! `--rounds N` (default 7), `--threads N` (default: rayon's, all cores),
//! `--tolerance F` (default 0.15), `--retries N` (default 1), `--no-gate` (measure and
//! print only),
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
    retries: usize,
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
        retries: 1,
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
            "--retries" => a.retries = num("--retries") as usize,
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

    let measure = || {
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
        Run { parse, load, scan }
    };

    let path = baseline_path();
    let mut base: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| json!({}));
    let entry = base.get(&key).cloned();
    let attempts = if a.gate && !a.save && entry.is_some() {
        1 + a.retries
    } else {
        1
    };

    for attempt in 1..=attempts {
        let busy = loadavg();
        let run = measure();
        let measured = [
            ("load", run.ratio(&run.load)),
            ("scan", run.ratio(&run.scan)),
        ];
        println!(
            "macro-benchmarks: {key}, {threads} threads, {} rounds{}",
            a.rounds,
            if attempts > 1 {
                format!(", attempt {attempt} of {attempts}")
            } else {
                String::new()
            }
        );
        println!(
            "  {:<11} {:>9} {:>9} {:>9}",
            "", "fastest", "median", "ratio"
        );
        println!(
            "  {:<11} {:>7.3} s {:>7.3} s {:>9}  {parsed} records",
            "parse-only",
            min(&run.parse),
            median(&run.parse),
            "1"
        );
        println!(
            "  {:<11} {:>7.3} s {:>7.3} s {:>9.3}  {rule_count} rules",
            "load",
            min(&run.load),
            median(&run.load),
            measured[0].1
        );
        println!(
            "  {:<11} {:>7.3} s {:>7.3} s {:>9.3}  {scanned} records, {detections} detections",
            "scan",
            min(&run.scan),
            median(&run.scan),
            measured[1].1
        );
        if let Some(kib) = scanner_benches::peak_rss_kib() {
            println!(
                "  peak RSS    {:.1} MiB (the whole bench process, several rule sets at once)",
                kib as f64 / 1024.0
            );
        }
        if let Some(l) = busy.filter(|&l| l > threads as f64 + 1.0) {
            println!(
                "  note: load average {l:.2} on {} cores when this run started: figures are noisy",
                std::thread::available_parallelism().map_or(0, |n| n.get())
            );
        }

        let result = json!({
            "key": key, "threads": threads, "rounds": a.rounds, "slowdown": slowdown,
            "records": parsed, "rules": rule_count, "detections": detections,
            "seconds": {"parse_only": run.parse, "load": run.load, "scan": run.scan},
            "ratios": {"load": measured[0].1, "scan": measured[1].1},
        });
        let out = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| scanner_benches::root().join("target"))
            .join("scanner-benches");
        let _ = std::fs::create_dir_all(&out);
        let _ = std::fs::write(out.join("macro.json"), format!("{result:#}\n"));

        if a.save {
            if slowdown > 1 {
                eprintln!(
                    "macro: refusing to save a baseline measured with SCANNER_BENCH_SLOWDOWN"
                );
                std::process::exit(2);
            }
            // A workload done in under MIN_GATED seconds (the built-in rules load in
            // 3 ms) is mostly thread wake-ups: printed, not gated.
            let gated = |x: &[f64], r: f64| (min(x) >= MIN_GATED).then(|| round3(r));
            base[&key] = json!({
                "load": gated(&run.load, measured[0].1), "scan": gated(&run.scan, measured[1].1),
                "threads": threads, "rounds": a.rounds,
                "seconds": {"parse_only": round3(min(&run.parse)), "load": round3(min(&run.load)),
                            "scan": round3(min(&run.scan))},
            });
            std::fs::write(&path, format!("{base:#}\n")).expect("write baseline");
            println!("baseline for '{key}' saved to {}", path.display());
            return;
        }
        if !a.gate {
            return;
        }
        let Some(entry) = &entry else {
            println!(
                "gate: no baseline for '{key}' in {}; nothing to compare (run benches/gate --save-baseline)",
                path.display()
            );
            return;
        };
        if entry.get("threads").and_then(Value::as_u64) != Some(threads as u64) {
            println!(
                "  note: the baseline was measured with {} threads, this run has {threads}",
                entry.get("threads").unwrap_or(&Value::Null)
            );
        }
        let mut failed = false;
        println!(
            "gate (fails when a ratio is more than {:.0}% above its baseline):",
            a.tolerance * 100.0
        );
        for (name, now) in measured {
            let Some(was) = entry.get(name).and_then(Value::as_f64) else {
                println!("  {name:<5} now {now:.3}  (not gated: no baseline figure)");
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
        if !failed {
            println!("gate: passed");
            return;
        }
        if attempt < attempts {
            println!("gate: over the tolerance; measuring again");
        }
    }
    println!("gate: FAILED");
    std::process::exit(1);
}

/// One attempt's times, seconds per workload run, one per round.
struct Run {
    parse: Vec<f64>,
    load: Vec<f64>,
    scan: Vec<f64>,
}

impl Run {
    /// The gated figure: the fastest of `xs` over the fastest parse-only. Other load on
    /// the machine only adds time, so the fastest round is the best estimate of each.
    fn ratio(&self, xs: &[f64]) -> f64 {
        min(xs) / min(&self.parse)
    }
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The 1-minute load average, where the OS tells it.
fn loadavg() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A workload faster than this (one run, in seconds) is not gated.
const MIN_GATED: f64 = 0.01;

/// Shortest time one measurement takes: a workload is repeated until it reaches this.
const MIN_MEASURE: f64 = 0.25;

/// Repetitions so that a workload taking `once` seconds is measured for MIN_MEASURE.
fn reps(once: f64) -> usize {
    ((MIN_MEASURE / once.max(1e-6)).ceil() as usize).clamp(1, 1000)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
