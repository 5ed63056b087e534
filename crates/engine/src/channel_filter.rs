//! Skipping EVTX files that no rule can match, as Hayabusa does by default (`-a` scans
//! every file): a file's channel is read from its first record, and the file is left
//! out when the rule index has no rule for that channel and no rule without one. A
//! file whose first record cannot be read is kept, so that its errors are reported.

use crate::input::InputFile;
use crate::source;
use evtx::EvtxParser;
use scanner_rules::RuleSet;

/// The `Channel` of a file's first record, if it can be read.
pub fn first_channel(path: &std::path::Path) -> Option<String> {
    let parser = EvtxParser::from_path(path).ok()?;
    let mut parser = parser.with_configuration(source::settings());
    let first = parser.records_json_value().next()?.ok()?;
    first
        .data
        .pointer("/Event/System/Channel")
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// Splits `files` into the ones some rule may match and the ones skipped.
pub fn split(files: Vec<InputFile>, set: &RuleSet) -> (Vec<InputFile>, Vec<InputFile>) {
    use rayon::prelude::*;
    let keep: Vec<bool> = files
        .par_iter()
        .map(|f| match first_channel(&f.path) {
            Some(ch) => set.index.has_channel(&ch.to_lowercase()),
            None => true,
        })
        .collect();
    let mut kept = Vec::new();
    let mut skipped = Vec::new();
    for (f, k) in files.into_iter().zip(keep) {
        if k {
            kept.push(f);
        } else {
            skipped.push(f);
        }
    }
    (kept, skipped)
}
