//! Rule files: finding them under a folder and reading their text, before any parsing.
//!
//! Reading comes first and alone (I/O), so the parsing and compiling that follow can run
//! in parallel over texts already in memory.

use super::RuleSource;
use crate::builtin;
use crate::report::LoadError;
use crate::text_file::{self, read_error};
use rayon::prelude::*;
use scanner_files::{Seen, TextFile};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The text of one rule file, under the name errors give as its file.
pub(super) struct RuleText {
    /// The path as given (or `builtin:<path>`, or a [`RuleSource::Text`]'s name).
    pub name: String,
    /// The YAML.
    pub text: String,
}

/// Reads every rule file of `sources`, in order; a missing source or an unreadable file
/// or folder is recorded in `errors` and the others are read. Every file read, folder
/// listed and path looked at is noted in `seen`.
pub(super) fn read(
    sources: &[RuleSource],
    errors: &mut Vec<LoadError>,
    seen: &Seen,
) -> Vec<RuleText> {
    let mut texts = Vec::new();
    for s in sources {
        match s {
            RuleSource::Builtin => texts.extend(builtin::RULES.iter().map(|(p, t)| RuleText {
                name: format!("builtin:{p}"),
                text: t.to_string(),
            })),
            RuleSource::Text { name, text } => texts.push(RuleText {
                name: name.clone(),
                text: text.clone(),
            }),
            RuleSource::Path(root) => read_path(root, &mut texts, errors, seen),
        }
    }
    texts
}

/// Reads the rule file `root`, or every rule file under the folder `root`.
fn read_path(root: &Path, texts: &mut Vec<RuleText>, errors: &mut Vec<LoadError>, seen: &Seen) {
    let Some(meta) = seen.stat(root) else {
        errors.push(read_error(root, "no such file or folder"));
        return;
    };
    // Read in parallel (thousands of small files: the system calls are the cost), kept
    // in the order listed.
    let read: Vec<_> = rule_files(root, &meta, errors, seen)
        .into_par_iter()
        .map(|f| (text_file::read_noting(&f, TextFile::Rule, seen), f))
        .collect();
    for (text, f) in read {
        match text {
            Ok(text) => texts.push(RuleText {
                // What `display()` writes, without the formatting machinery.
                name: f.to_string_lossy().into_owned(),
                text,
            }),
            Err(e) => errors.push(read_error(&f, format!("cannot read: {e}"))),
        }
    }
}

/// Whether `p` names a rule file (`.yml` or `.yaml`, any case).
fn is_rule_file(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yml") || e.eq_ignore_ascii_case("yaml"))
}

/// What tells two folders apart however they are reached: device and inode.
#[cfg(unix)]
type FolderId = (u64, u64);
#[cfg(not(unix))]
type FolderId = PathBuf;

#[cfg(unix)]
fn folder_id(_: &Path, meta: &std::fs::Metadata) -> Option<FolderId> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn folder_id(p: &Path, _: &std::fs::Metadata) -> Option<FolderId> {
    p.canonicalize().ok()
}

