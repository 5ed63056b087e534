//! The results summary: what a scan found, counted once from the timeline rows and
//! shown on the terminal (coloured when standard error is one) and in the HTML report.

use scanner_engine::detect_info::Origin;
use scanner_engine::input::InputFile;
use scanner_engine::time::TimeFormat;
use scanner_engine::{DetectInfo, ScanStats};
use scanner_rules::{Level, RuleSet};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::time::Duration;

/// How many entries the "top" lists hold.
pub const TOP: usize = 5;

/// One level's counts.
#[derive(Debug, Clone, Default)]
pub struct LevelSummary {
    /// Detections.
    pub total: usize,
    /// Distinct rules that fired.
    pub unique: usize,
    /// Rule titles with the most detections, most first.
    pub top_alerts: Vec<(String, usize)>,
    /// Dates (in the timeline's zone) with the most detections, most first.
    pub top_dates: Vec<(String, usize)>,
    /// Computers with the most detections, most first.
    pub top_computers: Vec<(String, usize)>,
}

/// Everything the summary shows.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Files scanned, bytes, records.
    pub stats: ScanStats,
    /// Files left out because no rule uses their channel.
    pub skipped_files: usize,
    /// Distinct records that at least one rule matched.
    pub events_with_hits: u64,
    /// Detections (after `-X`).
    pub detections: usize,
    /// Distinct rules that fired.
    pub unique: usize,
    /// Per level, indexed by `Level as usize`.
    pub levels: [LevelSummary; 5],
    /// Dates with the most detections, all levels.
    pub top_dates: Vec<(String, usize)>,
    /// First and last detection time, formatted.
    pub first: Option<String>,
    /// Last detection time, formatted.
    pub last: Option<String>,
    /// Errors grouped by input file (the file, then its messages), in file order.
    pub errors: Vec<(String, Vec<String>)>,
    /// Wall time of the whole run.
    pub elapsed: Duration,
}

/// The level of a row's rule.
pub fn level_of(set: &RuleSet, r: &DetectInfo) -> Level {
    if r.correlation {
        set.correlations[r.rule as usize].meta.level
    } else {
        set.rules[r.rule as usize].meta.level
    }
}

fn title_of<'a>(set: &'a RuleSet, r: &DetectInfo) -> &'a str {
    if r.correlation {
        &set.correlations[r.rule as usize].meta.title
    } else {
        &set.rules[r.rule as usize].meta.title
    }
}

fn top(counts: HashMap<String, usize>) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(TOP);
    v
}

