//! Writing the timeline as CSV in Hayabusa's profiles and conventions: its column
//! names and order, `NonNumeric` quoting, LF line ends, abbreviated levels and
//! channels, MITRE columns from rule tags. All output goes through one `BufWriter`.

use crate::details::SEP;
use crate::detect_info::{DetectInfo, Origin};
use crate::input::InputFile;
use crate::time::TimeFormat;
use scanner_rules::RuleSet;
use std::io::Write;

/// Output columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Record time.
    Timestamp,
    /// Rule title.
    RuleTitle,
    /// Level (abbreviated).
    Level,
    /// Computer.
    Computer,
    /// Channel (abbreviated).
    Channel,
    /// EventID.
    EventID,
    /// MITRE tactics (short names).
    MitreTactics,
    /// MITRE technique, group and software ids.
    MitreTags,
    /// Other tags.
    OtherTags,
    /// EventRecordID.
    RecordID,
    /// Details.
    Details,
    /// Event fields not shown in Details.
    ExtraFieldInfo,
    /// Rule file name.
    RuleFile,
    /// Rule id.
    RuleID,
    /// Input file path.
    EvtxFile,
}

impl Column {
    /// The header name.
    pub fn name(self) -> &'static str {
        match self {
            Column::Timestamp => "Timestamp",
            Column::RuleTitle => "RuleTitle",
            Column::Level => "Level",
            Column::Computer => "Computer",
            Column::Channel => "Channel",
            Column::EventID => "EventID",
            Column::MitreTactics => "MitreTactics",
            Column::MitreTags => "MitreTags",
            Column::OtherTags => "OtherTags",
            Column::RecordID => "RecordID",
            Column::Details => "Details",
            Column::ExtraFieldInfo => "ExtraFieldInfo",
            Column::RuleFile => "RuleFile",
            Column::RuleID => "RuleID",
            Column::EvtxFile => "EvtxFile",
        }
    }
}

/// Output profiles (Hayabusa's names and column orders).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `minimal`
    Minimal,
    /// `standard` (default)
    Standard,
    /// `verbose`
    Verbose,
}

impl Profile {
    /// Parses a profile name.
    pub fn parse(s: &str) -> Option<Profile> {
        match s {
            "minimal" => Some(Profile::Minimal),
            "standard" => Some(Profile::Standard),
            "verbose" => Some(Profile::Verbose),
            _ => None,
        }
    }

    /// The columns, in order.
    pub fn columns(self) -> &'static [Column] {
        use Column::*;
        match self {
            Profile::Minimal => &[
                Timestamp, RuleTitle, Level, Computer, Channel, EventID, RecordID, Details,
            ],
            Profile::Standard => &[
                Timestamp,
                RuleTitle,
                Level,
                Computer,
                Channel,
                EventID,
                RecordID,
                Details,
                ExtraFieldInfo,
                RuleID,
            ],
            Profile::Verbose => &[
                Timestamp,
                RuleTitle,
                Level,
                Computer,
                Channel,
                EventID,
                MitreTactics,
                MitreTags,
                OtherTags,
                RecordID,
                Details,
                ExtraFieldInfo,
                RuleFile,
                RuleID,
                EvtxFile,
            ],
        }
    }

    /// Whether the profile prints ExtraFieldInfo (so the detector renders it).
    pub fn has_extra(self) -> bool {
        self.columns().contains(&Column::ExtraFieldInfo)
    }
}

struct Tags {
    tactics: String,
    techniques: String,
    other: String,
}

