//! Rows put in timeline order by sorting their keys, not the rows: a row is about 200
//! bytes, its [`DetectInfo::sort_key`] and position 40, and a comparison sort moves
//! each element about log₂ n times. The keys are sorted (ties broken by the rows'
//! other fields, as [`DetectInfo::timeline_cmp`] breaks them), then each row is moved
//! once into its place.

use crate::row::{DetectInfo, RuleRef};
use rayon::prelude::*;

/// A row's [`DetectInfo::sort_key`].
type Key = (jiff::Timestamp, u32, u64, RuleRef);

/// Sorts `rows` as `sort_unstable_by(DetectInfo::timeline_cmp)` would (rows equal under
/// it may come in either order; they print alike), the keys on the rayon pool when
/// `parallel`.
pub(crate) fn sort_rows(rows: &mut [DetectInfo], parallel: bool) {
    let Ok(len) = u32::try_from(rows.len()) else {
        // Past 4 billion rows (far beyond any memory bound): the rows themselves.
        rows.par_sort_unstable_by(DetectInfo::timeline_cmp);
        return;
    };
    let mut keys: Vec<(Key, u32)> = rows
        .iter()
        .zip(0..len)
        .map(|(r, at)| (r.sort_key(), at))
        .collect();
    let cmp = |a: &(Key, u32), b: &(Key, u32)| {
        a.0.cmp(&b.0)
            .then_with(|| rows[a.1 as usize].timeline_cmp(&rows[b.1 as usize]))
    };
    if parallel {
        keys.par_sort_unstable_by(cmp);
    } else {
        keys.sort_unstable_by(cmp);
    }
    let mut order: Vec<u32> = keys.into_iter().map(|(_, at)| at).collect();
    permute(rows, &mut order);
}

/// Puts at each position `i` of `rows` the row that was at `order[i]` (a permutation of
/// the positions), moving each row once, cycle by cycle (`order` is left as the
/// identity, which marks the positions done).
fn permute<T>(rows: &mut [T], order: &mut [u32]) {
    for start in 0..order.len() {
        let mut at = start;
        loop {
            let from = order[at] as usize;
            order[at] = at as u32;
            // Back where the cycle began (at once for a position already done).
            if from == start {
                break;
            }
            rows.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::tests::{debug, row};

    #[test]
    fn the_order_is_that_of_sorting_the_rows() {
        for n in [0, 1, 2, 3, 10, 1000, 5000] {
            // Shuffled by a multiplier coprime to n, with ties in every part.
            let mut rows: Vec<DetectInfo> = (0..n).map(|i| row(i * 7919 % n.max(1))).collect();
            let mut expected = rows.clone();
            expected.sort_by(DetectInfo::timeline_cmp);
            for parallel in [false, true] {
                let mut got = rows.clone();
                sort_rows(&mut got, parallel);
                assert_eq!(debug(&got), debug(&expected), "n = {n}");
            }
            rows.reverse();
            sort_rows(&mut rows, true);
            assert_eq!(debug(&rows), debug(&expected), "n = {n}, reversed");
        }
    }

    #[test]
    fn permute_moves_each_row_to_its_place() {
        let mut rows = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        // Two cycles (0 → 2 → 4, 1 → 5) and a fixed point (3).
        let mut order = vec![2, 5, 4, 3, 0, 1];
        permute(&mut rows, &mut order);
        assert_eq!(rows, ['c', 'f', 'e', 'd', 'a', 'b']);
        assert_eq!(order, [0, 1, 2, 3, 4, 5]);
    }
}
