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
            Column::Level => {
                // The rule's level, raised on a critical system (the rule set decides).
                let level = self.set.row_level(r.rule, r.correlation, &r.computer);
                out.push_str(if self.style.no_abbreviations {
                    level.name()
                } else {
                    level.abbrev()
                })
            }
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
                    // Valid UTF-8 (nearly every path) without the lossy decoder's walk.
                    let path = &self.files[*file as usize].path;
                    match path.to_str() {
                        Some(p) => out.push_str(p),
                        None => out.push_str(&path.to_string_lossy()),
                    }
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
    /// With `-R`, the previous row's value of each column (kept only for the field-list
    /// columns; `None` before the first row).
    previous: Vec<Option<String>>,
}

/// What `-R` writes in place of a value equal to the previous row's.
pub const DUP: &str = "DUP";

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
            previous: Vec::new(),
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
        if self.writer.style.remove_duplicates {
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
            if !self.seen.insert(key) {
                return false;
            }
        }
        if self.writer.style.remove_duplicate_data {
            self.mark_repeated_data();
        }
        true
    }

    /// `-R`: each field-list cell equal to the previous row's value in its column
    /// becomes [`DUP`]; the value itself is remembered for the next row.
    fn mark_repeated_data(&mut self) {
        self.previous.resize(self.cols.len(), None);
        let columns = self
            .cols
            .iter()
            .zip(&mut self.cells)
            .zip(&mut self.previous);
        for ((_, cell), prev) in columns.filter(|((c, _), _)| c.is_field_list()) {
            match prev {
                Some(p) if p == cell => {
                    cell.clear();
                    cell.push_str(DUP);
                }
                Some(p) => {
                    p.clear();
                    p.push_str(cell);
                }
                None => *prev = Some(cell.clone()),
            }
        }
    }

    /// The cells of the last row filled.
    pub fn cells(&self) -> &[String] {
        &self.cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_row::row;
    use scanner_rules::{load, LoadOptions, RuleSource};
    use std::path::PathBuf;

    const RULES: &str = "title: Suspicious shell
name: shell
id: 00000000-0000-0000-0000-0000000000a1
level: medium
status: test
author: Alice, Bob/Carol
date: 2023/01/02
modified: 2024/03/04
tags:
    - attack.execution
    - attack.t1059.001
    - attack.g0016
    - attack.s0002
    - attack.ta0002
    - car.2016-04-005
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4624}, condition: sel}
---
title: Plain rule
id: 00000000-0000-0000-0000-0000000000a2
level: informational
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4625}, condition: sel}
---
title: Many shells
id: 00000000-0000-0000-0000-0000000000a3
level: critical
tags:
    - attack.persistence
correlation:
    type: event_count
    rules: shell
    group-by: [Computer]
    timespan: 5m
    condition: {gte: 2}
