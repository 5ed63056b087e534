//! `expand-list`: the `%placeholder%` names the rules' `|expand` modifiers use, so an
//! analyst knows which `config/expand/<name>.txt` files to write.
//!
//! As Hayabusa 3.9.0: every `.yml` file under `-r`, its first YAML document, every key
//! of its `detection` map (and of the maps inside it) whose name holds `|expand` and
//! whose value is one string; the names are printed without their `%`. Unlike it, the
//! names are sorted (Hayabusa prints its hash set's order), files that cannot be read or
//! parsed are reported (Hayabusa skips them silently), and links are not followed.
//!
//! Rule folders come from anyone: each file is read and parsed as the rule loader reads
//! it (a regular file of at most 4 MiB, YAML with its expansion bound), so an alias bomb
//! is an error in milliseconds rather than gigabytes.

use crate::args::ExpandListArgs;
use crate::exit;
use crate::terminal::safe;
use scanner_rules::TextFile;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// A rule file or folder that could not be read.
#[derive(Debug)]
pub enum ExpandError {
    /// A folder could not be listed.
    List(PathBuf, std::io::Error),
    /// A rule file could not be read or parsed (the rule loader's reason).
    Rule(PathBuf, String),
}

impl fmt::Display for ExpandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExpandError::List(p, e) => write!(f, "{}: cannot read: {e}", p.display()),
            ExpandError::Rule(p, why) => write!(f, "{}: {why}", p.display()),
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
    exit::reporting("rule error", &errors)
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
        Err(e) => return errors.push(ExpandError::List(path.to_path_buf(), e)),
    };
    if meta.is_dir() {
        let entries = match std::fs::read_dir(path) {
            Ok(d) => d,
            Err(e) => return errors.push(ExpandError::List(path.to_path_buf(), e)),
        };
        for entry in entries {
            match entry {
                Ok(e) => collect(&e.path(), files, errors, false),
                Err(e) => errors.push(ExpandError::List(path.to_path_buf(), e)),
            }
        }
    } else if meta.is_file() && (top || path.extension().is_some_and(|x| x == "yml")) {
        files.push(path.to_path_buf());
    }
}

/// Adds the placeholders of one rule file (its first document).
fn placeholders(path: &Path, names: &mut BTreeSet<String>) -> Result<(), ExpandError> {
    let fail = |e: scanner_rules::RuleError| ExpandError::Rule(path.to_path_buf(), e.to_string());
    let text = scanner_rules::read_text_file(path, TextFile::Rule).map_err(fail)?;
    let Some(doc) = scanner_rules::yaml_documents(&text).next() else {
        return Ok(());
    };
    let doc =
        doc.map_err(|e| ExpandError::Rule(path.to_path_buf(), format!("invalid YAML: {e}")))?;
    if let Some(Value::Mapping(detection)) = doc.get("detection") {
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
