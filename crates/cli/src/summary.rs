//! The results summary: what a scan found, counted row by row as the timeline is
//! written ([`Tally`]) and shown on the terminal (coloured when standard error is one)
//! and in the HTML report.

mod breakdown;
mod integrity;

pub use breakdown::{ComputerCount, ComputerTactics, RuleCount, RuleFigures, LISTED};
pub use integrity::IntegrityList;

use crate::terminal::safe;
use breakdown::Breakdown;
use jiff::Timestamp;
use scanner_engine::{DetectInfo, IntegrityRule, Origin, RuleRef, ScanStats};
use scanner_input::{collapse_errors, InputError};
use scanner_rules::FxHashMap;
use scanner_rules::{Level, RuleMeta, RuleSet};
use scanner_timeline::{Layout, TimeFormat};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
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
    /// Every rule that fired at this level, most detections first (the HTML report).
    pub rules: Vec<RuleCount>,
    /// Its computers, most detections first, at most [`LISTED`] (the HTML report).
    pub computers: Vec<ComputerCount>,
    /// How many more computers have detections at this level.
    pub computers_left_out: usize,
}

/// Everything the summary shows.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Files scanned, bytes, records.
    pub stats: ScanStats,
    /// Files left out because no rule uses their channel.
    pub skipped_files: usize,
    /// Files met in the folders searched and not read, by extension.
    pub not_read: scanner_input::NotRead,
    /// Distinct records that at least one rule matched.
    pub events_with_hits: u64,
    /// Detections (after `-X`).
    pub detections: usize,
    /// Distinct rules that fired.
    pub unique: usize,
    /// Per level, indexed by `Level as usize`.
    pub levels: [LevelSummary; LEVELS],
    /// Dates with the most detections, all levels.
    pub top_dates: Vec<(String, usize)>,
    /// First and last detection time, formatted.
    pub first: Option<String>,
    /// Last detection time, formatted.
    pub last: Option<String>,
    /// Errors grouped by input file (the file, then its lines), in file order.
    pub errors: Vec<(String, Vec<String>)>,
    /// Input errors in all (a line of `errors` may stand for many).
    pub error_count: usize,
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// The rules loaded (the HTML report).
    pub rule_figures: RuleFigures,
    /// Per computer, the MITRE ATT&CK tactics of the rules that fired on it, at most
    /// [`LISTED`] computers (the HTML report).
    pub tactics: Vec<ComputerTactics>,
    /// How many more computers have tactics.
    pub tactics_left_out: usize,
    /// The kinds of event no loaded rule reads, the most events first (the HTML
    /// report, which counts them).
    pub unread: Vec<crate::coverage::Unread>,
    /// How many more such kinds there are.
    pub unread_left_out: usize,
    /// The integrity findings, with `--integrity` (the HTML report).
    pub integrity: Option<IntegrityList>,
}

/// How many levels there are (`emergency` included).
const LEVELS: usize = Level::ALL.len();

fn top(counts: impl IntoIterator<Item = (String, usize)>) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(TOP);
    v
}

/// Groups input errors by their file, files in name order, each file's lines in the
/// order given; errors of one file that differ only in their position (and the numbers
/// of their text) are one line with their count and range ([`collapse_errors`]).
/// n·log n in the errors.
pub fn group_errors<'e>(
    errors: impl IntoIterator<Item = &'e InputError>,
) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut index: FxHashMap<&Path, usize> = FxHashMap::default();
    for run in collapse_errors(errors) {
        let msg = run.message().to_string();
        match index.get(run.file()) {
            Some(&i) => groups[i].1.push(msg),
            None => {
                index.insert(run.file(), groups.len());
                groups.push((run.file().display().to_string(), vec![msg]));
            }
        }
    }
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups
}

/// Counts one row of `counts[level]` under `key`, allocating the key only when new.
fn bump(map: &mut FxHashMap<String, [usize; LEVELS]>, key: &str, level: usize) {
    match map.get_mut(key) {
        Some(c) => c[level] += 1,
        None => {
            let mut c = [0; LEVELS];
            c[level] = 1;
            map.insert(key.to_string(), c);
        }
    }
}

/// The top entries of one level of per-level counts.
fn top_of(map: &FxHashMap<String, [usize; LEVELS]>, level: usize) -> Vec<(String, usize)> {
    top(map
        .iter()
        .filter(|(_, c)| c[level] > 0)
        .map(|(k, c)| (k.clone(), c[level])))
}

