//! `config/critical_systems.txt`, the list of computers whose detections are raised a
//! level: read by the timelines and extended by `config-critical-systems`, both from
//! the current folder as Hayabusa does.
//!
//! The current folder is often a case folder other local users can write, and the file
//! is neither an input nor an output the user named. So it is reached only through an
//! [`OwnedDir`]: its folder must be the user's own and writable by no one else, the file
//! is never read or replaced through a link, and it is rewritten by a rename inside the
//! checked folder. The timelines leave a file they may not trust unread, with a warning
//! (a planted folder must neither raise levels nor stop every run); the command that
//! writes it refuses to, naming the folder and why. Computer names come from evidence:
//! one holding a line break or other control character is never written (it would add
//! lines of the attacker's choosing to the file).

use scanner_files::{FileMode, OwnedDir, Why};
use scanner_timeline::CriticalSystems;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The file, relative to the current folder (Hayabusa's `config/critical_systems.txt`).
pub const DEFAULT: &str = "./config/critical_systems.txt";

/// The largest file read: a config file's allowance (site lists of hosts can be long).
const MAX_BYTES: u64 = 16 << 20;

/// The folder holding `path` and its name in it.
fn split(path: &Path) -> Result<(&Path, &OsStr), String> {
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    Ok((scanner_files::folder_of(path), name))
}

/// The text of the file `name` of `dir`, at most [`MAX_BYTES`] of UTF-8; `None` when
/// nothing is there.
fn read_text(dir: &OwnedDir, name: &OsStr) -> Result<Option<String>, String> {
    let Some(bytes) = dir.read(name, MAX_BYTES).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("{}: not UTF-8 text", dir.shown(name).display()))
}

/// The computers [`DEFAULT`] lists, for the timelines, and where they came from.
/// Nothing there, or a folder that may not be trusted (then with a warning unless
/// `quiet`), lists none; a file that is there but unreadable (not a regular file, a
/// link, too large, not UTF-8) is a config error.
pub fn read_default(quiet: bool) -> Result<Option<(CriticalSystems, PathBuf)>, String> {
    let path = Path::new(DEFAULT);
    let (dir, name) = split(path)?;
    let dir = match OwnedDir::open(dir) {
        Ok(d) => d,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) if matches!(e.why(), Why::Io(_)) => return Err(e.to_string()),
        Err(e) => {
            if !quiet {
                eprintln!(
                    "warning: {} not read: {e}; no computer's detections are raised",
                    path.display()
                );
            }
            return Ok(None);
        }
    };
    let Some(text) = read_text(&dir, name)? else {
        return Ok(None);
    };
    Ok(Some((CriticalSystems::parse(&text), dir.shown(name))))
}

/// A computer name fit to be a line of the file: no line break or other control
/// character (evidence chooses these names).
pub fn writable_name(name: &str) -> bool {
    !name.chars().any(char::is_control)
}

/// The file `config-critical-systems` extends, opened before any evidence is read: its
/// folder checked as the user's own (made, private, when missing) and its text read, so
/// that a folder or file that must not be written is refused before the scan.
pub struct ConfigFile {
    dir: OwnedDir,
    name: OsString,
    text: String,
}

impl ConfigFile {
    /// Opens `path` (absent is fine: it is written new).
    pub fn open(path: &Path) -> Result<ConfigFile, String> {
        let (dir, name) = split(path)?;
        let dir =
            OwnedDir::create(dir).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let text = read_text(&dir, name)?.unwrap_or_default();
        Ok(ConfigFile {
            dir,
            name: name.to_os_string(),
            text,
        })
    }

    /// Adds the `names` the file lacks (compared without case and surrounding spaces, as
    /// host names are) and replaces it inside its folder; returns how many were added.
    pub fn add(self, names: &[&str]) -> Result<usize, String> {
        let (text, added) = extended(self.text, names);
        if added > 0 {
            let mode = FileMode::KeepOr(scanner_files::new_file_mode());
            self.dir
                .write(&self.name, true, mode, |f| {
                    std::io::Write::write_all(f, text.as_bytes())
                })
                .map_err(|e| format!("cannot write {e}"))?;
        }
        Ok(added)
    }
}

/// `existing` with the names it lacks appended, one a line, and how many were added.
pub fn extended(mut text: String, names: &[&str]) -> (String, usize) {
    let mut have: std::collections::BTreeSet<String> =
        text.lines().map(|l| l.trim().to_lowercase()).collect();
    let mut added = 0;
    for n in names {
        // A computer both a domain controller and a file server is written once.
        if !have.insert(n.trim().to_lowercase()) {
            continue;
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(n);
        text.push('\n');
        added += 1;
    }
    (text, added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_added_once_without_case_and_after_a_last_line_without_break() {
        let (text, n) = extended("dc01\nFS01".into(), &["DC01", "fs02", "fs02 ", "ws03"]);
        assert_eq!(text, "dc01\nFS01\nfs02\nws03\n");
        assert_eq!(n, 2);
        assert!(writable_name("DC01.corp.example"));
        assert!(!writable_name("* * * * * root touch /tmp/x\nroot"));
        assert!(!writable_name("dc\r01"));
        assert!(!writable_name("dc\u{1b}[2J"));
    }
}
