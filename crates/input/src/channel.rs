//! Skipping EVTX files that no rule can match, as Hayabusa does by default (`-a` scans
//! every file): a file's channel is read from its first record, and the file is left
//! out when the rule index has no rule for that channel and no rule without one. A
//! file whose first record cannot be read is kept, so that its errors are reported.
//! An archive's member is checked the same way, from the channel read when the archive
//! was listed (its file header and first chunk come with the first bytes looked at).
//!
//! Reading a first record costs about as much as scanning a small file, so only files
//! of at least [`crate::evtx::MIN_BYTES`] are checked: smaller ones are scanned (their records still
//! meet only the rules of their channel, through the index).

use crate::discover::InputFile;
use crate::evtx::{first_channel, MIN_BYTES};
use scanner_rules::RuleSet;

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
            // An archive's member's channel was read when it was listed.
            let channel = match &f.member {
                _ if f.size < MIN_BYTES => None,
                None => first_channel(&f.path),
                Some(m) => m.channel().map(str::to_string),
            };
            match channel {
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
            if let Some(m) = &f.member {
                crate::archive::skip(&f.path, m);
            }
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
    fn an_archive_member_is_checked_as_a_file_is() {
        use std::io::Write;
        let mut bytes = log(&[event(4624, named("User", "bob"))]);
        bytes.resize(MIN_BYTES as usize, 0);
        let small = log(&[event(4624, named("User", "bob"))]);
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        for (name, b) in [("big.evtx", &bytes), ("small.evtx", &small)] {
            w.start_file(name, stored).unwrap();
            w.write_all(b).unwrap();
        }
        let zip = w.finish().unwrap().into_inner();
        let t = TempFile::new("channel-members.zip", &zip);
        let listed = crate::archive::list(t.path(), crate::archive::Kind::Zip, None);
        assert!(listed.errors.is_empty());
        let files: Vec<InputFile> = listed
            .members
            .into_iter()
            .map(|(m, size)| InputFile {
                path: t.path().to_path_buf(),
                size,
                member: Some(std::sync::Arc::new(m)),
            })
            .collect();
        let channels: Vec<Option<&str>> = files
            .iter()
            .map(|f| f.member.as_ref().unwrap().channel())
            .collect();
        assert_eq!(
            channels,
            [Some("Security"), None],
            "read for the large one only"
        );
        let shown = |fs: &[InputFile]| -> Vec<String> {
            fs.iter().map(|f| f.name().display().to_string()).collect()
        };
        let (kept, skipped) = split_by_channel(files.clone(), &rules_for(&[Some(SYSMON)]));
        assert_eq!(shown(&kept), [format!("{}/small.evtx", t.path().display())]);
        assert_eq!(
            shown(&skipped),
            [format!("{}/big.evtx", t.path().display())]
        );
        let (kept, skipped) = split_by_channel(files, &rules_for(&[Some("Security")]));
        assert_eq!(kept.len(), 2);
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
