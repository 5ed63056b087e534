//! mimalloc as a global allocator: the one the shipped binary uses, and the benches
//! (which include this file) measure with.

use std::alloc::{GlobalAlloc, Layout};

/// mimalloc as the global allocator. Layouts aligned to at most a word go to the plain
/// entry points: every mimalloc block is word-aligned, and mimalloc 3's aligned entry
/// points over-allocate and offset any block over 1 KiB whose size class is not a power
/// of two (`mi_malloc_is_naturally_aligned`), which rows' cells and read buffers are.
pub struct Mimalloc;

/// The alignment of every block mimalloc hands out.
const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: each call passes the layout's size (and, above a word, its alignment) to the
// mimalloc function of the same contract; blocks from either family are freed and
// resized by `mi_free`/`mi_realloc*`, which accept both.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if l.align() <= WORD {
            mi::mi_malloc(l.size()).cast()
        } else {
            mi::mi_malloc_aligned(l.size(), l.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        use libmimalloc_sys as mi;
        if l.align() <= WORD {
            mi::mi_zalloc(l.size()).cast()
        } else {
            mi::mi_zalloc_aligned(l.size(), l.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, _: Layout) {
        libmimalloc_sys::mi_free(p.cast());
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        use libmimalloc_sys as mi;
        if l.align() <= WORD {
            mi::mi_realloc(p.cast(), size).cast()
        } else {
            mi::mi_realloc_aligned(p.cast(), size, l.align()).cast()
        }
    }
}
