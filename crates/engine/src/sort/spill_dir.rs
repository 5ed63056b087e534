//! The private folder a scan's spilled runs go in: made on the first spill, under the
//! temporary folder, as `scanner-sort-PID-RANDOM` open to its owner only, and removed
//! when the last run in it goes ([`SpillDir`] is shared by the runs). Such folders of
//! runs that were killed outright are removed by the next run ([`remove_stale_spills`]).
//! Each store has its own folder, so the folder numbers the runs in it.

use scanner_files::StaleTemp;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const PREFIX: &str = "scanner-sort-";

/// A private folder for spilled runs, removed when dropped (the runs in it go first).
#[derive(Debug)]
pub(crate) struct SpillDir {
    path: PathBuf,
    /// The number of the next run made in the folder.
    next_run: AtomicU64,
}

impl SpillDir {
    /// Makes a new private folder in `parent`, under a name no one can know ahead.
    pub(crate) fn create(parent: &Path) -> io::Result<Arc<SpillDir>> {
        let mut last = None;
        for _ in 0..16 {
            let path = parent.join(format!(
                "{PREFIX}{}-{:016x}",
                std::process::id(),
                scanner_files::random_suffix()
            ));
            match scanner_files::create_temp_dir(&path) {
                Ok(()) => {
                    return Ok(Arc::new(SpillDir {
                        path,
                        next_run: AtomicU64::new(0),
                    }))
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::ErrorKind::AlreadyExists.into()))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// A path for a new run in the folder, `scanner-sort-PID-{name(n)}.run` with `n`
    /// never given before in it.
    pub(crate) fn new_run_path(&self, name: impl FnOnce(u64) -> String) -> PathBuf {
        let n = self.next_run.fetch_add(1, Ordering::Relaxed);
        self.path
            .join(format!("{PREFIX}{}-{}.run", std::process::id(), name(n)))
    }

    /// The folder held in `slot`, made in `parent` on first use (a store's runs share
    /// one); an error names `parent` and what the folder was to hold.
    pub(crate) fn get_or_create(
        slot: &mut Option<Arc<SpillDir>>,
        parent: &Path,
        holds: &str,
    ) -> io::Result<Arc<SpillDir>> {
        if let Some(d) = slot {
            return Ok(Arc::clone(d));
        }
        let d = SpillDir::create(parent).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot create a private folder for {holds} in {}: {e}",
                    parent.display()
                ),
            )
        })?;
        *slot = Some(Arc::clone(&d));
        Ok(d)
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = scanner_files::remove_temp_dir(&self.path);
    }
}

/// The process that made a spill folder (or, from earlier versions, a spill file
/// `scanner-sort-PID-N.run`) named `name`.
fn spill_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, tail) = rest.split_once('-')?;
    let well_formed = !tail.is_empty()
        && tail
            .trim_end_matches(".run")
            .bytes()
            .all(|b| b.is_ascii_hexdigit());
    if well_formed {
        pid.parse().ok()
    } else {
        None
    }
}

/// Removes from `parent` the spill folders and files of runs of this tool that were
/// killed before they could (see [`scanner_files::remove_stale_temp_files`]).
pub fn remove_stale_spills(parent: &Path) -> Vec<StaleTemp> {
    scanner_files::remove_stale_temp_files(parent, spill_owner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_spills_give_their_process() {
        assert_eq!(spill_owner("scanner-sort-42-00ff00ff00ff00ff"), Some(42));
        assert_eq!(spill_owner("scanner-sort-7-12.run"), Some(7));
        assert_eq!(spill_owner("scanner-sort-7-"), None);
        assert_eq!(spill_owner("scanner-sort-x-12.run"), None);
        assert_eq!(spill_owner("scanner-sort-7-notes.txt"), None);
        assert_eq!(spill_owner("other-7-12.run"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn spills_of_dead_runs_are_removed_and_live_ones_kept() {
        use std::os::unix::fs::PermissionsExt;
        let parent = crate::sort::tests::scratch("stale-spills");
        // A process that has ended: a child that exited.
        let dead = std::process::Command::new("true")
            .spawn()
            .and_then(|mut c| c.wait().map(|_| c.id()))
            .unwrap();
        let stale = parent.join(format!("{PREFIX}{dead}-00000000000000aa"));
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join(format!("{PREFIX}{dead}-0.run")), "rows").unwrap();
        std::fs::write(stale.join(format!("{PREFIX}{dead}-1.run")), "rows").unwrap();
        let old_file = parent.join(format!("{PREFIX}{dead}-3.run"));
        std::fs::write(&old_file, "rows").unwrap();
        // A symlink under a spill name is not followed, and its target stays.
        let victim = parent.join("victim");
        std::fs::write(&victim, "kept").unwrap();
        let link = parent.join(format!("{PREFIX}{dead}-00000000000000bb"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        // This process's own folder, and one of a running process (pid 1), stay.
        let mine = SpillDir::create(&parent).unwrap();
        let running = parent.join(format!("{PREFIX}1-00000000000000cc"));
        std::fs::create_dir(&running).unwrap();
        assert_eq!(
            std::fs::metadata(mine.path()).unwrap().permissions().mode() & 0o777,
            0o700
        );

        let removed = remove_stale_spills(&parent);
        let got: Vec<(PathBuf, usize)> =
            removed.iter().map(|s| (s.path.clone(), s.files)).collect();
        let mut want = vec![(stale.clone(), 2), (old_file.clone(), 1)];
        want.sort();
        assert_eq!(got, want);
        assert!(removed.iter().all(|s| s.pid == dead));
        assert!(!stale.exists() && !old_file.exists());
        assert!(link.symlink_metadata().is_ok());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept");
        assert!(mine.path().is_dir() && running.is_dir());
        let mine_path = mine.path().to_path_buf();
        drop(mine);
        assert!(
            !mine_path.exists(),
            "a spill folder goes with its last user"
        );
        let _ = std::fs::remove_dir_all(&parent);
    }
}
