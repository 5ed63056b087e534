//! The allocator comparison, mimalloc side: the same realistic allocation-heavy
//! workload as `alloc_system` (rule loading and a scan, `scanner_benches::workload`),
//! with mimalloc as the global allocator, as in the shipped binary. Compare the two
//! with `benches/gate --alloc`, which interleaves them.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    scanner_benches::workload::alloc_bench("mimalloc");
}
