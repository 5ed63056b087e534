//! A bound on how deep recursive values nest when decoded from a cache file (the rule
//! set cache's conditions and selection lists).
//!
//! Decoding a recursive type recurses once per level, and a few bytes make a level: a
//! damaged or forged cache file could nest deep enough to overflow the stack, which
//! aborts the process. Each recursive field is read through [`nested`], which counts
//! the levels entered on this thread and refuses to go past [`MAX_NESTING`] (an error:
//! the cache is then ignored). What a cache holds is expected to nest far below that
//! (rules' conditions to 64 levels of parentheses and `not`, YAML to 256 levels).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use std::cell::Cell;

/// Deepest nesting read.
pub const MAX_NESTING: u32 = 300;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Leaves a level when dropped (also when decoding fails on the way).
struct Level;

impl Drop for Level {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// `#[serde(deserialize_with = "scanner_files::nested")]` on a recursive field: reads
/// a value one level deeper, refusing past [`MAX_NESTING`].
pub fn nested<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    let depth = DEPTH.with(|c| {
        let n = c.get() + 1;
        c.set(n);
        n
    });
    let _level = Level;
    if depth > MAX_NESTING {
        return Err(D::Error::custom(format!(
            "nested deeper than {MAX_NESTING}"
        )));
    }
    T::deserialize(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Serialize, Deserialize)]
    enum Tree {
        Leaf,
        Node(#[serde(deserialize_with = "nested")] Box<Tree>),
    }

    fn deep(n: usize) -> Vec<u8> {
        // Postcard: a variant is its index (one byte here), a box its content.
        let mut bytes = vec![1u8; n];
        bytes.push(0);
        bytes
    }

    #[test]
    fn values_nested_past_the_bound_are_an_error_and_the_count_recovers() {
        let ok: Tree = postcard::from_bytes(&deep(MAX_NESTING as usize)).unwrap();
        assert!(matches!(ok, Tree::Node(_)));
        assert!(postcard::from_bytes::<Tree>(&deep(MAX_NESTING as usize + 1)).is_err());
        // Far past it, on a thread's default stack: an error, not an overflow.
        let bytes = deep(1 << 20);
        let r = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || postcard::from_bytes::<Tree>(&bytes).is_err())
            .unwrap()
            .join()
            .unwrap();
        assert!(r);
        assert_eq!(DEPTH.with(Cell::get), 0);
        assert!(
            postcard::from_bytes::<Tree>(&deep(10)).is_ok(),
            "after an error too"
        );
    }
}
