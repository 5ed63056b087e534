//! Per-rule evaluation cost, for rule authors: how often each rule was evaluated and how
//! long that took (mean, 90th/95th/99th percentile, maximum, in nanoseconds).
//!
//! Off by default; when off the detection loop takes a path without any timing, so the
//! overhead is nil. When on, each evaluation is timed and counted in a log-scale
//! histogram per rule (8 sub-buckets per power of two: percentiles within about 9%).

const SUB: u32 = 8;
const BUCKETS: usize = 64 * SUB as usize;

/// Timings of one rule.
#[derive(Debug, Clone)]
pub struct RuleTiming {
    /// Evaluations.
    pub count: u64,
    /// Total nanoseconds.
    pub total_ns: u64,
    /// Longest evaluation.
    pub max_ns: u64,
    hist: Box<[u32; BUCKETS]>,
}

impl Default for RuleTiming {
    fn default() -> Self {
        RuleTiming {
            count: 0,
            total_ns: 0,
            max_ns: 0,
            hist: Box::new([0; BUCKETS]),
        }
    }
}

fn bucket(ns: u64) -> usize {
    if ns < u64::from(SUB) {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros();
    let shift = msb - SUB.trailing_zeros();
    let sub = ((ns >> shift) as u32) & (SUB - 1);
    ((msb - SUB.trailing_zeros() + 1) * SUB + sub) as usize
}

/// The smallest value that falls into bucket `b`.
fn bucket_floor(b: usize) -> u64 {
    let b = b as u32;
    if b < SUB {
        return u64::from(b);
    }
    let group = b / SUB - 1;
    let sub = u64::from(b % SUB);
    (u64::from(SUB) + sub) << group
}

impl RuleTiming {
    /// Records one evaluation.
    #[inline]
    pub fn add(&mut self, ns: u64) {
        self.count += 1;
        self.total_ns += ns;
        self.max_ns = self.max_ns.max(ns);
        self.hist[bucket(ns).min(BUCKETS - 1)] += 1;
    }

    fn merge(&mut self, o: &RuleTiming) {
        self.count += o.count;
        self.total_ns += o.total_ns;
        self.max_ns = self.max_ns.max(o.max_ns);
        for (a, b) in self.hist.iter_mut().zip(o.hist.iter()) {
            *a += b;
        }
    }

    /// The `p`-th percentile (0-100), as the lower bound of its bucket.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (b, &n) in self.hist.iter().enumerate() {
            seen += u64::from(n);
            if seen >= rank {
                return bucket_floor(b).min(self.max_ns);
            }
        }
        self.max_ns
    }

    /// Mean nanoseconds.
    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total_ns as f64 / self.count as f64
        }
    }
}

/// Timings of every rule, by rule index.
#[derive(Debug, Clone, Default)]
pub struct RuleStats {
    /// Per rule, indexed like the rule set.
    pub rules: Vec<RuleTiming>,
}

impl RuleStats {
    /// Empty statistics for `n` rules.
    pub fn new(n: usize) -> Self {
        RuleStats {
            rules: vec![RuleTiming::default(); n],
        }
    }

    /// Adds another worker's statistics.
    pub fn merge(&mut self, o: &RuleStats) {
        if self.rules.len() < o.rules.len() {
            self.rules.resize(o.rules.len(), RuleTiming::default());
        }
        for (a, b) in self.rules.iter_mut().zip(&o.rules) {
            a.merge(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_floors_bound_values() {
        let mut last = 0;
        for ns in [
            0u64,
            1,
            7,
            8,
            9,
            15,
            16,
            17,
            100,
            1000,
            123_456,
            u64::MAX / 2,
        ] {
            let b = bucket(ns);
            assert!(b >= last, "bucket({ns}) = {b} < {last}");
            assert!(
                bucket_floor(b) <= ns,
                "floor of bucket({ns}) = {} > {ns}",
                bucket_floor(b)
            );
            assert!(
                ns < 8 || (ns as f64) < bucket_floor(b) as f64 * 1.13,
                "bucket too wide at {ns}"
            );
            last = b;
        }
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut t = RuleTiming::default();
        for ns in 1..=1000u64 {
            t.add(ns);
        }
        assert_eq!(t.count, 1000);
        assert_eq!(t.max_ns, 1000);
        assert!((t.mean() - 500.5).abs() < 1e-9);
        let p90 = t.percentile(90.0);
        assert!((820..=900).contains(&p90), "p90 {p90}");
        let p99 = t.percentile(99.0);
        assert!((900..=990).contains(&p99), "p99 {p99}");
        assert!(
            t.percentile(50.0) <= p90 && p90 <= t.percentile(95.0) && t.percentile(95.0) <= p99
        );
    }
}
