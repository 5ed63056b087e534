//! `coverage`: which kinds of event the evidence holds and which the loaded rules can
//! read. One scan with the timeline's flags (`ScanSetup`), every file read (the channel
//! check only named), counting per (Channel, Provider, EventID) the records, computers,
//! first and last time and detections (`scanner_engine::TypeTally`); the rule index gives
//! the rules that can read each kind. Rows: one per kind (`read` or `unread`), one per
//! enabled rule whose Channel/EventID no record has (`rule without events`), one per
//! file the timeline's channel check would skip (`skipped file`). Also the line a
//! timeline run ends with ([`summary_line`]).

use crate::args::CoverageArgs;
use crate::exit;
use crate::metrics::table::{Cell, Quote, Table};
use crate::scan_setup::ScanSetup;
use crate::terminal::safe;
use scanner_engine::{ScanStats, TypeTally};
use scanner_input::{InputFile, InputKind};
use scanner_rules::RuleSet;
use scanner_timeline::{Profile, TimeFormat};
use std::io::Write;
use std::path::Path;

/// The columns.
const HEADER: &[&str] = &[
    "Status",
    "Channel",
    "Provider",
    "EventID",
    "Events",
    "Computers",
    "FirstTime",
    "LastTime",
    "Rules",
    "ChannelLessRules",
    "Detections",
    "RuleTitle",
    "RuleID",
    "RulePath",
    "File",
];

/// `coverage: 18.0% of the 1,234 events read are of kinds (Channel, EventID) no loaded
/// rule reads, 12.0% of kinds only rules without a channel read; `scanner coverage`
/// lists them`, when any event was read.
pub fn summary_line(stats: &ScanStats) -> Option<String> {
    let read = stats.records + stats.recovered;
    let share = |n: u64| 100.0 * n as f64 / read as f64;
    (read > 0).then(|| {
        format!(
            "coverage: {:.1}% of the {} events read are of kinds (Channel, EventID) no loaded \
             rule reads, {:.1}% of kinds only rules without a channel read; `scanner coverage` \
             lists them",
            share(stats.uncovered),
            crate::summary::group(read),
            share(stats.channel_less_only)
        )
    })
}

/// A kind of event no loaded rule reads (the HTML report's coverage section).
#[derive(Debug, Clone, Default)]
pub struct Unread {
    /// `Channel`.
    pub channel: String,
    /// The provider's name.
    pub provider: String,
    /// `EventID`.
    pub event_id: String,
    /// Records of this kind.
    pub events: u64,
}

/// The kinds of `types` no rule of `set` reads, the most events first, at most `n`;
/// and how many more there are.
pub fn unread(set: &RuleSet, types: &TypeTally, n: usize) -> (Vec<Unread>, usize) {
    let mut v: Vec<Unread> = types
        .types()
        .into_iter()
        .filter(|(ch, _, eid, _)| rules_reading(set, ch, eid) == (0, 0))
        .map(|(ch, p, e, c)| Unread {
            channel: ch.to_string(),
            provider: p.to_string(),
            event_id: e.to_string(),
            events: c.events,
        })
        .collect();
    v.sort_by_key(|u| std::cmp::Reverse(u.events));
    let more = v.len().saturating_sub(n);
    v.truncate(n);
    (v, more)
}

/// One row: the columns of [`HEADER`], empty where they do not apply.
#[derive(Default)]
struct Row {
    status: &'static str,
    channel: String,
    provider: String,
    event_id: String,
    events: Option<u64>,
    computers: Option<u64>,
    first: Option<String>,
    last: Option<String>,
    rules: Option<u64>,
    channel_less: Option<u64>,
    detections: Option<u64>,
    rule_title: String,
    rule_id: String,
    rule_path: String,
    file: String,
}

/// `coverage`.
pub fn run(a: &CoverageArgs) -> i32 {
    match run_checked(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", safe(&e));
            exit::FATAL
        }
    }
}

fn run_checked(a: &CoverageArgs) -> Result<i32, String> {
    let t = &a.timeline;
    let setup = ScanSetup::new(t)?.counting_types();
    let output = t.output.as_deref().filter(|p| *p != Path::new("-"));
    if let Some(p) = output {
        crate::output::check_target(p, t.overwrite.clobber)?;
    }
    setup.start_threads()?;
    let choice = setup.rule_choice();
    let set = setup.load_rules(&choice)?;
    if !t.quiet {
        crate::rules_cmd::print_report(&set, t.rules.show_errors);
    }
    let found = setup.find_inputs()?;
    let (files, mut errors) = (found.files, found.errors);
    // What the timeline's channel check would leave out (all files are read here).
    let skipped: Vec<(InputFile, Option<String>)> =
        if t.input.kind() == InputKind::Evtx && !t.scan_all_files {
            let (_, left) = scanner_input::split_by_channel(files.clone(), &set);
            left.into_iter()
                .map(|f| {
                    let ch = scanner_input::first_channel(&f.path);
                    (f, ch)
                })
                .collect()
        } else {
            Vec::new()
        };
    let (scanner, result, _) = setup.scan(Profile::Minimal, set, &files, false, false)?;
    errors.extend(result.errors);
    let empty = TypeTally::default();
    let types = result.coverage.as_ref().unwrap_or(&empty);
    let rows = rows(scanner.rules(), types, &skipped, setup.time());
    let write = |out: &mut dyn Write, terminal: bool| -> std::io::Result<()> {
        if a.json_output {
            write_json(out, &rows)
        } else {
            let table = table(&rows);
            if terminal {
                table.write_text(out)
            } else {
                table.write_csv(out, t.excel_safe)
            }
        }
    };
    if !crate::output::write_report(output, t.overwrite.clobber, write)? {
        return Ok(exit::OK);
    }
    if !t.quiet {
        let count = |s: &str| rows.iter().filter(|r| r.status == s).count();
        eprintln!(
            "coverage: {} kinds of event ({} no loaded rule reads, {} only rules without a \
             channel read), {} rules without events, {} files the channel check skips",
            count("read") + count("unread") + count("channel-less rules only"),
            count("unread"),
            count("channel-less rules only"),
            count("rule without events"),
            count("skipped file")
        );
        if let Some(line) = summary_line(&result.stats) {
            eprintln!("{line}");
        }
    }
    Ok(exit::reporting("input error", &errors))
}

