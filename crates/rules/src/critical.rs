//! `critical_systems.txt`: the computers (domain controllers, file servers, …) whose
//! detections are raised one level, as Hayabusa does (see [`Level::raised`]).
//!
//! One name a line; `#` comments and blank lines are skipped; names are compared
//! without case and without surrounding spaces. An absent file lists nothing, so a
//! run without one is unchanged and pays nothing per row (the set is empty).

use crate::fields::FxHashMap;
use crate::meta::Level;
use crate::report::LoadError;
use crate::text_file::{self, read_error, TextFile};
use std::path::Path;

/// The computers listed in `critical_systems.txt`.
#[derive(Debug, Clone, Default)]
pub struct CriticalSystems {
    /// Lowercased names (the value is unused: a set without a second hasher type).
    names: FxHashMap<Box<str>, ()>,
}

/// What separates the computers of a correlation's row.
const SEP: &str = " ¦ ";

impl CriticalSystems {
    /// Reads `path`; an absent file gives an empty list. A file that is not regular,
    /// too large, not UTF-8 or unreadable is an error naming it.
    pub fn read(path: &Path) -> Result<CriticalSystems, LoadError> {
        let text = match text_file::read(path, TextFile::Config) {
            Ok(t) => t,
            Err(e) => {
                let absent = matches!(e.kind(), crate::ErrorKind::Io(io)
                    if io.kind() == std::io::ErrorKind::NotFound);
                if absent {
                    return Ok(CriticalSystems::default());
                }
                return Err(read_error(path, e));
            }
        };
        Ok(CriticalSystems::parse(&text))
    }

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

    /// Whether `computer` is listed; a correlation's row, whose computers are joined
    /// with ` ¦ `, is when any of them is (as Hayabusa).
    pub fn lists(&self, computer: &str) -> bool {
        if self.names.is_empty() {
            return false;
        }
        computer.split(SEP).any(|c| {
            let c = c.trim();
            if c.chars().any(char::is_uppercase) {
                self.names.contains_key(c.to_lowercase().as_str())
            } else {
                self.names.contains_key(c)
            }
        })
    }

    /// The level of a detection of a rule of `level` on `computer`: one step up when
    /// the computer is listed.
    pub fn level(&self, level: Level, computer: &str) -> Level {
        if self.lists(computer) {
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
        assert_eq!(c.level(Level::Low, "dc01.example.corp"), Level::Medium);
        assert_eq!(c.level(Level::Medium, "FS01"), Level::High);
        assert_eq!(c.level(Level::High, "Fs01"), Level::Critical);
        assert_eq!(c.level(Level::Critical, "fs01"), Level::Emergency);
        assert_eq!(c.level(Level::Informational, "fs01"), Level::Informational);
        assert_eq!(c.level(Level::High, "ws02"), Level::High);
        assert_eq!(c.level(Level::High, "# DCs"), Level::High);
        // A correlation's row: any of its computers.
        assert_eq!(c.level(Level::Low, "ws02 ¦ FS01"), Level::Medium);
        assert_eq!(c.level(Level::Low, "ws02 ¦ ws03"), Level::Low);
    }

    #[test]
    fn an_absent_file_lists_nothing_and_a_folder_is_an_error() {
        let d = std::env::temp_dir().join(format!("scanner-critical-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let absent = CriticalSystems::read(&d.join("critical_systems.txt")).unwrap();
        assert!(absent.is_empty());
        assert!(!absent.lists("anything"));
        let e = CriticalSystems::read(&d).unwrap_err().to_string();
        assert!(e.starts_with(&d.display().to_string()), "{e}");
        assert!(e.ends_with("not a regular file (a folder)"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
