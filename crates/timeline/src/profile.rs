//! The timeline's columns and profiles, as Hayabusa names and orders them, and the
//! cell style options (`-M`, `-S`, `-b`, `-X`).

/// Output columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Record time.
    Timestamp,
    /// The literal `hayabusa` (Timesketch's `timestamp_desc`).
    TimestampDesc,
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
    /// Rule `author`.
    RuleAuthor,
    /// Rule `modified`.
    RuleModifiedDate,
    /// Rule `status`.
    Status,
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
    /// Every event field.
    AllFieldInfo,
    /// Provider (abbreviated).
    Provider,
    /// Rule `date`.
    RuleCreationDate,
    /// Rule file name.
    RuleFile,
    /// Rule id.
    RuleID,
    /// Input file path.
    EvtxFile,
    /// `Y` for a record carved by `--recover-records` (appended only then).
    RecoveredRecord,
    /// `-G`: the source address's autonomous system organisation (appended only then,
    /// with the five below).
    SrcASN,
    /// `-G`: the source address's country.
    SrcCountry,
    /// `-G`: the source address's city.
    SrcCity,
    /// `-G`: the target address's autonomous system organisation.
    TgtASN,
    /// `-G`: the target address's country.
    TgtCountry,
    /// `-G`: the target address's city.
    TgtCity,
}

impl Column {
    /// The column a profile's header names: its own name, or one of the three the
    /// Timesketch profiles rename (`datetime`, `timestamp_desc`, `message`).
    pub fn of_header(header: &str) -> Option<Column> {
        use Column as C;
        Some(match header {
            "Timestamp" | "datetime" => C::Timestamp,
            "timestamp_desc" => C::TimestampDesc,
            "RuleTitle" | "message" => C::RuleTitle,
            "Level" => C::Level,
            "Computer" => C::Computer,
            "Channel" => C::Channel,
            "EventID" => C::EventID,
            "RuleAuthor" => C::RuleAuthor,
            "RuleModifiedDate" => C::RuleModifiedDate,
            "Status" => C::Status,
            "MitreTactics" => C::MitreTactics,
            "MitreTags" => C::MitreTags,
            "OtherTags" => C::OtherTags,
            "RecordID" => C::RecordID,
            "Details" => C::Details,
            "ExtraFieldInfo" => C::ExtraFieldInfo,
            "AllFieldInfo" => C::AllFieldInfo,
            "Provider" => C::Provider,
            "RuleCreationDate" => C::RuleCreationDate,
            "RuleFile" => C::RuleFile,
            "RuleID" => C::RuleID,
            "EvtxFile" => C::EvtxFile,
            "RecoveredRecord" => C::RecoveredRecord,
            "SrcASN" => C::SrcASN,
            "SrcCountry" => C::SrcCountry,
            "SrcCity" => C::SrcCity,
            "TgtASN" => C::TgtASN,
            "TgtCountry" => C::TgtCountry,
            "TgtCity" => C::TgtCity,
            _ => return None,
        })
    }

    /// Whether the CSV timeline separates the cell's items by the style's separator
    /// ([`Style::separator`]: `-M`'s line breaks, `-S`'s tabs); the items of other lists (a
    /// correlation's computers, channels, EventIDs and files) always by [`LIST_SEPARATOR`].
    pub fn is_multi(self) -> bool {
        matches!(
            self,
            Column::Details
                | Column::ExtraFieldInfo
                | Column::AllFieldInfo
                | Column::MitreTactics
                | Column::MitreTags
                | Column::OtherTags
        )
    }

