//! Channel and provider names shared by every row that shows them.
//!
//! A handful of distinct names fill millions of detections, and most are longer than a
//! `CompactString` holds inline (`Microsoft-Windows-Sysmon/Operational`), so copying one
//! per row is an allocation per row. Each distinct name is instead stored once for the
//! life of the process, and a row holds a `CompactString` over that `&'static str`, which
//! clones without allocating. At most [`MAX_NAMES`] names of at most [`MAX_LEN`] bytes are
//! kept (about 256 KB); past that, names are copied per row as before.

use compact_str::CompactString;
use scanner_rules::FxHasher;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::sync::{Mutex, OnceLock};

/// Most distinct names kept for the process.
pub const MAX_NAMES: usize = 1024;
/// Longest name kept.
pub const MAX_LEN: usize = 256;
/// Names a worker remembers without asking the process-wide set.
const PER_WORKER: usize = 32;
/// What a `CompactString` holds without allocating.
const INLINE: usize = std::mem::size_of::<CompactString>();

type Set = HashSet<&'static str, BuildHasherDefault<FxHasher>>;

fn shared() -> &'static Mutex<Set> {
    static SHARED: OnceLock<Mutex<Set>> = OnceLock::new();
    SHARED.get_or_init(Mutex::default)
}

/// The process's copy of `name`, if it keeps one.
fn intern(name: &str) -> Option<&'static str> {
    if name.len() > MAX_LEN {
        return None;
    }
    let mut set = shared().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&s) = set.get(name) {
        return Some(s);
    }
    if set.len() >= MAX_NAMES {
        return None;
    }
    let s: &'static str = Box::leak(name.into());
    set.insert(s);
    Some(s)
}

/// A worker's view of the shared names: the ones it met, without locking.
#[derive(Debug, Default)]
pub struct NameCache {
    names: Vec<CompactString>,
}

impl NameCache {
    /// `name` as a row holds it: inline when short, else over the shared copy.
    pub fn get(&mut self, name: &str) -> CompactString {
        if name.len() <= INLINE {
            return CompactString::new(name);
        }
        if let Some(n) = self.names.iter().find(|n| n.as_str() == name) {
            return n.clone();
        }
        match intern(name) {
            Some(s) => {
                let n = CompactString::const_new(s);
                if self.names.len() < PER_WORKER {
                    self.names.push(n.clone());
                }
                n
            }
            None => CompactString::new(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shared_and_short_ones_inline() {
        let mut cache = NameCache::default();
        let long = "Microsoft-Windows-Sysmon/Operational";
        let a = cache.get(long);
        let b = cache.get(long);
        assert_eq!((a.as_str(), b.as_str()), (long, long));
        assert!(!a.is_heap_allocated() && !b.is_heap_allocated());
        assert_eq!(
            a.as_ptr(),
            NameCache::default().get(long).as_ptr(),
            "one copy for every worker"
        );
        let short = cache.get("Security");
        assert_eq!(short, "Security");
        assert!(!short.is_heap_allocated());
        let huge = "x".repeat(MAX_LEN + 1);
        let h = cache.get(&huge);
        assert_eq!(h, huge.as_str());
        assert!(h.is_heap_allocated(), "too long to keep: copied");
    }
}
