//! What loading tells its caller: the rule documents that could not be loaded and
//! why, the rules loaded but disabled and why, and counts and timings. A leaf: the
//! loader fills it, the rule set carries it.

/// A document that could not be loaded.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct LoadError {
    /// The rule file.
    pub file: String,
    /// The document's position in the file (1-based).
    pub document: usize,
    /// The rule's title, when it could be read.
    pub title: Option<String>,
    /// Why.
    pub reason: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if self.document > 1 {
            write!(f, " (document {})", self.document)?;
        }
        if let Some(t) = &self.title {
            write!(f, " [{t}]")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Rules that share one `id`: all are loaded (as Hayabusa does), but whatever refers
/// to the id (a correlation, `exclude_rules.txt`, the timeline's RuleID column) cannot
/// tell them apart, so loading warns once per id.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DuplicateId {
    /// The id.
    pub id: String,
    /// The first few files that hold a rule with it, in load order.
    pub files: Vec<String>,
    /// How many rules (and correlations) have it.
    pub count: usize,
}

impl DuplicateId {
    /// How many files a warning lists.
    pub const LISTED: usize = 3;
}

impl std::fmt::Display for DuplicateId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rule id {} is shared by {} rules: {}",
            self.id,
            self.count,
            self.files.join(", ")
        )?;
        if self.count > self.files.len() {
            write!(f, " and {} more", self.count - self.files.len())?;
        }
        Ok(())
    }
}

/// Why a loaded rule is not enabled.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum Disabled {
    /// Listed in `exclude_rules.txt`.
    Excluded,
    /// Listed in `noisy_rules.txt`.
    Noisy,
    /// Not listed in `proven_rules.txt` (with `-P`).
    NotProven,
    /// `status: deprecated`.
    Deprecated,
    /// `status: unsupported`.
    Unsupported,
    /// Below `--min-level`.
    BelowMinLevel,
    /// Uses an `expand` placeholder that has no values.
    Placeholder,
    /// Its log source is not held by any Windows event log.
    Logsource,
    /// A derived rule with the same title is loaded.
    Duplicate,
    /// Not of the `--exact-level`.
    NotExactLevel,
    /// Left out by a tag, category or status option.
    Selected,
}

impl Disabled {
    /// A short label.
    pub fn label(self) -> &'static str {
        match self {
            Disabled::Excluded => "excluded",
            Disabled::Noisy => "noisy",
            Disabled::NotProven => "not in proven_rules.txt",
            Disabled::Deprecated => "deprecated",
            Disabled::Unsupported => "unsupported",
            Disabled::BelowMinLevel => "below min level",
            Disabled::Placeholder => "placeholder without values",
            Disabled::Logsource => "log source not in event logs",
            Disabled::Duplicate => "duplicate of a derived rule",
            Disabled::NotExactLevel => "not of the exact level",
            Disabled::Selected => "left out by tag, category or status options",
        }
    }
}

/// What loading did.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LoadReport {
    /// Rule files read.
    pub files: usize,
    /// Rule documents found (rules and correlations).
    pub documents: usize,
    /// Documents loaded.
    pub loaded: usize,
    /// Documents rejected, with reasons.
    pub errors: Vec<LoadError>,
    /// Loaded but disabled, with the reason.
    pub disabled: Vec<(Disabled, usize)>,
    /// Rules disabled for a reason the user can act on (placeholders, log sources,
    /// duplicates), each with its file and reason.
    pub disabled_rules: Vec<LoadError>,
    /// Ids held by more than one loaded rule or correlation, sorted by id.
    pub duplicate_ids: Vec<DuplicateId>,
    /// Rules (and correlations) enabled for the scan.
    pub enabled: usize,
    /// Problems with the config that let the rules load (a filter that applies to no
    /// rule).
    pub config_errors: Vec<String>,
    /// Config, log-source and placeholder files that could not be read or parsed: the
    /// rules would run with a config other than the one given, so a scan must not go on.
    pub config_failures: Vec<LoadError>,
    /// Compiled size (NFA bytes) of the distinct regexes, charged to
    /// [`REGEX_BUDGET`](crate::REGEX_BUDGET).
    pub regex_bytes: usize,
    /// Wall time of each loading phase (printed by `--debug`); not kept in the rule set
    /// cache (a set read from it has the phases of reading it).
    #[serde(skip)]
    pub timings: Vec<(&'static str, std::time::Duration)>,
    /// What the rule set cache did (not kept in it either).
    #[serde(skip)]
    pub cache: CacheUse,
}

/// How the rule set cache served a load, for `--debug` and `rules check`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// Why the cache folder could not be used: a warning.
    pub note: Option<String>,
    /// The rule set cache.
    pub set: SetCacheUse,
}

/// How the rule set cache served a load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetCacheUse {
    /// Its file, when one was looked for.
    pub file: Option<std::path::PathBuf>,
    /// Whether the set came from it.
    pub served: bool,
    /// The rule and config files and folders it was checked against (when served),
    /// or lists (when written).
    pub inputs: usize,
    /// Why it did not serve: none yet, another build's, an input changed, …
    pub missed: Option<String>,
    /// Why a file that was there could not be used (damaged, not the user's, …): a
    /// warning.
    pub note: Option<String>,
    /// Whether a new one was written.
    pub written: bool,
    /// Why none was written, when the load could have written one.
    pub not_written: Option<String>,
}
