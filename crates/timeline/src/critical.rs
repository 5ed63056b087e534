//! `critical_systems.txt`: the computers (domain controllers, file servers, …) whose
//! detections are raised one level, as Hayabusa does (see [`Level::raised`]). The level
//! is the timeline's to show ([`crate::Layout::level`]): the rule set keeps the rule's.
//!
//! One name a line; `#` comments and blank lines are skipped; names are compared
//! without case and without surrounding spaces. An absent file lists nothing, so a
//! run without one is unchanged and pays nothing per row (the set is empty).

use scanner_rules::{FxHashMap, Level};

/// The computers listed in `critical_systems.txt`.
#[derive(Debug, Clone, Default)]
pub struct CriticalSystems {
    /// Lowercased names (the value is unused: a set without a second hasher type).
    names: FxHashMap<Box<str>, ()>,
}

impl CriticalSystems {
    /// The names of `text`, one a line (`#` comments and blank lines skipped).
    pub fn parse(text: &str) -> CriticalSystems {
        let names = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| (l.to_lowercase().into_boxed_str(), ()))
            .collect();
        CriticalSystems { names }
    }

    /// How many names are listed.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no name is listed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Whether any of `computers` is listed (a record's one computer, or a
    /// correlation's several: any of them, as Hayabusa).
    pub fn lists<'c>(&self, computers: impl IntoIterator<Item = &'c str>) -> bool {
        if self.names.is_empty() {
            return false;
        }
        computers.into_iter().any(|c| {
            let c = c.trim();
            if c.chars().any(char::is_uppercase) {
                self.names.contains_key(c.to_lowercase().as_str())
            } else {
                self.names.contains_key(c)
            }
        })
    }

    /// The level of a detection of a rule of `level` on `computers`: one step up when
    /// one of them is listed.
    pub fn level<'c>(&self, level: Level, computers: impl IntoIterator<Item = &'c str>) -> Level {
        if self.lists(computers) {
            level.raised()
        } else {
            level
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_computers_are_raised_one_step_without_case() {
        let c = CriticalSystems::parse("# DCs\n\n  DC01.Example.Corp  \nfs01\n");
        assert_eq!(c.len(), 2);
        assert_eq!(c.level(Level::Low, ["dc01.example.corp"]), Level::Medium);
        assert_eq!(c.level(Level::Medium, ["FS01"]), Level::High);
        assert_eq!(c.level(Level::High, ["Fs01"]), Level::Critical);
        assert_eq!(c.level(Level::Critical, ["fs01"]), Level::Emergency);
        assert_eq!(
            c.level(Level::Informational, ["fs01"]),
            Level::Informational
        );
        assert_eq!(c.level(Level::High, ["ws02"]), Level::High);
        assert_eq!(c.level(Level::High, ["# DCs"]), Level::High);
        // A correlation's row: any of its computers.
        assert_eq!(c.level(Level::Low, ["ws02", " FS01 "]), Level::Medium);
        assert_eq!(c.level(Level::Low, ["ws02", "ws03"]), Level::Low);
        assert_eq!(c.level(Level::Low, []), Level::Low);
        assert!(!CriticalSystems::default().lists(["fs01"]));
    }
}
