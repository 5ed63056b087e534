//! The timeline's cells: a [`Layout`] turns a row into the cells of a profile's columns,
//! in Hayabusa's conventions (abbreviated levels, channels and providers, MITRE columns
//! from rule tags); [`RowCells`] renders one pass's rows, which the CSV and JSON
//! encoders share ([`crate::CsvEncoder`], [`crate::JsonEncoder`]).

use crate::profile::{Column, Profile, Style};
use crate::time_format::TimeFormat;
use scanner_engine::DETAILS_SEP as SEP;
use scanner_engine::{DetectInfo, Origin};
use scanner_input::InputFile;
use scanner_rules::FxHashMap;
use scanner_rules::{RuleMeta, RuleSet};
use std::collections::HashSet;

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
        if let Some(short) = set.config().mitre_tactics.get(lower.as_str()) {
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

/// What the cells of one pass over the rows remember: the provider and channel
/// abbreviations met so far, and the last timestamp formatted (a record's rows share it).
#[derive(Default)]
struct Memo {
    providers: Abbrevs,
    channels: Abbrevs,
    time: Option<(jiff::Timestamp, String)>,
}

/// Abbreviations of names, each made once.
#[derive(Default)]
struct Abbrevs {
    /// Name → index in `texts`.
    index: FxHashMap<Box<str>, usize>,
    texts: Vec<String>,
}

impl Abbrevs {
    /// The abbreviation of `name`, made by `make` the first time (the name is copied
    /// only then).
    fn get(&mut self, name: &str, make: impl FnOnce() -> String) -> &str {
        let i = match self.index.get(name) {
            Some(&i) => i,
            None => {
                self.texts.push(make());
                self.index.insert(name.into(), self.texts.len() - 1);
                self.texts.len() - 1
            }
        };
        &self.texts[i]
    }
}

/// A rule date as written (`2023/01/02`), with dashes (`2023-01-02`).
fn push_date(date: &str, out: &mut String) {
    out.extend(date.chars().map(|c| if c == '/' { '-' } else { c }));
}

/// The layout of a timeline: a profile's columns, the cell style, the time format,
/// and what cells are looked up in (the rules' metadata and tags, the input files).
pub struct Layout<'a> {
    set: &'a RuleSet,
    files: &'a [InputFile],
    time: TimeFormat,
    profile: Profile,
    style: Style,
    rule_tags: Vec<Tags>,
    corr_tags: Vec<Tags>,
    /// The profile's columns, plus any appended (`RecoveredRecord`).
    columns: Vec<(&'static str, Column)>,
}

impl<'a> Layout<'a> {
    /// A layout for a scan's rows.
    pub fn new(
        set: &'a RuleSet,
        files: &'a [InputFile],
        time: TimeFormat,
        profile: Profile,
    ) -> Self {
        let rule_tags = set
            .rules()
            .iter()
            .map(|r| split_tags(&r.meta.tags, set))
            .collect();
        let corr_tags = set
            .correlations()
            .iter()
            .map(|c| split_tags(&c.meta.tags, set))
            .collect();
        Layout {
            set,
            files,
            time,
            profile,
            style: Style::default(),
            rule_tags,
            corr_tags,
            columns: profile.named_columns().to_vec(),
        }
    }

    /// Appends a `RecoveredRecord` column (`Y` for carved records, empty otherwise) to
    /// the profile's, as Hayabusa does with `--recover-records`.
    pub fn with_recovered_column(mut self, on: bool) -> Self {
        if on
            && !self
                .columns
                .iter()
                .any(|(_, c)| *c == Column::RecoveredRecord)
        {
            self.columns
                .push(("RecoveredRecord", Column::RecoveredRecord));
        }
        self
    }

    /// The columns written, in order, each with its header name.
    pub fn named_columns(&self) -> &[(&'static str, Column)] {
        &self.columns
    }

    /// Sets the style (`-M`, `-S`, `-b`, `-X`).
    pub fn with_style(mut self, style: Style) -> Self {
        self.style = style;
        self
    }

    /// The rule set the rows came from.
    pub fn rules(&self) -> &'a RuleSet {
        self.set
    }

    /// The style.
    pub fn style(&self) -> Style {
        self.style
    }

    /// The profile.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The rule (or correlation) of a row.
    pub fn meta(&self, r: &DetectInfo) -> &'a RuleMeta {
        if r.correlation {
            &self.set.correlations()[r.rule as usize].meta
        } else {
            &self.set.rules()[r.rule as usize].meta
        }
    }

    /// Appends the channel as the timeline shows it, abbreviated once per distinct name.
    fn push_channel(&self, ch: &str, memo: &mut Memo, out: &mut String) {
        if self.style.no_abbreviations {
            out.push_str(ch);
            return;
        }
        let abbrev = memo
            .channels
            .get(ch, || self.set.config().channel_abbrev(ch).into());
        out.push_str(abbrev);
    }

    /// Appends the cell of column `c` for row `r` to `out`.
    fn cell_into(&self, c: Column, r: &DetectInfo, memo: &mut Memo, out: &mut String) {
        let meta = self.meta(r);
        let tags = if r.correlation {
            &self.corr_tags[r.rule as usize]
        } else {
            &self.rule_tags[r.rule as usize]
        };
        match c {
            Column::Timestamp => {
                if memo.time.as_ref().map(|(t, _)| *t) != Some(r.time) {
                    memo.time = Some((r.time, self.time.format(r.time)));
                }
                if let Some((_, text)) = &memo.time {
                    out.push_str(text);
                }
            }
            Column::TimestampDesc => out.push_str("hayabusa"),
            Column::RuleTitle => out.push_str(&meta.title),
            Column::Level => out.push_str(if self.style.no_abbreviations {
                meta.level.name()
            } else {
                meta.level.abbrev()
            }),
            Column::Computer => out.push_str(&r.computer),
            Column::Channel => {
                if r.correlation {
                    for (i, ch) in r.channel.split(SEP).enumerate() {
                        if i > 0 {
                            out.push_str(SEP);
                        }
                        self.push_channel(ch, memo, out);
                    }
                } else {
                    self.push_channel(&r.channel, memo, out);
                }
            }
            Column::EventID => out.push_str(&r.event_id),
            Column::RuleAuthor => {
                if self.style.multiline || self.style.tab_separator {
                    let authors = meta
                        .author
                        .split([',', '/', ';'])
                        .map(str::trim)
                        .filter(|a| !a.is_empty());
                    for (i, a) in authors.enumerate() {
                        if i > 0 {
                            out.push_str(SEP);
                        }
                        out.push_str(a);
                    }
                } else {
                    out.push_str(&meta.author);
                }
            }
            Column::RuleModifiedDate => push_date(&meta.modified, out),
            Column::Status => out.push_str(if meta.status.is_empty() {
                "-"
            } else {
                &meta.status
            }),
            Column::MitreTactics => out.push_str(&tags.tactics),
            Column::MitreTags => out.push_str(&tags.techniques),
            Column::OtherTags => out.push_str(&tags.other),
            Column::RecordID => {
                if let Origin::Record { record_id, .. } = r.origin {
                    use std::fmt::Write as _;
                    let _ = write!(out, "{record_id}");
                }
            }
            Column::Details => out.push_str(&r.details),
            Column::ExtraFieldInfo => out.push_str(r.extra.as_deref().unwrap_or("-")),
            Column::AllFieldInfo => out.push_str(r.all_fields.as_deref().unwrap_or("-")),
            Column::Provider => {
                if self.style.no_abbreviations {
                    out.push_str(&r.provider);
                } else {
                    let abbrev = memo.providers.get(&r.provider, || {
                        self.set.config().provider_abbrev(&r.provider)
                    });
                    out.push_str(abbrev);
                }
            }
            Column::RuleCreationDate => push_date(&meta.date, out),
            Column::RuleFile => out.push_str(&meta.file_name),
            Column::RuleID => out.push_str(&meta.id),
            Column::EvtxFile => match &r.origin {
                Origin::Record { file, .. } => {
                    out.push_str(&self.files[*file as usize].path.to_string_lossy())
                }
                Origin::Correlation { files } => out.push_str(files),
            },
            Column::RecoveredRecord => out.push_str(if r.recovered { "Y" } else { "" }),
        }
    }
}

