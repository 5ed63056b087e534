//! Micro-benchmarks: one criterion group per technique of the performance guide, the
//! slow form and the fast form side by side on the same realistic values
//! (`scanner_benches::data`). Each group's throughput is in values (or rows, or
//! events), so criterion prints a per-element rate for both forms.
//!
//! Memory (String vs CompactString, Vec-collect vs streaming) is in the `memory`
//! bench; the allocator comparison is `alloc_system` vs `alloc_mimalloc`.

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use compact_str::CompactString;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use regex::Regex;
use scanner_benches::data;
use scanner_rules::RegexCache;
use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

/// Values per iteration in most groups.
const N: usize = 10_000;

/// `(?i)\\cmd\.exe$` on the raw value vs `ends_with` on the value lowercased once
/// (what the engine's record view holds), and lowercasing included.
fn regex_vs_ends_with(c: &mut Criterion) {
    let vals = data::values(N);
    let low = data::lowered(&vals);
    let re = Regex::new(r"(?i)\\cmd\.exe$").unwrap();
    let want = vals.iter().filter(|v| re.is_match(v)).count();
    assert_eq!(
        want,
        low.iter().filter(|v| v.ends_with(r"\cmd.exe")).count()
    );
    let mut g = c.benchmark_group("regex_vs_ends_with");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("slow: regex (?i) on raw", |b| {
        b.iter(|| black_box(&vals).iter().filter(|v| re.is_match(v)).count())
    });
    g.bench_function("fast: ends_with on lowered", |b| {
        b.iter(|| {
            black_box(&low)
                .iter()
                .filter(|v| v.ends_with(r"\cmd.exe"))
                .count()
        })
    });
    g.bench_function("fast+lowercase: to_lowercase then ends_with", |b| {
        b.iter(|| {
            black_box(&vals)
                .iter()
                .filter(|v| v.to_lowercase().ends_with(r"\cmd.exe"))
                .count()
        })
    });
    g.finish();
}

/// 40 substring needles tested one by one against every lowered value, with and
/// without checking the length first: on the realistic mix, and on the short values
/// that make up most of a Security event (where most needles are longer than the value).
fn length_prefilter(c: &mut Criterion) {
    let needles = data::NEEDLES;
    let sets = [
        ("mix", data::lowered(&data::values(N))),
        ("short", data::lowered(&data::short_values(N))),
    ];
    let mut g = c.benchmark_group("length_prefilter");
    g.throughput(Throughput::Elements(N as u64));
    for (name, low) in &sets {
        g.bench_function(format!("slow: contains ({name} values)"), |b| {
            b.iter(|| {
                let mut hits = 0usize;
                for v in black_box(low) {
                    for n in needles {
                        hits += v.contains(n) as usize;
                    }
                }
                hits
            })
        });
        g.bench_function(
            format!("fast: len >= needle && contains ({name} values)"),
            |b| {
                b.iter(|| {
                    let mut hits = 0usize;
                    for v in black_box(low) {
                        for n in needles {
                            hits += (v.len() >= n.len() && v.contains(n)) as usize;
                        }
                    }
                    hits
                })
            },
        );
    }
    g.finish();
}

/// A realistic Sigma regex compiled for every value, looked up in the shared cache for
/// every value, and compiled once (what a compiled rule holds).
fn regex_compile(c: &mut Criterion) {
    const M: usize = 500;
    let vals = data::values(M);
    let pat = r"(?i)\\(powershell|pwsh)\.exe.*\s-e(nc|ncodedcommand)?\s+[a-z0-9+/=]{20,}";
    let cache = RegexCache::default();
    let once = cache.compile(pat).unwrap();
    let mut g = c.benchmark_group("regex_compile");
    g.throughput(Throughput::Elements(M as u64));
    g.sample_size(10);
    g.bench_function("slow: Regex::new per value", |b| {
        b.iter(|| {
            black_box(&vals)
                .iter()
                .filter(|v| Regex::new(pat).unwrap().is_match(v))
                .count()
        })
    });
    g.bench_function("fast: RegexCache::get per value", |b| {
        b.iter(|| {
            black_box(&vals)
                .iter()
                .filter(|v| cache.compile(pat).unwrap().re.is_match(v))
                .count()
        })
    });
    g.bench_function("fastest: compiled once, held by the rule", |b| {
        b.iter(|| {
            black_box(&vals)
                .iter()
                .filter(|v| once.re.is_match(v))
                .count()
        })
    });
    g.finish();
}

