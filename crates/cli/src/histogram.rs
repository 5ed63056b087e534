//! Detection counts per level over time, for `-T` and the HTML report's chart: the span
//! from the first to the last detection cut into equal slices, counted row by row as the
//! timeline is written (the span is known before the first row, from the scan).

use jiff::Timestamp;
use scanner_rules::Level;

/// Counts per slice, indexed by `Level as usize`.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// The first detection's time (the start of the first slice).
    pub first: Timestamp,
    /// The last detection's time.
    pub last: Timestamp,
    /// Slice length in seconds.
    pub width: f64,
    /// Per slice, the counts per level.
    pub counts: Vec<[usize; Level::ALL.len()]>,
}

impl Histogram {
    /// `buckets` empty slices from `first` to `last`.
    pub fn new(first: Timestamp, last: Timestamp, buckets: usize) -> Histogram {
        let span = (last.as_millisecond() - first.as_millisecond()).max(1) as f64 / 1000.0;
        let buckets = buckets.max(1);
        Histogram {
            first,
            last,
            width: span / buckets as f64,
            counts: vec![[0; Level::ALL.len()]; buckets],
        }
    }

    /// Counts a detection of `level` at `t`.
    pub fn add(&mut self, t: Timestamp, level: Level) {
        let at = (t.as_millisecond() - self.first.as_millisecond()) as f64 / 1000.0;
        let last = self.counts.len() - 1;
        let i = ((at / self.width) as usize).min(last);
        self.counts[i][level as usize] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_span_first_to_last() {
        let t = |s| Timestamp::from_second(s).unwrap();
        let mut h = Histogram::new(t(100), t(200), 10);
        assert_eq!(h.width, 10.0);
        h.add(t(100), Level::High);
        h.add(t(109), Level::High);
        h.add(t(110), Level::Low);
        h.add(t(200), Level::Critical);
        assert_eq!(h.counts[0][Level::High as usize], 2);
        assert_eq!(h.counts[1][Level::Low as usize], 1);
        assert_eq!(h.counts[9][Level::Critical as usize], 1);
        // One instant: one slice of a millisecond's span holds everything.
        let mut one = Histogram::new(t(5), t(5), 3);
        one.add(t(5), Level::Low);
        assert_eq!(one.counts[0][Level::Low as usize], 1);
    }
}
