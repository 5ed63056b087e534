//! The allocator comparison, mimalloc side: the same realistic allocation-heavy
//! workload as `alloc_system` (rule loading and a scan, `scanner_benches::workload`),
//! with mimalloc as the global allocator, as in the shipped binary. Compare the two
//! with `benches/gate --alloc`, which interleaves them.

#[path = "../../crates/cli/src/mi_alloc.rs"]
mod mi_alloc;

#[global_allocator]
static GLOBAL: mi_alloc::Mimalloc = mi_alloc::Mimalloc;

fn main() {
    scanner_benches::workload::alloc_bench("mimalloc");
}