fn split_tags(tags: &[compact_str::CompactString], set: &RuleSet) -> Tags {
    let mut tactics = Vec::new();
    let mut techniques = Vec::new();
    let mut other = Vec::new();
    for t in tags {
        let lower = t.to_lowercase();
        if let Some(short) = set.config.mitre_tactics.get(lower.as_str()) {
            tactics.push(short.clone());
        } else if let Some(id) = lower.strip_prefix("attack.").filter(|r| {
            let mut c = r.chars();
            matches!(c.next(), Some('t' | 'g' | 's'))
                && c.next().is_some_and(|d| d.is_ascii_digit())
        }) {
            techniques.push(id.to_uppercase());
        } else {
            other.push(t.to_string());
        }
    }
    Tags {
        tactics: tactics.join(SEP),
        techniques: techniques.join(SEP),
        other: other.join(SEP),
    }
}

/// Writes rows as CSV. The header is written even when there are no rows.
pub struct TimelineWriter<'a> {
    set: &'a RuleSet,
    files: &'a [InputFile],
    time: TimeFormat,
    profile: Profile,
    rule_tags: Vec<Tags>,
    corr_tags: Vec<Tags>,
}

impl<'a> TimelineWriter<'a> {
    /// A writer for a scan's rows.
    pub fn new(
        set: &'a RuleSet,
        files: &'a [InputFile],
        time: TimeFormat,
        profile: Profile,
    ) -> Self {
        let rule_tags = set
            .rules
            .iter()
            .map(|r| split_tags(&r.meta.tags, set))
            .collect();
        let corr_tags = set
            .correlations
            .iter()
            .map(|c| split_tags(&c.meta.tags, set))
            .collect();
        TimelineWriter {
            set,
            files,
            time,
            profile,
            rule_tags,
            corr_tags,
        }
    }

    /// Writes the header and every row to `out` (wrapped in one `BufWriter`).
    pub fn write<W: Write>(&self, out: W, rows: &[DetectInfo]) -> std::io::Result<()> {
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::NonNumeric)
            .from_writer(std::io::BufWriter::with_capacity(1 << 16, out));
        let cols = self.profile.columns();
        w.write_record(cols.iter().map(|c| c.name()))?;
        let mut fields: Vec<String> = Vec::with_capacity(cols.len());
        for r in rows {
            fields.clear();
            let (meta, tags) = if r.correlation {
                let c = &self.set.correlations[r.rule as usize];
                (&c.meta, &self.corr_tags[r.rule as usize])
            } else {
                (
                    &self.set.rules[r.rule as usize].meta,
                    &self.rule_tags[r.rule as usize],
                )
            };
            for c in cols {
                fields.push(match c {
                    Column::Timestamp => self.time.format(r.time),
                    Column::RuleTitle => meta.title.to_string(),
                    Column::Level => meta.level.abbrev().to_string(),
                    Column::Computer => r.computer.to_string(),
                    Column::Channel => {
                        if r.correlation {
                            r.channel
                                .split(SEP)
                                .map(|c| self.set.config.channel_abbrev(c))
                                .collect::<Vec<_>>()
                                .join(SEP)
                        } else {
                            self.set.config.channel_abbrev(&r.channel).to_string()
                        }
                    }
                    Column::EventID => r.event_id.to_string(),
                    Column::MitreTactics => tags.tactics.clone(),
                    Column::MitreTags => tags.techniques.clone(),
                    Column::OtherTags => tags.other.clone(),
                    Column::RecordID => match r.origin {
                        Origin::Record { record_id, .. } => record_id.to_string(),
                        Origin::Correlation { .. } => String::new(),
                    },
                    Column::Details => r.details.to_string(),
                    Column::ExtraFieldInfo => r.extra.as_deref().unwrap_or("-").to_string(),
                    Column::RuleFile => meta.file_name.to_string(),
                    Column::RuleID => meta.id.to_string(),
                    Column::EvtxFile => match &r.origin {
                        Origin::Record { file, .. } => {
                            self.files[*file as usize].path.display().to_string()
                        }
                        Origin::Correlation { files } => files.to_string(),
                    },
                });
            }
            w.write_record(&fields)?;
        }
        w.flush()?;
        let inner = w
            .into_inner()
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        inner.into_inner().map_err(|e| e.into_error())?.flush()
    }
}
