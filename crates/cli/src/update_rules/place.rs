//! Where a rule set lives and how a new one takes its place: the user's data folder,
//! folders made open to their owner only, no planted symlink followed, one update at a
//! time (a lock), and the swap that puts a new set in place whole or not at all.

use super::UpdateError;
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

/// Refuses `p` when it is a symlink (never followed: one planted there would send the
/// update, run as root, elsewhere), anything but a folder, or (on Unix) a folder of
/// another user or one others may write to. `Ok(false)` when nothing is there.
pub fn check_folder(p: &Path) -> Result<bool, UpdateError> {
    let m = match std::fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(UpdateError::io(p, "cannot read", e)),
    };
    let unsafe_because = |reason| UpdateError::Unsafe {
        path: p.to_path_buf(),
        reason,
    };
    if m.file_type().is_symlink() {
        return Err(unsafe_because("is a symbolic link (not followed)"));
    }
    if !m.is_dir() {
        return Err(unsafe_because("is not a folder"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if m.uid() != me {
            return Err(unsafe_because("belongs to another user"));
        }
        if m.mode() & 0o022 != 0 {
            return Err(unsafe_because("may be written by other users"));
        }
    }
    Ok(true)
}

/// Makes the folder `p` and any missing parents, open to the owner only (0700 on Unix);
/// the last component is then checked as [`check_folder`] does.
pub fn make_folder(p: &Path) -> Result<(), UpdateError> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    if !check_folder(p)? {
        b.create(p)
            .map_err(|e| UpdateError::io(p, "cannot create folder", e))?;
        check_folder(p)?;
    }
    Ok(())
}

/// A new folder beside `target` for the set being fetched: created here and nowhere
/// else (fails if anything, a symlink included, is at its name), 0700.
pub fn new_sibling(target: &Path, kind: &str) -> Result<PathBuf, UpdateError> {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let parent = parent(target);
    let p = parent.join(format!(
        ".{name}.{kind}-{}-{:016x}",
        std::process::id(),
        scanner_engine::random_suffix()
    ));
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(&p)
        .map_err(|e| UpdateError::io(&p, "cannot create folder", e))?;
    Ok(p)
}

/// The folder holding `p` (`.` for a bare name).
pub fn parent(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Removes what an update stopped outright (SIGKILL, a power cut) left beside `target`:
/// folders named as [`new_sibling`] names them. Call with the lock held: no other
/// update is running, so every such folder is stale. Symlinks are left alone.
pub fn remove_leftovers(target: &Path) -> usize {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let prefixes = [format!(".{name}.new-"), format!(".{name}.old-")];
    let Ok(rd) = std::fs::read_dir(parent(target)) else {
        return 0;
    };
    let mut n = 0;
    for e in rd.flatten() {
        let fname = e.file_name();
        let fname = fname.to_string_lossy();
        let ours = prefixes.iter().any(|p| fname.starts_with(p.as_str()));
        if ours && e.file_type().is_ok_and(|t| t.is_dir()) {
            // remove_dir_all does not follow symlinks inside the folder.
            if std::fs::remove_dir_all(e.path()).is_ok() {
                n += 1;
            }
        }
    }
    n
}

/// Held while an update runs; dropping it releases the lock.
pub struct UpdateLock {
    _file: File,
}

/// Takes the update lock of `target` (the file `.<name>.lock` beside it; never a
/// symlink), failing at once when another update holds it.
pub fn lock(target: &Path) -> Result<UpdateLock, UpdateError> {
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let p = parent(target).join(format!(".{name}.lock"));
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let file = o
        .open(&p)
        .map_err(|e| UpdateError::io(&p, "cannot open lock file", e))?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: the descriptor is open for the call's duration.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Err(UpdateError::Busy(p));
        }
    }
    Ok(UpdateLock { _file: file })
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

/// Puts `new` in place at `target` whole; the set that was there (if any) is removed
/// after. Where the system can exchange two folders in one step (Linux `renameat2`),
/// `target` always holds one complete set; elsewhere the old set is renamed aside, the
/// new one renamed in, and the old one put back if that fails.
pub fn swap_in(new: &Path, target: &Path, had_old: bool) -> Result<(), UpdateError> {
    let guard = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    let fail = |e| UpdateError::io(target, "cannot put the new set in place", e);
    if !had_old {
        std::fs::rename(new, target).map_err(fail)?;
        drop(guard);
        return Ok(());
    }
    // After an exchange `new` names the old set.
    let old = if exchange(new, target) {
        new.to_path_buf()
    } else {
        let aside = new_sibling(target, "old")?;
        std::fs::remove_dir(&aside).map_err(|e| UpdateError::io(&aside, "cannot remove", e))?;
        std::fs::rename(target, &aside).map_err(fail)?;
        if let Err(e) = std::fs::rename(new, target) {
            let _ = std::fs::rename(&aside, target);
            return Err(fail(e));
        }
        aside
    };
    drop(guard);
    let _ = std::fs::remove_dir_all(&old);
    Ok(())
}

/// Exchanges the folders `a` and `b` in one step; false where that cannot be done.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> bool {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let (Ok(ca), Ok(cb)) = (
        CString::new(a.as_os_str().as_bytes()),
        CString::new(b.as_os_str().as_bytes()),
    ) else {
        return false;
    };
    const RENAME_EXCHANGE: libc::c_uint = 2;
    // SAFETY: both paths are NUL-terminated and live for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            RENAME_EXCHANGE,
        )
    };
    r == 0
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> bool {
    false
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
