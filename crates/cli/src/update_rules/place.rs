//! Where a rule set lives and how a new one takes its place: the user's data folder,
//! folders made open to their owner only, no planted symlink followed, one update at a
//! time (a lock), and the swap that puts a new set in place whole or not at all.

use super::UpdateError;
use scanner_files::{Kind, OwnedDir};
use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The file in a set's `.git` folder recording where and when it was downloaded.
const SOURCE_FILE: &str = "scanner-update";

/// The user's rule set: `$XDG_DATA_HOME/scanner/rules`, else
/// `$HOME/.local/share/scanner/rules` (an `XDG_DATA_HOME` that is not absolute is
/// ignored, as the XDG specification says). `None` without either.
pub fn default_dir() -> Option<PathBuf> {
    let base = crate::user_dirs::base("XDG_DATA_HOME", ".local/share")?;
    Some(base.join("scanner").join("rules"))
}

/// Where a set lives: the folder holding it, opened once and checked as the user's own
/// and writable by no one else ([`OwnedDir`]), and the set's name in it. Every step of
/// an update inside that folder (the lock, leftovers, the new folder, the swap) goes
/// through its handle, so the folder swapped for a link mid-run is never written.
pub struct Place {
    parent: OwnedDir,
    name: OsString,
    target: PathBuf,
}

/// What is at a set's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetState {
    /// Nothing.
    Absent,
    /// An empty folder (of the user's, writable by no one else).
    Empty,
    /// A folder holding files.
    Holds,
}

impl Place {
    /// The place of `target`, its folder made (0700) when `create`, else `None` when it
    /// is missing. A folder that is a link, another user's or writable by others is
    /// refused.
    pub fn open(target: &Path, create: bool) -> Result<Option<Place>, UpdateError> {
        let name = target
            .file_name()
            .ok_or_else(|| UpdateError::Unsafe {
                path: target.to_path_buf(),
                reason: "does not end in a folder name",
            })?
            .to_os_string();
        let holder = scanner_files::folder_of(target);
        let opened = if create {
            OwnedDir::create(holder)
        } else {
            OwnedDir::open(holder)
        };
        let parent = match opened {
            Ok(d) => d,
            Err(e) if !create && e.is_not_found() => return Ok(None),
            Err(e) => return Err(UpdateError::Folder(e)),
        };
        Ok(Some(Place {
            parent,
            name,
            target: target.to_path_buf(),
        }))
    }

    /// The set's folder.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// What is at the set's name: nothing, or a folder of the user's (empty or not). A
    /// link, a file, or a folder another user owns or others may write is refused.
    pub fn state(&self) -> Result<SetState, UpdateError> {
        match self.parent.open_dir(&self.name) {
            Ok(set) => {
                let empty = set.entries().map_err(UpdateError::Folder)?.is_empty();
                Ok(if empty {
                    SetState::Empty
                } else {
                    SetState::Holds
                })
            }
            Err(e) if e.is_not_found() => Ok(SetState::Absent),
            Err(e) => Err(UpdateError::Folder(e)),
        }
    }

    /// A new folder beside the set for the set being fetched (`.NAME.KIND-PID-RANDOM`):
    /// created here and nowhere else (fails if anything, a link included, is at its
    /// name), 0700; its path, for git.
    pub fn new_sibling(&self, kind: &str) -> Result<PathBuf, UpdateError> {
        let mut name = OsString::from(".");
        name.push(&self.name);
        name.push(format!(
            ".{kind}-{}-{:016x}",
            std::process::id(),
            scanner_files::random_suffix()
        ));
        self.parent
            .create_new_dir(&name)
            .map_err(UpdateError::Folder)?;
        Ok(self.parent.shown(&name))
    }

    /// Removes what an update stopped outright (SIGKILL, a power cut) left beside the
    /// set: folders named as [`Place::new_sibling`] names them. Call with the lock held:
    /// no other update is running, so every such folder is stale. Links are left alone.
    /// An update stopped between the two renames of the swap without exchange (Windows)
    /// left no set under the name and the old one aside (`.NAME.old-…`): that set is put
    /// back first, not removed.
    pub fn remove_leftovers(&self) -> usize {
        let name = self.name.to_string_lossy();
        let prefixes = [format!(".{name}.new-"), format!(".{name}.old-")];
        let Ok(mut entries) = self.parent.entries() else {
            return 0;
        };
        if matches!(self.state(), Ok(SetState::Absent)) {
            let aside = entries.iter().find(|e| {
                e.kind == Kind::Folder && e.name.to_string_lossy().starts_with(&prefixes[1])
            });
            if let Some(e) = aside {
                if self.parent.rename(&e.name, &self.name).is_ok() {
                    let back = e.name.clone();
                    entries.retain(|e| e.name != back);
                }
            }
        }
        entries
            .iter()
            .filter(|e| e.kind == Kind::Folder)
            .filter(|e| {
                let n = e.name.to_string_lossy();
                prefixes.iter().any(|p| n.starts_with(p.as_str()))
            })
            .filter(|e| self.parent.remove_tree(&e.name).is_ok())
            .count()
    }

    /// Takes the update lock of the set (the file `.<name>.lock` beside it; never a
    /// link), failing at once when another update holds it.
    pub fn lock(&self) -> Result<UpdateLock, UpdateError> {
        let mut name = OsString::from(".");
        name.push(&self.name);
        name.push(".lock");
        let file = self
            .parent
            .open_or_create(&name)
            .map_err(UpdateError::Folder)?;
        if !scanner_files::try_lock_exclusive(&file) {
            return Err(UpdateError::Busy(self.parent.shown(&name)));
        }
        Ok(UpdateLock { _file: file })
    }

