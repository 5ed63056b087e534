//! What a rule says about itself: title, id, level, status, log source, tags and the
//! rest of the metadata the timeline shows. A leaf: rules, correlations and the loader
//! all read it, and it reads none of them.

use crate::error::{ErrorKind, RuleError};
use compact_str::CompactString;
use yaml_serde::{Mapping, Value as Yaml};

/// Sigma levels, lowest first, and Hayabusa's `emergency` above them: no rule has it, a
/// row gets it when its rule is `critical` and its computer is listed in
/// `critical_systems.txt` (see [`Level::raised`]).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum Level {
    /// `informational`
    #[default]
    Informational,
    /// `low`
    Low,
    /// `medium`
    Medium,
    /// `high`
    High,
    /// `critical`
    Critical,
    /// `emergency`: a `critical` detection on a critical system; never a rule's level.
    Emergency,
}

impl Level {
    /// All levels, lowest first.
    pub const ALL: [Level; 6] = [
        Level::Informational,
        Level::Low,
        Level::Medium,
        Level::High,
        Level::Critical,
        Level::Emergency,
    ];

    /// Parses a Sigma level name (`informational`, `info`, `low`, `medium`, `med`, `high`,
    /// `critical`, `crit`): a rule's `level:`, `-m` and `-e`. `emergency` is none of
    /// them: no rule can have it (see [`Level::Emergency`]).
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "informational" | "info" => Level::Informational,
            "low" => Level::Low,
            "medium" | "med" => Level::Medium,
            "high" => Level::High,
            "critical" | "crit" => Level::Critical,
            _ => return None,
        })
    }

    /// The full name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Informational => "informational",
            Level::Low => "low",
            Level::Medium => "medium",
            Level::High => "high",
            Level::Critical => "critical",
            Level::Emergency => "emergency",
        }
    }

    /// Hayabusa's short name (`info`, `low`, `med`, `high`, `crit`, `emer`).
    pub fn abbrev(self) -> &'static str {
        match self {
            Level::Informational => "info",
            Level::Low => "low",
            Level::Medium => "med",
            Level::High => "high",
            Level::Critical => "crit",
            Level::Emergency => "emer",
        }
    }

    /// One step up, as Hayabusa raises a detection on a critical system: low → medium →
    /// high → critical → emergency; informational and emergency stay.
    pub fn raised(self) -> Level {
        match self {
            Level::Informational => Level::Informational,
            Level::Low => Level::Medium,
            Level::Medium => Level::High,
            Level::High => Level::Critical,
            Level::Critical | Level::Emergency => Level::Emergency,
        }
    }
}

/// The `logsource` of a rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogSource {
    /// `product`
    pub product: Option<CompactString>,
    /// `category`
    pub category: Option<CompactString>,
    /// `service`
    pub service: Option<CompactString>,
}

/// What the timeline needs to know about a rule; nothing else is kept.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct RuleMeta {
    /// `title`
    pub title: CompactString,
    /// `id`, or `-`.
    pub id: CompactString,
    /// `name` (correlations refer to rules by it).
    pub name: Option<CompactString>,
    /// `level`
    pub level: Level,
    /// `status`, or empty.
    pub status: CompactString,
    /// `author`, or `-`.
    pub author: CompactString,
    /// `date`, or `-`.
    pub date: CompactString,
    /// `modified`, or empty.
    pub modified: CompactString,
    /// `tags`
    pub tags: Vec<CompactString>,
    /// Hayabusa's `details:` template.
    pub details: Option<Box<str>>,
    /// The rule file's path as given.
    pub path: Box<str>,
    /// The rule file's name.
    pub file_name: CompactString,
    /// `logsource`
    pub logsource: LogSource,
    /// `related` ids (id, type).
    pub related: Vec<(CompactString, CompactString)>,
}

fn text(doc: &Mapping, key: &str) -> Option<String> {
    doc.get(key).and_then(scanner_yaml::scalar_text)
}

/// Reads a rule document's metadata (everything but the detection).
pub fn read(doc: &Mapping, path: &str) -> Result<RuleMeta, RuleError> {
    let level = match doc.get("level") {
        None | Some(Yaml::Null) => Level::Informational,
        Some(Yaml::String(s)) => {
            Level::parse(s).ok_or_else(|| ErrorKind::UnknownLevel(s.clone()))?
        }
        Some(_) => return Err(ErrorKind::Malformed("level is not text").into()),
    };
    let tags = match doc.get("tags") {
        Some(Yaml::Sequence(t)) => t
            .iter()
            .filter_map(|t| t.as_str().map(CompactString::from))
            .collect(),
        _ => Vec::new(),
    };
    let logsource = match doc.get("logsource") {
        Some(Yaml::Mapping(m)) => LogSource {
            product: text(m, "product").map(Into::into),
            category: text(m, "category").map(Into::into),
            service: text(m, "service").map(Into::into),
        },
        _ => LogSource::default(),
    };
    let related = match doc.get("related") {
        Some(Yaml::Sequence(items)) => items
            .iter()
            .filter_map(|i| {
                let m = i.as_mapping()?;
                Some((
                    text(m, "id")?.into(),
                    text(m, "type").unwrap_or_default().into(),
                ))
            })
            .collect(),
        _ => Vec::new(),
    };
    let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    Ok(RuleMeta {
        title: text(doc, "title")
            .unwrap_or_else(|| file_name.to_string())
            .into(),
        id: text(doc, "id").unwrap_or_else(|| "-".into()).into(),
        name: text(doc, "name").map(Into::into),
        level,
        status: text(doc, "status").unwrap_or_default().into(),
        author: text(doc, "author").unwrap_or_else(|| "-".into()).into(),
        date: text(doc, "date").unwrap_or_else(|| "-".into()).into(),
        modified: text(doc, "modified").unwrap_or_default().into(),
        tags,
        details: text(doc, "details").map(String::into_boxed_str),
        path: path.into(),
        file_name: file_name.into(),
        logsource,
        related,
    })
}
