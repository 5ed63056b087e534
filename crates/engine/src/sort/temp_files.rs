//! The temporary files this process has made and not yet removed (spilled runs of
//! detections, outputs being written), so that a run stopped by a signal can remove
//! them before it exits instead of leaving them behind.
//!
//! Files are created, removed and forgotten under one lock, and [`remove_all_and_hold`] keeps
//! that lock until the process exits: no file can appear after the clean-up.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates `path` for reading and writing and remembers it until [`forget`]. It fails
/// when anything is at `path` already, a symlink included (never followed), and the
/// file is readable by its owner only (0600 on Unix): detections are evidence.
pub fn create(path: &Path) -> io::Result<File> {
    let mut live = live();
    let mut o = OpenOptions::new();
    o.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(path)?;
    live.push(path.to_path_buf());
    Ok(f)
}

/// Removes `path` and stops remembering it.
pub fn remove(path: &Path) -> io::Result<()> {
    let mut live = live();
    forget_in(&mut live, path);
    std::fs::remove_file(path)
}

/// Stops remembering `path` (it was renamed into place).
pub fn forget(path: &Path) {
    forget_in(&mut live(), path);
}

fn forget_in(live: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = live.iter().rposition(|p| p == path) {
        live.swap_remove(i);
    }
}

/// Removes every remembered file and returns how many were removed; the lock stays
/// taken, so the caller must exit the process next.
pub fn remove_all_and_hold() -> usize {
    let live = live();
    let removed = live
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count();
    std::mem::forget(live);
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remembered(p: &Path) -> bool {
        live().iter().any(|q| q == p)
    }

    #[test]
    fn created_files_are_remembered_until_forgotten() {
        let d = std::env::temp_dir().join(format!("scanner-temp-files-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("a.tmp");
        let _f = create(&p).unwrap();
        assert!(remembered(&p));
        assert!(create(&p).is_err(), "an existing file is refused");
        forget(&p);
        assert!(
            !remembered(&p),
            "forgotten once, though a failed create was tried"
        );
        remove(&p).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _g = create(&p).unwrap();
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "readable by its owner only");
            remove(&p).unwrap();
            // A symlink planted at the name is not followed.
            let victim = d.join("victim");
            std::fs::write(&victim, "kept").unwrap();
            std::os::unix::fs::symlink(&victim, &p).unwrap();
            assert!(create(&p).is_err(), "a planted symlink is refused");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept");
            std::fs::remove_file(&p).unwrap();
        }
        assert!(!remembered(&p));
        assert!(!p.exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
