//! Finding input files: `-d` folders searched recursively, `-f` files, by extension
//! (case-insensitive), without following folder symlinks (no loops).

use crate::error::{ErrorKind, InputError, Position};
use std::path::{Path, PathBuf};

/// An input file.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// The path as traversed (relative when the argument was relative).
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
}

/// Which files are input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// `.evtx`
    Evtx,
    /// `.json` and `.jsonl` holding events in the evtx crate's JSON shape.
    Json,
}

impl InputKind {
    fn accepts(self, p: &Path) -> bool {
        let Some(ext) = p.extension().and_then(|e| e.to_str()) else {
            return false;
        };
        match self {
            InputKind::Evtx => ext.eq_ignore_ascii_case("evtx"),
            InputKind::Json => {
                ext.eq_ignore_ascii_case("json") || ext.eq_ignore_ascii_case("jsonl")
            }
        }
    }
}

/// Lists the input files under `dirs` plus `files`, sorted by path; problems (a path
/// that does not open, a folder given as a file, …) are returned beside them.
pub fn discover(
    dirs: &[PathBuf],
    files: &[PathBuf],
    kind: InputKind,
) -> (Vec<InputFile>, Vec<InputError>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for f in files {
        match std::fs::metadata(f) {
            Ok(m) if m.is_file() => out.push(InputFile {
                path: f.clone(),
                size: m.len(),
            }),
            Ok(m) if m.is_dir() => errors.push(whole(f, ErrorKind::FolderNotFile)),
            Ok(_) => errors.push(whole(f, ErrorKind::NotRegularFile)),
            Err(e) => errors.push(whole(f, ErrorKind::CannotOpen(e))),
        }
    }
    for d in dirs {
        let mut stack = vec![d.clone()];
        match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                errors.push(whole(d, ErrorKind::NotFolder));
                continue;
            }
            Err(e) => {
                errors.push(whole(d, ErrorKind::CannotOpenFolder(e)));
                continue;
            }
        }
        while let Some(dir) = stack.pop() {
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) => {
                    errors.push(whole(&dir, ErrorKind::CannotReadFolder(e)));
                    continue;
                }
            };
            for entry in rd {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        errors.push(whole(&dir, ErrorKind::Io(e)));
                        continue;
                    }
                };
                let p = entry.path();
                let Ok(ft) = entry.file_type() else { continue };
                if ft.is_dir() {
                    stack.push(p);
                } else if kind.accepts(&p) {
                    match std::fs::metadata(&p) {
                        Ok(m) if m.is_file() => out.push(InputFile {
                            path: p,
                            size: m.len(),
                        }),
                        Ok(_) => {}
                        Err(e) => errors.push(whole(&p, ErrorKind::CannotOpen(e))),
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    (out, errors)
}

/// An error about `path` as a whole.
fn whole(path: &Path, kind: ErrorKind) -> InputError {
    InputError::new(path, Position::None, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of this process under the temp folder, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let d = std::env::temp_dir()
                .join(format!("scanner-discover-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Scratch(d)
        }

        /// Writes `len` bytes to the file `rel`, making its folders.
        fn file(&self, rel: &str, len: usize) -> PathBuf {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, vec![b'x'; len]).unwrap();
            p
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// What `discover` finds, relative to the scratch folder, in order; no errors.
    fn found(s: &Scratch, dirs: &[PathBuf], files: &[PathBuf], kind: InputKind) -> Vec<String> {
        let (got, errors) = discover(dirs, files, kind);
        assert!(errors.is_empty(), "{errors:?}");
        got.iter()
            .map(|f| {
                let rel = f.path.strip_prefix(&s.0).unwrap();
                rel.to_string_lossy().replace('\\', "/")
            })
            .collect()
    }

    #[test]
    fn folders_are_searched_recursively_by_extension_ignoring_case() {
        let s = Scratch::new("recursive");
        s.file("a.evtx", 3);
        s.file("B.EVTX", 5);
        s.file("sub/deeper/c.Evtx", 7);
        s.file("folder.evtx/d.evtx", 1);
        s.file("notes.txt", 1);
        s.file("evtx", 1);
        s.file("e.evtx.bak", 1);
        s.file("x.json", 1);
        s.file("sub/y.JSONL", 1);
        let dirs = [s.0.clone()];
        assert_eq!(
            found(&s, &dirs, &[], InputKind::Evtx),
            [
                "B.EVTX",
                "a.evtx",
                "folder.evtx/d.evtx",
                "sub/deeper/c.Evtx"
            ],
            "sorted by path; a folder named .evtx is searched, not listed"
        );
        let (files, _) = discover(&dirs, &[], InputKind::Evtx);
        let sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
        assert_eq!(sizes, [5, 3, 1, 7]);
        let json = found(&s, &dirs, &[], InputKind::Json);
        assert_eq!(json, ["sub/y.JSONL", "x.json"]);
    }

    #[test]
    fn files_given_are_taken_whatever_their_extension_and_listed_once() {
        let s = Scratch::new("files");
        let log = s.file("a.evtx", 2);
        let other = s.file("renamed.log", 4);
        let files = [other.clone(), log.clone()];
        let got = found(&s, std::slice::from_ref(&s.0), &files, InputKind::Evtx);
        assert_eq!(got, ["a.evtx", "renamed.log"]);
    }

    #[test]
    fn a_missing_path_or_a_folder_given_as_a_file_is_an_error_naming_it() {
        let s = Scratch::new("errors");
        let log = s.file("a.evtx", 1);
        let missing = s.0.join("missing.evtx");
        let missing_dir = s.0.join("no-such-folder");
        let files = [s.0.clone(), missing.clone()];
        let dirs = [missing_dir.clone(), log.clone()];
        let (got, errors) = discover(&dirs, &files, InputKind::Evtx);
        assert!(got.is_empty());
        let described: Vec<(&Path, Position, &str)> = errors
            .iter()
            .map(|e| {
                let kind = match e.kind() {
                    ErrorKind::FolderNotFile => "folder as file",
                    ErrorKind::CannotOpen(_) => "cannot open",
                    ErrorKind::CannotOpenFolder(_) => "cannot open folder",
                    ErrorKind::NotFolder => "file as folder",
                    _ => "other",
                };
                (e.file(), e.position(), kind)
            })
            .collect();
        let whole = Position::None;
        assert_eq!(
            described,
            [
                (s.0.as_path(), whole, "folder as file"),
                (&missing, whole, "cannot open"),
                (&missing_dir, whole, "cannot open folder"),
                (&log, whole, "file as folder"),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_folders_are_not_followed() {
        let s = Scratch::new("symlinks");
        let outside = Scratch::new("symlinks-outside");
        outside.file("far.evtx", 1);
        s.file("near.evtx", 1);
        std::os::unix::fs::symlink(&outside.0, s.0.join("link")).unwrap();
        // A link to its own folder would loop if followed.
        std::os::unix::fs::symlink(&s.0, s.0.join("loop")).unwrap();
        let got = found(&s, std::slice::from_ref(&s.0), &[], InputKind::Evtx);
        assert_eq!(got, ["near.evtx"]);
        // Given itself as -d, the linked folder is searched.
        let linked = [s.0.join("link")];
        let got = found(&s, &linked, &[], InputKind::Evtx);
        assert_eq!(got, ["link/far.evtx"]);
    }
}
