//! `level-tuning`: rewrites the `level:` of rules named by ID in a tuning file.
//!
//! The tuning file is Hayabusa 3.9.0's (`rules/config/level_tuning.txt`): a header line,
//! then `<rule id>,<new level>` lines, the level optionally followed by a `#` comment.
//! The whole file is checked first: a malformed line stops the run before any rule is
//! touched, naming the file and line. Then each `.yml` file under `-r` (links are not
//! followed: a linked rule is reported and left alone) whose `id` is listed and whose
//! level differs gets its top-level `level:` line rewritten, the rest of the file kept
//! byte for byte, and is replaced atomically (a crash leaves the old rule or the new,
//! never half of one). Unlike Hayabusa 3.9.0, `low` is written as `low` (3.9.0 wrote
//! `informational`).

use crate::args::LevelTuningArgs;
use crate::exit;
use crate::terminal::safe;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

const LEVELS: [&str; 5] = ["informational", "low", "medium", "high", "critical"];

/// Rule files larger than this are not rules (the rule loader's allowance).
const MAX_RULE_BYTES: u64 = 1 << 20;

/// Why the tuning could not run, or a rule could not be tuned.
#[derive(Debug)]
pub enum TuningError {
    /// The tuning file or a rule could not be read.
    Read(PathBuf, std::io::Error),
    /// A line of the tuning file is not `id,level`.
    Line(PathBuf, usize, String),
    /// A rule file is a link (not followed).
    Link(PathBuf),
    /// A rule file is larger than a rule can be.
    TooLarge(PathBuf, u64),
    /// A rule listed has no top-level `level:` line to rewrite.
    NoLevel(PathBuf),
    /// A rule could not be written (the output module's message, naming it).
    Write(String),
}

impl fmt::Display for TuningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuningError::Read(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            TuningError::Line(p, n, why) => write!(f, "{} line {n}: {why}", p.display()),
            TuningError::Link(p) => write!(f, "{}: a link, not followed; not tuned", p.display()),
            TuningError::TooLarge(p, n) => {
                write!(
                    f,
                    "{}: {n} bytes, too large for a rule; skipped",
                    p.display()
                )
            }
            TuningError::NoLevel(p) => write!(f, "{}: no top-level level: line", p.display()),
            TuningError::Write(m) => f.write_str(m),
        }
    }
}

/// `level-tuning`.
pub fn run(a: &LevelTuningArgs) -> i32 {
    let tuning = match read_tuning(&a.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}", safe(&e.to_string()));
            return exit::FATAL;
        }
    };
    let mut files = Vec::new();
    let mut errors = Vec::new();
    collect(&a.rules, &mut files, &mut errors, true);
    files.sort();
    let mut changed = 0;
    for f in &files {
        match tune(f, &tuning) {
            Ok(Some((old, new))) => {
                changed += 1;
                if !a.quiet {
                    println!(
                        "{}: level {} -> {}",
                        safe(&f.display().to_string()),
                        safe(&old),
                        new
                    );
                }
            }
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    if !a.quiet {
        println!(
            "{changed} rules tuned ({} listed in {}).",
            tuning.len(),
            safe(&a.file.display().to_string())
        );
    }
    for e in &errors {
        eprintln!("rule error: {}", safe(&e.to_string()));
    }
    if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    }
}

/// Rule id → new level, from the tuning file.
fn read_tuning(path: &Path) -> Result<HashMap<String, &'static str>, TuningError> {
    let meta = std::fs::metadata(path).map_err(|e| TuningError::Read(path.to_path_buf(), e))?;
    if !meta.is_file() {
        // A FIFO or device would block the read or never end.
        let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
        return Err(TuningError::Read(path.to_path_buf(), e));
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| TuningError::Read(path.to_path_buf(), e))?;
    let mut map = HashMap::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let n = i + 1;
        let bad = |why: String| TuningError::Line(path.to_path_buf(), n, why);
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let Some((id, rest)) = line.split_once(',') else {
            return Err(bad("expected <rule id>,<level>".into()));
        };
        let id = id.trim();
        if !is_rule_id(id) {
            return Err(bad(format!(
                "'{id}' is not a rule id (8-4-4-4-12 characters)"
            )));
        }
        let value = rest.split('#').next().unwrap_or("").trim();
        let Some(level) = LEVELS.iter().find(|l| value.eq_ignore_ascii_case(l)) else {
            return Err(bad(format!(
                "level '{value}' is not one of {}",
                LEVELS.join(", ")
            )));
        };
        map.insert(id.to_ascii_lowercase(), *level);
    }
    Ok(map)
}