    /// `-G`'s six columns, in the order they are appended to a profile's.
    pub const GEO: [(&'static str, Column); 6] = [
        ("SrcASN", Column::SrcASN),
        ("SrcCountry", Column::SrcCountry),
        ("SrcCity", Column::SrcCity),
        ("TgtASN", Column::TgtASN),
        ("TgtCountry", Column::TgtCountry),
        ("TgtCity", Column::TgtCity),
    ];

    /// Whether the column is one of `-G`'s (which the JSON timeline writes inside
    /// Details and AllFieldInfo, as Hayabusa does).
    pub fn is_geo(self) -> bool {
        matches!(
            self,
            Column::SrcASN
                | Column::SrcCountry
                | Column::SrcCity
                | Column::TgtASN
                | Column::TgtCountry
                | Column::TgtCity
        )
    }

    /// Whether the JSON timeline writes the cell as an object of its `name: value` items.
    pub fn is_field_list(self) -> bool {
        matches!(
            self,
            Column::Details | Column::ExtraFieldInfo | Column::AllFieldInfo
        )
    }
}

/// Output profiles (Hayabusa's names, column names and orders).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `minimal`
    Minimal,
    /// `standard` (default)
    Standard,
    /// `verbose`
    Verbose,
    /// `all-field-info`
    AllFieldInfo,
    /// `all-field-info-verbose`
    AllFieldInfoVerbose,
    /// `super-verbose`
    SuperVerbose,
    /// `timesketch-minimal`
    TimesketchMinimal,
    /// `timesketch-verbose`
    TimesketchVerbose,
}

/// Each profile's columns by their header names, in order (Hayabusa's profiles, as its
/// `config/profiles.yaml` names them); [`Column::of_header`] reads each name.
const MINIMAL: &str = "Timestamp RuleTitle Level Computer Channel EventID RecordID Details";
const STANDARD: &str = "\
    Timestamp RuleTitle Level Computer Channel EventID RecordID Details ExtraFieldInfo \
    RuleID";
const VERBOSE: &str = "\
    Timestamp RuleTitle Level Computer Channel EventID MitreTactics MitreTags OtherTags \
    RecordID Details ExtraFieldInfo RuleFile RuleID EvtxFile";
const ALL_FIELD_INFO: &str = "\
    Timestamp RuleTitle Level Computer Channel EventID RecordID AllFieldInfo RuleFile \
    RuleID EvtxFile";
const ALL_FIELD_INFO_VERBOSE: &str = "\
    Timestamp RuleTitle Level Computer Channel EventID MitreTactics MitreTags OtherTags \
    RecordID AllFieldInfo RuleFile RuleID EvtxFile";
const SUPER_VERBOSE: &str = "\
    Timestamp RuleTitle Level Computer Channel EventID RuleAuthor RuleModifiedDate Status \
    RecordID Details ExtraFieldInfo MitreTactics MitreTags OtherTags Provider \
    RuleCreationDate RuleFile RuleID EvtxFile";
const TIMESKETCH_MINIMAL: &str = "\
    datetime timestamp_desc message Level Computer Channel EventID MitreTactics MitreTags \
    OtherTags RecordID Details RuleFile RuleID EvtxFile";
const TIMESKETCH_VERBOSE: &str = "\
    datetime timestamp_desc message Level Computer Channel EventID MitreTactics MitreTags \
    OtherTags RecordID Details ExtraFieldInfo RuleFile RuleID EvtxFile";

impl Profile {
    /// Every profile, in the order `list-profiles` shows them.
    pub const ALL: [Profile; 8] = [
        Profile::Minimal,
        Profile::Standard,
        Profile::Verbose,
        Profile::AllFieldInfo,
        Profile::AllFieldInfoVerbose,
        Profile::SuperVerbose,
        Profile::TimesketchMinimal,
        Profile::TimesketchVerbose,
    ];

