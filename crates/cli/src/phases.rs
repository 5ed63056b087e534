//! The timeline run's phase times and the distribution of its files' scan times, which
//! `--debug` prints at the end of `csv-timeline`, `json-timeline` and `dfir-timeline`.

use scanner_engine::RuleTiming;
use std::time::{Duration, Instant};

/// Wall time of each phase of a timeline run (`timeline_cmd::run`).
#[derive(Debug, Default)]
pub struct PhaseTimes {
    /// Reading and compiling the rules.
    pub load: Duration,
    /// The channel check, and finding the input files where that outlasts the load
    /// (they are looked for while the rules load).
    pub inputs: Duration,
    /// Preparing the scanner and scanning every file (correlations included).
    pub scan: Duration,
    /// Merging, encoding and writing the timeline (and `--rule-stats`).
    pub write: Duration,
    /// The summary, the HTML report and the charts.
    pub report: Duration,
}

/// Times a phase: runs `f` and adds its wall time to `slot`.
pub fn timed<T>(slot: &mut Duration, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    *slot += t.elapsed();
    out
}

impl PhaseTimes {
    /// The two `--debug` lines: the phases, then (when the scan timed its files) the
    /// per-file scan times as count, mean, 90th, 95th and 99th percentile and maximum.
    pub fn lines(&self, files: Option<&RuleTiming>) -> Vec<String> {
        let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
        let mut out = vec![format!(
            "phases: load {}, inputs {}, scan {}, write {}, report {}",
            s(self.load),
            s(self.inputs),
            s(self.scan),
            s(self.write),
            s(self.report)
        )];
        if let Some(t) = files {
            out.push(format!(
                "file scan times: {} files, avg {}, TP90 {}, TP95 {}, TP99 {}, max {}",
                t.count,
                ns(t.mean()),
                ns(t.percentile(90.0) as f64),
                ns(t.percentile(95.0) as f64),
                ns(t.percentile(99.0) as f64),
                ns(t.max_ns as f64)
            ));
        }
        out
    }
}

/// Nanoseconds in the unit that keeps them readable (three significant digits or so).
fn ns(v: f64) -> String {
    let (x, unit) = if v >= 1e9 {
        (v / 1e9, "s")
    } else if v >= 1e6 {
        (v / 1e6, "ms")
    } else if v >= 1e3 {
        (v / 1e3, "µs")
    } else {
        (v, "ns")
    };
    format!("{x:.2} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_every_phase_and_the_distribution() {
        let p = PhaseTimes {
            load: Duration::from_millis(350),
            scan: Duration::from_millis(1200),
            ..PhaseTimes::default()
        };
        assert_eq!(p.lines(None).len(), 1);
        assert_eq!(
            p.lines(None)[0],
            "phases: load 0.350 s, inputs 0.000 s, scan 1.200 s, write 0.000 s, report 0.000 s"
        );
        let mut t = RuleTiming::default();
        for ms in [1u64, 2, 3, 40] {
            t.add(ms * 1_000_000);
        }
        let l = p.lines(Some(&t));
        assert!(
            l[1].starts_with("file scan times: 4 files, avg 11.50 ms, TP90 "),
            "{}",
            l[1]
        );
        assert!(l[1].ends_with(", max 40.00 ms"), "{}", l[1]);
    }

    #[test]
    fn units_follow_the_magnitude() {
        assert_eq!(ns(850.0), "850.00 ns");
        assert_eq!(ns(1_500.0), "1.50 µs");
        assert_eq!(ns(2_250_000.0), "2.25 ms");
        assert_eq!(ns(3e9), "3.00 s");
    }
}
