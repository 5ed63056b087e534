//! A worker's memo of which prefilter needles a field value holds: values repeat from
//! record to record (images, users, logon types), and looking one up costs a hash and a
//! comparison where scanning it costs an automaton step per byte and a report per
//! occurrence of every needle.
//!
//! Direct-mapped: a slot holds the last value hashed to it, with the automaton it was
//! scanned by and the needles found (each once). Slot buffers are reused, so nothing is
//! allocated once they are warm. Values up to [`MAX_VALUE`] bytes take one of
//! [`SLOTS`] slots, longer ones up to [`MAX_LONG`] bytes one of [`LONG_SLOTS`] (long
//! command lines repeat too: on the attack corpus, keeping them spares 1.2% of the
//! scan's instructions), so a worker's memo holds at most 2 MiB of values; longer
//! values are scanned as they come.

use crate::fields::FxHasher;
use std::hash::Hasher;

/// Slots of short values (a power of two).
const SLOTS: usize = 4096;
/// Longest short value.
const MAX_VALUE: usize = 256;
/// Slots of long values (a power of two).
const LONG_SLOTS: usize = 256;
/// Longest value kept.
const MAX_LONG: usize = 4096;

#[derive(Debug, Default)]
struct Slot {
    /// The automaton scanned with (its address; 0 while empty).
    owner: usize,
    value: String,
    needles: Vec<u32>,
}

/// See the module documentation.
#[derive(Debug, Default)]
pub(super) struct NeedleCache {
    slots: Vec<Slot>,
    /// Needles of a value scanned without being kept.
    passing: Vec<u32>,
}

impl NeedleCache {
    /// The needles (pattern ids) that `value` holds, as `scan` reports them (with
    /// repeats, in any order) for the automaton at address `owner`: each once for a
    /// value kept, as reported for a long one.
    pub(super) fn needles(
        &mut self,
        owner: usize,
        value: &str,
        scan: impl FnOnce(&str, &mut Vec<u32>),
    ) -> &[u32] {
        if value.len() > MAX_LONG {
            self.passing.clear();
            scan(value, &mut self.passing);
            return &self.passing;
        }
        if self.slots.is_empty() {
            self.slots.resize_with(SLOTS + LONG_SLOTS, Slot::default);
        }
        // Short values in the first SLOTS slots, long ones in the LONG_SLOTS after.
        let (base, mask) = if value.len() > MAX_VALUE {
            (SLOTS, LONG_SLOTS - 1)
        } else {
            (0, SLOTS - 1)
        };
        let mut h = FxHasher::default();
        h.write_usize(owner);
        h.write(value.as_bytes());
        let slot = &mut self.slots[base + (h.finish() as usize & mask)];
        if slot.owner != owner || slot.value != value {
            slot.owner = owner;
            slot.value.clear();
            slot.value.push_str(value);
            slot.needles.clear();
            scan(value, &mut slot.needles);
            slot.needles.sort_unstable();
            slot.needles.dedup();
        }
        &slot.needles
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scan that reports the position of every `x` as a needle, and counts its calls.
    fn xs(calls: &mut u32) -> impl FnOnce(&str, &mut Vec<u32>) + '_ {
        move |v, out| {
            *calls += 1;
            out.extend(v.match_indices('x').map(|(i, _)| i as u32 % 3));
        }
    }

    #[test]
    fn remembers_needles_per_value_and_automaton() {
        let mut c = NeedleCache::default();
        let mut calls = 0;
        assert_eq!(c.needles(1, "axxxbx", xs(&mut calls)), &[0, 1, 2]);
        assert_eq!(c.needles(1, "axxxbx", xs(&mut calls)), &[0, 1, 2]);
        assert_eq!(calls, 1, "a repeated value is not scanned again");
        assert_eq!(c.needles(2, "axxxbx", xs(&mut calls)), &[0, 1, 2]);
        assert_eq!(calls, 2, "another automaton scans it afresh");
        assert_eq!(c.needles(1, "ab", xs(&mut calls)), &[] as &[u32]);
        assert_eq!(c.needles(1, "xab", xs(&mut calls)), &[0]);
        assert_eq!(calls, 4);
        // Many values: whatever evicts whom, the answers are each value's own.
        for i in 0..3 * SLOTS {
            let v = format!("{}{}", "x".repeat(i % 5), i);
            let want: Vec<u32> = (0..(i % 5).min(3) as u32).collect();
            assert_eq!(c.needles(1, &v, xs(&mut calls)), want.as_slice(), "{v}");
        }
    }

    #[test]
    fn long_values_are_remembered_apart_from_short_ones() {
        let mut c = NeedleCache::default();
        let mut calls = 0;
        let long = format!("{}x", "a".repeat(MAX_VALUE));
        assert_eq!(c.needles(1, "xa", xs(&mut calls)), &[0]);
        assert_eq!(c.needles(1, &long, xs(&mut calls)), &[MAX_VALUE as u32 % 3]);
        assert_eq!(c.needles(1, &long, xs(&mut calls)), &[MAX_VALUE as u32 % 3]);
        assert_eq!(calls, 2, "a long value is remembered");
        // Many long values: each answered as its own, none evicting a short value.
        for i in 0..3 * LONG_SLOTS {
            let v = format!("{}{}{i}", "x".repeat(i % 4), "a".repeat(MAX_VALUE));
            let want: Vec<u32> = (0..(i % 4).min(3) as u32).collect();
            assert_eq!(c.needles(1, &v, xs(&mut calls)), want.as_slice());
        }
        let before = calls;
        assert_eq!(c.needles(1, "xa", xs(&mut calls)), &[0]);
        assert_eq!(calls, before, "the short value is still remembered");
    }

    #[test]
    fn longer_values_are_scanned_each_time() {
        let mut c = NeedleCache::default();
        let mut calls = 0;
        let long = "x".repeat(MAX_LONG + 1);
        for _ in 0..2 {
            let mut found = c.needles(1, &long, xs(&mut calls)).to_vec();
            found.sort_unstable();
            found.dedup();
            assert_eq!(found, [0, 1, 2]);
        }
        assert_eq!(calls, 2);
    }
}