/// Lists rule files under `root` (of status `meta`, sorted), skipping hidden folders
/// and a top-level `config`. Links are followed, to files and to folders; a folder
/// reached twice is read once, and a link back to a folder that holds it (a loop) is
/// reported, not followed. Anything with a rule file's name that is not a folder is
/// listed, so that a FIFO or a device there is reported when read. The status of each
/// folder and link looked at is noted in `seen` (a folder's before it is listed), but
/// not of the folders skipped by name: what happens in `.git` changes no rule.
///
/// The walk is depth first with each folder's entries in name order, files and folders
/// alike, so the files come out sorted as paths compare (component by component)
/// without a sort.
fn rule_files(
    root: &Path,
    meta: &std::fs::Metadata,
    errors: &mut Vec<LoadError>,
    seen: &Seen,
) -> Vec<PathBuf> {
    /// What the walk has still to do, the next on top.
    enum Step {
        /// A folder to list, its identity, and the folders that hold it (for loops).
        Folder(PathBuf, Option<FolderId>, Vec<FolderId>),
        /// A rule file, listed when popped.
        File(PathBuf),
    }
    let mut out = Vec::new();
    if !meta.is_dir() {
        out.push(root.to_path_buf());
        return out;
    }
    let mut visited: HashSet<FolderId> = HashSet::new();
    let mut stack = vec![Step::Folder(
        root.to_path_buf(),
        folder_id(root, meta),
        Vec::new(),
    )];
    while let Some(step) = stack.pop() {
        let (dir, id, mut ancestors) = match step {
            Step::File(p) => {
                out.push(p);
                continue;
            }
            Step::Folder(dir, id, ancestors) => (dir, id, ancestors),
        };
        if let Some(id) = id {
            if ancestors.contains(&id) {
                errors.push(read_error(
                    &dir,
                    "a link to a folder that holds it (a loop): not followed",
                ));
                continue;
            }
            #[allow(clippy::clone_on_copy)] // a path, off Unix
            let first = visited.insert(id.clone());
            if !first {
                // Reached before through another link: its rules are read already.
                continue;
            }
            ancestors.push(id);
        }
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                errors.push(read_error(&dir, format!("cannot read folder: {e}")));
                continue;
            }
        };
        let mut entries: Vec<_> = rd.flatten().map(|e| (e.file_name(), e)).collect();
        // Pushed in reverse name order, so the stack gives them back in name order
        // (and folders win the visited check in name order).
        entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
        for (name, entry) in entries {
            let p = entry.path();
            let Ok(ft) = entry.file_type() else { continue };
            let name = name.to_string_lossy();
            let skipped = name.starts_with('.') || (dir == root && name == "config");
            let dir_meta = match ft.is_symlink() || ft.is_dir() {
                // A folder skipped by name, or a link there that is not read as a rule
                // either way: not looked at.
                true if skipped && !is_rule_file(&p) => continue,
                true => seen.stat(&p).filter(|m| m.is_dir()),
                false => None,
            };
            let Some(dir_meta) = dir_meta else {
                if is_rule_file(&p) {
                    stack.push(Step::File(p));
                }
                continue;
            };
            if skipped {
                continue;
            }
            let id = folder_id(&p, &dir_meta);
            stack.push(Step::Folder(p, id, ancestors.clone()));
        }
    }
    debug_assert!(out.is_sorted(), "the walk lists files in path order");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("scanner-rules-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn rule_files_are_sorted_and_skip_hidden_folders_and_the_top_config() {
        let d = scratch("files");
        for f in [
            "b.yml",
            "a.YAML",
            "notes.txt",
            "sub/c.yaml",
            // As paths compare: the folder `a` before `a-b` and `a.yml`, which bytes
            // would put first.
            "a/z.yml",
            "a-b/y.yml",
            "a.yml",
            "sub/c/d.yml",
            "sub/c-e.yml",
            ".git/x.yml",
            "config/y.yml",
        ] {
            let p = d.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "title: x\n").unwrap();
        }
        let mut errors = Vec::new();
        let meta = std::fs::metadata(&d).unwrap();
        let names: Vec<String> = rule_files(&d, &meta, &mut errors, &Seen::off())
            .iter()
            .map(|p| p.strip_prefix(&d).unwrap().display().to_string())
            .collect();
        let mut sorted: Vec<PathBuf> = names.iter().map(PathBuf::from).collect();
        sorted.sort();
        // As the platform writes them (`\` between components on Windows).
        let native = |s: &&str| s.replace('/', std::path::MAIN_SEPARATOR_STR);
        assert_eq!(
            names,
            [
                "a/z.yml",
                "a-b/y.yml",
                "a.YAML",
                "a.yml",
                "b.yml",
                "sub/c/d.yml",
                "sub/c-e.yml",
                "sub/c.yaml"
            ]
            .iter()
            .map(native)
            .collect::<Vec<_>>()
        );
        assert_eq!(
            names,
            sorted
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
        );
        assert!(errors.is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn linked_folders_are_followed_once_and_a_loop_is_reported_once() {
        use std::os::unix::fs::symlink;
        let d = scratch("links");
        let real = d.join("real");
        std::fs::create_dir_all(real.join("sub")).unwrap();
        std::fs::write(real.join("sub/a.yml"), "title: a\n").unwrap();
        let root = d.join("root");
        std::fs::create_dir_all(&root).unwrap();
        // Two links to the same folder, and a link inside it back to the root.
        symlink(&real, root.join("l1")).unwrap();
        symlink(&real, root.join("l2")).unwrap();
        symlink(&root, real.join("sub/back")).unwrap();
        let mut errors = Vec::new();
        let meta = std::fs::metadata(&root).unwrap();
        let names: Vec<String> = rule_files(&root, &meta, &mut errors, &Seen::off())
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            ["l1/sub/a.yml"],
            "the folder read once, through the first link"
        );
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            errors[0].to_string(),
            format!(
                "{}: a link to a folder that holds it (a loop): not followed",
                root.join("l1/sub/back").display()
            )
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_as_a_rule_is_an_error_not_a_hang() {
        let d = scratch("fifo");
        std::fs::write(d.join("ok.yml"), "title: ok\n").unwrap();
        let fifo = d.join("pipe.yml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut errors = Vec::new();
        let texts = read(&[RuleSource::Path(d.clone())], &mut errors, &Seen::off());
        assert_eq!(texts.len(), 1);
        assert_eq!(
            errors[0].to_string(),
            format!(
                "{}: cannot read: not a regular file (a FIFO)",
                fifo.display()
            )
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_source_is_an_error_and_the_others_are_read() {
        let mut errors = Vec::new();
        let texts = read(
            &[
                RuleSource::Path("/no/such/rules".into()),
                RuleSource::Text {
                    name: "given".into(),
                    text: "title: t\n".into(),
                },
            ],
            &mut errors,
            &Seen::off(),
        );
        assert_eq!(texts.len(), 1);
        assert_eq!(
            (texts[0].name.as_str(), texts[0].text.as_str()),
            ("given", "title: t\n")
        );
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].to_string(),
            "/no/such/rules: no such file or folder"
        );
    }

    #[test]
    fn builtin_rules_are_named_under_builtin() {
        let texts = read(&[RuleSource::Builtin], &mut Vec::new(), &Seen::off());
        assert_eq!(texts.len(), builtin::RULES.len());
        assert!(texts.iter().all(|t| t.name.starts_with("builtin:")));
    }
}
