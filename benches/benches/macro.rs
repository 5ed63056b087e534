//! Macro-benchmarks and the regression gate.
//!
//! Measures, interleaved round by round on the same rayon pool: rule loading, a scan of
//! the corpus with `scanner_engine::Scanner`, and the parse-only baseline (the same
//! files read with the `evtx` crate alone); and the big workload, the corpus copied 30
//! times (1.1 GB for the attack corpus): its scan and its parse floor (the same files
//! read as typed values, no names, no rendering). Each of load and scan is expressed as a
//! ratio to the parse-only time of the same run (fastest over rounds / fastest
//! parse-only), the big scan as a ratio to the big parse floor (`big_scan`), in
//! wall-clock and in CPU time, so the figure holds across machines; the
//! gate compares those ratios with `benches/baseline.json` and fails when one is more
//! than the tolerance (15%) worse. When the load average says the machine is busy (over
//! twice its cores), only the CPU ratios are gated: waiting for a core costs wall time,
//! not CPU time. A failed comparison is measured once more (`--retries 1`): other processes
//! only ever slow a measurement down, so a real regression fails both attempts, while a
//! burst of load on a shared machine rarely spans both.
//!
//! Flags (after `cargo bench -p scanner-benches --bench macro --`):
//! `--rounds N` (default 7), `--threads N` (default: rayon's, all cores),
//! `--tolerance F` (default 0.15), `--retries N` (default 1), `--no-gate` (measure and
//! print only), `--big-copies N` (default 30; 0 leaves the big workload out),
//! `--save-baseline` (write the measured ratios into `benches/baseline.json`).
//! `SCANNER_BENCH_SLOWDOWN=K` does the load and scan work K times per measurement: a
//! deliberate slowdown to show the gate failing, without touching product code.
//! The global allocator is mimalloc, as in the shipped binary.

use scanner_benches::{median, workload};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[path = "../../crates/cli/src/mi_alloc.rs"]
mod mi_alloc;

#[global_allocator]
static GLOBAL: mi_alloc::Mimalloc = mi_alloc::Mimalloc;