    /// Parses a profile name.
    pub fn parse(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Minimal => "minimal",
            Profile::Standard => "standard",
            Profile::Verbose => "verbose",
            Profile::AllFieldInfo => "all-field-info",
            Profile::AllFieldInfoVerbose => "all-field-info-verbose",
            Profile::SuperVerbose => "super-verbose",
            Profile::TimesketchMinimal => "timesketch-minimal",
            Profile::TimesketchVerbose => "timesketch-verbose",
        }
    }

    /// The columns, in order, each with its header name.
    pub fn named_columns(self) -> Vec<(&'static str, Column)> {
        let headers = match self {
            Profile::Minimal => MINIMAL,
            Profile::Standard => STANDARD,
            Profile::Verbose => VERBOSE,
            Profile::AllFieldInfo => ALL_FIELD_INFO,
            Profile::AllFieldInfoVerbose => ALL_FIELD_INFO_VERBOSE,
            Profile::SuperVerbose => SUPER_VERBOSE,
            Profile::TimesketchMinimal => TIMESKETCH_MINIMAL,
            Profile::TimesketchVerbose => TIMESKETCH_VERBOSE,
        };
        let column = |h| Column::of_header(h).expect("a profile names its columns");
        headers.split_whitespace().map(|h| (h, column(h))).collect()
    }

    /// The columns, in order.
    pub fn columns(self) -> impl Iterator<Item = Column> {
        self.named_columns().into_iter().map(|(_, c)| c)
    }

    /// Whether the profile prints ExtraFieldInfo (so the detector renders it).
    pub fn has_extra(self) -> bool {
        self.columns().any(|c| c == Column::ExtraFieldInfo)
    }

    /// Whether the profile prints AllFieldInfo (so the detector renders it).
    pub fn has_all_fields(self) -> bool {
        self.columns().any(|c| c == Column::AllFieldInfo)
    }
}

/// How cells are written, beyond the profile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// `-M`: the items of multi-item cells one per line (CRLF inside the cell).
    pub multiline: bool,
    /// `-S`: the items of multi-item cells separated by tabs.
    pub tab_separator: bool,
    /// `-b`: full level, channel and provider names.
    pub no_abbreviations: bool,
    /// `-X`: rows identical to an earlier row with the same timestamp (every column
    /// but EvtxFile) are dropped.
    pub remove_duplicates: bool,
    /// `-R`: a Details, ExtraFieldInfo or AllFieldInfo cell equal to the previous
    /// row's cell in that column is written `DUP`.
    pub remove_duplicate_data: bool,
    /// `--excel-safe`: CSV cells a spreadsheet would take for a formula (beginning with
    /// `=`, `+`, `-`, `@`, tab or CR, also after spaces; a lone `-` and plain numbers
    /// aside) are written with a leading `'`, their text kept after it.
    pub excel_safe: bool,
}

/// The separator between the items of a list cell: Hayabusa's, space, U+00A6 BROKEN
/// BAR, space. The encoders' alone: rows keep their items apart.
pub const LIST_SEPARATOR: &str = " ¦ ";

impl Style {
    /// The separator between the items of a multi-item cell ([`Column::is_multi`]).
    pub fn separator(self) -> &'static str {
        if self.multiline {
            "\r\n"
        } else if self.tab_separator {
            "\t"
        } else {
            LIST_SEPARATOR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(p: Profile) -> Vec<&'static str> {
        p.named_columns().iter().map(|(n, _)| *n).collect()
    }

