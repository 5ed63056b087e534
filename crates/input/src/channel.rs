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
use scanner_rules::RuleSet;

/// The `Channel` of a file's first record, if it can be read. Only the first chunk's
/// header tables and one record are parsed.
pub fn first_channel(path: &std::path::Path) -> Option<String> {
    let settings = std::sync::Arc::new(evtx::settings());
    let file = evtx::ChunkFile::open(path).ok()?;
    let mut data = file.chunks().next()?.ok()?;
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
    if set.has_channel("\u{0}") {
        // A rule without a channel may match any file: none can be skipped, and no
        // file need be opened to find out.
        return (files, Vec::new());
    }
    let keep: Vec<bool> = files
        .par_iter()
        .map(|f| {
            // An archive's member is not copied out twice: it is scanned.
            match (f.size >= MIN_BYTES && f.member.is_none())
                .then(|| first_channel(&f.path))
                .flatten()
            {
                Some(ch) => set.has_channel(&ch.to_lowercase()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evtx::test_log::{event, log, named, TempFile};
    use scanner_rules::{load, LoadOptions, RuleSource};

    /// Rules for the channels named (a rule without a channel for `None`).
    fn rules_for(channels: &[Option<&str>]) -> RuleSet {
        let docs: Vec<String> = channels
            .iter()
            .enumerate()
            .map(|(i, ch)| {
                let channel = ch.map_or(String::new(), |c| format!("Channel: '{c}', "));
                format!(
                    "title: Rule {i}\nid: 40000000-0000-0000-0000-00000000000{i}\nlevel: high\n\
                     detection: {{sel: {{{channel}EventID: 4624}}, condition: sel}}\n"
                )
            })
            .collect();
        let text = docs.join("---\n");
        let set = load(
            &[RuleSource::Text {
                name: "channel-test.yml".into(),
                text,
            }],
            &LoadOptions::default(),
        );
        assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
        set
    }

    /// A Security log, padded with zeros to `size` bytes when it is shorter.
    fn security_log(name: &str, size: usize) -> (TempFile, InputFile) {
        let mut bytes = log(&[event(4624, named("User", "bob"))]);
        if bytes.len() < size {
            bytes.resize(size, 0);
        }
        file(name, &bytes)
    }

    fn file(name: &str, bytes: &[u8]) -> (TempFile, InputFile) {
        let t = TempFile::new(name, bytes);
        let f = InputFile::new(t.path().to_path_buf(), bytes.len() as u64);
        (t, f)
    }

    fn names(files: &[InputFile]) -> Vec<String> {
        let name = |f: &InputFile| f.path.file_name().unwrap().to_string_lossy().into_owned();
        files.iter().map(name).collect()
    }

    const SYSMON: &str = "Microsoft-Windows-Sysmon/Operational";

    #[test]
    fn the_first_records_channel_is_read_and_unreadable_files_have_none() {
        let (_big, f) = security_log("channel-first.evtx", MIN_BYTES as usize);
        assert_eq!(first_channel(&f.path).as_deref(), Some("Security"));
        let (_junk, junk) = file("channel-junk.evtx", &[7u8; 4096]);
        assert_eq!(first_channel(&junk.path), None);
        assert_eq!(first_channel(&junk.path.with_extension("gone")), None);
    }

    #[test]
    fn a_large_file_whose_channel_no_rule_uses_is_left_out() {
        let (_t, big) = security_log("channel-unused.evtx", MIN_BYTES as usize);
        let (kept, skipped) = split_by_channel(vec![big.clone()], &rules_for(&[Some(SYSMON)]));
        assert!(kept.is_empty());
        assert_eq!(names(&skipped), names(std::slice::from_ref(&big)));

        // A rule for its channel, written in another case, keeps it.
        let (kept, skipped) =
            split_by_channel(vec![big], &rules_for(&[Some(SYSMON), Some("SECURITY")]));
        assert_eq!(kept.len(), 1);
        assert!(skipped.is_empty());
    }

    #[test]
    fn small_files_unreadable_files_and_rules_without_a_channel_keep_files() {
        let (_s, small) = security_log("channel-small.evtx", 0);
        assert!(small.size < MIN_BYTES);
        let (_j, junk) = file("channel-unreadable.evtx", &vec![7u8; MIN_BYTES as usize]);
        let (_b, big) = security_log("channel-big.evtx", MIN_BYTES as usize);
        let sysmon = rules_for(&[Some(SYSMON)]);
        let (kept, skipped) =
            split_by_channel(vec![small.clone(), junk.clone(), big.clone()], &sysmon);
        assert_eq!(names(&kept), names(&[small.clone(), junk.clone()]));
        assert_eq!(names(&skipped), names(std::slice::from_ref(&big)));

        let any = rules_for(&[Some(SYSMON), None]);
        let (kept, skipped) = split_by_channel(vec![small, junk, big], &any);
        assert_eq!(kept.len(), 3);
        assert!(skipped.is_empty());
    }
}