/// Groups error messages by the input file they start with; others go under `-`.
pub fn group_errors(files: &[InputFile], errors: &[String]) -> Vec<(String, Vec<String>)> {
    let mut names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    // Longest first, so that a file is not taken for another whose name is its prefix.
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for e in errors {
        let (file, msg) = match names
            .iter()
            .find(|n| e.starts_with(n.as_str()) && e[n.len()..].starts_with(": "))
        {
            Some(n) => (n.clone(), e[n.len() + 2..].to_string()),
            None => match e.split_once(": ") {
                Some((f, m)) => (f.to_string(), m.to_string()),
                None => ("-".to_string(), e.clone()),
            },
        };
        match groups.iter_mut().find(|(f, _)| *f == file) {
            Some((_, v)) => v.push(msg),
            None => groups.push((file, vec![msg])),
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}

impl Summary {
    /// Counts `rows` (sorted by time).
    pub fn new(set: &RuleSet, rows: &[DetectInfo], time: &TimeFormat) -> Summary {
        let mut s = Summary::default();
        let mut hit_records: HashSet<(u32, u64)> = HashSet::new();
        let mut rules: HashSet<(bool, u32)> = HashSet::new();
        let mut per_level_rules: [HashSet<(bool, u32)>; 5] = Default::default();
        let mut alerts: [HashMap<String, usize>; 5] = Default::default();
        let mut dates: [HashMap<String, usize>; 5] = Default::default();
        let mut computers: [HashMap<String, usize>; 5] = Default::default();
        let mut all_dates: HashMap<String, usize> = HashMap::new();
        for r in rows {
            let l = level_of(set, r) as usize;
            if let Origin::Record { file, record_id } = r.origin {
                hit_records.insert((file, record_id));
            }
            rules.insert((r.correlation, r.rule));
            per_level_rules[l].insert((r.correlation, r.rule));
            s.levels[l].total += 1;
            *alerts[l].entry(title_of(set, r).to_string()).or_default() += 1;
            let d = time.date(r.time);
            *all_dates.entry(d.clone()).or_default() += 1;
            *dates[l].entry(d).or_default() += 1;
            for c in r.computer.split(scanner_engine::details::SEP) {
                *computers[l].entry(c.to_string()).or_default() += 1;
            }
        }
        for l in 0..5 {
            s.levels[l].unique = per_level_rules[l].len();
            s.levels[l].top_alerts = top(std::mem::take(&mut alerts[l]));
            s.levels[l].top_dates = top(std::mem::take(&mut dates[l]));
            s.levels[l].top_computers = top(std::mem::take(&mut computers[l]));
        }
        s.top_dates = top(all_dates);
        s.events_with_hits = hit_records.len() as u64;
        s.detections = rows.len();
        s.unique = rules.len();
        s.first = rows.iter().map(|r| r.time).min().map(|t| time.format(t));
        s.last = rows.iter().map(|r| r.time).max().map(|t| time.format(t));
        s
    }

    /// The summary as terminal text; `colour` adds ANSI colours per level.
    pub fn render(&self, colour: bool) -> String {
        let paint = |l: Level, text: &str| -> String {
            if !colour {
                return text.to_string();
            }
            let code = match l {
                Level::Critical => "1;31",
                Level::High => "33",
                Level::Medium => "93",
                Level::Low => "32",
                Level::Informational => "37",
            };
            format!("\x1b[{code}m{text}\x1b[0m")
        };
        let bold = |t: &str| {
            if colour {
                format!("\x1b[1m{t}\x1b[0m")
            } else {
                t.to_string()
            }
        };
        let pct = |n: usize, of: usize| {
            if of == 0 {
                0.0
            } else {
                n as f64 * 100.0 / of as f64
            }
        };
        let mut o = String::new();
        let _ = writeln!(o, "\n{}", bold("Results Summary:"));
        let st = &self.stats;
        let reduced = st.records.saturating_sub(self.events_with_hits);
        let _ = writeln!(
            o,
            "\nEvents with hits / Total events: {} / {} (data reduction: {} events ({:.2}%))",
            group(self.events_with_hits),
            group(st.records),
            group(reduced),
            if st.records == 0 {
                0.0
            } else {
                reduced as f64 * 100.0 / st.records as f64
            }
        );
        let _ = writeln!(
            o,
            "Files scanned: {} ({:.1} MiB){}",
            group(st.files as u64),
            st.bytes as f64 / 1048576.0,
            if self.skipped_files > 0 {
                format!(
                    "; {} skipped (no rule uses their channel; -a scans them)",
                    group(self.skipped_files as u64)
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            o,
            "\nTotal | Unique detections: {} | {}",
            group(self.detections as u64),
            group(self.unique as u64)
        );
        for l in Level::ALL.iter().rev() {
            let s = &self.levels[*l as usize];
            let line = format!(
                "Total | Unique {} detections: {} ({:.2}%) | {} ({:.2}%)",
                l.name(),
                group(s.total as u64),
                pct(s.total, self.detections),
                group(s.unique as u64),
                pct(s.unique, self.unique)
            );
            let _ = writeln!(o, "{}", paint(*l, &line));
        }
        if !self.top_dates.is_empty() {
            let _ = writeln!(o, "\n{}", bold("Dates with most total detections:"));
            let parts: Vec<String> = Level::ALL
                .iter()
                .rev()
                .map(|l| {
                    let d = self.levels[*l as usize].top_dates.first();
                    paint(
                        *l,
                        &match d {
                            Some((d, n)) => format!("{}: {d} ({})", l.name(), group(*n as u64)),
                            None => format!("{}: n/a", l.name()),
                        },
                    )
                })
                .collect();
            let _ = writeln!(o, "{}", parts.join(", "));
            let _ = writeln!(
                o,
                "\n{}",
                bold(&format!("Top {TOP} computers with most detections:"))
            );
            for l in Level::ALL.iter().rev() {
                let c = &self.levels[*l as usize].top_computers;
                if c.is_empty() {
                    continue;
                }
                let list: Vec<String> = c
                    .iter()
                    .map(|(n, k)| format!("{n} ({})", group(*k as u64)))
                    .collect();
                let _ = writeln!(
                    o,
                    "{}",
                    paint(*l, &format!("{}: {}", l.name(), list.join(", ")))
                );
            }
            for l in Level::ALL.iter().rev() {
                let a = &self.levels[*l as usize].top_alerts;
                if a.is_empty() {
                    continue;
                }
                let _ = writeln!(o, "\n{}", paint(*l, &format!("Top {} alerts:", l.name())));
                for (t, n) in a {
                    let _ = writeln!(o, "  {t} ({})", group(*n as u64));
                }
            }
            let _ = writeln!(
                o,
                "\nFirst detection: {}\nLast detection:  {}",
                self.first.as_deref().unwrap_or("n/a"),
                self.last.as_deref().unwrap_or("n/a")
            );
        }
        if !self.errors.is_empty() {
            let n: usize = self.errors.iter().map(|(_, v)| v.len()).sum();
            let _ = writeln!(
                o,
                "\n{}",
                bold(&format!("Input errors: {n} in {} files", self.errors.len()))
            );
            for (f, msgs) in &self.errors {
                for m in msgs.iter().take(3) {
                    let _ = writeln!(o, "  {f}: {m}");
                }
                if msgs.len() > 3 {
                    let _ = writeln!(o, "  {f}: … and {} more errors", msgs.len() - 3);
                }
            }
        }
        let secs = st.elapsed.as_secs_f64();
        let _ = writeln!(
            o,
            "\nScan: {} records in {:.2} s ({:.0} records/s); total time {:.2} s",
            group(st.records),
            secs,
            if secs > 0.0 {
                st.records as f64 / secs
            } else {
                0.0
            },
            self.elapsed.as_secs_f64()
        );
        o
    }
}

/// `1234567` as `1,234,567`.
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Detection counts per level over time: `buckets` equal slices from the first to the
/// last detection. Returns the first time, the slice length in seconds, and per slice
/// the counts indexed by `Level as usize`.
pub fn histogram(
    set: &RuleSet,
    rows: &[DetectInfo],
    buckets: usize,
) -> Option<(jiff::Timestamp, f64, Vec<[usize; 5]>)> {
    let first = rows.iter().map(|r| r.time).min()?;
    let last = rows.iter().map(|r| r.time).max()?;
    let span = (last.as_millisecond() - first.as_millisecond()).max(1) as f64 / 1000.0;
    let buckets = buckets.max(1);
    let width = span / buckets as f64;
    let mut counts = vec![[0usize; 5]; buckets];
    for r in rows {
        let at = (r.time.as_millisecond() - first.as_millisecond()) as f64 / 1000.0;
        let i = ((at / width) as usize).min(buckets - 1);
        counts[i][level_of(set, r) as usize] += 1;
    }
    Some((first, width, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_thousands_and_errors_by_file() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1234567), "1,234,567");
        let files = vec![
            InputFile {
                path: "a/x.evtx".into(),
                size: 1,
            },
            InputFile {
                path: "a/x.evtx.bak.evtx".into(),
                size: 1,
            },
        ];
        let g = group_errors(
            &files,
            &[
                "a/x.evtx: chunk 2: bad".into(),
                "a/x.evtx.bak.evtx: not a readable EVTX file".into(),
                "a/x.evtx: chunk 3: bad".into(),
            ],
        );
        assert_eq!(g.len(), 2);
        assert_eq!(
            g[0],
            (
                "a/x.evtx".into(),
                vec!["chunk 2: bad".into(), "chunk 3: bad".into()]
            )
        );
    }
}