/// The summary's counts, taken one row at a time as the timeline is written (rows in
/// timeline order, after `-X`). It holds counts per rule, date and computer, and the
/// (file, EventRecordID) of each record with a detection: a few bytes per such record,
/// not the rows. A record's rows are neighbours in timeline order, so its key is kept
/// once per run of rows; the keys are sorted and counted once, at the end (a record
/// may still come back at another time).
pub struct Tally<'a> {
    /// The timeline's layout: the rules, and the level a row is shown at.
    layout: &'a Layout<'a>,
    time: &'a TimeFormat,
    detections: usize,
    /// Detections per rule, and per correlation: at the rule's level, and raised (on
    /// a critical system).
    rules: Vec<[usize; 2]>,
    correlations: Vec<[usize; 2]>,
    /// Integrity findings (`--integrity`) per built-in integrity rule, counted as
    /// detections are (not per computer, nor as records with hits).
    integrity: Vec<[usize; 2]>,
    /// The integrity findings listed, once one is met.
    integrity_list: Option<IntegrityList>,
    dates: FxHashMap<String, [usize; LEVELS]>,
    /// Detections per computer, rule and level.
    computers: Breakdown,
    hit_records: Vec<(u32, u64)>,
    /// The last record counted: its rows are neighbours in timeline order.
    last_record: Option<(u32, u64)>,
    first: Option<Timestamp>,
    last: Option<Timestamp>,
    /// The date of the last row, and the times that share it.
    day: Option<Day>,
}

/// A date in the timeline's zone: its text, and its first and next day's first instant.
struct Day {
    text: String,
    start: Timestamp,
    end: Timestamp,
}

impl Day {
    /// The date of `t`; the range is empty when the day's ends cannot be found (near
    /// the ends of time), so that the next time gets its date anew.
    fn of(t: Timestamp, time: &TimeFormat) -> Day {
        let text = time.date(t);
        let z = t.to_zoned(time.zone().clone());
        let range = z.start_of_day().and_then(|start| {
            let end = z.tomorrow()?.start_of_day()?;
            Ok((start.timestamp(), end.timestamp()))
        });
        let (start, end) = range.unwrap_or((t, t));
        Day { text, start, end }
    }

    fn holds(&self, t: Timestamp) -> bool {
        self.start <= t && t < self.end
    }
}

impl<'a> Tally<'a> {
    /// Empty counts for the rows `layout` writes, dated in `time`'s zone.
    pub fn new(layout: &'a Layout<'a>, time: &'a TimeFormat) -> Tally<'a> {
        let set = layout.rules();
        Tally {
            layout,
            time,
            detections: 0,
            rules: vec![[0; 2]; set.rules().len()],
            correlations: vec![[0; 2]; set.correlations().len()],
            integrity: Vec::new(),
            integrity_list: None,
            dates: FxHashMap::default(),
            computers: Breakdown::default(),
            hit_records: Vec::new(),
            last_record: None,
            first: None,
            last: None,
            day: None,
        }
    }

    /// Counts `r`.
    pub fn add(&mut self, r: &DetectInfo) {
        let level = self.layout.level(r);
        let l = level as usize;
        self.detections += 1;
        let set = self.layout.rules();
        let (per_rule, meta) = match r.rule {
            RuleRef::Correlation(i) => (
                self.correlations.get_mut(i as usize),
                set.correlations().get(i as usize).map(|c| &c.meta),
            ),
            RuleRef::Rule(i) => (
                self.rules.get_mut(i as usize),
                set.rules().get(i as usize).map(|r| &r.meta),
            ),
            RuleRef::Integrity(i) => {
                if self.integrity.is_empty() {
                    self.integrity = vec![[0; 2]; IntegrityRule::COUNT];
                }
                let list = self.integrity_list.get_or_insert_with(Default::default);
                list.add(r, self.layout, self.time);
                (
                    self.integrity.get_mut(i.index() as usize),
                    Some(scanner_engine::integrity_meta(i)),
                )
            }
        };
        if let (Some(n), Some(meta)) = (per_rule, meta) {
            n[usize::from(meta.level != level)] += 1;
        }
        let integrity = matches!(r.rule, RuleRef::Integrity(_));
        if let Origin::Record { file, record_id } = r.origin {
            if !integrity && self.last_record != Some((file, record_id)) {
                self.last_record = Some((file, record_id));
                self.hit_records.push((file, record_id));
            }
        }
        let day = match &self.day {
            Some(d) if d.holds(r.time) => d,
            _ => self.day.insert(Day::of(r.time, self.time)),
        };
        bump(&mut self.dates, &day.text, l);
        // A record's computer, or each of a correlation's.
        if integrity {
            // An integrity row has no computer; one no record dates stands at the
            // epoch, which is not a time of the evidence.
            if r.time == scanner_input::missing_timestamp() {
                return;
            }
        } else {
            for c in r.computers() {
                self.computers.add(c, r.rule, set.rules().len(), level);
            }
        }
        self.first = Some(self.first.map_or(r.time, |t| t.min(r.time)));
        self.last = Some(self.last.map_or(r.time, |t| t.max(r.time)));
    }

    /// Detections counted so far.
    pub fn detections(&self) -> usize {
        self.detections
    }

    /// The rule set the rows came from.
    pub fn rules(&self) -> &'a RuleSet {
        self.layout.rules()
    }

