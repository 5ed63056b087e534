//! The timeline's cells: a [`Layout`] turns a row into the cells of a profile's columns,
//! in Hayabusa's conventions (abbreviated levels, channels and providers, MITRE columns
//! from rule tags, levels raised on critical systems), which the CSV and JSON encoders
//! share ([`crate::CsvEncoder`], [`crate::JsonEncoder`]) through [`crate::RowCells`].
//! Cells of several items stay lists: the encoders join them. A rule's tags are sorted
//! into the MITRE columns the first time one of its rows is written.

use crate::cell::{Cell, RowList, RowText, Slot};
use crate::critical::CriticalSystems;
use crate::geo::{GeoCache, GeoIp};
use crate::profile::{Column, Profile, Style};
use crate::time_format::TimeFormat;
use scanner_engine::{DetectInfo, Items, ItemsBuf, Origin, RuleRef};
use scanner_input::InputFile;
use scanner_rules::FxHashMap;
use scanner_rules::{Level, RuleMeta, RuleSet};
use std::sync::OnceLock;

/// A rule's tags as the three MITRE columns show them.
#[derive(Default)]
struct Tags {
    tactics: Items,
    techniques: Items,
    other: Items,
}

fn split_tags(tags: &[compact_str::CompactString], set: &RuleSet) -> Tags {
    let mut tactics = ItemsBuf::default();
    let mut techniques = ItemsBuf::default();
    let mut other = ItemsBuf::default();
    let mut lower = String::new();
    for t in tags {
        lower.clear();
        if t.is_ascii() {
            lower.push_str(t);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&t.to_lowercase());
        }
        if let Some(short) = set.config().mitre_tactics.get(lower.as_str()) {
            tactics.push(short);
        } else if let Some(id) = lower.strip_prefix("attack.").filter(|r| {
            let mut c = r.chars();
            matches!(c.next(), Some('t' | 'g' | 's'))
                && c.next().is_some_and(|d| d.is_ascii_digit())
        }) {
            techniques.push(&id.to_uppercase());
        } else {
            other.push(t);
        }
    }
    Tags {
        tactics: tactics.to_items(),
        techniques: techniques.to_items(),
        other: other.to_items(),
    }
}

/// What the cells of one pass over the rows remember: the provider and channel
/// abbreviations met so far, and the last timestamp formatted (a record's rows share it).
#[derive(Default)]
pub(crate) struct Memo {
    providers: Abbrevs,
    channels: Abbrevs,
    time: Option<(jiff::Timestamp, String)>,
    /// `-G`'s lookups.
    geo: GeoCache,
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

/// An input file's path as the timeline shows it: valid UTF-8 (nearly every path)
/// without the lossy decoder's walk.
fn push_path(files: &[InputFile], file: u32, out: &mut String) {
    let Some(f) = files.get(file as usize) else {
        return;
    };
    let name = f.name();
    match name.to_str() {
        Some(p) => out.push_str(p),
        None => out.push_str(&name.to_string_lossy()),
    }
}

/// An input file's path, when it is valid UTF-8 (nearly every path).
fn path_text(files: &[InputFile], file: u32) -> Option<&str> {
    files.get(file as usize)?.name().to_str()
}

/// The layout of a timeline: a profile's columns, the cell style, the time format,
/// and what cells are looked up in (the rules' metadata and tags, the input files, the
/// critical systems).
pub struct Layout<'a> {
    set: &'a RuleSet,
    files: &'a [InputFile],
    time: TimeFormat,
    profile: Profile,
    style: Style,
    critical: CriticalSystems,
    /// Each rule's and correlation's tags, sorted into the MITRE columns when first
    /// needed (most rules never fire).
    rule_tags: Vec<OnceLock<Tags>>,
    corr_tags: Vec<OnceLock<Tags>>,
    /// The profile's columns, plus any appended (`-G`'s, `RecoveredRecord`).
    columns: Vec<(&'static str, Column)>,
    /// `-G`'s databases.
    geo: Option<&'a GeoIp>,
}

impl<'a> Layout<'a> {
    /// A layout for a scan's rows.
    pub fn new(
        set: &'a RuleSet,
        files: &'a [InputFile],
        time: TimeFormat,
        profile: Profile,
    ) -> Self {
        let rule_tags = (0..set.rules().len()).map(|_| OnceLock::new()).collect();
        let corr_tags = (0..set.correlations().len())
            .map(|_| OnceLock::new())
            .collect();
        Layout {
            set,
            files,
            time,
            profile,
            style: Style::default(),
            critical: CriticalSystems::default(),
            rule_tags,
            corr_tags,
            columns: profile.named_columns(),
            geo: None,
        }
    }

