//! Opening outputs: the one way every command writes a file, safe when run as root in a
//! folder others can write.
//!
//! - A regular file (new, or replaced with `-C`) is written to a temporary file beside
//!   it, created exclusively (never through a planted symlink) under an unpredictable
//!   name, readable by its owner only until it is complete; then it is installed under
//!   the real name. Without `-C` it is installed only if nothing appeared under that
//!   name meanwhile. Nothing half-written ever carries the real name.
//! - A symlink (with `-C`) is written at its target; the link is kept. A dangling link is
//!   refused.
//! - Anything that is not a regular file (a device such as `/dev/null`, a FIFO, a
//!   socket) is written in place, as a stream: never renamed over or removed.
//! - A folder, a missing folder or a dangling link is refused before any work, with
//!   the reason.

use scanner_files::folder_of;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// Where an output goes, once its name is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A regular file at this path (a symlink's final target), to be replaced as a
    /// whole; `exists` when there is one already.
    File {
        /// The path written (the link's target for a symlink).
        path: PathBuf,
        /// Whether a file is there now.
        exists: bool,
    },
    /// A device, FIFO or socket, written in place.
    InPlace(PathBuf),
}

/// Resolves `target`: what is there, and where writing it goes.
pub fn resolve(target: &Path) -> Result<Target, String> {
    let shown = target.display();
    let meta = match std::fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let parent = folder_of(target);
            return match std::fs::metadata(parent) {
                Ok(m) if m.is_dir() => Ok(Target::File {
                    path: target.to_path_buf(),
                    exists: false,
                }),
                Ok(_) => Err(format!(
                    "cannot write {shown}: {} is not a folder",
                    parent.display()
                )),
                Err(e) => Err(format!(
                    "cannot write {shown}: folder {}: {e}",
                    parent.display()
                )),
            };
        }
        Err(e) => return Err(format!("cannot write {shown}: {e}")),
    };
    let (path, meta) = if meta.file_type().is_symlink() {
        match std::fs::canonicalize(target) {
            Ok(real) => {
                let m =
                    std::fs::metadata(&real).map_err(|e| format!("cannot write {shown}: {e}"))?;
                (real, m)
            }
            // A link the kernel resolves but no path names (`/dev/fd/N` of a pipe, as
            // `-o >(gzip > t.gz)` gives): written in place if it is not a file.
            Err(e) => match std::fs::metadata(target) {
                Ok(m) if !m.is_file() && !m.is_dir() => (target.to_path_buf(), m),
                _ => {
                    return Err(format!(
                        "cannot write {shown}: a symlink whose target is unusable: {e}"
                    ))
                }
            },
        }
    } else {
        (target.to_path_buf(), meta)
    };
    if meta.is_dir() {
        Err(format!("cannot write {shown}: it is a folder"))
    } else if meta.is_file() {
        Ok(Target::File { path, exists: true })
    } else {
        Ok(Target::InPlace(path))
    }
}

/// Resolves `target` and refuses an existing file (or a symlink to one) unless
/// `clobber`, and a file whose folder cannot take the temporary file it is written
/// through (tried: a read-only mount, permissions, a full inode table); devices, FIFOs
/// and sockets are written in place without `-C`.
pub fn check_target(target: &Path, clobber: bool) -> Result<Target, String> {
    let t = resolve(target)?;
    if let Target::File { path, exists } = &t {
        if *exists && !clobber {
            return Err(format!(
                "{} exists; use -C/--clobber to overwrite it",
                target.display()
            ));
        }
        let (probe, file) = create_temp(path).map_err(|e| {
            let folder = folder_of(path);
            format!(
                "cannot write {}: its folder {} does not take new files: {e}",
                target.display(),
                folder.display()
            )
        })?;
        drop(file);
        let _ = scanner_files::remove_temp_file(&probe);
    }
    Ok(t)
}

/// Whether writing standard output failed because its reader went away (`| head`):
/// then the run stops writing and ends as it would have, quietly, as command-line
/// tools do (Hayabusa panics there).
pub fn reader_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Refuses outputs that are also inputs (the same file by any name: a path with `.` or
/// `..`, a symlink or a hard link), before any work: `-f ev.evtx -o ev.evtx -C` must not
/// turn the evidence into a CSV.
pub fn refuse_inputs<'p>(
    outputs: &[&Path],
    inputs: impl IntoIterator<Item = &'p Path>,
) -> Result<(), String> {
    let existing: Vec<(&Path, scanner_files::FileIdentity)> = outputs
        .iter()
        .filter_map(|o| scanner_files::file_identity(o).map(|id| (*o, id)))
        .collect();
    if existing.is_empty() {
        return Ok(());
    }
    for input in inputs {
        let Some(id) = scanner_files::file_identity(input) else {
            continue;
        };
        if let Some((o, _)) = existing.iter().find(|(_, oid)| *oid == id) {
            return Err(format!(
                "{} is also an input ({}): refusing to overwrite evidence",
                o.display(),
                input.display()
            ));
        }
    }
    Ok(())
}

