//! What an update changed: the rule files of the old and the new set compared file by
//! file (added, modified, removed), not through git history, so the report is right
//! whatever the history (shallow, rewritten, or a first clone).
//!
//! Reading is bounded whatever the files hold: two files are compared by their sizes,
//! then chunk by chunk, never past the loader's cap for a rule file (4 MiB); a file's
//! title and dates are read from its lines up to the same cap. The new set's files are
//! within it (checked before checkout, see `mod.rs`), but the old set's may not be: it
//! may have been installed before sizes were checked, or edited since.

use scanner_rules::TextFile;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The most bytes read of any one file: the loader's cap for a rule file.
fn cap() -> u64 {
    TextFile::Rule.cap()
}

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
                if !same_bytes(old_path, new_path) {
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

/// Opens `p` for reading when it is a regular file; its size.
fn open_regular(p: &Path) -> Option<(File, u64)> {
    let f = File::open(p).ok()?;
    let m = f.metadata().ok()?;
    m.is_file().then_some((f, m.len()))
}

/// Whether the files `a` and `b` hold the same bytes: different sizes differ without a
/// read; otherwise both are read in chunks side by side up to the first difference. Two
/// files larger than [`cap`] count as different (they are not read past it; neither
/// loads as a rule), and so does a file that cannot be read.
fn same_bytes(a: &Path, b: &Path) -> bool {
    let (Some((fa, la)), Some((fb, lb))) = (open_regular(a), open_regular(b)) else {
        return false;
    };
    if la != lb || la > cap() {
        return false;
    }
    let (mut ra, mut rb) = (fa.take(cap() + 1), fb.take(cap() + 1));
    let (mut ba, mut bb) = (vec![0u8; 64 << 10], vec![0u8; 64 << 10]);
    loop {
        let na = match read_full(&mut ra, &mut ba) {
            Some(n) => n,
            None => return false,
        };
        let nb = match read_full(&mut rb, &mut bb) {
            Some(n) => n,
            None => return false,
        };
        if na != nb || ba[..na] != bb[..nb] {
            return false;
        }
        if na == 0 {
            return true;
        }
    }
}

/// Fills `buf` from `r` as far as it goes; the bytes read (fewer only at the end), or
/// `None` on an error.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(n)
}

fn is_rule_file(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".yml") || lower.ends_with(".yaml")
}

/// The path, title and date of the rule file `p`, read from its top-level `title:`,
/// `modified:` and `date:` lines (no YAML parse: a report line, not a rule), line by
/// line up to [`cap`] bytes and no further once the title and `modified:` are found.
fn describe(rel: &str, p: &Path) -> RuleFile {
    let (mut title, mut modified, mut date) = (None, None, None);
    let mut lines = open_regular(p).map(|(f, _)| BufReader::new(f.take(cap())));
    let mut buf = Vec::new();
    while let Some(r) = lines.as_mut() {
        buf.clear();
        match r.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        // As `str::lines` cuts them: without the `\n` or `\r\n`.
        let line = text.strip_suffix('\n').unwrap_or(&text);
        let line = line.strip_suffix('\r').unwrap_or(line);
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
    fn files_past_the_cap_are_not_read_past_it() {
        let d = std::env::temp_dir().join(format!("scanner-changes-cap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let (a, b, c) = (d.join("a.yml"), d.join("b.yml"), d.join("c.yml"));
        // A title at the start is found; one past the cap is not looked for.
        std::fs::write(&a, "title: Early\n").unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&a).unwrap();
        f.set_len(cap() + (1 << 20)).unwrap();
        assert_eq!(describe("a.yml", &a).title, "Early");
        std::fs::write(&b, "").unwrap();
        let f = std::fs::OpenOptions::new().write(true).open(&b).unwrap();
        f.set_len(cap()).unwrap();
        use std::io::{Seek, Write};
        let mut f = f;
        f.seek(std::io::SeekFrom::Start(cap())).unwrap();
        f.write_all(b"\ntitle: Late\n").unwrap();
        assert_eq!(describe("b.yml", &b).title, "");
        // Sizes differ: different, unread; equal and within the cap: compared.
        std::fs::write(&c, "title: C\n").unwrap();
        assert!(!same_bytes(&a, &c));
        assert!(same_bytes(&c, &c));
        // Equal sizes past the cap: different (not read).
        assert!(!same_bytes(&a, &a));
        // Equal sizes, one byte apart at the end of a long file.
        let (x, y) = (d.join("x.yml"), d.join("y.yml"));
        let mut long = vec![b'#'; 300_000];
        std::fs::write(&x, &long).unwrap();
        *long.last_mut().unwrap() = b'!';
        std::fs::write(&y, &long).unwrap();
        assert!(!same_bytes(&x, &y));
        assert!(same_bytes(&y, &y));
        let _ = std::fs::remove_dir_all(&d);
    }

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
