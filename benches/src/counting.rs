//! A global allocator that counts: bytes requested in total, bytes live now, and the
//! peak of live bytes. Install it with `#[global_allocator]` in a bench binary, then
//! [`reset`] before a measured section and read [`snapshot`] after it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Counts every allocation made through it, then hands it to the system allocator.
pub struct Counting;

static TOTAL: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    TOTAL.fetch_add(n, Relaxed);
    CALLS.fetch_add(1, Relaxed);
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call is forwarded unchanged to `System`; the counters are side effects.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
            grew(new);
        }
        q
    }
}

/// What the counters read.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot {
    /// Bytes requested since [`reset`] (reallocations count their new size).
    pub total: usize,
    /// Allocation calls since [`reset`].
    pub calls: usize,
    /// Bytes live now, minus those live at [`reset`].
    pub live: usize,
    /// Highest live bytes since [`reset`], minus those live at [`reset`].
    pub peak: usize,
}

static BASE: AtomicUsize = AtomicUsize::new(0);

/// Starts a measured section: totals to zero, the peak to what is live now.
pub fn reset() {
    TOTAL.store(0, Relaxed);
    CALLS.store(0, Relaxed);
    let live = LIVE.load(Relaxed);
    BASE.store(live, Relaxed);
    PEAK.store(live, Relaxed);
}

/// The counters since the last [`reset`].
pub fn snapshot() -> Snapshot {
    let base = BASE.load(Relaxed);
    Snapshot {
        total: TOTAL.load(Relaxed),
        calls: CALLS.load(Relaxed),
        live: LIVE.load(Relaxed).saturating_sub(base),
        peak: PEAK.load(Relaxed).saturating_sub(base),
    }
}
