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
