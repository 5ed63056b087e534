//! The integrity findings of a timeline run (`--integrity`), as the HTML report lists
//! them: per file, each finding with its severity, record ids, time and figures,
//! taken from the rows as they are written (at most [`LISTED_FINDINGS`]).

use scanner_engine::{DetectInfo, Origin, RuleRef};
use scanner_timeline::{Layout, TimeFormat, LIST_SEPARATOR};

/// How many findings the report lists.
pub const LISTED_FINDINGS: usize = 500;

/// One finding, as the report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntegrityLine {
    /// The input file, as shown in the timeline.
    pub file: String,
    /// What was found (`record id gap`).
    pub finding: &'static str,
    /// How sure (`certain`).
    pub severity: &'static str,
    /// The channel, or `-`.
    pub channel: String,
    /// The record ids (`10-14`), or empty.
    pub records: String,
    /// The row's time, in the timeline's format.
    pub time: String,
    /// The row's Details after its severity and record ids (`Missing: 3`).
    pub details: String,
}

/// The findings listed, and how many more there are; files in the order of their
/// first finding in the timeline, each file's findings in timeline order.
#[derive(Debug, Clone, Default)]
pub struct IntegrityList {
    /// The findings listed.
    pub lines: Vec<IntegrityLine>,
    /// Findings not listed.
    pub left_out: usize,
    /// Findings of each severity, surest first.
    pub per_severity: [usize; 4],
}

impl IntegrityList {
    /// Takes row `r` if it is an integrity finding's.
    pub fn add(&mut self, r: &DetectInfo, layout: &Layout<'_>, time: &TimeFormat) {
        let RuleRef::Integrity(rule) = r.rule else {
            return;
        };
        self.per_severity[rule.severity as usize] += 1;
        if self.lines.len() >= LISTED_FINDINGS {
            self.left_out += 1;
            return;
        }
        let file = match r.origin {
            Origin::Record { file, .. } => layout
                .files()
                .get(file as usize)
                .map(|f| f.name().to_string_lossy().into_owned())
                .unwrap_or_default(),
            Origin::Correlation(_) => String::new(),
        };
        let mut records = String::new();
        let mut rest = Vec::new();
        for item in r.details.iter() {
            match item.label() {
                "Severity" => {}
                "RecordID" | "RecordIDs" => records = item.value().trim_start().to_string(),
                _ => rest.push(item.text()),
            }
        }
        self.lines.push(IntegrityLine {
            file,
            finding: rule.check.name(),
            severity: rule.severity.name(),
            channel: r.channel.to_string(),
            records,
            time: if r.time == scanner_input::missing_timestamp() {
                String::new()
            } else {
                time.format(r.time)
            },
            details: rest.join(LIST_SEPARATOR),
        });
    }

    /// The lines grouped by file (a stable sort: each file's in timeline order).
    pub fn finish(mut self) -> IntegrityList {
        let mut first: Vec<String> = Vec::new();
        for l in &self.lines {
            if !first.contains(&l.file) {
                first.push(l.file.clone());
            }
        }
        self.lines
            .sort_by_key(|l| first.iter().position(|f| *f == l.file));
        self
    }
}