/// One pass's cells: each row's cells in turn, in the profile's column order, items of
/// multi-item cells joined with ` ¦ ` (the CSV writer applies `-M`/`-S`). It remembers
/// abbreviations and the last timestamp formatted, and, with `-X`, the cells of the
/// current timestamp's rows: a row whose cells (EvtxFile aside) equal those of an
/// earlier row with the same timestamp is dropped (such rows are neighbours in timeline
/// order).
pub struct RowCells<'w, 'a> {
    writer: &'w Layout<'a>,
    cols: Vec<Column>,
    cells: Vec<String>,
    memo: Memo,
    seen: HashSet<Vec<String>>,
    group_time: Option<jiff::Timestamp>,
}

impl<'w, 'a> RowCells<'w, 'a> {
    /// A pass over rows written by `writer`.
    pub fn new(writer: &'w Layout<'a>) -> Self {
        let cols: Vec<Column> = writer.columns.iter().map(|(_, c)| *c).collect();
        RowCells {
            writer,
            cells: vec![String::new(); cols.len()],
            cols,
            memo: Memo::default(),
            seen: HashSet::new(),
            group_time: None,
        }
    }

    /// The writer whose columns these are.
    pub fn writer(&self) -> &'w Layout<'a> {
        self.writer
    }

    /// Renders `r`'s cells ([`Self::cells`]); `false` when `-X` drops the row.
    pub fn fill(&mut self, r: &DetectInfo) -> bool {
        for (&c, cell) in self.cols.iter().zip(self.cells.iter_mut()) {
            cell.clear();
            self.writer.cell_into(c, r, &mut self.memo, cell);
        }
        if !self.writer.style.remove_duplicates {
            return true;
        }
        if self.group_time != Some(r.time) {
            self.group_time = Some(r.time);
            self.seen.clear();
        }
        let key: Vec<String> = self
            .cols
            .iter()
            .zip(&self.cells)
            .filter(|(c, _)| **c != Column::EvtxFile)
            .map(|(_, v)| v.clone())
            .collect();
        self.seen.insert(key)
    }

    /// The cells of the last row filled.
    pub fn cells(&self) -> &[String] {
        &self.cells
    }
}
