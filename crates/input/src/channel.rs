//! Skipping EVTX files that no rule can match, as Hayabusa does by default (`-a` scans
//! every file): a file's channel is read from its first record, and the file is left
//! out when the rule index has no rule for that channel and no rule without one. A
//! file whose first record cannot be read is kept, so that its errors are reported.
//!
//! Reading a first record costs about as much as scanning a small file, so only files
//! of at least [`MIN_BYTES`] are checked: smaller ones are scanned (their records still
//! meet only the rules of their channel, through the index).

/// Files smaller than this are scanned without a channel check.
pub const MIN_BYTES: u64 = 1 << 20;

use crate::discover::InputFile;
use crate::evtx;
use ::evtx::EvtxParser;
use scanner_rules::RuleSet;

/// The `Channel` of a file's first record, if it can be read. Only the first chunk's
/// header tables and one record are parsed.
pub fn first_channel(path: &std::path::Path) -> Option<String> {
    let settings = std::sync::Arc::new(evtx::settings());
    let mut parser = EvtxParser::from_path(path)
        .ok()?
        .with_configuration((*settings).clone());
    let mut data = parser.chunks().next()?.ok()?;
    let mut chunk = data.parse(settings).ok()?;
    let record = chunk.iter().next()?.ok()?;
    let json = record.into_json().ok()?;
    let v: serde_json::Value = serde_json::from_str(&json.data).ok()?;
    v.pointer("/Event/System/Channel")
        .and_then(|c| c.as_str())
        .map(str::to_string)
}

/// Splits `files` into the ones some rule may match and the ones skipped.
pub fn split_by_channel(files: Vec<InputFile>, set: &RuleSet) -> (Vec<InputFile>, Vec<InputFile>) {
    use rayon::prelude::*;
    if set.index().has_channel("\u{0}") {
        // A rule without a channel may match any file: none can be skipped, and no
        // file need be opened to find out.
        return (files, Vec::new());
    }
    let keep: Vec<bool> = files
        .par_iter()
        .map(|f| {
            match (f.size >= MIN_BYTES)
                .then(|| first_channel(&f.path))
                .flatten()
            {
                Some(ch) => set.index().has_channel(&ch.to_lowercase()),
                None => true,
            }
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
