//! A worker's memo of which prefilter needles a field value holds: values repeat from
//! record to record (images, users, logon types), and looking one up costs a hash and a
//! comparison where scanning it costs an automaton step per byte and a report per
//! occurrence of every needle.
//!
//! Direct-mapped: a slot holds the last value hashed to it, with the automaton it was
//! scanned by and the needles found (each once). Slot buffers are reused, so nothing is
//! allocated once they are warm; long values, which rarely repeat, are scanned as they
//! come.

use crate::fields::FxHasher;
use std::hash::Hasher;

/// Slots (a power of two).
const SLOTS: usize = 4096;
/// Longest value kept.
const MAX_VALUE: usize = 256;

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
        if value.len() > MAX_VALUE {
            self.passing.clear();
            scan(value, &mut self.passing);
            return &self.passing;
        }
        if self.slots.is_empty() {
            self.slots.resize_with(SLOTS, Slot::default);
        }
        let mut h = FxHasher::default();
        h.write_usize(owner);
        h.write(value.as_bytes());
        let slot = &mut self.slots[h.finish() as usize & (SLOTS - 1)];
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
    fn long_values_are_scanned_each_time() {
        let mut c = NeedleCache::default();
        let mut calls = 0;
        let long = "x".repeat(MAX_VALUE + 1);
        for _ in 0..2 {
            let mut found = c.needles(1, &long, xs(&mut calls)).to_vec();
            found.sort_unstable();
            found.dedup();
            assert_eq!(found, [0, 1, 2]);
        }
        assert_eq!(calls, 2);
    }
}
