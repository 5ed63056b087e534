//! The parse-only baseline: the same EVTX reading as a scan (same parser settings,
//! files and chunks in parallel, each record rendered to the JSON the scan flattens), with
//! no rules and nothing else done per record.
//!
//!     cargo run --release -p scanner-engine --example parse_only -- PATH... [--threads N]

use rayon::prelude::*;
use scanner_engine::input::{self, InputKind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn main() {
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut threads = 0;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--threads" {
            threads = args.next().and_then(|t| t.parse().ok()).unwrap_or(0);
        } else {
            paths.push(a.into());
        }
    }
    if threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .ok();
    }
    let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) = paths.into_iter().partition(|p| p.is_dir());
    let (files, _) = input::discover(&dirs, &files, InputKind::Evtx);
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let start = Instant::now();
    let records = AtomicU64::new(0);
    files.par_iter().for_each(|f| {
        let n = scanner_engine::source::evtx(
            &f.path,
            f.size,
            false,
            || 0u64,
            |len, rec| *len += rec.json.len() as u64,
            |_| {},
        );
        records.fetch_add(n.records, Ordering::Relaxed);
    });
    let secs = start.elapsed().as_secs_f64();
    let n = records.into_inner();
    println!(
        "parse only: {} files ({:.1} MiB), {n} records in {secs:.2} s ({:.0} records/s, {:.1} MiB/s)",
        files.len(),
        bytes as f64 / 1048576.0,
        n as f64 / secs,
        bytes as f64 / 1048576.0 / secs
    );
}
