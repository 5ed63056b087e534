//! `level-tuning`: rewrites the `level:` of rules named by ID in a tuning file.
//!
//! The tuning file is Hayabusa 3.9.0's (`rules/config/level_tuning.txt`): a header line,
//! then `<rule id>,<new level>` lines, the level optionally followed by a `#` comment.
//! The whole file is checked first: a malformed line stops the run before any rule is
//! touched, naming the file and line. Then each `.yml` file under `-r` whose `id` is
//! listed and whose level differs gets its top-level `level:` line rewritten, the rest
//! of the file kept byte for byte, and is replaced atomically (a crash leaves the old
//! rule or the new, never half of one). Unlike Hayabusa 3.9.0, `low` is written as
//! `low` (3.9.0 wrote `informational`).
//!
//! The rules are rewritten in place, often as root, so every folder is reached through
//! an [`OwnedDir`]: the user's own and writable by no one else (else it is reported and
//! left alone), opened once, its files read and replaced through its handle; a link
//! (a rule, a folder, or `-r` itself) is reported and never followed. A rule swapped
//! for a link between its read and its rewrite is replaced, not written through.

use crate::args::LevelTuningArgs;
use crate::exit;
use crate::terminal::safe;
use scanner_files::{FileMode, Kind, OwnedDir, Seen, TextFile, Why};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

const LEVELS: [&str; 5] = ["informational", "low", "medium", "high", "critical"];

/// Why the tuning could not run, or a rule could not be tuned.
#[derive(Debug)]
pub enum TuningError {
    /// The tuning file could not be read (the reason).
    Read(PathBuf, String),
    /// A line of the tuning file is not `id,level`.
    Line(PathBuf, usize, String),
    /// A rule or folder was not used (it names itself and why).
    Refused(scanner_files::Error),
    /// A rule listed has no top-level `level:` line to rewrite.
    NoLevel(PathBuf),
    /// A rule is not UTF-8 text.
    NotText(PathBuf),
}

impl fmt::Display for TuningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TuningError::Read(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            TuningError::Line(p, n, why) => write!(f, "{} line {n}: {why}", p.display()),
            TuningError::Refused(e) => write!(f, "{e}; not tuned"),
            TuningError::NoLevel(p) => write!(f, "{}: no top-level level: line", p.display()),
            TuningError::NotText(p) => write!(f, "{}: not UTF-8 text; not tuned", p.display()),
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
    let mut errors = Vec::new();
    let mut changed = 0;
    let mut on_tuned = |path: &Path, old: &str, new: &str| {
        changed += 1;
        if !a.console.quiet {
            println!(
                "{}: level {} -> {new}",
                safe(&path.display().to_string()),
                safe(old),
            );
        }
    };
    match top(&a.rules.rules) {
        Ok((dir, Some(name))) => tune_file(&dir, name, &tuning, &mut errors, &mut on_tuned),
        Ok((dir, None)) => tune_dir(&dir, &tuning, &mut errors, &mut on_tuned),
        Err(e) => errors.push(TuningError::Refused(e)),
    }
    if !a.console.quiet {
        println!(
            "{changed} rules tuned ({} listed in {}).",
            tuning.len(),
            safe(&a.file.display().to_string())
        );
    }
    exit::reporting("rule error", &errors)
}

/// Rule id → new level, from the tuning file (read as any config file: a regular file,
/// at most the config files' cap).
fn read_tuning(path: &Path) -> Result<HashMap<String, &'static str>, TuningError> {
    let text = scanner_files::read_text(path, TextFile::Config, &Seen::off())
        .map_err(|e| TuningError::Read(path.to_path_buf(), e.to_string()))?;
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

/// `-r`: the folder to walk, or the folder holding the one rule file it names.
fn top(path: &Path) -> Result<(OwnedDir, Option<&OsStr>), scanner_files::Error> {
    match OwnedDir::open(path) {
        Ok(d) => Ok((d, None)),
        Err(e) if matches!(e.why(), Why::NotFolder) => {
            let name = path.file_name().ok_or(e)?;
            Ok((OwnedDir::open(scanner_files::folder_of(path))?, Some(name)))
        }
        Err(e) => Err(e),
    }
}

/// Tunes the `.yml` files of `dir` and of its folders, in name order.
fn tune_dir(
    dir: &OwnedDir,
    tuning: &HashMap<String, &'static str>,
    errors: &mut Vec<TuningError>,
    on_tuned: &mut impl FnMut(&Path, &str, &str),
) {
    let mut entries = match dir.entries() {
        Ok(e) => e,
        Err(e) => return errors.push(TuningError::Refused(e)),
    };
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for e in entries {
        let yml = Path::new(&e.name).extension().is_some_and(|x| x == "yml");
        match e.kind {
            Kind::Folder => match dir.open_dir(&e.name) {
                Ok(sub) => tune_dir(&sub, tuning, errors, on_tuned),
                Err(err) => errors.push(TuningError::Refused(err)),
            },
            Kind::File if yml => tune_file(dir, &e.name, tuning, errors, on_tuned),
            Kind::Link if yml => {
                errors.push(TuningError::Refused(dir.entry_error(&e.name, Why::Link)))
            }
            _ => {}
        }
    }
}

/// Rewrites the rule `name` of `dir` when the tuning lists it with another level.
fn tune_file(
    dir: &OwnedDir,
    name: &OsStr,
    tuning: &HashMap<String, &'static str>,
    errors: &mut Vec<TuningError>,
    on_tuned: &mut impl FnMut(&Path, &str, &str),
) {
    match tune(dir, name, tuning) {
        Ok(Some((old, new))) => on_tuned(&dir.shown(name), &old, new),
        Ok(None) => {}
        Err(e) => errors.push(e),
    }
}

fn tune(
    dir: &OwnedDir,
    name: &OsStr,
    tuning: &HashMap<String, &'static str>,
) -> Result<Option<(String, &'static str)>, TuningError> {
    let bytes = dir
        .read(name, TextFile::Rule.cap())
        .map_err(TuningError::Refused)?
        .unwrap_or_default();
    let text = String::from_utf8(bytes).map_err(|_| TuningError::NotText(dir.shown(name)))?;
    let Some(id) = top_level(&text, "id") else {
        return Ok(None);
    };
    let Some(&new) = tuning.get(&id.to_ascii_lowercase()) else {
        return Ok(None);
    };
    let Some((start, end, old)) = level_line(&text) else {
        return Err(TuningError::NoLevel(dir.shown(name)));
    };
    if old.eq_ignore_ascii_case(new) {
        return Ok(None);
    }
    let rewritten = format!("{}level: {new}{}", &text[..start], &text[end..]);
    dir.write(
        name,
        true,
        FileMode::KeepOr(scanner_files::new_file_mode()),
        |f| std::io::Write::write_all(f, rewritten.as_bytes()),
    )
    .map_err(TuningError::Refused)?;
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
