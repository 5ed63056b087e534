//! Benchmarks for `scanner`, and the regression gate.
//!
//! Nothing here ships in the product. This library holds what the bench targets share:
//!
//! - [`data`]: realistic field values (image paths, command lines, the short values of
//!   Security events) for the micro-benchmarks, generated deterministically from the
//!   demo corpus (`testdata/demo/attack.jsonl`) and a few templates;
//! - [`counting`]: a global allocator wrapper that counts bytes, for the memory figures
//!   criterion cannot measure;
//! - [`workload`]: the macro workloads (rule loading, scanning a corpus with
//!   [`scanner_engine::Scanner`], and the parse-only baseline: the same files read with
//!   the `evtx` crate alone, no rules, same threads; and the big workload, the corpus
//!   copied 30 times, with its typed parse floor), shared by the `macro` bench (the
//!   gate) and the two allocator benches.
//!
//! The bench targets are `micro` (criterion: one group per technique of the performance
//! guide, slow and fast form side by side), `memory` (bytes allocated and peak heap,
//! printed), `macro` (load, scan and parse-only, the big scan and its parse floor,
//! interleaved, compared with `benches/baseline.json`), and `alloc_system` /
//! `alloc_mimalloc` (one workload, two global allocators). `benches/README.md` says how to run them.

pub mod counting;
pub mod data;
pub mod workload;

use std::path::PathBuf;

/// The workspace root (the folder holding `Cargo.toml` with the workspace).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("benches/ lies in the workspace")
        .to_path_buf()
}

/// `../shared` beside the workspace, where the attack corpus and the rule sets live.
pub fn shared() -> PathBuf {
    root().join("..").join("shared")
}

/// The median of `xs` (the mean of the two middle values for an even count).
pub fn median(xs: &[f64]) -> f64 {
    assert!(!xs.is_empty(), "median of nothing");
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Peak resident set size of this process in KiB (`VmHWM`), when the OS tells it.
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
