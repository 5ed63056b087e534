//! Field names: from the names rules use to the event paths records hold.
//!
//! Every field a loaded rule (or a Details template) reads is interned once, at load
//! time, into a [`FieldTable`] and given a dense [`FieldId`]. A record view then fills
//! one slot per id, so a matcher reads a field by index instead of hashing a name
//! per record.

/// Hash maps and sets keyed with rustc's small, fast, non-cryptographic hasher (field
/// paths, channel names, short values).
pub use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

/// Index of an interned field path.
pub type FieldId = u32;

/// `Event.System.Channel`: always interned first, the rule index needs it.
pub const CHANNEL: FieldId = 0;
/// `Event.System.EventID`: always interned second.
pub const EVENT_ID: FieldId = 1;

/// System fields every rule may name without an alias table, by their usual Sigma
/// names, with their paths under `Event.System.`.
const SYSTEM_NAMES: &[(&str, &str)] = &[
    ("Channel", "Channel"),
    ("EventID", "EventID"),
    ("Computer", "Computer"),
    ("Provider_Name", "Provider_attributes.Name"),
    ("Provider_Guid", "Provider_attributes.Guid"),
    ("EventRecordID", "EventRecordID"),
    ("Level", "Level"),
    ("Task", "Task"),
    ("Opcode", "Opcode"),
    ("Keywords", "Keywords"),
    ("Version", "Version"),
    ("Security_UserID", "Security_attributes.UserID"),
    ("Execution_ProcessID", "Execution_attributes.ProcessID"),
    ("Execution_ThreadID", "Execution_attributes.ThreadID"),
    ("TimeCreated", "TimeCreated_attributes.SystemTime"),
    (
        "TimeCreated_SystemTime",
        "TimeCreated_attributes.SystemTime",
    ),
    (
        "Provider_EventSourceName",
        "Provider_attributes.EventSourceName",
    ),
    (
        "Correlation_ActivityID",
        "Correlation_attributes.ActivityID",
    ),
    (
        "Correlation_RelatedActivityID",
        "Correlation_attributes.RelatedActivityID",
    ),
    ("EventID_Qualifiers", "EventID_attributes.Qualifiers"),
];

/// Longest `EventData` name with spaces that is looked up without them.
const MAX_SPACED_NAME: usize = 64;

/// The interned field paths of a rule set, and the alias table that maps rule field
/// names to event paths.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FieldTable {
    aliases: FxHashMap<Box<str>, Box<str>>,
    by_path: FxHashMap<Box<str>, FieldId>,
    /// Fields resolved as `Event.EventData.<name>`, by `<name>`: a `UserData` leaf
    /// named the same falls back to them.
    data_names: FxHashMap<Box<str>, FieldId>,
    paths: Vec<Box<str>>,
    /// Stands for what [`FieldTable::lookup_leaf`] answers: unique to this table (and
    /// its clones), renewed whenever a path is interned, so callers may keep answers
    /// for as long as it holds. A table read back from a rule set cache gets a new one.
    #[serde(skip, default = "next_version")]
    version: u64,
}

