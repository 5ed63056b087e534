//! `expand-list`: the `%placeholder%` names the rules' `|expand` modifiers use, so an
//! analyst knows which `config/expand/<name>.txt` files to write.
//!
//! Every placeholder the rule loader would ask a file for is listed: every `.yml` and
//! `.yaml` file under `-r` (any case, as the loader takes them), every YAML document in
//! it, every key of its `detection` whose name holds `|expand`, in the maps and lists
//! inside it too, and every `%name%` in its value or values (read as the loader reads
//! them: `\%` is a literal `%`). With a file for each name listed, `rules check
//! --expand-dir` disables no rule for a missing placeholder. Hayabusa (3.9.0 and 4.0)
//! reads only the first document, and only keys of maps whose value is one string that
//! is the placeholder: it misses `- Field|expand: '%A%'` (a key inside a list) and
//! `Field|expand: ['%A%', '%B%']`, whose rules then stay disabled for want of a file it
//! never named. The names are sorted (Hayabusa prints its hash set's order), files that
//! cannot be read or parsed are reported (Hayabusa skips them silently), and links
//! are not followed.
//!
//! Rule folders come from anyone: each file is read and parsed as the rule loader reads
//! it (a regular file of at most 4 MiB, YAML with its expansion bound), so an alias bomb
//! is an error in milliseconds rather than gigabytes.

use crate::args::ExpandListArgs;
use crate::exit;
use crate::terminal::safe;
use scanner_files::{Seen, TextFile};
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
    collect(&a.rules.rules, &mut files, &mut errors, true);
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
    } else if meta.is_file() && (top || is_rule_file(path)) {
        files.push(path.to_path_buf());
    }
}

/// Whether `p` names a rule file as the rule loader takes them (`.yml` or `.yaml`, any
/// case).
fn is_rule_file(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yml") || e.eq_ignore_ascii_case("yaml"))
}

/// Adds the placeholders of one rule file (each of its documents).
fn placeholders(path: &Path, names: &mut BTreeSet<String>) -> Result<(), ExpandError> {
    let fail = |e: scanner_files::TextError| ExpandError::Rule(path.to_path_buf(), e.to_string());
    let text = scanner_files::read_text(path, TextFile::Rule, &Seen::off()).map_err(fail)?;
    for doc in scanner_rules::yaml_documents(&text) {
        let doc =
            doc.map_err(|e| ExpandError::Rule(path.to_path_buf(), format!("invalid YAML: {e}")))?;
        if let Some(detection) = doc.get("detection") {
            walk(detection, false, names);
        }
    }
    Ok(())
}

/// The placeholders of the `|expand` keys in `v` (`expand`: `v` is such a key's value),
/// in the maps and lists inside it.
fn walk(v: &Value, expand: bool, names: &mut BTreeSet<String>) {
    match v {
        Value::String(s) if expand => names.extend(names_in(s)),
        Value::Mapping(m) => {
            for (k, v) in m {
                let expand = k.as_str().is_some_and(|k| k.contains("|expand"));
                walk(v, expand, names);
            }
        }
        Value::Sequence(items) => {
            for item in items {
                walk(item, expand, names);
            }
        }
        Value::Tagged(t) => walk(&t.value, expand, names),
        _ => {}
    }
}

/// The `%name%`s of an `expand` value, as the rule loader finds them: `\%` is a
/// literal `%`, `\\` an escaped backslash, and a `%` without a closing one is text.
fn names_in(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if matches!(chars.clone().next(), Some('%' | '\\')) {
                    chars.next();
                }
            }
            '%' => {
                let rest = chars.as_str();
                let Some(len) = rest.find('%') else { break };
                out.push(rest[..len].to_string());
                chars = rest[len + 1..].chars();
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_as_the_loader_finds_them() {
        assert_eq!(names_in("%Admins%"), ["Admins"]);
        // `\\` is an escaped backslash: the `%` after it opens a placeholder.
        assert_eq!(names_in("C:\\\\%a%\\x%b%"), ["a", "b"]);
        assert!(names_in("C:\\%a%").is_empty());
        assert_eq!(names_in("100\\% %c%"), ["c"]);
        assert!(names_in("50% done").is_empty());
    }

    #[test]
    fn keys_in_lists_and_lists_of_values_are_read() {
        let rule = "title: t\ndetection:\n  a:\n    - F|expand: '%One%'\n    - G: x\n  b:\n    H|contains|expand:\n      - '%Two%'\n      - 'pre%Three%post'\n  c:\n    I|expand: '%Four%'\n    J: '%NotExpand%'\n  condition: a\n---\ntitle: u\ndetection:\n  d:\n    K|expand: '%Five%'\n  condition: d\n";
        let mut names = BTreeSet::new();
        for doc in scanner_rules::yaml_documents(rule) {
            walk(doc.unwrap().get("detection").unwrap(), false, &mut names);
        }
        let want: BTreeSet<String> = ["One", "Two", "Three", "Four", "Five"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(names, want);
    }
}
