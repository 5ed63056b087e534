//! The temporary files and folders this process has made and not yet removed (spilled
//! runs of detections, outputs being written), so that a run stopped by a signal can
//! remove them before it exits instead of leaving them behind; and the clean-up of
//! those a run killed outright (SIGKILL, a power cut) left: [`remove_stale`].
//!
//! Files are created, removed and forgotten under one lock, and [`remove_all_and_hold`] keeps
//! that lock until the process exits: no file can appear after the clean-up.

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct Live {
    files: Vec<PathBuf>,
    /// Folders, removed after the files (they hold some of them).
    dirs: Vec<PathBuf>,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    files: Vec::new(),
    dirs: Vec::new(),
});

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates `path` for reading and writing and remembers it until [`forget`]. It fails
/// when anything is at `path` already, a symlink included (never followed), and the
/// file is readable by its owner only (0600 on Unix): detections are evidence.
pub fn create(path: &Path) -> io::Result<File> {
    remembered(path, || {
        let mut o = OpenOptions::new();
        o.read(true).write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        o.open(path)
    })
}

/// Runs `create`, which makes the file `path` exclusively, and remembers `path` until
/// [`forget`] when it succeeds: under the registry's lock, so that a signal's clean-up
/// sees every file made.
pub fn remembered(path: &Path, create: impl FnOnce() -> io::Result<File>) -> io::Result<File> {
    let mut live = live();
    let f = create()?;
    live.files.push(path.to_path_buf());
    Ok(f)
}

/// Creates the folder `path` (failing when anything is there, a symlink included),
/// open to its owner only (0700 on Unix), and remembers it until [`remove_dir`].
pub fn create_dir(path: &Path) -> io::Result<()> {
    let mut live = live();
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(path)?;
    live.dirs.push(path.to_path_buf());
    Ok(())
}

/// Removes `path` and stops remembering it.
pub fn remove(path: &Path) -> io::Result<()> {
    let mut live = live();
    forget_in(&mut live.files, path);
    std::fs::remove_file(path)
}

/// Removes the (empty) folder `path` and stops remembering it.
pub fn remove_dir(path: &Path) -> io::Result<()> {
    let mut live = live();
    forget_in(&mut live.dirs, path);
    std::fs::remove_dir(path)
}

/// Stops remembering `path` (it was renamed into place).
pub fn forget(path: &Path) {
    forget_in(&mut live().files, path);
}

fn forget_in(live: &mut Vec<PathBuf>, path: &Path) {
    if let Some(i) = live.iter().rposition(|p| p == path) {
        live.swap_remove(i);
    }
}

/// Removes every remembered file and folder and returns how many files were removed;
/// the lock stays taken, so the caller must exit the process next.
pub fn remove_all_and_hold() -> usize {
    let live = live();
    let removed = live
        .files
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count();
    for d in live.dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    std::mem::forget(live);
    removed
}

/// Makes something with `make` under a fresh temporary name for `name`,
/// `.NAME.PID.RANDOM.tmp` (no one can know it ahead; the process id tells a later run
/// whose it was), trying another name when one is taken (`AlreadyExists`); the name
/// used and what `make` gave.
pub fn create_unique<T>(
    name: &OsStr,
    mut make: impl FnMut(&OsStr) -> io::Result<T>,
) -> io::Result<(OsString, T)> {
    let mut last = None;
    for _ in 0..16 {
        let mut tmp = OsString::from(".");
        tmp.push(name);
        tmp.push(format!(
            ".{}.{:016x}.tmp",
            std::process::id(),
            random_suffix()
        ));
        match make(&tmp) {
            Ok(made) => return Ok((tmp, made)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary name was free")))
}

/// 64 unpredictable bits for a temporary name: the standard library's per-process
/// random hashing keys, mixed with the time.
pub fn random_suffix() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.finish()
}

/// A temporary file or folder of a run that ended without removing it, now removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleTemp {
    /// What was removed.
    pub path: PathBuf,
    /// The process that made it.
    pub pid: u32,
    /// Files removed (1 for a file; those inside for a folder).
    pub files: usize,
}

/// Removes, in `dir`, the entries whose name `pid_of` recognises as this tool's
/// temporary files or folders (returning the process that made them) when that
/// process is gone and they belong to this user: regular files, and folders of
/// regular files. Nothing is followed (a symlink planted there is left alone), a
/// process still running keeps its files, and where it cannot be told whether a
/// process runs (no `/proc`) nothing is removed.
pub fn remove_stale(dir: &Path, pid_of: impl Fn(&str) -> Option<u32>) -> Vec<StaleTemp> {
    let Some(me) = Owner::current() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(&pid_of) else {
            continue;
        };
        if pid == std::process::id() || me.process_runs(pid) {
            continue;
        }
        let path = e.path();
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !me.owns(&m) {
            continue;
        }
        let files = if m.is_file() {
            usize::from(std::fs::remove_file(&path).is_ok())
        } else if m.is_dir() {
            remove_flat_dir(&path, &me)
        } else {
            continue;
        };
        removed.push(StaleTemp { path, pid, files });
    }
    removed.sort_by(|a, b| a.path.cmp(&b.path));
    removed
}

/// Removes the regular files of this user in `dir` (nothing below a sub-folder), then
/// `dir` if that left it empty; how many files went.
fn remove_flat_dir(dir: &Path, me: &Owner) -> usize {
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            let ours = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file() && me.owns(&m));
            if ours && std::fs::remove_file(&p).is_ok() {
                n += 1;
            }
        }
    }
    let _ = std::fs::remove_dir(dir);
    n
}

/// Who this process is, as far as telling its own stale files goes.
struct Owner {
    #[cfg(unix)]
    uid: u32,
}

impl Owner {
    /// `None` where processes cannot be looked up (`/proc` is missing).
    fn current() -> Option<Owner> {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::MetadataExt;
            // /proc/self belongs to the process's effective user.
            let m = std::fs::metadata("/proc/self").ok()?;
            Some(Owner { uid: m.uid() })
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    fn process_runs(&self, pid: u32) -> bool {
        Path::new("/proc").join(pid.to_string()).exists()
    }

    #[allow(unused_variables)]
    fn owns(&self, m: &std::fs::Metadata) -> bool {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            m.uid() == self.uid
        }
        #[cfg(not(unix))]
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remembered(p: &Path) -> bool {
        live().files.iter().any(|q| q == p)
    }

    #[test]
    fn created_files_are_remembered_until_forgotten() {
        let d = std::env::temp_dir().join(format!("scanner-temp-files-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("a.tmp");
        let f = create(&p).unwrap();
        assert!(remembered(&p));
        assert!(create(&p).is_err(), "an existing file is refused");
        forget(&p);
        assert!(
            !remembered(&p),
            "forgotten once, though a failed create was tried"
        );
        // Closed first: Windows removes an open file only once it is closed.
        drop(f);
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