/// One OR-list of 40 `contains` needles: a loop of `contains` vs one Aho-Corasick
/// automaton (a contiguous NFA, as the rules crate builds it, and the default kind).
fn many_needles(c: &mut Criterion) {
    let low = data::lowered(&data::values(N));
    let needles = data::NEEDLES;
    let nfa = AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(needles)
        .unwrap();
    let auto = AhoCorasick::new(needles).unwrap();
    let want = low
        .iter()
        .filter(|v| needles.iter().any(|n| v.contains(n)))
        .count();
    assert_eq!(want, low.iter().filter(|v| nfa.is_match(v)).count());
    let mut g = c.benchmark_group("many_needles");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("slow: any(contains) over 40 needles", |b| {
        b.iter(|| {
            black_box(&low)
                .iter()
                .filter(|v| needles.iter().any(|n| v.contains(n)))
                .count()
        })
    });
    g.bench_function("fast: aho-corasick contiguous NFA", |b| {
        b.iter(|| black_box(&low).iter().filter(|v| nfa.is_match(v)).count())
    });
    g.bench_function("fast: aho-corasick default kind", |b| {
        b.iter(|| black_box(&low).iter().filter(|v| auto.is_match(v)).count())
    });
    g.finish();
}

/// Building the short strings a detection row keeps: `String` vs `CompactString`
/// (time; the bytes are in the `memory` bench).
fn string_vs_compact(c: &mut Criterion) {
    let vals = data::short_values(N);
    let mut g = c.benchmark_group("string_vs_compact");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("slow: String", |b| {
        b.iter(|| {
            black_box(&vals)
                .iter()
                .map(|v| String::from(v.as_str()))
                .collect::<Vec<_>>()
        })
    });
    g.bench_function("fast: CompactString", |b| {
        b.iter(|| {
            black_box(&vals)
                .iter()
                .map(|v| CompactString::from(v.as_str()))
                .collect::<Vec<_>>()
        })
    });
    g.finish();
}

/// Timeline-like rows (8 fields, ~250 bytes) written field by field to a file in a
/// temporary folder, straight to the `File` vs through one 64 KiB `BufWriter`.
fn bufwriter(c: &mut Criterion) {
    const ROWS: usize = 2_000;
    let vals = data::values(ROWS * 2);
    let dir = std::env::temp_dir().join(format!("scanner-benches-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("timeline.csv");
    let write_rows = |w: &mut dyn Write| {
        for i in 0..ROWS {
            for f in [
                "2024-03-12 09:14:02.255 +00:00",
                "WS-FIN-07.corp.example",
                "Sysmon",
                "1",
                "high",
                "Suspicious Process Creation",
                vals[2 * i].as_str(),
                vals[2 * i + 1].as_str(),
            ] {
                w.write_all(f.as_bytes()).unwrap();
                w.write_all(b",").unwrap();
            }
            w.write_all(b"\n").unwrap();
        }
    };
    let mut g = c.benchmark_group("bufwriter");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.sample_size(20);
    g.bench_function("slow: unbuffered File", |b| {
        b.iter(|| {
            let mut f = std::fs::File::create(&path).unwrap();
            write_rows(&mut f);
        })
    });
    g.bench_function("fast: BufWriter 64 KiB", |b| {
        b.iter(|| {
            let mut f =
                std::io::BufWriter::with_capacity(64 << 10, std::fs::File::create(&path).unwrap());
            write_rows(&mut f);
            f.flush().unwrap();
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Events parsed from JSON Lines and counted by a test: collected into a `Vec` first
/// vs handed on one at a time (time; peak memory is in the `memory` bench).
fn collect_vs_stream(c: &mut Criterion) {
    let text = data::DEMO_JSONL.repeat(20);
    let events = text.lines().filter(|l| !l.trim().is_empty()).count();
    let wanted = |v: &serde_json::Value| v["Event"]["System"]["EventID"] == 1;
    let mut g = c.benchmark_group("collect_vs_stream");
    g.throughput(Throughput::Elements(events as u64));
    g.bench_function("slow: collect Vec<Value> then test", |b| {
        b.iter(|| {
            let all: Vec<serde_json::Value> = black_box(&text)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            all.iter().filter(|v| wanted(v)).count()
        })
    });
    g.bench_function("fast: stream one event at a time", |b| {
        b.iter(|| {
            black_box(&text)
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .filter(wanted)
                .count()
        })
    });
    g.finish();
}

fn config() -> Criterion {
    // Short runs: the machine is shared and the slow/fast ratios are what matter.
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30)
}

criterion_group! {
    name = micro;
    config = config();
    targets = regex_vs_ends_with, length_prefilter, regex_compile, many_needles,
        string_vs_compact, bufwriter, collect_vs_stream
}
criterion_main!(micro);