    /// The six columns every profile but Timesketch's starts with, then `rest`.
    fn with_first(rest: &[&'static str]) -> Vec<&'static str> {
        let first = [
            "Timestamp",
            "RuleTitle",
            "Level",
            "Computer",
            "Channel",
            "EventID",
        ];
        [&first[..], rest].concat()
    }

    #[test]
    fn every_profile_name_parses_back_to_the_same_profile() {
        let mut names = Vec::new();
        for p in Profile::ALL {
            assert_eq!(Profile::parse(p.name()), Some(p), "{}", p.name());
            names.push(p.name());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Profile::ALL.len(), "names are distinct");
        for unknown in ["", "Standard", "STANDARD", " standard", "all", "timesketch"] {
            assert_eq!(Profile::parse(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn minimal_standard_and_verbose_list_their_columns_in_hayabusa_order() {
        let minimal = with_first(&["RecordID", "Details"]);
        assert_eq!(header(Profile::Minimal), minimal);
        let standard = [&minimal[..], &["ExtraFieldInfo", "RuleID"]].concat();
        assert_eq!(header(Profile::Standard), standard);
        assert_eq!(
            header(Profile::Verbose),
            with_first(&[
                "MitreTactics",
                "MitreTags",
                "OtherTags",
                "RecordID",
                "Details",
                "ExtraFieldInfo",
                "RuleFile",
                "RuleID",
                "EvtxFile",
            ])
        );
    }

    #[test]
    fn all_field_info_profiles_replace_details_with_every_field() {
        let mut expected =
            with_first(&["RecordID", "AllFieldInfo", "RuleFile", "RuleID", "EvtxFile"]);
        assert_eq!(header(Profile::AllFieldInfo), expected);
        // The verbose one adds the three MITRE columns before RecordID.
        expected.splice(6..6, ["MitreTactics", "MitreTags", "OtherTags"]);
        assert_eq!(header(Profile::AllFieldInfoVerbose), expected);
    }

    #[test]
    fn super_verbose_adds_rule_metadata_and_provider_columns() {
        assert_eq!(
            header(Profile::SuperVerbose),
            with_first(&[
                "RuleAuthor",
                "RuleModifiedDate",
                "Status",
                "RecordID",
                "Details",
                "ExtraFieldInfo",
                "MitreTactics",
                "MitreTags",
                "OtherTags",
                "Provider",
                "RuleCreationDate",
                "RuleFile",
                "RuleID",
                "EvtxFile",
            ])
        );
    }

    #[test]
    fn timesketch_profiles_rename_time_and_title_and_differ_by_extra_field_info() {
        let minimal = header(Profile::TimesketchMinimal);
        assert_eq!(minimal[..3], ["datetime", "timestamp_desc", "message"]);
        let cols: Vec<Column> = Profile::TimesketchMinimal.columns().take(3).collect();
        assert_eq!(
            cols,
            [Column::Timestamp, Column::TimestampDesc, Column::RuleTitle]
        );
        let mut verbose = minimal.clone();
        let details = verbose.iter().position(|n| *n == "Details").unwrap();
        verbose.insert(details + 1, "ExtraFieldInfo");
        assert_eq!(header(Profile::TimesketchVerbose), verbose);
        assert_eq!(minimal.last(), Some(&"EvtxFile"));
    }

    #[test]
    fn other_profiles_name_each_column_after_its_variant_and_never_twice() {
        for p in Profile::ALL {
            let cols: Vec<Column> = p.columns().collect();
            for (i, c) in cols.iter().enumerate() {
                assert!(!cols[..i].contains(c), "{c:?} twice in {}", p.name());
            }
            if p.name().starts_with("timesketch") {
                continue;
            }
            for (name, c) in p.named_columns() {
                assert_eq!(name, format!("{c:?}"), "{}", p.name());
            }
        }
    }

    #[test]
    fn extra_and_all_field_flags_follow_the_profile_columns() {
        use Profile as P;
        let extra: Vec<Profile> = P::ALL.into_iter().filter(|p| p.has_extra()).collect();
        assert_eq!(
            extra,
            [
                P::Standard,
                P::Verbose,
                P::SuperVerbose,
                P::TimesketchVerbose
            ]
        );
        let all: Vec<Profile> = P::ALL.into_iter().filter(|p| p.has_all_fields()).collect();
        assert_eq!(all, [P::AllFieldInfo, P::AllFieldInfoVerbose]);
    }

    #[test]
    fn separator_is_crlf_with_multiline_then_tab_then_the_details_separator() {
        let style = |multiline, tab_separator| Style {
            multiline,
            tab_separator,
            ..Style::default()
        };
        assert_eq!(style(false, false).separator(), " ¦ ");
        assert_eq!(style(false, false).separator(), LIST_SEPARATOR);
        assert_eq!(style(false, true).separator(), "\t");
        assert_eq!(style(true, false).separator(), "\r\n");
        assert_eq!(style(true, true).separator(), "\r\n", "-M wins over -S");
    }

    #[test]
    fn only_item_lists_are_multi_and_only_field_lists_are_objects() {
        for p in Profile::ALL {
            for c in p.columns() {
                if c.is_field_list() {
                    assert!(c.is_multi(), "{c:?}");
                }
            }
        }
        for c in [Column::MitreTactics, Column::MitreTags, Column::OtherTags] {
            assert!(c.is_multi() && !c.is_field_list(), "{c:?}");
        }
        for c in [
            Column::Timestamp,
            Column::RuleTitle,
            Column::EvtxFile,
            Column::Level,
        ] {
            assert!(!c.is_multi() && !c.is_field_list(), "{c:?}");
        }
    }
}