    /// Puts the folder `new` (made by [`Place::new_sibling`]) in place of the set whole;
    /// the set that was there (if any) is removed after. Where the system can exchange
    /// two folders in one step (Linux `renameat2`), the set's name always holds one
    /// complete set; elsewhere the old set is renamed aside, the new one renamed in, and
    /// the old one put back if that fails.
    pub fn swap_in(&self, new: &Path, had_old: bool) -> Result<(), UpdateError> {
        let guard = PENDING.lock().unwrap_or_else(|e| e.into_inner());
        let new = new.file_name().unwrap_or_default();
        if !had_old {
            self.parent
                .rename(new, &self.name)
                .map_err(UpdateError::Folder)?;
            drop(guard);
            return Ok(());
        }
        // After an exchange `new` names the old set.
        let old = if self
            .parent
            .exchange(new, &self.name)
            .map_err(UpdateError::Folder)?
        {
            new.to_os_string()
        } else {
            self.swap_by_renames(new)?
        };
        drop(guard);
        let _ = self.parent.remove_tree(&old);
        Ok(())
    }

    /// The swap where folders cannot be exchanged: the set renamed aside (`.NAME.old-…`),
    /// `new` renamed in, the set put back if that fails (Windows refuses to rename a
    /// folder holding a file another process has open). Returns the name aside. Stopped
    /// between the two renames, the next update puts the set back
    /// ([`Place::remove_leftovers`]).
    fn swap_by_renames(&self, new: &std::ffi::OsStr) -> Result<OsString, UpdateError> {
        let aside = self.new_sibling("old")?;
        let aside = aside.file_name().unwrap_or_default().to_os_string();
        self.parent
            .remove_tree(&aside)
            .map_err(UpdateError::Folder)?;
        self.parent
            .rename(&self.name, &aside)
            .map_err(UpdateError::Folder)?;
        if let Err(e) = self.parent.rename(new, &self.name) {
            let _ = self.parent.rename(&aside, &self.name);
            return Err(UpdateError::Folder(e));
        }
        Ok(aside)
    }
}

/// Held while an update runs; dropping it releases the lock.
pub struct UpdateLock {
    _file: File,
}

/// The fetched folder not yet in place, removed by the signal thread if the run is
/// interrupted (see `interrupt.rs`); the swap holds this lock, so a signal waits for it.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Remembers `p` as the folder to remove if the run is interrupted (`None`: forget).
pub fn set_pending(p: Option<&Path>) {
    *PENDING.lock().unwrap_or_else(|e| e.into_inner()) = p.map(Path::to_path_buf);
}

/// Removes the pending folder and keeps the lock (the process exits next).
pub fn remove_pending_and_hold() {
    let g = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = g.as_ref() {
        let _ = std::fs::remove_dir_all(p);
    }
    std::mem::forget(g);
}

/// Where and when a set was downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetSource {
    /// The repository's URL.
    pub url: String,
    /// When (UTC, RFC 3339).
    pub updated: String,
    /// The commit.
    pub commit: String,
}

/// Records `s` in the set `dir` (in its `.git` folder, which travels with the set).
pub fn write_source(dir: &Path, s: &SetSource) -> Result<(), UpdateError> {
    let p = dir.join(".git").join(SOURCE_FILE);
    let text = format!(
        "url\t{}\nupdated\t{}\ncommit\t{}\n",
        s.url, s.updated, s.commit
    );
    std::fs::write(&p, text).map_err(|e| UpdateError::io(&p, "cannot write", e))
}

/// What [`write_source`] recorded in `dir`, if anything readable.
pub fn read_source(dir: &Path) -> Option<SetSource> {
    let p = dir.join(".git").join(SOURCE_FILE);
    let m = std::fs::symlink_metadata(&p).ok()?;
    if !m.is_file() || m.len() > 64 * 1024 {
        return None;
    }
    let text = std::fs::read_to_string(&p).ok()?;
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('\t'))
            .map(str::to_string)
    };
    Some(SetSource {
        url: field("url")?,
        updated: field("updated")?,
        commit: field("commit").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The swap Windows takes (no exchange there), and an update stopped between its two
    /// renames: the set is replaced whole, and put back by the next update.
    #[test]
    fn the_swap_by_renames_replaces_the_set_and_an_interrupted_one_is_undone() {
        let root = std::env::temp_dir().join(format!("scanner-place-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir(&root).unwrap();
        let target = root.join("rules");
        let place = Place::open(&target, true).unwrap().unwrap();
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("old.yml"), "old").unwrap();
        let new = place.new_sibling("new").unwrap();
        std::fs::write(new.join("new.yml"), "new").unwrap();
        let aside = place.swap_by_renames(new.file_name().unwrap()).unwrap();
        assert_eq!(files(&target), ["new.yml"]);
        assert_eq!(files(&root.join(&aside)), ["old.yml"]);
        assert!(!new.exists());
        // Stopped after the first rename: nothing under the name, the set aside.
        std::fs::remove_dir_all(root.join(&aside)).unwrap();
        let aside = place.new_sibling("old").unwrap();
        std::fs::remove_dir(&aside).unwrap();
        std::fs::rename(&target, &aside).unwrap();
        let stray = place.new_sibling("new").unwrap();
        assert_eq!(place.state().unwrap(), SetState::Absent);
        assert_eq!(
            place.remove_leftovers(),
            1,
            "the unfinished new folder removed"
        );
        assert_eq!(files(&target), ["new.yml"], "the set put back");
        assert!(!aside.exists() && !stray.exists());
        // With a set in place, a folder aside is a leftover like any other.
        let aside = place.new_sibling("old").unwrap();
        assert_eq!(place.remove_leftovers(), 1);
        assert!(!aside.exists());
        assert_eq!(files(&target), ["new.yml"]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