    /// Detections per rule and per correlation, in the set's order.
    pub fn per_rule(&self) -> (Vec<usize>, Vec<usize>) {
        let sum = |v: &[[usize; 2]]| v.iter().map(|n| n[0] + n[1]).collect();
        (sum(&self.rules), sum(&self.correlations))
    }

    /// The summary of the rows counted.
    pub fn finish(mut self) -> Summary {
        let mut s = Summary::default();
        let mut alerts: [HashMap<String, usize>; LEVELS] = Default::default();
        let mut rules: [Vec<(usize, &RuleMeta)>; LEVELS] = Default::default();
        let integrity = (0..self.integrity.len() as u32)
            .filter_map(IntegrityRule::from_index)
            .map(|r| -> &'a RuleMeta { scanner_engine::integrity_meta(r) });
        let fired = self
            .rules
            .iter()
            .zip(self.layout.rules().rules().iter().map(|r| &r.meta))
            .chain(
                self.correlations
                    .iter()
                    .zip(self.layout.rules().correlations().iter().map(|c| &c.meta)),
            )
            .chain(self.integrity.iter().zip(integrity))
            .filter(|(n, _)| n[0] + n[1] > 0);
        for (counts, meta) in fired {
            s.unique += 1;
            // A rule fires at its level, and one level up on critical systems.
            for (n, level) in counts.iter().zip([meta.level, meta.level.raised()]) {
                if *n == 0 {
                    continue;
                }
                let l = level as usize;
                s.levels[l].unique += 1;
                s.levels[l].total += n;
                *alerts[l].entry(meta.title.to_string()).or_default() += n;
                rules[l].push((*n, meta));
            }
        }
        let set = self.layout.rules();
        let finished = self.computers.finish(set);
        let levels = alerts.into_iter().zip(rules).zip(finished.computers);
        for (l, ((alerts, rules), computers)) in levels.enumerate() {
            let s = &mut s.levels[l];
            s.top_alerts = top(alerts);
            s.top_dates = top_of(&self.dates, l);
            s.top_computers = computers
                .iter()
                .take(TOP)
                .map(|c| (c.name.clone(), c.detections))
                .collect();
            s.rules = breakdown::every_rule(&rules);
            s.computers = computers;
            s.computers_left_out = finished.computers_left_out[l];
        }
        s.rule_figures = RuleFigures::of(set);
        s.tactics = finished.tactics;
        s.tactics_left_out = finished.tactics_left_out;
        s.top_dates = top(self
            .dates
            .into_iter()
            .map(|(d, c)| (d, c.iter().sum::<usize>())));
        self.hit_records.sort_unstable();
        self.hit_records.dedup();
        s.events_with_hits = self.hit_records.len() as u64;
        s.detections = self.detections;
        s.integrity = self.integrity_list.take().map(IntegrityList::finish);
        s.first = self.first.map(|t| self.time.format(t));
        s.last = self.last.map(|t| self.time.format(t));
        s
    }
}

impl Summary {
    /// The levels the summary lists, highest first: `emergency` only when a row has it
    /// (only `critical_systems.txt` makes it), so that a run without the file prints
    /// what it always did.
    fn shown_levels(&self) -> impl Iterator<Item = &'static Level> + '_ {
        Level::ALL
            .iter()
            .rev()
            .filter(|l| **l != Level::Emergency || self.levels[**l as usize].total > 0)
    }