/// Writes a report with `write` to `output`, atomically, or to standard output when
/// `None` (`write` is told whether that is a terminal); `Ok(false)` when standard
/// output's reader went away (a closed pipe), which ends the command quietly.
pub fn write_report(
    output: Option<&Path>,
    clobber: bool,
    write: impl Fn(&mut dyn io::Write, bool) -> io::Result<()>,
) -> Result<bool, String> {
    use std::io::{IsTerminal, Write};
    match output {
        Some(p) => write_atomically(p, clobber, |f| {
            let mut w = io::BufWriter::new(f);
            write(&mut w, false)?;
            w.flush()
        })?,
        None => {
            let stdout = io::stdout();
            let terminal = stdout.is_terminal();
            let mut out = stdout.lock();
            match write(&mut out, terminal).and_then(|()| out.flush()) {
                Err(e) if reader_gone(&e) => return Ok(false),
                r => r.map_err(|e| format!("cannot write to standard output: {e}"))?,
            }
        }
    }
    Ok(true)
}

/// Writes `target` with `f`: a regular file through a temporary file installed when
/// complete (replacing an existing one only with `clobber`), anything else in place.
pub fn write_atomically<T>(
    target: &Path,
    clobber: bool,
    f: impl FnOnce(&mut File) -> io::Result<T>,
) -> Result<T, String> {
    let fail = |e: io::Error| format!("cannot write {}: {e}", target.display());
    match check_target(target, clobber)? {
        Target::InPlace(path) => {
            let mut file = open_in_place(&path).map_err(fail)?;
            let value = f(&mut file).map_err(fail)?;
            // Devices and FIFOs need no sync (and some refuse one); a flush of the
            // data written is all there is.
            Ok(value)
        }
        Target::File { path, exists } => {
            remove_stale_outputs(&path);
            let (tmp, mut file) = create_temp(&path).map_err(fail)?;
            let result = (|| {
                let value = f(&mut file)?;
                if let Some(p) = final_permissions(&path, exists) {
                    file.set_permissions(p)?;
                }
                file.sync_all()?;
                drop(file);
                install(&tmp, &path, clobber)?;
                scanner_files::forget_temp_file(&tmp);
                Ok(value)
            })();
            result.map_err(|e: io::Error| {
                let _ = scanner_files::remove_temp_file(&tmp);
                fail(e)
            })
        }
    }
}

/// Opens a device, FIFO or socket for writing, without creating or truncating it. What
/// was opened is checked again: a regular file or folder put there since the check
/// (a link swapped meanwhile) is refused, not written over.
fn open_in_place(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().write(true).open(path)?;
    let m = file.metadata()?;
    if m.is_file() || m.is_dir() {
        return Err(io::Error::other(
            "it became a regular file or folder while the run went on; nothing written",
        ));
    }
    Ok(file)
}

