//! What an update changed: the rule files of the old and the new set compared file by
//! file (added, modified, removed), not through git history, so the report is right
//! whatever the history (shallow, rewritten, or a first clone).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One rule file in a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFile {
    /// The path inside the set, with `/` separators.
    pub path: String,
    /// Its `title:` (empty when it has none).
    pub title: String,
    /// Its `modified:` date, else its `date:`, else `-`.
    pub modified: String,
}

/// The rule files added, modified and removed, each sorted by path.
#[derive(Debug, Default)]
pub struct Changes {
    /// In the new set only.
    pub added: Vec<RuleFile>,
    /// In both, with other bytes.
    pub modified: Vec<RuleFile>,
    /// In the old set only.
    pub removed: Vec<RuleFile>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

/// Compares the rule files under `old` (absent: an empty set) and `new`.
pub fn compare(old: Option<&Path>, new: &Path) -> Changes {
    let old_files = old.map(rule_files).unwrap_or_default();
    let new_files = rule_files(new);
    let mut c = Changes::default();
    for (rel, new_path) in &new_files {
        match old_files.get(rel) {
            None => c.added.push(describe(rel, new_path)),
            Some(old_path) => {
                if std::fs::read(old_path).ok() != std::fs::read(new_path).ok() {
                    c.modified.push(describe(rel, new_path));
                }
            }
        }
    }
    for (rel, old_path) in &old_files {
        if !new_files.contains_key(rel) {
            c.removed.push(describe(rel, old_path));
        }
    }
    c
}

/// The rule files (`.yml`, `.yaml`) under `root` by relative path, as the loader finds
/// them: hidden folders (`.git`) and the top-level `config` left out. Links are not
/// followed (a checkout made by an update has none; see `git.rs`).
fn rule_files(root: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            let skipped = name.starts_with('.') || (dir == root && name == "config");
            if ft.is_dir() {
                if !skipped {
                    stack.push(p);
                }
            } else if ft.is_file() && is_rule_file(&name) {
                if let Ok(rel) = p.strip_prefix(root) {
                    let rel: Vec<_> = rel.iter().map(|s| s.to_string_lossy()).collect();
                    out.insert(rel.join("/"), p);
                }
            }
        }
    }
    out
}

fn is_rule_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yml") || lower.ends_with(".yaml")
}

/// The path, title and date of the rule file `p`, read from its top-level `title:`,
/// `modified:` and `date:` lines (no YAML parse: a report line, not a rule).
fn describe(rel: &str, p: &Path) -> RuleFile {
    let text = std::fs::read(p).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let (mut title, mut modified, mut date) = (None, None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("title:") {
            title.get_or_insert_with(|| scalar(v));
        } else if let Some(v) = line.strip_prefix("modified:") {
            modified.get_or_insert_with(|| scalar(v));
        } else if let Some(v) = line.strip_prefix("date:") {
            date.get_or_insert_with(|| scalar(v));
        }
        if title.is_some() && modified.is_some() {
            break;
        }
    }
    RuleFile {
        path: rel.to_string(),
        title: title.unwrap_or_default(),
        modified: modified.or(date).unwrap_or_else(|| "-".into()),
    }
}

/// A one-line YAML scalar without its quotes.
fn scalar(v: &str) -> String {
    let v = v.trim();
    let unquoted = v
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| v.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
    unquoted.unwrap_or(v).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_reads_title_and_dates_without_quotes() {
        let d = std::env::temp_dir().join(format!("scanner-changes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("config")).unwrap();
        std::fs::create_dir_all(d.join(".git")).unwrap();
        std::fs::write(
            d.join("a.yml"),
            "title: 'Quoted Title'\ndate: 2020/01/01\nmodified: \"2024/02/03\"\n",
        )
        .unwrap();
        std::fs::write(d.join("b.yaml"), "title: Plain\ndate: 2021/05/06\n").unwrap();
        std::fs::write(d.join("config/c.yml"), "title: config\n").unwrap();
        std::fs::write(d.join(".git/d.yml"), "title: git\n").unwrap();
        let c = compare(None, &d);
        assert_eq!(
            c.added,
            [
                RuleFile {
                    path: "a.yml".into(),
                    title: "Quoted Title".into(),
                    modified: "2024/02/03".into()
                },
                RuleFile {
                    path: "b.yaml".into(),
                    title: "Plain".into(),
                    modified: "2021/05/06".into()
                }
            ]
        );
        assert!(compare(Some(&d), &d).is_empty());
        let _ = std::fs::remove_dir_all(&d);
    }
}
