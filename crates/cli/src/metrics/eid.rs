//! `eid-metrics`: events per (channel, EventID), their share of all records, and the
//! event's title from `channel_eid_info.txt`.

use super::table::{Cell, Quote, Table};
use super::{run_with, thousands, ComputerFilter, Rec, Run, Tally};
use crate::args::EidMetricsArgs;
use crate::terminal::safe;
use scanner_rules::FxHashMap;
use std::collections::HashSet;

/// The columns, as Hayabusa 3.9.0 names them.
const HEADER: &[&str] = &["Total", "%", "Channel", "ID", "Event"];

/// What `eid-metrics` reads from the command line while counting.
pub struct Opts {
    computers: ComputerFilter,
    dedupe: bool,
}

/// One record kept for `-X`: its EventRecordID and time, and its (channel, EventID).
type Seen = ((String, String), (String, String));

/// Counts of one file.
#[derive(Default)]
pub struct EidTally {
    /// lowercase channel → lowercase EventID → records.
    counts: FxHashMap<String, FxHashMap<String, u64>>,
    span: super::span::Span,
    /// With `-X`, every counted record, to drop those seen in an earlier file.
    seen: Vec<Seen>,
}

impl Tally for EidTally {
    type Opts = Opts;

    fn add(&mut self, r: &Rec<'_>, opts: &Opts) {
        self.span.add(r.time());
        if !opts.computers.keeps(r.computer()) {
            return;
        }
        let Some(eid) = r.event_id_lower() else {
            return;
        };
        let channel = r.channel_lower().unwrap_or("-");
        if opts.dedupe {
            let id = r.record_id().unwrap_or_default().to_string();
            let time = r.system_time().unwrap_or_default().to_string();
            self.seen
                .push(((id, time), (channel.to_string(), eid.to_string())));
            return;
        }
        bump(&mut self.counts, channel, eid, 1);
    }

    fn merge(&mut self, other: EidTally) {
        for (channel, ids) in other.counts {
            for (eid, n) in ids {
                bump(&mut self.counts, &channel, &eid, n);
            }
        }
        self.span.merge(other.span);
        self.seen.extend(other.seen);
    }
}

/// Adds `n` to (channel, EventID), allocating the keys only when new.
fn bump(counts: &mut FxHashMap<String, FxHashMap<String, u64>>, channel: &str, eid: &str, n: u64) {
    let ids = match counts.get_mut(channel) {
        Some(ids) => ids,
        None => counts.entry(channel.to_string()).or_default(),
    };
    match ids.get_mut(eid) {
        Some(c) => *c += n,
        None => {
            ids.insert(eid.to_string(), n);
        }
    }
}

/// `eid-metrics`.
pub fn run(a: &EidMetricsArgs) -> i32 {
    run_with(|| {
        let mut run = Run::start(&a.common)?;
        let opts = Opts {
            computers: ComputerFilter::new(&a.common),
            dedupe: a.remove_duplicates,
        };
        let (per_file, _) = run.walk::<EidTally>(opts);
        // Files in path order, so that with -X the first copy of a record is the one kept.
        let mut all = EidTally::default();
        let mut seen = HashSet::new();
        for mut t in per_file {
            for (key, (channel, eid)) in std::mem::take(&mut t.seen) {
                if seen.insert(key) {
                    bump(&mut all.counts, &channel, &eid, 1);
                }
            }
            all.merge(t);
        }
        if !a.common.report.console.quiet {
            eprintln!("Total Event Records: {}", thousands(all.span.records));
            for (name, t) in [("First", all.span.first), ("Last", all.span.last)] {
                if let Some(t) = t {
                    eprintln!("{name} Timestamp: {}", safe(&run.time.format(t)));
                }
            }
        }
        let table = rows(&run, &all);
        run.finish(&table)
    })
}

/// The rows: most records first; ties by channel, then EventID (numerically).
fn rows(run: &Run<'_>, all: &EidTally) -> Table {
    let mut rows: Vec<(u64, String, &str, &str)> = Vec::new();
    for (channel, ids) in &all.counts {
        let shown = run.config.channel(channel);
        for (eid, &n) in ids {
            rows.push((n, shown.clone(), channel.as_str(), eid.as_str()));
        }
    }
    let numeric = |e: &str| e.parse::<u64>().unwrap_or(u64::MAX);
    rows.sort_by(|x, y| {
        y.0.cmp(&x.0)
            .then_with(|| x.1.cmp(&y.1))
            .then_with(|| numeric(x.3).cmp(&numeric(y.3)))
            .then_with(|| x.3.cmp(y.3))
    });
    let mut table = Table::new(HEADER, Quote::Necessary);
    for (n, shown, channel, eid) in rows {
        let title = run.config.title(channel, eid).unwrap_or("Unknown");
        table.push(vec![
            Cell::Number(n),
            Cell::Text(percent(n, all.span.records)),
            Cell::Text(shown.trim().to_string()),
            Cell::Text(eid.replace('"', "")),
            Cell::Text(title.to_string()),
        ]);
    }
    table
}

/// `n` as a share of `total`, one decimal, computed in `f32` as Hayabusa does (so the
/// same halves round the same way).
fn percent(n: u64, total: u64) -> String {
    let rate = n as f32 / total.max(1) as f32;
    format!("{:.1}%", (rate * 1000.0).round() / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_as_hayabusa() {
        assert_eq!(percent(1491, 7847), "19.0%");
        assert_eq!(percent(1, 7847), "0.0%");
        assert_eq!(percent(1, 1), "100.0%");
        assert_eq!(percent(0, 0), "0.0%");
    }
}