";

    /// The rules of [`RULES`] and two input files.
    struct Fixture {
        set: RuleSet,
        files: Vec<InputFile>,
    }

    impl Fixture {
        fn new() -> Fixture {
            let set = load(
                &[RuleSource::Text {
                    name: "rules/layout-test.yml".into(),
                    text: RULES.into(),
                }],
                &LoadOptions::default(),
            );
            assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
            assert_eq!(set.rules().len(), 2);
            assert_eq!(set.correlations().len(), 1);
            let files = ["logs/a.evtx", "logs/b.evtx"]
                .into_iter()
                .map(|p| InputFile {
                    path: PathBuf::from(p),
                    size: 1,
                })
                .collect();
            Fixture { set, files }
        }

        fn layout(&self, p: Profile) -> Layout<'_> {
            Layout::new(&self.set, &self.files, TimeFormat::utc(), p)
        }
    }

    /// The cells of `rows` under `layout`, by header name; `None` for a row `-X` drops.
    fn render(layout: &Layout, rows: &[DetectInfo]) -> Vec<Option<Vec<(String, String)>>> {
        let mut cells = RowCells::new(layout);
        rows.iter()
            .map(|r| {
                cells.fill(r).then(|| {
                    layout
                        .named_columns()
                        .iter()
                        .zip(cells.cells())
                        .map(|((n, _), v)| (n.to_string(), v.clone()))
                        .collect()
                })
            })
            .collect()
    }

    /// Asserts the one row's cells under the given header names.
    fn assert_cells(layout: &Layout, r: &DetectInfo, expected: &[(&str, &str)]) {
        let rendered = render(layout, std::slice::from_ref(r));
        let cells = rendered[0].as_ref().expect("kept");
        for (name, value) in expected {
            let got = cells.iter().find(|(n, _)| n == name);
            let got = got.unwrap_or_else(|| panic!("no column {name}"));
            assert_eq!(got.1, *value, "{name}");
        }
    }

    fn correlation_row() -> DetectInfo {
        DetectInfo {
            rule: 0,
            correlation: true,
            origin: Origin::Correlation {
                files: "logs/a.evtx ¦ logs/b.evtx".into(),
            },
            channel: "Microsoft-Windows-Sysmon/Operational ¦ Security".into(),
            provider: "-".into(),
            ..row(100, 0)
        }
    }

    #[test]
    fn cells_follow_the_profile_columns_in_order() {
        let f = Fixture::new();
        let layout = f.layout(Profile::Standard);
        let mut r = row(0, 42);
        r.details = "Cmdline: whoami".into();
        r.extra = Some("User: bob".into());
        let got = render(&layout, &[r]).remove(0).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        let expected: Vec<&str> = Profile::Standard
            .named_columns()
            .iter()
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(names, expected);
        let values: Vec<&str> = got.iter().map(|(_, v)| v.as_str()).collect();
        assert_eq!(
            values,
            [
                TimeFormat::utc()
                    .format(jiff::Timestamp::new(0, 0).unwrap())
                    .as_str(),
                "Suspicious shell",
                "med",
                "host",
                "Sec",
                "4624",
                "42",
                "Cmdline: whoami",
                "User: bob",
                "00000000-0000-0000-0000-0000000000a1",
            ]
        );
    }

    #[test]
    fn abbreviations_shorten_levels_channels_and_providers_unless_turned_off() {
        let f = Fixture::new();
        let layout = f.layout(Profile::SuperVerbose);
        let mut r = row(0, 1);
        r.rule = 1;
        let short = [("Level", "info"), ("Channel", "Sec"), ("Provider", "Sec")];
        assert_cells(&layout, &r, &short);
        r.channel = "Microsoft-Windows-Sysmon/Operational".into();
        r.provider = "Microsoft-Windows-Sysmon".into();
        assert_cells(
            &layout,
            &r,
            &[("Channel", "Sysmon"), ("Provider", "Sysmon")],
        );
        // A provider not listed has its generic words shortened.
        r.provider = "Microsoft-Windows-Foo".into();
        assert_cells(&layout, &r, &[("Provider", "MS-Win-Foo")]);

        let full = layout.with_style(Style {
            no_abbreviations: true,
            ..Style::default()
        });
        let long = [
            ("Level", "informational"),
            ("Channel", "Microsoft-Windows-Sysmon/Operational"),
            ("Provider", "Microsoft-Windows-Foo"),
        ];
        assert_cells(&full, &r, &long);
    }

    #[test]
    fn rule_tags_split_into_tactics_techniques_and_other_tags() {
        let f = Fixture::new();
        let layout = f.layout(Profile::Verbose);
        let tagged = [
            ("MitreTactics", "Exec"),
            ("MitreTags", "T1059.001 ¦ G0016 ¦ S0002"),
            ("OtherTags", "attack.ta0002 ¦ car.2016-04-005"),
        ];
        assert_cells(&layout, &row(0, 1), &tagged);
        // A rule without tags has empty MITRE cells.
        let untagged = [("MitreTactics", ""), ("MitreTags", ""), ("OtherTags", "")];
        let plain = DetectInfo {
            rule: 1,
            ..row(0, 1)
        };
        assert_cells(&layout, &plain, &untagged);
        // A correlation's tags are its own.
        let own = [("MitreTactics", "Persis"), ("RuleTitle", "Many shells")];
        assert_cells(&layout, &correlation_row(), &own);
    }

    #[test]
    fn rule_metadata_cells_show_dates_with_dashes_and_a_dash_for_no_status() {
        let f = Fixture::new();
        let layout = f.layout(Profile::SuperVerbose);
        let r = row(0, 1);
        let meta = [
            ("RuleAuthor", "Alice, Bob/Carol"),
            ("RuleCreationDate", "2023-01-02"),
            ("RuleModifiedDate", "2024-03-04"),
            ("Status", "test"),
            ("RuleFile", "layout-test.yml"),
            ("EvtxFile", "logs/a.evtx"),
            // Not rendered by the scan.
            ("ExtraFieldInfo", "-"),
        ];
        assert_cells(&layout, &r, &meta);
        let plain = DetectInfo {
            rule: 1,
            ..row(0, 1)
        };
        assert_cells(&layout, &plain, &[("Status", "-")]);

        // With -M or -S the authors become items.
        let multi = layout.with_style(Style {
            multiline: true,
            ..Style::default()
        });
        assert_cells(&multi, &r, &[("RuleAuthor", "Alice ¦ Bob ¦ Carol")]);
    }

    #[test]
    fn correlation_rows_abbreviate_each_channel_and_list_their_files() {
        let f = Fixture::new();
        let layout = f.layout(Profile::Verbose);
        let expected = [
            ("Channel", "Sysmon ¦ Sec"),
            ("Level", "crit"),
            // No record id.
            ("RecordID", ""),
            ("EvtxFile", "logs/a.evtx ¦ logs/b.evtx"),
        ];
        assert_cells(&layout, &correlation_row(), &expected);
    }

    #[test]
    fn remove_duplicates_drops_rows_equal_to_an_earlier_one_at_the_same_time() {
        let f = Fixture::new();
        let style = Style {
            remove_duplicates: true,
            ..Style::default()
        };
        let layout = f.layout(Profile::Verbose).with_style(style);
        let in_file = |secs, file| DetectInfo {
            origin: Origin::Record { file, record_id: 7 },
            ..row(secs, 7)
        };
        let rows = [
            in_file(10, 0),
            // The same in another file: EvtxFile does not count.
            in_file(10, 1),
            // Another Details at the same time: kept.
            DetectInfo {
                details: "other".into(),
                ..in_file(10, 0)
            },
            // Another timestamp: kept, even though it equals the first otherwise.
            in_file(11, 0),
            in_file(11, 0),
            // Back to a cell already seen, but in a later group: kept.
            in_file(12, 0),
        ];
        let kept: Vec<bool> = render(&layout, &rows).iter().map(Option::is_some).collect();
        assert_eq!(kept, [true, false, true, true, false, true]);

        // Without -X every row is kept.
        let all = f.layout(Profile::Verbose);
        assert!(render(&all, &rows).iter().all(Option::is_some));
    }

    #[test]
    fn remove_duplicate_data_marks_field_cells_equal_to_the_previous_rows() {
        let f = Fixture::new();
        let style = Style {
            remove_duplicate_data: true,
            ..Style::default()
        };
        let layout = f.layout(Profile::Verbose).with_style(style);
        let with = |details: &str, all: &str| DetectInfo {
            details: details.into(),
            extra: Some(all.into()),
            ..row(10, 7)
        };
        let rows = [
            with("a", "x: 1"),
            with("a", "x: 1"),
            with("b", "x: 1"),
            with("b", "x: 2"),
            // Equal to the row before the previous one only: kept.
            with("a", "x: 2"),
        ];
        let cells = render(&layout, &rows);
        let col = |name: &str| {
            let value = |c: &Option<Vec<(String, String)>>| {
                let pairs = c.as_ref().unwrap();
                pairs.iter().find(|(n, _)| n == name).unwrap().1.clone()
            };
            cells.iter().map(value).collect::<Vec<_>>()
        };
        assert_eq!(col("Details"), ["a", "DUP", "b", "DUP", "a"]);
        assert_eq!(col("ExtraFieldInfo"), ["x: 1", "DUP", "DUP", "x: 2", "DUP"]);
        // Other columns are never marked, and without -R nothing is.
        assert!(col("RuleTitle").iter().all(|t| t != "DUP"));
        let plain = render(&f.layout(Profile::Verbose), &rows);
        assert!(plain.iter().flatten().flatten().all(|(_, c)| c != "DUP"));
    }

    #[test]
    fn recovered_record_column_is_appended_once_and_marks_carved_rows() {
        let f = Fixture::new();
        let plain = f.layout(Profile::Minimal);
        assert_eq!(plain.named_columns(), Profile::Minimal.named_columns());
        let off = f.layout(Profile::Minimal).with_recovered_column(false);
        assert_eq!(off.named_columns(), Profile::Minimal.named_columns());
        let layout = f
            .layout(Profile::Minimal)
            .with_recovered_column(true)
            .with_recovered_column(true);
        let cols = layout.named_columns();
        assert_eq!(cols.len(), Profile::Minimal.named_columns().len() + 1);
        assert_eq!(
            cols.last(),
            Some(&("RecoveredRecord", Column::RecoveredRecord))
        );
        let live = row(0, 1);
        let carved = DetectInfo {
            recovered: true,
            ..row(0, 1)
        };
        assert_cells(&layout, &live, &[("RecoveredRecord", "")]);
        assert_cells(&layout, &carved, &[("RecoveredRecord", "Y")]);
    }
}
