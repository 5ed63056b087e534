//! Counts heap allocations on the scan's hot path, per record.
//!
//!     cargo run --release -p scanner-engine --example allocs_per_record -- RULES FILE.evtx [THREADS]
//!
//! Rules are loaded first (not counted); then the file is scanned and every allocation
//! made during the scan is counted by a wrapping global allocator.

use scanner_engine::ScannerBuilder;
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(l.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(n as u64, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(rules), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: allocs_per_record RULES FILE.evtx [THREADS]");
        std::process::exit(2);
    };
    let threads: usize = args.get(3).and_then(|t| t.parse().ok()).unwrap_or(1);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .ok();
    let source = if rules == "builtin" {
        RuleSource::Builtin
    } else {
        RuleSource::Path(rules.into())
    };
    let set = load(&[source], &LoadOptions::default());
    let scanner = ScannerBuilder::new().extra_field_info(true).build(set);
    let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    let files = [InputFile::new(file.into(), size)];
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    let result = scanner.scan(&files).expect("spilled rows read back");
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
    );
    let n = result.stats.records.max(1);
    println!(
        "{} records, {} detections: {} allocations ({:.2} per record), {:.0} bytes allocated per record",
        result.stats.records,
        result.rows.len(),
        a1 - a0,
        (a1 - a0) as f64 / n as f64,
        (b1 - b0) as f64 / n as f64
    );
}
