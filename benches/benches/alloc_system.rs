//! The allocator comparison, system side: the same realistic allocation-heavy workload
//! as `alloc_mimalloc` (rule loading and a scan, `scanner_benches::workload`), with the
//! system allocator. Compare the two with `benches/gate --alloc`, which interleaves them.

fn main() {
    scanner_benches::workload::alloc_bench("system");
}