/// The rows: kinds of event (by Channel, Provider, EventID), rules without events (in
/// rule-set order), skipped files (in file order).
fn rules_reading(set: &RuleSet, channel: &str, event_id: &str) -> (u64, u64) {
    let (with, without) = set.candidate_rules(&channel.to_lowercase(), event_id);
    (with as u64, without as u64)
}

fn rows(
    set: &RuleSet,
    types: &TypeTally,
    skipped: &[(InputFile, Option<String>)],
    time: &TimeFormat,
) -> Vec<Row> {
    let mut rows = Vec::new();
    let kinds = types.types();
    for (ch, provider, eid, c) in &kinds {
        let (with, without) = rules_reading(set, ch, eid);
        rows.push(Row {
            status: match (with, without) {
                (0, 0) => "unread",
                (0, _) => "channel-less rules only",
                _ => "read",
            },
            channel: ch.to_string(),
            provider: provider.to_string(),
            event_id: eid.to_string(),
            events: Some(c.events),
            computers: Some(c.computers.len() as u64),
            first: c.first.map(|t| time.format(t)),
            last: c.last.map(|t| time.format(t)),
            rules: Some(with),
            channel_less: Some(without),
            detections: Some(c.detections),
            ..Row::default()
        });
    }
    // Each (lowercase Channel, EventID) met, for the rules' constraints.
    let met: Vec<(String, &str)> = kinds
        .iter()
        .map(|(ch, _, eid, _)| (ch.to_lowercase(), *eid))
        .collect();
    for (i, rule) in set.rules().iter().enumerate() {
        if !set.emits().get(i).copied().unwrap_or(true) {
            continue;
        }
        let c = rule.constraint();
        let fits = |(ch, eid): &(String, &str)| {
            c.channels
                .as_ref()
                .is_none_or(|v| v.iter().any(|x| x == ch))
                && c.event_ids
                    .as_ref()
                    .is_none_or(|v| v.iter().any(|x| x == eid))
        };
        if met.iter().any(fits) {
            continue;
        }
        let list = |v: &Option<Vec<String>>| v.as_ref().map_or(String::new(), |v| v.join(" "));
        rows.push(Row {
            status: "rule without events",
            channel: list(&c.channels),
            event_id: list(&c.event_ids),
            rule_title: rule.meta.title.to_string(),
            rule_id: rule.meta.id.to_string(),
            rule_path: rule.meta.path.to_string(),
            ..Row::default()
        });
    }
    for (f, ch) in skipped {
        rows.push(Row {
            status: "skipped file",
            channel: ch.clone().unwrap_or_default(),
            file: f.path.display().to_string(),
            ..Row::default()
        });
    }
    rows
}

fn table(rows: &[Row]) -> Table {
    let mut t = Table::new(HEADER, Quote::Necessary);
    let n = |v: Option<u64>| v.map_or(Cell::Text(String::new()), Cell::Number);
    for r in rows {
        t.push(vec![
            Cell::Text(r.status.to_string()),
            Cell::Text(r.channel.clone()),
            Cell::Text(r.provider.clone()),
            Cell::Text(r.event_id.clone()),
            n(r.events),
            n(r.computers),
            Cell::Text(r.first.clone().unwrap_or_default()),
            Cell::Text(r.last.clone().unwrap_or_default()),
            n(r.rules),
            n(r.channel_less),
            n(r.detections),
            Cell::Text(r.rule_title.clone()),
            Cell::Text(r.rule_id.clone()),
            Cell::Text(r.rule_path.clone()),
            Cell::Text(r.file.clone()),
        ]);
    }
    t
}

fn write_json(out: &mut dyn Write, rows: &[Row]) -> std::io::Result<()> {
    for r in rows {
        let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let o = serde_json::json!({
            "Status": r.status,
            "Channel": text(&r.channel),
            "Provider": text(&r.provider),
            "EventID": text(&r.event_id),
            "Events": r.events,
            "Computers": r.computers,
            "FirstTime": r.first,
            "LastTime": r.last,
            "Rules": r.rules,
            "ChannelLessRules": r.channel_less,
            "Detections": r.detections,
            "RuleTitle": text(&r.rule_title),
            "RuleID": text(&r.rule_id),
            "RulePath": text(&r.rule_path),
            "File": text(&r.file),
        });
        serde_json::to_writer(&mut *out, &o)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