/// A rule id as Hayabusa checks it: 8-4-4-4-12 lowercase letters or digits.
fn is_rule_id(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && parts.iter().zip([8, 4, 4, 4, 12]).all(|(p, n)| {
            p.len() == n
                && p.bytes()
                    .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        })
}

/// The `.yml` files under `path` (itself when it is a file given by name); links below
/// it are reported, not followed.
fn collect(path: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<TuningError>, top: bool) {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return errors.push(TuningError::Read(path.to_path_buf(), e)),
    };
    let is_yml = top || path.extension().is_some_and(|x| x == "yml");
    if meta.file_type().is_symlink() {
        if top && meta_follows_to_dir(path) {
            // A rules folder given as a link: its own entries are still not followed.
            return collect_dir(path, files, errors);
        }
        if is_yml {
            errors.push(TuningError::Link(path.to_path_buf()));
        }
    } else if meta.is_dir() {
        collect_dir(path, files, errors);
    } else if meta.is_file() && is_yml {
        files.push(path.to_path_buf());
    }
}

fn meta_follows_to_dir(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir())
}

fn collect_dir(path: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<TuningError>) {
    let entries = match std::fs::read_dir(path) {
        Ok(d) => d,
        Err(e) => return errors.push(TuningError::Read(path.to_path_buf(), e)),
    };
    for entry in entries {
        match entry {
            Ok(e) => collect(&e.path(), files, errors, false),
            Err(e) => errors.push(TuningError::Read(path.to_path_buf(), e)),
        }
    }
}

/// Rewrites one rule when the tuning lists it with another level; the old and new level.
fn tune(
    path: &Path,
    tuning: &HashMap<String, &'static str>,
) -> Result<Option<(String, &'static str)>, TuningError> {
    let read = |e| TuningError::Read(path.to_path_buf(), e);
    let size = std::fs::symlink_metadata(path).map_err(read)?.len();
    if size > MAX_RULE_BYTES {
        return Err(TuningError::TooLarge(path.to_path_buf(), size));
    }
    let text = std::fs::read_to_string(path).map_err(read)?;
    let Some(id) = top_level(&text, "id") else {
        return Ok(None);
    };
    let Some(&new) = tuning.get(&id.to_ascii_lowercase()) else {
        return Ok(None);
    };
    let Some((start, end, old)) = level_line(&text) else {
        return Err(TuningError::NoLevel(path.to_path_buf()));
    };
    if old.eq_ignore_ascii_case(new) {
        return Ok(None);
    }
    let rewritten = format!("{}level: {new}{}", &text[..start], &text[end..]);
    crate::output::write_atomically(path, true, |f| {
        std::io::Write::write_all(f, rewritten.as_bytes())
    })
    .map_err(TuningError::Write)?;
    Ok(Some((old, new)))
}

/// The value of a top-level `key:` line of the rule's first document (quotes and a
/// trailing comment removed).
fn top_level<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" {
            if i == 0 {
                continue;
            }
            return None;
        }
        if let Some(rest) = line.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
            let v = rest.split(" #").next().unwrap_or("").trim();
            return Some(v.trim_matches(|c| c == '\'' || c == '"'));
        }
    }
    None
}

/// The byte range of the value part of the top-level `level:` line (from `level:` to the
/// end of the value, a comment kept) and the value.
fn level_line(text: &str) -> Option<(usize, usize, String)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("level:") {
            let body = rest.trim_end_matches(['\n', '\r']);
            let value_part = body.split(" #").next().unwrap_or("");
            let value = value_part
                .trim()
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string();
            let end = offset + "level:".len() + value_part.trim_end().len();
            return Some((offset, end, value));
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_line_is_replaced_with_its_comment_kept() {
        let text = "title: t\nid: x\nlevel: high # was critical\ndetection: {}\n";
        let (s, e, old) = level_line(text).unwrap();
        assert_eq!(old, "high");
        let out = format!("{}level: low{}", &text[..s], &text[e..]);
        assert_eq!(
            out,
            "title: t\nid: x\nlevel: low # was critical\ndetection: {}\n"
        );
    }

    #[test]
    fn rule_ids_are_checked_as_hayabusa_does() {
        assert!(is_rule_id("33c276a1-2475-2f1f-aa3d-ec5d61dbe94c"));
        assert!(!is_rule_id("33c276a1-2475-2f1f-aa3d-ec5d61dbe94"));
        assert!(!is_rule_id("id"));
    }
}