fn file_name(target: &Path) -> String {
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Creates the temporary file for `target` in its folder, under a name no one can
/// know ahead (`.NAME.PID.RANDOM.tmp`), exclusively; remembered for removal if the run
/// is stopped by a signal.
fn create_temp(target: &Path) -> io::Result<(PathBuf, File)> {
    let name = target.file_name().unwrap_or_default();
    let (tmp, file) = scanner_files::create_unique_temp(name, |tmp| {
        scanner_files::create_temp_file(&target.with_file_name(tmp))
    })?;
    Ok((target.with_file_name(tmp), file))
}

/// The process whose unfinished output of `target`'s name (see [`create_temp`]) is
/// called `entry`.
fn temp_owner(name: &str, entry: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(name)?;
    let (pid, random) = rest
        .strip_prefix('.')?
        .strip_suffix(".tmp")?
        .split_once('.')?;
    let hex = random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    hex.then(|| pid.parse().ok()).flatten()
}

/// Removes the unfinished outputs of `target` that runs killed outright left beside it.
fn remove_stale_outputs(target: &Path) {
    let name = file_name(target);
    let dir = folder_of(target);
    report_stale(&scanner_files::remove_stale_temp_files(dir, |e| {
        temp_owner(&name, e)
    }));
}

/// Removes the sort spills that runs killed outright left in the temporary folder.
pub fn remove_stale_spills() {
    report_stale(&scanner_engine::remove_stale_spills(&std::env::temp_dir()));
}

fn report_stale(removed: &[scanner_files::StaleTemp]) {
    for s in removed {
        eprintln!(
            "removed {} ({} file{}): left by a run of scanner (process {}) that was killed",
            crate::terminal::safe(&s.path.display().to_string()),
            s.files,
            if s.files == 1 { "" } else { "s" },
            s.pid
        );
    }
}

/// The permissions an installed output gets: those of the file it replaces, or those a
/// newly created file gets under the process's umask (elsewhere than Unix: left as
/// created).
fn final_permissions(target: &Path, exists: bool) -> Option<std::fs::Permissions> {
    if exists {
        if let Ok(m) = std::fs::metadata(target) {
            return Some(m.permissions());
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(std::fs::Permissions::from_mode(
            scanner_files::new_file_mode(),
        ))
    }
    #[cfg(not(unix))]
    None
}

/// Puts the complete `tmp` in place of `target`: with `clobber` by renaming over it;
/// without, by a hard link that fails if anything appeared at `target` meanwhile (then
/// the temporary name is removed).
fn install(tmp: &Path, target: &Path, clobber: bool) -> io::Result<()> {
    if clobber {
        return std::fs::rename(tmp, target);
    }
    match std::fs::hard_link(tmp, target) {
        Ok(()) => scanner_files::remove_temp_file(tmp),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a file appeared under that name while the run went on; use -C/--clobber to overwrite it",
        )),
        // A file system without hard links: the rename, after one more look.
        Err(_) if std::fs::symlink_metadata(target).is_err() => std::fs::rename(tmp, target),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("scanner-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_file_appearing_meanwhile_is_kept_without_clobber() {
        let d = scratch("appear");
        let out = d.join("out.csv");
        let r = write_atomically(&out, false, |f| {
            // Someone else creates the output while the run writes.
            std::fs::write(&out, "theirs").unwrap();
            io::Write::write_all(f, b"ours")
        });
        let e = r.unwrap_err();
        assert!(e.contains("appeared"), "{e}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "theirs");
        assert_eq!(names(&d), ["out.csv"], "the temporary file is removed");
        // With -C the run's output replaces it.
        write_atomically(&out, true, |f| io::Write::write_all(f, b"ours")).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "ours");
        assert_eq!(names(&d), ["out.csv"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_output_that_is_an_input_by_another_name_is_refused() {
        let d = scratch("input");
        let ev = d.join("ev.evtx");
        std::fs::write(&ev, "evidence").unwrap();
        let other = d.join("other.csv");
        let by_dots = d.join(".").join("ev.evtx");
        assert!(refuse_inputs(&[&other], [ev.as_path()]).is_ok());
        let e = refuse_inputs(&[&other, &by_dots], [ev.as_path()]).unwrap_err();
        assert!(e.contains("also an input"), "{e}");
        let linked = d.join("linked.csv");
        std::fs::hard_link(&ev, &linked).unwrap();
        let e = refuse_inputs(&[&linked], [ev.as_path()]).unwrap_err();
        assert!(e.contains("also an input"), "{e}");
        assert_eq!(std::fs::read_to_string(&ev).unwrap(), "evidence");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn folders_missing_folders_and_dangling_links_are_refused() {
        let d = scratch("refuse");
        assert!(resolve(&d).unwrap_err().contains("is a folder"));
        let missing = d.join("nope").join("out.csv");
        assert!(resolve(&missing).unwrap_err().contains("nope"));
        #[cfg(unix)]
        {
            let link = d.join("link.csv");
            std::os::unix::fs::symlink(d.join("absent"), &link).unwrap();
            assert!(resolve(&link).unwrap_err().contains("symlink"));
            assert!(!d.join("absent").exists());
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn new_outputs_get_the_umask_mode_and_replaced_ones_keep_theirs() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("mode");
        let out = d.join("out.csv");
        write_atomically(&out, false, |f| io::Write::write_all(f, b"x")).unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        // The process's umask as Linux reports it, read here on its own.
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                let v = s.lines().find_map(|l| l.strip_prefix("Umask:"))?;
                u32::from_str_radix(v.trim(), 8).ok()
            })
            .unwrap_or(0o022);
        assert_eq!(mode, 0o666 & !umask);
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&out, true, |f| io::Write::write_all(f, b"y")).unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn unfinished_outputs_are_told_by_name_process_and_random_part() {
        assert_eq!(
            temp_owner("t.csv", ".t.csv.42.0123456789abcdef.tmp"),
            Some(42)
        );
        assert_eq!(temp_owner("t.csv", ".t.csv.42.0123456789abcdef"), None);
        assert_eq!(temp_owner("t.csv", ".t.csv.42.0123.tmp"), None);
        assert_eq!(temp_owner("t.csv", ".u.csv.42.0123456789abcdef.tmp"), None);
        assert_eq!(temp_owner("t.csv", ".t.csv.x.0123456789abcdef.tmp"), None);
        assert_eq!(temp_owner("t", ".t.csv.42.0123456789abcdef.tmp"), None);
    }
}