/// The next [`FieldTable::version`].
static VERSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_version() -> u64 {
    VERSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for FieldTable {
    fn default() -> Self {
        Self::new()
    }
}

impl FieldTable {
    /// A table with the built-in System names and `Channel`/`EventID` interned.
    pub fn new() -> Self {
        let mut t = FieldTable {
            aliases: FxHashMap::default(),
            by_path: FxHashMap::default(),
            data_names: FxHashMap::default(),
            paths: Vec::new(),
            version: next_version(),
        };
        for (name, path) in SYSTEM_NAMES {
            t.aliases
                .insert((*name).into(), format!("Event.System.{path}").into());
        }
        let c = t.intern_path("Event.System.Channel");
        let e = t.intern_path("Event.System.EventID");
        debug_assert_eq!((c, e), (CHANNEL, EVENT_ID));
        t
    }

    /// Adds `alias → path` (from `eventkey_alias.txt`); a later entry wins.
    pub fn add_alias(&mut self, alias: &str, path: &str) {
        self.aliases.insert(alias.into(), path.into());
    }

    /// The event path a rule field name stands for: the alias table first, then a
    /// dotted name as a literal path, else `Event.EventData.<name>`.
    pub fn path_of(&self, name: &str) -> String {
        if let Some(p) = self.aliases.get(name) {
            return p.to_string();
        }
        if name.contains('.') {
            return name.to_string();
        }
        format!("Event.EventData.{name}")
    }

    /// Interns the field a rule names, returning its id.
    pub fn intern(&mut self, name: &str) -> FieldId {
        let path = self.path_of(name);
        self.intern_path(&path)
    }

    /// Interns an event path.
    pub fn intern_path(&mut self, path: &str) -> FieldId {
        if let Some(&id) = self.by_path.get(path) {
            return id;
        }
        let id = self.paths.len() as FieldId;
        self.paths.push(path.into());
        self.by_path.insert(path.into(), id);
        if let Some(name) = path.strip_prefix("Event.EventData.") {
            self.data_names.insert(name.into(), id);
        }
        self.version = next_version();
        id
    }

    /// Changes whenever [`FieldTable::lookup_leaf`] may answer differently; two tables
    /// share a version only when one is an unchanged clone of the other.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The ids of the fields a record leaf at `path` fills: the field interned for the
    /// exact path, and for `Event.UserData.<X>.<name>` also the field
    /// `Event.EventData.<name>` (rules name UserData fields by their plain name), for
    /// `Event.EventData.<name with spaces>` also the field named without them (Windows
    /// Defender writes `Threat Name`, Sigma rules read `ThreatName`).
    #[inline]
    pub fn lookup_leaf(&self, path: &str) -> (Option<FieldId>, Option<FieldId>) {
        let exact = self.by_path.get(path).copied();
        let by_name = |name: &str| {
            let id = self.data_names.get(name).copied();
            (exact, id.filter(|&id| Some(id) != exact))
        };
        if let Some(name) = path.strip_prefix("Event.EventData.") {
            if name.contains(' ') && name.len() <= MAX_SPACED_NAME {
                let mut buf = [0u8; MAX_SPACED_NAME];
                let mut n = 0;
                for &b in name.as_bytes().iter().filter(|&&b| b != b' ') {
                    buf[n] = b;
                    n += 1;
                }
                // Removing ASCII spaces keeps UTF-8 valid.
                return by_name(std::str::from_utf8(&buf[..n]).unwrap_or(""));
            }
            return (exact, None);
        }
        if path.starts_with("Event.UserData.") {
            return by_name(&path[path.rfind('.').map_or(0, |i| i + 1)..]);
        }
        (exact, None)
    }

    /// The id of an already interned rule field name.
    pub fn get(&self, name: &str) -> Option<FieldId> {
        self.by_path.get(self.path_of(name).as_str()).copied()
    }

    /// Whether it holds together (as read back from a rule set cache): Channel and
    /// EventID first, and every id it maps a name to within it.
    pub(crate) fn is_sound(&self) -> bool {
        let within = |id: &FieldId| (*id as usize) < self.paths.len();
        self.paths.len() > EVENT_ID as usize
            && self.paths.len() <= FieldId::MAX as usize
            && self.by_path.values().all(within)
            && self.data_names.values().all(within)
    }

    /// Number of interned fields (the size of a record's slot array).
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether nothing is interned (never true: Channel and EventID always are).
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The event path of an id.
    pub fn path(&self, id: FieldId) -> &str {
        &self.paths[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_names_and_eventdata_default() {
        let mut t = FieldTable::new();
        assert_eq!(t.intern("Channel"), CHANNEL);
        assert_eq!(t.intern("EventID"), EVENT_ID);
        let p = t.intern("Provider_Name");
        assert_eq!(t.path(p), "Event.System.Provider_attributes.Name");
        let c = t.intern("CommandLine");
        assert_eq!(t.path(c), "Event.EventData.CommandLine");
        let d = t.intern("Event.System.Computer");
        assert_eq!(t.intern("Computer"), d);
    }

    #[test]
    fn alias_wins_and_userdata_falls_back() {
        let mut t = FieldTable::new();
        t.add_alias("DevID", "Event.UserData.Install.DeviceInstanceID");
        let id = t.intern("DevID");
        assert_eq!(
            t.lookup_leaf("Event.UserData.Install.DeviceInstanceID"),
            (Some(id), None)
        );
        let s = t.intern("SubjectUserName");
        assert_eq!(
            t.lookup_leaf("Event.UserData.LogFileCleared.SubjectUserName"),
            (None, Some(s))
        );
        let exact = t.intern("Event.UserData.LogFileCleared.SubjectUserName");
        assert_eq!(
            t.lookup_leaf("Event.UserData.LogFileCleared.SubjectUserName"),
            (Some(exact), Some(s))
        );
        assert_eq!(t.lookup_leaf("Event.EventData.Other"), (None, None));
    }

    #[test]
    fn system_attributes_and_names_with_spaces() {
        let mut t = FieldTable::new();
        let time = t.intern("TimeCreated_SystemTime");
        assert_eq!(
            t.path(time),
            "Event.System.TimeCreated_attributes.SystemTime"
        );
        let threat = t.intern("ThreatName");
        assert_eq!(
            t.lookup_leaf("Event.EventData.Threat Name"),
            (None, Some(threat))
        );
        assert_eq!(t.lookup_leaf("Event.EventData.Source Name"), (None, None));
        let spaced = t.intern("Event.EventData.Threat Name");
        assert_eq!(
            t.lookup_leaf("Event.EventData.Threat Name"),
            (Some(spaced), Some(threat))
        );
    }
}
