//! What a search for input passes over: the extensions a folder search takes, and
//! the count, by extension, of the files it met and did not take ([`NotRead`]).

use std::path::Path;

/// The extensions a folder search takes for every kind.
pub(crate) const EXTENSIONS: &[&str] = &["evtx", "json", "jsonl", "xml", "gz"];

/// Whether `p`'s extension is one a folder search takes for every kind.
pub(crate) fn taken_by_extension(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|ext| EXTENSIONS.iter().any(|x| ext.eq_ignore_ascii_case(x)))
}

/// The files a folder search met and did not take, counted by extension (lowercased,
/// without its dot; empty for a name without one), so that a summary can say what was
/// not read instead of passing over it in silence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotRead {
    by_extension: std::collections::BTreeMap<String, u64>,
}

impl NotRead {
    /// Counts one file not read, named `path`.
    pub fn add(&mut self, path: &Path) {
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        *self.by_extension.entry(ext).or_default() += 1;
    }

    /// Adds the counts of `other`.
    pub fn merge(&mut self, other: &NotRead) {
        for (ext, n) in &other.by_extension {
            *self.by_extension.entry(ext.clone()).or_default() += n;
        }
    }

    /// Files not read, in all.
    pub fn total(&self) -> u64 {
        self.by_extension.values().sum()
    }

    /// Each extension (lowercased, no dot; empty for none) with its count, most files
    /// first, then by extension.
    pub fn by_extension(&self) -> Vec<(&str, u64)> {
        let mut v: Vec<(&str, u64)> = self
            .by_extension
            .iter()
            .map(|(e, n)| (e.as_str(), *n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}