struct Args {
    rounds: usize,
    threads: Option<usize>,
    tolerance: f64,
    retries: usize,
    gate: bool,
    save: bool,
    big_copies: usize,
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
        big_copies: workload::BIG_COPIES,
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
            "--big-copies" => a.big_copies = num("--big-copies") as usize,
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

fn main() -> ExitCode {
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
    if rules.name == "builtin" || corpus.name.starts_with("demo-") {
        eprintln!(
            "macro: note: {} not found (nor SCANNER_BENCH_RULES / SCANNER_BENCH_CORPUS): \
             measuring the fallback data, rules '{}' on corpus '{}', against its own baseline entry",
            scanner_benches::shared().display(),
            rules.name,
            corpus.name
        );
    }
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

    let t = Instant::now();
    let big = match workload::copies(&corpus, a.big_copies) {
        Ok(big) => {
            let bytes: u64 = big.files.iter().map(|f| f.size).sum();
            eprintln!(
                "macro: big workload {} ({} files, {:.2} GB) copied into a temporary folder in {:.1} s",
                big.name,
                big.files.len(),
                bytes as f64 / 1e9,
                secs(t)
            );
            Some(big)
        }
        Err(e) => {
            eprintln!("macro: big workload skipped: {e}");
            None
        }
    };

    // Warm-up: page cache, allocator arenas, the rayon pool. Each workload runs twice
    // and the second (warm) run chooses how many times a measurement repeats it: at
    // least MIN_MEASURE seconds of warm runs, so that a measurement is not at timer or
    // scheduler noise. (Chosen from the cold run, a 0.3 s cold load gave one repetition
    // of a 0.15 s warm one.)
    let t = Instant::now();
    let set = workload::load_rules(&rules);
    let first_load = secs(t);
    let t = Instant::now();
    drop(std::hint::black_box(workload::load_rules(&rules)));
    let load_reps = reps(secs(t));
    let rule_count = set.rules().len();
    let scanner = workload::scanner(set);
    let t = Instant::now();
    let parsed = workload::parse_only(&corpus);
    let first_parse = secs(t);
    let t = Instant::now();
    std::hint::black_box(workload::parse_only(&corpus));
    let parse_reps = reps(secs(t));
    let t = Instant::now();
    let (scanned, detections) = workload::scan(&scanner, &corpus);
    let first_scan = secs(t);
    let t = Instant::now();
    std::hint::black_box(workload::scan(&scanner, &corpus));
    let scan_reps = reps(secs(t));
    // The big workload's warm-up.
    let big_first = big.as_ref().map(|big| {
        let t = Instant::now();
        let typed = workload::parse_typed(big);
        let first_typed = secs(t);
        let t = Instant::now();
        let (records, found) = workload::scan(&scanner, big);
        let first_scan = secs(t);
        eprintln!(
            "macro: big workload: {typed} records parsed (typed), {records} scanned, {found} detections; \
             first runs: typed parse {first_typed:.3} s, scan {first_scan:.3} s"
        );
        BigFirst {
            typed,
            scanned: records,
            detections: found,
            parse_reps: reps(first_typed),
            scan_reps: reps(first_scan),
        }
    });
    eprintln!(
        "macro: {rule_count} rules, {parsed} records parsed, {scanned} scanned, {detections} detections; \
         first (cold) runs: load {first_load:.3} s, parse-only {first_parse:.3} s, scan {first_scan:.3} s; \
         repetitions per measurement: load {load_reps}, parse-only {parse_reps}, scan {scan_reps}"
    );

    // One measurement: wall and CPU (user + system, all threads) seconds of one run.
    let timed = |reps: usize, work: &mut dyn FnMut()| {
        let (t, c) = (Instant::now(), cpu_secs());
        work();
        (secs(t) / reps as f64, (cpu_secs() - c) / reps as f64)
    };
    let measure = || {
        let mut run = Run::default();
        let steps = if big.is_some() { 5 } else { 3 };
        for round in 0..a.rounds {
            // Rotate the order so no workload always runs first (or after the same one).
            for step in 0..steps {
                match (round + step) % steps {
                    0 => run.parse.push(timed(parse_reps, &mut || {
                        for _ in 0..parse_reps {
                            std::hint::black_box(workload::parse_only(&corpus));
                        }
                    })),
                    1 => run.scan.push(timed(scan_reps, &mut || {
                        for _ in 0..scan_reps * slowdown {
                            std::hint::black_box(workload::scan(&scanner, &corpus));
                        }
                    })),
                    3 => {
                        let (big, f) = big.as_ref().zip(big_first).expect("big workload");
                        let reps = f.parse_reps;
                        run.big_parse.push(timed(reps, &mut || {
                            for _ in 0..reps {
                                std::hint::black_box(workload::parse_typed(big));
                            }
                        }));
                    }
                    4 => {
                        let (big, f) = big.as_ref().zip(big_first).expect("big workload");
                        let reps = f.scan_reps;
                        run.big_scan.push(timed(reps, &mut || {
                            for _ in 0..reps * slowdown {
                                std::hint::black_box(workload::scan(&scanner, big));
                            }
                        }));
                    }
                    2 => {
                        let mut sets = Vec::new();
                        run.load.push(timed(load_reps, &mut || {
                            sets = (0..load_reps * slowdown)
                                .map(|_| workload::load_rules(&rules))
                                .collect();
                        }));
                        drop(sets);
                    }
                    _ => unreachable!("{steps} workloads"),
                }
            }
        }
        run
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
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());

    for attempt in 1..=attempts {
        let busy = loadavg().filter(|&l| l > 2.0 * cores as f64);
        let run = measure();
        // (name, ratio, fastest single run in seconds): wall-clock ratios, then CPU ones;
        // then the big scan's, to its own parse floor.
        let mut measured = vec![
            ("load", run.ratio(&run.load, W), min(&run.load, W)),
            ("scan", run.ratio(&run.scan, W), min(&run.scan, W)),
            ("load_cpu", run.ratio(&run.load, C), min(&run.load, W)),
            ("scan_cpu", run.ratio(&run.scan, C), min(&run.scan, W)),
        ];
        if big.is_some() {
            let floor = |k| min(&run.big_scan, k) / min(&run.big_parse, k);
            measured.push(("big_scan", floor(W), min(&run.big_scan, W)));
            measured.push(("big_scan_cpu", floor(C), min(&run.big_scan, W)));
        }
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
            "  {:<11} {:>9} {:>9} {:>7} {:>9} {:>7}",
            "", "wall min", "median", "ratio", "CPU min", "ratio"
        );
        let mut rows = vec![
            ("parse-only", &run.parse, format!("{parsed} records"), None),
            ("load", &run.load, format!("{rule_count} rules"), Some(0)),
            (
                "scan",
                &run.scan,
                format!("{scanned} records, {detections} detections"),
                Some(1),
            ),
        ];
        if let (Some(big), Some(f)) = (&big, big_first) {
            rows.push((
                "big parse",
                &run.big_parse,
                format!(
                    "{} records as typed values ({}, the floor)",
                    f.typed, big.name
                ),
                None,
            ));
            rows.push((
                "big scan",
                &run.big_scan,
                format!(
                    "{} records, {} detections; ratio to big parse",
                    f.scanned, f.detections
                ),
                Some(4),
            ));
        }
        for (name, xs, what, i) in rows {
            let r =
                |k: Option<usize>| k.map_or("1".to_string(), |k| format!("{:.3}", measured[k].1));
            // The CPU ratios follow the two wall ones of load and scan, and the big
            // scan's wall one.
            let cpu = |k: Option<usize>| k.map(|k| if k < 2 { k + 2 } else { k + 1 });
            println!(
                "  {name:<11} {:>7.3} s {:>7.3} s {:>7} {:>7.3} s {:>7}  {what}",
                min(xs, W),
                median(&xs.iter().map(|x| x.0).collect::<Vec<_>>()),
                r(i),
                min(xs, C),
                r(cpu(i)),
            );
        }
        if let Some(kib) = scanner_benches::peak_rss_kib() {
            println!(
                "  peak RSS    {:.1} MiB (the whole bench process, several rule sets at once)",
                kib as f64 / 1024.0
            );
        }
        if let Some(l) = busy {
            println!(
                "  note: load average {l:.2} on {cores} cores when this run started: the machine \
                 is busy, wall-clock ratios are printed but not gated, CPU ratios are"
            );
        }

        let result = json!({
            "key": key, "threads": threads, "rounds": a.rounds, "slowdown": slowdown,
            "records": parsed, "rules": rule_count, "detections": detections,
            "seconds_wall_cpu": {"parse_only": run.parse, "load": run.load, "scan": run.scan,
                                 "big_parse_typed": run.big_parse, "big_scan": run.big_scan},
            "big": big.as_ref().map(|b| json!({"corpus": b.name, "files": b.files.len(),
                "records": big_first.map(|f| f.scanned),
                "detections": big_first.map(|f| f.detections)})),
            "ratios": measured.iter().map(|m| (m.0.to_string(), json!(m.1)))
                .collect::<serde_json::Map<_, _>>(),
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
                return ExitCode::from(2);
            }
            // A workload done in under MIN_GATED seconds (the built-in rules load in
            // 3 ms) is mostly thread wake-ups: printed, not gated.
            let mut e = serde_json::Map::new();
            for &(name, ratio, fastest) in &measured {
                e.insert(
                    name.into(),
                    json!((fastest >= MIN_GATED).then(|| round3(ratio))),
                );
            }
            e.insert("threads".into(), json!(threads));
            e.insert("rounds".into(), json!(a.rounds));
            let mut seconds = json!({"parse_only": round3(min(&run.parse, W)),
                "load": round3(min(&run.load, W)), "scan": round3(min(&run.scan, W))});
            if let Some(b) = &big {
                seconds["big_parse_typed"] = json!(round3(min(&run.big_parse, W)));
                seconds["big_scan"] = json!(round3(min(&run.big_scan, W)));
                e.insert("big_corpus".into(), json!(b.name));
            }
            e.insert("seconds".into(), seconds);
            base[&key] = Value::Object(e);
            std::fs::write(&path, format!("{base:#}\n")).expect("write baseline");
            println!("baseline for '{key}' saved to {}", path.display());
            return ExitCode::SUCCESS;
        }
        if !a.gate {
            return ExitCode::SUCCESS;
        }
        let Some(entry) = &entry else {
            println!(
                "gate: no baseline for '{key}' in {}; nothing to compare (run benches/gate --save-baseline)",
                path.display()
            );
            return ExitCode::SUCCESS;
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
        for &(name, now, _) in &measured {
            let Some(was) = entry.get(name).and_then(Value::as_f64) else {
                println!("  {name:<8} now {now:.3}  (not gated: no baseline figure)");
                continue;
            };
            let change = now / was - 1.0;
            let wall = !name.ends_with("_cpu");
            let bad = change > a.tolerance && !(wall && busy.is_some());
            failed |= bad;
            println!(
                "  {name:<8} baseline {was:.3}  now {now:.3}  {:+.1}%  {}",
                change * 100.0,
                if bad {
                    "FAIL"
                } else if change > a.tolerance {
                    "over, not gated (busy machine)"
                } else {
                    "ok"
                }
            );
        }
        if !failed {
            println!("gate: passed");
            return ExitCode::SUCCESS;
        }
        if attempt < attempts {
            println!("gate: over the tolerance; measuring again");
        }
    }
    println!("gate: FAILED");
    // Returned, not exited: the temporary corpora are removed on drop.
    ExitCode::FAILURE
}

/// Wall-clock seconds.
const W: usize = 0;
/// CPU seconds.
const C: usize = 1;

/// What the big workload's warm-up found: records read by the typed parse and by the
/// scan, detections, and how many runs make one measurement of each.
#[derive(Clone, Copy)]
struct BigFirst {
    typed: u64,
    scanned: u64,
    detections: usize,
    parse_reps: usize,
    scan_reps: usize,
}

/// One attempt's measurements, (wall, CPU) seconds per workload run, one per round.
#[derive(Default)]
struct Run {
    parse: Vec<(f64, f64)>,
    load: Vec<(f64, f64)>,
    scan: Vec<(f64, f64)>,
    /// The big workload's typed parse (its floor) and its scan; empty without it.
    big_parse: Vec<(f64, f64)>,
    big_scan: Vec<(f64, f64)>,
}

impl Run {
    /// The gated figure: the fastest of `xs` over the fastest parse-only, in wall
    /// (`W`) or CPU (`C`) seconds. Other load on the machine only adds time, so the
    /// fastest round is the best estimate of each.
    fn ratio(&self, xs: &[(f64, f64)], k: usize) -> f64 {
        min(xs, k) / min(&self.parse, k)
    }
}

fn min(xs: &[(f64, f64)], k: usize) -> f64 {
    xs.iter()
        .map(|x| if k == W { x.0 } else { x.1 })
        .fold(f64::INFINITY, f64::min)
}

/// User + system CPU seconds of this process, all threads.
fn cpu_secs() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
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
/// At 0.25 s (a warm load then measured once) the load ratio moved by up to 28% between
/// runs of unchanged code; at 1 s ten runs on an idle 2-core machine stayed within
/// -11..+7% of the baseline (benches/README.md).
const MIN_MEASURE: f64 = 1.0;

/// Repetitions so that a workload taking `once` seconds is measured for MIN_MEASURE.
fn reps(once: f64) -> usize {
    ((MIN_MEASURE / once.max(1e-6)).ceil() as usize).clamp(1, 1000)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