    /// The summary as terminal text; `colour` adds ANSI colours per level.
    pub fn render(&self, colour: bool) -> String {
        let paint = |l: Level, text: &str| -> String {
            if !colour {
                return text.to_string();
            }
            let code = match l {
                Level::Emergency => "1;97;41",
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
            "\nEvents with hits / Total events: {} / {} (data reduction: {} {} ({:.2}%))",
            group(self.events_with_hits),
            group(st.records),
            group(reduced),
            noun(reduced, "event", "events"),
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
        if let Some(line) = not_read_line(&self.not_read) {
            let _ = writeln!(o, "{line}");
        }
        let _ = writeln!(
            o,
            "\nTotal | Unique detections: {} | {}",
            group(self.detections as u64),
            group(self.unique as u64)
        );
        for l in self.shown_levels() {
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
            let parts: Vec<String> = self
                .shown_levels()
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
                    .map(|(n, k)| format!("{} ({})", safe(n), group(*k as u64)))
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
                    let _ = writeln!(o, "  {} ({})", safe(t), group(*n as u64));
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
            let lines: usize = self.errors.iter().map(|(_, v)| v.len()).sum();
            let n = group(self.error_count.max(lines) as u64);
            let files = self.errors.len() as u64;
            let _ = writeln!(
                o,
                "\n{}",
                bold(&format!(
                    "Input errors: {n} in {} {}",
                    group(files),
                    noun(files, "file", "files")
                ))
            );
            for (f, msgs) in &self.errors {
                let f = safe(f);
                for m in msgs.iter().take(3) {
                    let _ = writeln!(o, "  {f}: {}", safe(m));
                }
                if msgs.len() > 3 {
                    let more = (msgs.len() - 3) as u64;
                    let _ = writeln!(
                        o,
                        "  {f}: … and {more} more {} of errors",
                        noun(more, "line", "lines")
                    );
                }
            }
        }
        let secs = st.elapsed.as_secs_f64();
        let _ = writeln!(
            o,
            "\nScan: {} {} in {:.2} s ({:.0} records/s); total time {:.2} s",
            group(st.records),
            noun(st.records, "record", "records"),
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

/// The line that says which files the folder search met and did not read
/// (`not read: 1,203 files (.txt 800, .log 403)`, the eight most common extensions,
/// then how many files of other extensions), or None when it read them all. An
/// extension is shown through the terminal sanitiser: it is evidence text.
pub fn not_read_line(not_read: &scanner_input::NotRead) -> Option<String> {
    const SHOWN: usize = 8;
    let total = not_read.total();
    if total == 0 {
        return None;
    }
    let exts = not_read.by_extension();
    let mut parts: Vec<String> = exts
        .iter()
        .take(SHOWN)
        .map(|(e, n)| match *e {
            "" => format!("no extension {}", group(*n)),
            e => format!(".{} {}", crate::terminal::safe(e), group(*n)),
        })
        .collect();
    let rest: u64 = exts.iter().skip(SHOWN).map(|(_, n)| n).sum();
    if rest > 0 {
        parts.push(format!("others {}", group(rest)));
    }
    Some(format!(
        "not read: {} {} ({})",
        group(total),
        noun(total, "file", "files"),
        parts.join(", ")
    ))
}

/// Prints [`not_read_line`] to standard error as a note, unless `quiet` (the commands
/// without a summary).
pub fn note_not_read(not_read: &scanner_input::NotRead, quiet: bool) {
    if let Some(line) = not_read_line(not_read).filter(|_| !quiet) {
        eprintln!("note: {line}");
    }
}

/// The noun for `n` things: `one` for 1, else `many` (`1 file`, `2 files`, `0 files`).
pub fn noun<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
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

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::{self, TimeZone};
    use scanner_engine::{CorrelationOrigin, Items};
    use scanner_input::{ErrorKind, Position};
    use scanner_rules::{load, LoadOptions, RuleSource};
    use scanner_timeline::Profile;

    fn row(secs: i64, record_id: u64, computer: &str) -> DetectInfo {
        DetectInfo {
            time: Timestamp::new(secs, 0).unwrap(),
            rule: RuleRef::Rule(0),
            recovered: false,
            origin: Origin::Record { file: 0, record_id },
            computer: computer.into(),
            channel: "Security".into(),
            event_id: "4624".into(),
            provider: "-".into(),
            details: Items::default(),
            extra: None,
            all_fields: None,
            geo: None,
        }
    }

    /// A row at `secs` with a correlation's origin: computers `computers`.
    fn correlated(secs: i64, computers: &[&str]) -> DetectInfo {
        DetectInfo {
            origin: Origin::Correlation(Box::new(CorrelationOrigin {
                computers: Items::of(computers.iter().copied()),
                ..CorrelationOrigin::default()
            })),
            ..row(secs, 0, "")
        }
    }

    #[test]
    fn dates_follow_the_zone_across_midnight_and_records_count_once() {
        let set = load(&[RuleSource::Builtin], &LoadOptions::default());
        // +09:00: 2024-03-04 14:59:59 UTC is the 4th, 15:00:00 the 5th.
        let time = TimeFormat::in_zone(TimeZone::fixed(tz::offset(9)));
        let midnight = 1_709_564_400;
        let layout = Layout::new(&set, &[], time.clone(), Profile::Standard);
        let mut tally = Tally::new(&layout, &time);
        let rows = [
            row(midnight - 1, 1, "a"),
            row(midnight - 1, 1, "a"),
            // Each of a correlation's computers counts.
            correlated(midnight, &["b", "c"]),
            row(midnight + 86_399, 3, "a"),
            correlated(midnight + 86_400, &["b", "c"]),
            // Record 1 again, at another time: still one record.
            row(midnight + 86_400, 1, "a¦b"),
        ];
        for r in &rows {
            tally.add(r);
        }
        let s = tally.finish();
        assert_eq!(s.detections, 6);
        assert_eq!(s.events_with_hits, 2);
        let mut dates = s.top_dates.clone();
        dates.sort();
        assert_eq!(
            dates,
            [
                ("2024-03-04".to_string(), 2),
                ("2024-03-05".to_string(), 2),
                ("2024-03-06".to_string(), 2)
            ]
        );
        let level = set.rules()[0].meta.level as usize;
        let mut computers = s.levels[level].top_computers.clone();
        computers.sort();
        assert_eq!(
            computers,
            [
                ("a".to_string(), 3),
                ("a¦b".to_string(), 1),
                ("b".to_string(), 2),
                ("c".to_string(), 2)
            ]
        );
        // The report's lists: the rule once with all its rows, each computer with the
        // distinct rules that fired on it.
        let rules = &s.levels[level].rules;
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].detections, 6);
        assert_eq!(rules[0].title, set.rules()[0].meta.title.as_str());
        let a = &s.levels[level].computers[0];
        assert_eq!((a.name.as_str(), a.detections, a.rules), ("a", 3, 1));
        assert_eq!(s.levels[level].computers.len(), 4);
        assert_eq!(s.levels[level].computers_left_out, 0);
    }

    #[test]
    fn groups_thousands_and_errors_by_file() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1234567), "1,234,567");
        let bad = |file: &str, chunk| {
            InputError::new(
                file,
                Position::Chunk(chunk),
                ErrorKind::DamagedChunk("bad".into()),
            )
        };
        // A file whose name holds ": " and one named as another's prefix are their own;
        // errors of a file alike but for their chunk are one line.
        let errors = [
            bad("a/x: y.evtx", 2),
            InputError::new("a/x.evtx.bak.evtx", Position::None, ErrorKind::NotEvtx),
            bad("a/x: y.evtx", 3),
            bad("a/x: y.evtx", 5),
            InputError::new("a/x: y.evtx", Position::Chunk(4), ErrorKind::WalkEnded),
        ];
        let g = group_errors(&errors);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].0, "a/x.evtx.bak.evtx");
        assert_eq!(g[1].0, "a/x: y.evtx");
        assert_eq!(
            g[1].1,
            [
                "chunks 2\u{2013}5: bad (3 errors)",
                "chunk 4: the parser's walk ended before it"
            ]
        );
        assert_eq!(format!("{}: {}", g[0].0, g[0].1[0]), errors[1].to_string());
    }
}
