//! `expand-list`: the `%placeholder%` names the rules' `|expand` modifiers use, so an
//! analyst knows which `config/expand/<name>.txt` files to write.
//!
//! As Hayabusa 3.9.0: every `.yml` file under `-r`, its first YAML document, every key
//! of its `detection` map (and of the maps inside it) whose name holds `|expand` and
//! whose value is one string; the names are printed without their `%`. Unlike it, the
//! names are sorted (Hayabusa prints its hash set's order), files that cannot be read or
//! parsed are reported (Hayabusa skips them silently), and links are not followed.

use crate::args::ExpandListArgs;
use crate::exit;
use crate::terminal::safe;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// Rule files larger than this are reported and skipped (rules are a few KiB; this is
/// the rule loader's allowance for a rule's text).
const MAX_RULE_BYTES: u64 = 1 << 20;

/// A rule file or folder that could not be read.
#[derive(Debug)]
pub enum ExpandError {
    /// A folder or file could not be read.
    Read(PathBuf, std::io::Error),
    /// A file is not YAML.
    Yaml(PathBuf, yaml_serde::Error),
    /// A file is larger than [`MAX_RULE_BYTES`].
    TooLarge(PathBuf, u64),
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::Read(p, e) => write!(f, "{}: cannot read: {e}", p.display()),
            ExpandError::Yaml(p, e) => write!(f, "{}: invalid YAML: {e}", p.display()),
            ExpandError::TooLarge(p, n) => write!(
                f,
                "{}: {n} bytes, more than a rule's {MAX_RULE_BYTES}; skipped",
                p.display()
            ),
        }
    }
}

/// `expand-list`.
pub fn run(a: &ExpandListArgs) -> i32 {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    collect(&a.rules, &mut files, &mut errors, true);
    files.sort();
    let mut names = BTreeSet::new();
    for f in &files {
        if let Err(e) = placeholders(f, &mut names) {
            errors.push(e);
        }
    }
    println!();
    println!("{} unique expand placeholders found:", names.len());
    for n in &names {
        println!("{}", safe(n));
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

/// The `.yml` files under `path` (itself when it is a file given by name), without
/// following links below it.
fn collect(path: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<ExpandError>, top: bool) {
    let meta = if top {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    let meta = match meta {
        Ok(m) => m,
        Err(e) => return errors.push(ExpandError::Read(path.to_path_buf(), e)),
    };
    if meta.is_dir() {
        let entries = match std::fs::read_dir(path) {
            Ok(d) => d,
            Err(e) => return errors.push(ExpandError::Read(path.to_path_buf(), e)),
        };
        for entry in entries {
            match entry {
                Ok(e) => collect(&e.path(), files, errors, false),
                Err(e) => errors.push(ExpandError::Read(path.to_path_buf(), e)),
            }
        }
    } else if meta.is_file() && (top || path.extension().is_some_and(|x| x == "yml")) {
        files.push(path.to_path_buf());
    }
}

/// Adds the placeholders of one rule file.
fn placeholders(path: &Path, names: &mut BTreeSet<String>) -> Result<(), ExpandError> {
    let read = |e| ExpandError::Read(path.to_path_buf(), e);
    let size = std::fs::metadata(path).map_err(read)?.len();
    if size > MAX_RULE_BYTES {
        return Err(ExpandError::TooLarge(path.to_path_buf(), size));
    }
    let text = std::fs::read_to_string(path).map_err(read)?;
    let Some(doc) = yaml_serde::Deserializer::from_str(&text).next() else {
        return Ok(());
    };
    let value = <Value as serde::Deserialize>::deserialize(doc)
        .map_err(|e| ExpandError::Yaml(path.to_path_buf(), e))?;
    if let Some(Value::Mapping(detection)) = value.get("detection") {
        walk(detection, names);
    }
    Ok(())
}

/// Keys holding `|expand` with a string value, in `map` and the maps inside it.
fn walk(map: &yaml_serde::Mapping, names: &mut BTreeSet<String>) {
    for (k, v) in map {
        let Some(key) = k.as_str() else { continue };
        match v {
            Value::String(s) if key.contains("|expand") => {
                names.insert(s.trim_matches('%').to_string());
            }
            Value::Mapping(m) => walk(m, names),
            _ => {}
        }
    }
}
