//! Memory micro-benchmarks, measured with a counting global allocator (criterion only
//! measures time): `String` vs `CompactString` for many short strings, and a
//! Vec-collect vs a streaming iterator for a file of events. Prints a table, and one
//! JSON object per line on stdout when run with `--json`.

use compact_str::CompactString;
use scanner_benches::counting::{self, Counting};
use scanner_benches::data;
use std::hint::black_box;

#[global_allocator]
static A: Counting = Counting;

struct Row {
    name: &'static str,
    slow: &'static str,
    fast: &'static str,
    unit: &'static str,
    slow_v: usize,
    fast_v: usize,
}

fn strings(n: usize) -> [Row; 2] {
    let vals = data::short_values(n);
    // Both Vecs hold 24-byte elements; what differs is the strings' own heap.
    let vec_bytes = n * std::mem::size_of::<String>();
    counting::reset();
    let s: Vec<String> = vals.iter().map(|v| v.as_str().into()).collect();
    let string = counting::snapshot();
    black_box(&s);
    drop(s);
    counting::reset();
    let c: Vec<CompactString> = vals.iter().map(|v| v.as_str().into()).collect();
    let compact = counting::snapshot();
    black_box(&c);
    drop(c);
    [
        Row {
            name: "string_vs_compact",
            slow: "String",
            fast: "CompactString",
            unit: "heap bytes of 100,000 short values, the Vec's 2.4 MB excluded",
            slow_v: string.live - vec_bytes,
            fast_v: compact.live - vec_bytes,
        },
        Row {
            name: "string_vs_compact",
            slow: "String",
            fast: "CompactString",
            unit: "allocations for 100,000 short values, the Vec's included",
            slow_v: string.calls,
            fast_v: compact.calls,
        },
    ]
}

fn collect_vs_stream(copies: usize) -> Row {
    let text = data::DEMO_JSONL.repeat(copies);
    let wanted = |v: &serde_json::Value| v["Event"]["System"]["EventID"] == 1;
    let lines = || text.lines().filter(|l| !l.trim().is_empty());
    counting::reset();
    let all: Vec<serde_json::Value> = lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let a = all.iter().filter(|v| wanted(v)).count();
    drop(all);
    let collect = counting::snapshot().peak;
    counting::reset();
    let b = lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(wanted)
        .count();
    let stream = counting::snapshot().peak;
    assert_eq!(a, b);
    Row {
        name: "collect_vs_stream",
        slow: "collect Vec<Value>",
        fast: "stream",
        unit: "peak heap bytes over 6,900 events",
        slow_v: collect,
        fast_v: stream,
    }
}

fn main() {
    let json = std::env::args().any(|a| a == "--json");
    let [a, b] = strings(100_000);
    let rows = [a, b, collect_vs_stream(100)];
    if json {
        for r in &rows {
            println!(
                "{}",
                serde_json::json!({"bench": r.name, "slow": r.slow_v, "fast": r.fast_v,
                    "ratio": r.slow_v as f64 / r.fast_v.max(1) as f64, "unit": r.unit})
            );
        }
        return;
    }
    println!(
        "{:<20} {:>14} {:>14} {:>7}  unit",
        "memory bench", "slow", "fast", "ratio"
    );
    for r in &rows {
        println!(
            "{:<20} {:>14} {:>14} {:>6.1}x  {} ({} vs {})",
            r.name,
            r.slow_v,
            r.fast_v,
            r.slow_v as f64 / r.fast_v.max(1) as f64,
            r.unit,
            r.slow,
            r.fast
        );
    }
}
