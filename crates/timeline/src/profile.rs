//! The timeline's columns and profiles, as Hayabusa names and orders them, and the
//! cell style options (`-M`, `-S`, `-b`, `-X`).

use scanner_engine::DETAILS_SEP as SEP;

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
}

impl Column {
    /// Whether the cell holds ` ¦ `-separated items (which `-M` and `-S` split).
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

use Column as C;
const MINIMAL: &[(&str, Column)] = &[
    ("Timestamp", C::Timestamp),
    ("RuleTitle", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("RecordID", C::RecordID),
    ("Details", C::Details),
];
const STANDARD: &[(&str, Column)] = &[
    ("Timestamp", C::Timestamp),
    ("RuleTitle", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("RecordID", C::RecordID),
    ("Details", C::Details),
    ("ExtraFieldInfo", C::ExtraFieldInfo),
    ("RuleID", C::RuleID),
];
const VERBOSE: &[(&str, Column)] = &[
    ("Timestamp", C::Timestamp),
    ("RuleTitle", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("MitreTactics", C::MitreTactics),
    ("MitreTags", C::MitreTags),
    ("OtherTags", C::OtherTags),
    ("RecordID", C::RecordID),
    ("Details", C::Details),
    ("ExtraFieldInfo", C::ExtraFieldInfo),
    ("RuleFile", C::RuleFile),
    ("RuleID", C::RuleID),
    ("EvtxFile", C::EvtxFile),
];
const ALL_FIELD_INFO: &[(&str, Column)] = &[
    ("Timestamp", C::Timestamp),
    ("RuleTitle", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("RecordID", C::RecordID),
    ("AllFieldInfo", C::AllFieldInfo),
    ("RuleFile", C::RuleFile),
    ("RuleID", C::RuleID),
    ("EvtxFile", C::EvtxFile),
];
const ALL_FIELD_INFO_VERBOSE: &[(&str, Column)] = &[
    ("Timestamp", C::Timestamp),
    ("RuleTitle", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("MitreTactics", C::MitreTactics),
    ("MitreTags", C::MitreTags),
    ("OtherTags", C::OtherTags),
    ("RecordID", C::RecordID),
    ("AllFieldInfo", C::AllFieldInfo),
    ("RuleFile", C::RuleFile),
    ("RuleID", C::RuleID),
    ("EvtxFile", C::EvtxFile),
];
const SUPER_VERBOSE: &[(&str, Column)] = &[
    ("Timestamp", C::Timestamp),
    ("RuleTitle", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("RuleAuthor", C::RuleAuthor),
    ("RuleModifiedDate", C::RuleModifiedDate),
    ("Status", C::Status),
    ("RecordID", C::RecordID),
    ("Details", C::Details),
    ("ExtraFieldInfo", C::ExtraFieldInfo),
    ("MitreTactics", C::MitreTactics),
    ("MitreTags", C::MitreTags),
    ("OtherTags", C::OtherTags),
    ("Provider", C::Provider),
    ("RuleCreationDate", C::RuleCreationDate),
    ("RuleFile", C::RuleFile),
    ("RuleID", C::RuleID),
    ("EvtxFile", C::EvtxFile),
];
const TIMESKETCH_MINIMAL: &[(&str, Column)] = &[
    ("datetime", C::Timestamp),
    ("timestamp_desc", C::TimestampDesc),
    ("message", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("MitreTactics", C::MitreTactics),
    ("MitreTags", C::MitreTags),
    ("OtherTags", C::OtherTags),
    ("RecordID", C::RecordID),
    ("Details", C::Details),
    ("RuleFile", C::RuleFile),
    ("RuleID", C::RuleID),
    ("EvtxFile", C::EvtxFile),
];
const TIMESKETCH_VERBOSE: &[(&str, Column)] = &[
    ("datetime", C::Timestamp),
    ("timestamp_desc", C::TimestampDesc),
    ("message", C::RuleTitle),
    ("Level", C::Level),
    ("Computer", C::Computer),
    ("Channel", C::Channel),
    ("EventID", C::EventID),
    ("MitreTactics", C::MitreTactics),
    ("MitreTags", C::MitreTags),
    ("OtherTags", C::OtherTags),
    ("RecordID", C::RecordID),
    ("Details", C::Details),
    ("ExtraFieldInfo", C::ExtraFieldInfo),
    ("RuleFile", C::RuleFile),
    ("RuleID", C::RuleID),
    ("EvtxFile", C::EvtxFile),
];

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
    pub fn named_columns(self) -> &'static [(&'static str, Column)] {
        match self {
            Profile::Minimal => MINIMAL,
            Profile::Standard => STANDARD,
            Profile::Verbose => VERBOSE,
            Profile::AllFieldInfo => ALL_FIELD_INFO,
            Profile::AllFieldInfoVerbose => ALL_FIELD_INFO_VERBOSE,
            Profile::SuperVerbose => SUPER_VERBOSE,
            Profile::TimesketchMinimal => TIMESKETCH_MINIMAL,
            Profile::TimesketchVerbose => TIMESKETCH_VERBOSE,
        }
    }

    /// The columns, in order.
    pub fn columns(self) -> impl Iterator<Item = Column> {
        self.named_columns().iter().map(|(_, c)| *c)
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
}

impl Style {
    /// The separator between the items of a multi-item cell.
    pub fn separator(self) -> &'static str {
        if self.multiline {
            "\r\n"
        } else if self.tab_separator {
            "\t"
        } else {
            SEP
        }
    }
}