    /// Appends `-G`'s six columns (SrcASN, SrcCountry, SrcCity, TgtASN, TgtCountry,
    /// TgtCity) to the profile's, before any RecoveredRecord, filled from `geo` with the
    /// addresses the rows carry ([`scanner_engine::DetectInfo::geo`]), as Hayabusa 4.0
    /// adds them to every profile.
    pub fn with_geo(mut self, geo: Option<&'a GeoIp>) -> Self {
        if geo.is_some() && self.geo.is_none() {
            let at = self
                .columns
                .iter()
                .position(|(_, c)| *c == Column::RecoveredRecord)
                .unwrap_or(self.columns.len());
            self.columns.splice(at..at, Column::GEO);
        }
        self.geo = geo;
        self
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

    /// Raises the level of detections on the computers `critical` lists
    /// (`critical_systems.txt`).
    pub fn with_critical_systems(mut self, critical: CriticalSystems) -> Self {
        self.critical = critical;
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

    /// The input files the rows' file indices point into.
    pub fn files(&self) -> &'a [InputFile] {
        self.files
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
        match r.rule {
            RuleRef::Rule(i) => &self.set.rules()[i as usize].meta,
            RuleRef::Correlation(i) => &self.set.correlations()[i as usize].meta,
            RuleRef::Integrity(i) => scanner_engine::integrity_meta(i),
        }
    }

    /// The level a row is shown at: its rule's, one step up when one of its computers
    /// is a critical system. The one place a row's level is decided (timeline, summary,
    /// charts, report).
    pub fn level(&self, r: &DetectInfo) -> Level {
        self.critical.level(self.meta(r).level, r.computers())
    }

    /// The computers whose detections are raised a level.
    pub fn critical_systems(&self) -> &CriticalSystems {
        &self.critical
    }

    /// Appends the channel as the timeline shows it, abbreviated once per distinct name.
    fn push_channel(&self, ch: &str, memo: &mut Memo, out: &mut String) {
        if self.style.no_abbreviations {
            out.push_str(ch);
            return;
        }
        let abbrev = memo
            .channels
            .get(ch, || crate::abbrev::channel(self.set.config(), ch).into());
        out.push_str(abbrev);
    }

    /// A `-G` cell: `-` on a correlation's row, empty on a row without the address;
    /// else what the databases say of it ([`crate::geo`]).
    fn push_geo(&self, c: Column, r: &DetectInfo, memo: &mut Memo, out: &mut String) {
        let Some(db) = self.geo else { return };
        if matches!(r.origin, Origin::Correlation(_)) {
            out.push('-');
            return;
        }
        let Some(addrs) = &r.geo else { return };
        let src = matches!(c, Column::SrcASN | Column::SrcCountry | Column::SrcCity);
        let addr = if src { &addrs.src } else { &addrs.tgt };
        let cells = memo.geo.cells(db, addr.as_deref());
        out.push_str(match c {
            Column::SrcASN | Column::TgtASN => &cells.asn,
            Column::SrcCountry | Column::TgtCountry => &cells.country,
            _ => &cells.city,
        });
    }

    /// The MITRE columns of a row's rule.
    fn tags(&self, r: &DetectInfo) -> &Tags {
        let (tags, meta) = match r.rule {
            RuleRef::Rule(i) => (
                &self.rule_tags[i as usize],
                &self.set.rules()[i as usize].meta,
            ),
            RuleRef::Correlation(i) => (
                &self.corr_tags[i as usize],
                &self.set.correlations()[i as usize].meta,
            ),
            // The integrity rules have no tags.
            RuleRef::Integrity(_) => {
                static NONE: OnceLock<Tags> = OnceLock::new();
                return NONE.get_or_init(Tags::default);
            }
        };
        tags.get_or_init(|| split_tags(&meta.tags, self.set))
    }

    /// The cell of column `c` for row `r`: where it is, made into `cell` when it is
    /// made for the row.
    pub(crate) fn cell_into(
        &self,
        c: Column,
        r: &DetectInfo,
        memo: &mut Memo,
        cell: &mut Cell,
    ) -> Slot<'_> {
        let meta = self.meta(r);
        let correlation = match &r.origin {
            Origin::Correlation(o) => Some(&**o),
            Origin::Record { .. } => None,
        };
        // The cells that are lists: of items, of a correlation's names, of authors.
        match (c, correlation) {
            (Column::MitreTactics, _) => return Slot::Items(&self.tags(r).tactics),
            (Column::MitreTags, _) => return Slot::Items(&self.tags(r).techniques),
            (Column::OtherTags, _) => return Slot::Items(&self.tags(r).other),
            (Column::Details, _) => return Slot::Row(RowList::Details),
            (Column::ExtraFieldInfo, _) => return Slot::Row(RowList::ExtraFieldInfo),
            (Column::AllFieldInfo, _) => return Slot::Row(RowList::AllFieldInfo),
            (Column::Computer, Some(_)) => return Slot::Row(RowList::Computers),
            (Column::EventID, Some(_)) => return Slot::Row(RowList::EventIds),
            (Column::Channel, Some(o)) => {
                let list = cell.start_list();
                for ch in o.channels.iter() {
                    self.push_channel(ch.text(), memo, list.text_mut());
                    list.close();
                }
                return Slot::Own;
            }
            (Column::EvtxFile, Some(o)) => {
                let list = cell.start_list();
                for &f in o.files.iter() {
                    push_path(self.files, f, list.text_mut());
                    list.close();
                }
                return Slot::Own;
            }
            (Column::RuleAuthor, _) if self.style.multiline || self.style.tab_separator => {
                let list = cell.start_list();
                let authors = meta.author.split([',', '/', ';']).map(str::trim);
                for a in authors.filter(|a| !a.is_empty()) {
                    list.push(a);
                }
                return Slot::Own;
            }
            // Texts read where they are.
            (Column::RuleTitle, _) => return Slot::Str(&meta.title),
            (Column::RuleFile, _) => return Slot::Str(&meta.file_name),
            (Column::RuleID, _) => return Slot::Str(&meta.id),
            (Column::Computer, None) => return Slot::RowText(RowText::Computer),
            (Column::EventID, None) => return Slot::RowText(RowText::EventId),
            (Column::Provider, _) if self.style.no_abbreviations => {
                return Slot::RowText(RowText::Provider)
            }
            (Column::EvtxFile, None) => {
                if let Origin::Record { file, .. } = r.origin {
                    if let Some(p) = path_text(self.files, file) {
                        return Slot::Str(p);
                    }
                }
            }
            _ => {}
        }
        let out = cell.start_text();
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
                let level = self.level(r);
                out.push_str(if self.style.no_abbreviations {
                    level.name()
                } else {
                    level.abbrev()
                })
            }
            Column::Computer => out.push_str(&r.computer),
            Column::Channel => self.push_channel(&r.channel, memo, out),
            Column::EventID => out.push_str(&r.event_id),
            Column::RuleAuthor => out.push_str(&meta.author),
            Column::RuleModifiedDate => push_date(&meta.modified, out),
            Column::Status => out.push_str(if meta.status.is_empty() {
                "-"
            } else {
                &meta.status
            }),
            Column::RecordID => {
                if let Origin::Record { record_id, .. } = r.origin {
                    use std::fmt::Write as _;
                    // An integrity finding about the file as a whole names no record.
                    if record_id == 0 && matches!(r.rule, RuleRef::Integrity(_)) {
                        out.push('-');
                    } else {
                        let _ = write!(out, "{record_id}");
                    }
                }
            }
            Column::Provider => {
                if self.style.no_abbreviations {
                    out.push_str(&r.provider);
                } else {
                    let abbrev = memo.providers.get(&r.provider, || {
                        crate::abbrev::provider(self.set.config(), &r.provider)
                    });
                    out.push_str(abbrev);
                }
            }
            Column::RuleCreationDate => push_date(&meta.date, out),
            Column::RuleFile => out.push_str(&meta.file_name),
            Column::RuleID => out.push_str(&meta.id),
            Column::EvtxFile => {
                if let Origin::Record { file, .. } = r.origin {
                    push_path(self.files, file, out);
                }
            }
            Column::RecoveredRecord => out.push_str(if r.recovered { "Y" } else { "" }),
            Column::SrcASN
            | Column::SrcCountry
            | Column::SrcCity
            | Column::TgtASN
            | Column::TgtCountry
            | Column::TgtCity => self.push_geo(c, r, memo, out),
            // Lists, above.
            Column::MitreTactics
            | Column::MitreTags
            | Column::OtherTags
            | Column::Details
            | Column::ExtraFieldInfo
            | Column::AllFieldInfo => {}
        }
        Slot::Own
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::row_cells::RowCells;
    use crate::test_row::row;
    use scanner_engine::CorrelationOrigin;
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
                .map(|p| InputFile::new(PathBuf::from(p), 1))
                .collect();
            Fixture { set, files }
        }

        fn layout(&self, p: Profile) -> Layout<'_> {
            Layout::new(&self.set, &self.files, TimeFormat::utc(), p)
        }
    }

    /// The cells of `rows` under `layout`, by header name, lists joined with ` ¦ ` (`-`
    /// for a field list without items); `None` for a row `-X` drops.
    fn render(layout: &Layout, rows: &[DetectInfo]) -> Vec<Option<Vec<(String, String)>>> {
        let mut cells = RowCells::new(layout);
        rows.iter()
            .map(|r| {
                cells.fill(r).then(|| {
                    let named = layout.named_columns().iter().zip(cells.cells(r));
                    named
                        .map(|((n, c), v)| {
                            let mut text = String::new();
                            v.write(" ¦ ", if c.is_field_list() { "-" } else { "" }, &mut text);
                            (n.to_string(), text)
                        })
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
            rule: RuleRef::Correlation(0),
            origin: Origin::Correlation(Box::new(CorrelationOrigin {
                files: [0, 1].into(),
                computers: Items::of(["DC01", "WS02"]),
                channels: Items::of(["Microsoft-Windows-Sysmon/Operational", "Security"]),
                event_ids: Items::of(["1", "4624"]),
            })),
            computer: "".into(),
            channel: "".into(),
            event_id: "".into(),
            provider: "-".into(),
            ..row(100, 0)
        }
    }

    #[test]
    fn cells_follow_the_profile_columns_in_order() {
        let f = Fixture::new();
        let layout = f.layout(Profile::Standard);
        let mut r = row(0, 42);
        r.details = Items::of(["Cmdline: whoami"]);
        r.extra = Some(Items::of(["User: bob"]));
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
        r.rule = RuleRef::Rule(1);
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
            rule: RuleRef::Rule(1),
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
            rule: RuleRef::Rule(1),
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
            ("Computer", "DC01 ¦ WS02"),
            ("EventID", "1 ¦ 4624"),
            ("Level", "crit"),
            // No record id.
            ("RecordID", ""),
            ("EvtxFile", "logs/a.evtx ¦ logs/b.evtx"),
        ];
        assert_cells(&layout, &correlation_row(), &expected);
    }

    #[test]
    fn critical_systems_raise_a_rows_level_when_one_of_its_computers_is_listed() {
        let f = Fixture::new();
        let critical = CriticalSystems::parse("ws02\nhost\n");
        let layout = f.layout(Profile::Verbose).with_critical_systems(critical);
        assert_eq!(layout.critical_systems().len(), 2);
        assert_cells(&layout, &row(0, 1), &[("Level", "high")]);
        assert_eq!(layout.level(&correlation_row()), Level::Emergency);
        let mut other = row(0, 1);
        other.computer = "ws01".into();
        assert_eq!(layout.level(&other), Level::Medium);
        assert_eq!(f.layout(Profile::Verbose).level(&row(0, 1)), Level::Medium);
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
                details: Items::of(["other"]),
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
            details: Items::of([details]),
            extra: Some(Items::of([all])),
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
