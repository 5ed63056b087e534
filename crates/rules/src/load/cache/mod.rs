//! The rule set cache: the whole loaded, compiled, indexed [`RuleSet`], kept in the
//! user's cache folder with the list of every file and folder its load looked at, so
//! that loading the same rules again is: look at each of those paths, read one file,
//! decode it. No rule file is read, nothing compiled. The loader sees one type,
//! [`SetCache`]: `open` it for a load's sources and options, `find` the set there, or
//! `keep` the set loaded from the files; what it did goes into the load report.
//!
//! The file is a `scanner_files::CheckedCache`, which does what any cache of what files
//! make needs: the key kept whole and hashed into the file's name (`set-<hash>.bin`,
//! the [`MAX_CACHES`] most recently written kept), the statuses of every rule file,
//! config file and folder the load read, listed or looked for checked (none is read),
//! nothing written while they settle, a trusted, sealed file written by this very
//! binary. What is Sigma's is here: the key (everything `load` reads but the files: the
//! binary, the rule sources, the load options but the cache folder, and the working
//! folder when a path is relative), and the set's encoding and its checks.
//!
//! - Format: as no other binary reads a file, the set is encoded as its types derive
//!   (postcard), and a change to them needs no format number bumped.
//! - Checks: decoding refuses any inconsistency (lengths checked against the bytes
//!   left, nesting bounded by `scanner_files::nested`, automata and regexes by number
//!   in their table) and `sound` checks every index the set holds, so that no bytes
//!   make a later panic.
//!   A file that fails any of this is ignored with a note, the set loaded from the rule
//!   files, and the file replaced; another build's file is replaced without a word.

mod sound;

use crate::load::{LoadOptions, RuleSource};
use crate::matcher::{collecting, resolving, SharedTable};
use crate::report::LoadReport;
use crate::set::RuleSet;
use scanner_files::{split_section, CacheKind, CheckedCache, Miss, NotWritten, Seen};
use sound::sound;
use std::path::Path;
use std::time::SystemTime;

/// Cache files kept in the folder (one per list of rule sources and options); past
/// it, the least recently written go.
const MAX_CACHES: usize = 16;

/// The rule set cache's files.
static SETS: CacheKind = CacheKind {
    magic: b"SCNRSET\0",
    format: 1,
    prefix: "set-",
    keep: MAX_CACHES,
};

/// The rule set cache of one list of sources and options.
pub struct SetCache {
    cache: CheckedCache,
    /// When the load began: what the inputs' times must be older than.
    started: SystemTime,
}

/// What could not be used, said once.
fn note(path: &Path, why: impl std::fmt::Display) -> String {
    format!(
        "rule set cache {}: {why}; rules loaded from their files",
        path.display()
    )
}

impl SetCache {
    /// The set cache of `sources` loaded with `opts`, for a load that began at
    /// `started`: when `opts` names a cache folder, some source is a path, and the
    /// folder (made if missing) can be trusted; else `None` (why, in `report`).
    pub fn open(
        sources: &[RuleSource],
        opts: &LoadOptions,
        started: SystemTime,
        report: &mut LoadReport,
    ) -> Option<SetCache> {
        let dir = opts.cache_dir.as_deref()?;
        if !sources.iter().any(|s| matches!(s, RuleSource::Path(_))) {
            return None;
        }
        let cache = match CheckedCache::open(dir, &SETS, key(sources, opts)) {
            Ok(c) => c,
            Err(e) => {
                report.cache.note = Some(format!(
                    "rule cache folder {}: {}; rules parsed",
                    dir.display(),
                    e.why()
                ));
                return None;
            }
        };
        report.cache.set.file = Some(cache.file());
        Some(SetCache { cache, started })
    }

    /// The set, when the file holds one for these sources and options whose inputs
    /// are all unchanged, with this load's timings and cache use (its own are not kept
    /// there); else `None`, with why in `report`. `lap` is called after each step.
    pub fn find(
        &self,
        report: &mut LoadReport,
        lap: &mut impl FnMut(&mut LoadReport, &'static str),
    ) -> Option<RuleSet> {
        let found = self.cache.find(
            || lap(report, "rule set cache read"),
            |bytes| decode(bytes).filter(sound),
        );
        let (why, note) = match found {
            Ok((mut set, inputs)) => {
                lap(
                    report,
                    "its files and folders found unchanged, the rule set decoded from it",
                );
                set.report.timings = std::mem::take(&mut report.timings);
                set.report.cache = std::mem::take(&mut report.cache);
                set.report.cache.set.served = true;
                set.report.cache.set.inputs = inputs;
                return Some(set);
            }
            Err(Miss::Missing) => ("none yet".to_string(), None),
            Err(Miss::OtherBuild) => ("written by another build".to_string(), None),
            Err(Miss::OtherKey) => ("made for other sources or options".to_string(), None),
            Err(Miss::Changed(p)) => (format!("{} changed", p.display()), None),
            Err(Miss::Unusable(e)) => (e.to_string(), Some(note(&self.cache.file(), &e))),
        };
        report.cache.set.missed = Some(why);
        report.cache.set.note = note;
        lap(report, "rule set cache looked up");
        None
    }

    /// Writes `set`, loaded from its files having seen `seen`, and notes in its report
    /// whether it was written.
    pub fn keep(self, set: &mut RuleSet, seen: Seen) {
        // The set (its length first: the table it refers to comes after it, as it is
        // made while writing it), then that table.
        let saved = self.cache.keep(seen, self.started, |mut out| {
            let set_at = out.len();
            out.extend_from_slice(&0u64.to_le_bytes());
            let (out, table) = collecting(|| postcard::to_extend(&*set, out));
            let mut out = out?;
            let set_len = (out.len() - set_at - 8) as u64;
            out[set_at..set_at + 8].copy_from_slice(&set_len.to_le_bytes());
            postcard::to_extend(&table, out)
        });
        let used = &mut set.report.cache.set;
        match saved {
            Ok(inputs) => {
                (used.written, used.inputs) = (true, inputs);
                // The per-file document caches earlier builds kept beside it (up to 16
                // files of about 7 MiB each), which nothing reads any more.
                self.cache.prune("rules-", 0);
            }
            Err(NotWritten::ChangedWhileLoading) => {
                used.not_written = Some("a rule or config file changed while loading".into())
            }
            Err(e) => used.not_written = Some(e.to_string()),
        }
    }
}

/// The set (its length, then its bytes) and the table of automata and regexes after
/// it, when they decode and nothing follows.
fn decode(bytes: &[u8]) -> Option<RuleSet> {
    let (set, table) = split_section(bytes)?;
    let table = match postcard::take_from_bytes::<SharedTable>(table).ok()? {
        (table, []) => table,
        _ => return None,
    };
    let (set, _) = resolving(table, || postcard::take_from_bytes::<RuleSet>(set));
    match set {
        Ok((set, [])) => Some(set),
        _ => None,
    }
}

/// The sources and options a set is made from, encoded: everything `load` reads but
/// the files (the cache folder aside), and the working folder when a path is relative.
fn key(sources: &[RuleSource], opts: &LoadOptions) -> Vec<u8> {
    let paths = sources.iter().filter_map(|s| match s {
        RuleSource::Path(p) => Some(p),
        _ => None,
    });
    let relative = paths
        .chain(&opts.config_dir)
        .chain(&opts.expand_dir)
        .any(|p| p.is_relative());
    let cwd = relative.then(|| {
        std::env::current_dir()
            .map(|d| d.into_os_string().into_encoded_bytes())
            .unwrap_or_default()
    });
    // Plain data, paths as bytes (`LoadOptions`): encoding cannot fail.
    postcard::to_stdvec(&(sources, cwd, opts)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::load_at;
    use crate::meta::Level;
    use std::fs;
    use std::path::PathBuf;

    /// A rule of the bucket (Security, 4688) testing `needle` in CommandLine.
    fn rule(id: &str, needle: &str) -> String {
        format!(
            "title: Rule {id}\nid: {id}\nlevel: high\ndetection:\n  s:\n    Channel: Security\n    EventID: 4688\n    CommandLine|contains: '{needle}'\n  condition: s\n"
        )
    }

    /// Rules of every kind a set holds: enough in one bucket for a prefilter, an
    /// automaton, an affix set, a regex, keywords, a field reference, a placeholder,
    /// a filter, chained correlations, a duplicate id, an error; and a config folder.
    fn rules_folder(tag: &str) -> (PathBuf, PathBuf) {
        let d = std::env::temp_dir().join(format!("scanner-set-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        let rules = d.join("rules");
        fs::create_dir_all(rules.join("sub")).unwrap();
        fs::create_dir_all(rules.join("config/expand")).unwrap();
        for i in 0..10 {
            fs::write(
                rules.join(format!("sub/r{i}.yml")),
                rule(&format!("r{i}"), &format!("needle{i}")),
            )
            .unwrap();
        }
        let many = "title: Many\nid: many\nlevel: medium\ndetection:\n  s:\n    Channel: Security\n    EventID: 4688\n    Image|endswith: ['\\a.exe', '\\b.exe', '\\c.exe', '\\d.exe', '\\e.exe', '\\f.exe', '\\g.exe', '\\h.exe', '\\i.exe']\n    CommandLine|contains: ['alpha', 'bravo', 'charlie', 'delta', 'echo']\n  re:\n    CommandLine|re: '(?i)mimi[kc]atz\\.exe'\n  net:\n    IpAddress|cidr: 10.0.0.0/8\n  ref:\n    TargetUserName|fieldref: SubjectUserName\n  n:\n    LogonType|gt: 2\n  kw:\n    - 'evil keyword'\n  condition: (s and not ref) or (re and net) or 1 of n* or kw\n";
        fs::write(rules.join("many.yml"), many).unwrap();
        let placeholder = "title: Admins\nid: adm\ndetection:\n  s:\n    Channel: Security\n    EventID: 4624\n    TargetUserName|expand: '%admins%'\n  condition: s\n";
        fs::write(rules.join("placeholder.yml"), placeholder).unwrap();
        fs::write(rules.join("config/expand/admins.txt"), "root\nadmin\n").unwrap();
        let filter = "title: F\nfilter:\n  rules: [r1]\n  u:\n    SubjectUserName: backup\n  condition: not u\n";
        fs::write(rules.join("filter.yml"), filter).unwrap();
        let corr = "title: Inner\nname: inner\ncorrelation:\n  type: event_count\n  rules: [r2, r3]\n  group-by: [Computer]\n  timespan: 1h\n  condition: {gte: 2}\n---\ntitle: Outer\nname: outer\ncorrelation:\n  type: value_count\n  rules: [inner]\n  group-by: [Computer]\n  timespan: 1d\n  condition: {gte: 1, field: Computer}\n";
        fs::write(rules.join("corr.yml"), corr).unwrap();
        fs::write(rules.join("dup.yml"), rule("r4", "other")).unwrap();
        fs::write(rules.join("broken.yml"), "title: broken\n").unwrap();
        fs::write(rules.join("config/exclude_rules.txt"), "r9\n").unwrap();
        fs::write(rules.join("notes.txt"), "not a rule\n").unwrap();
        (d.clone(), rules)
    }

    fn opts(cache: &Path) -> LoadOptions {
        LoadOptions {
            cache_dir: Some(cache.to_path_buf()),
            ..LoadOptions::default()
        }
    }

    /// A load long enough after the files were written for the set to be written.
    #[cfg(unix)] // for the Unix-only tests of the set cache
    fn load_later(rules: &Path, opts: &LoadOptions) -> RuleSet {
        let later = SystemTime::now() + 2 * scanner_files::SETTLE;
        load_at(&[RuleSource::Path(rules.to_path_buf())], opts, later)
    }

    /// What a set holds, as text (sorted where it is unordered), to compare sets.
    fn described(set: &RuleSet) -> String {
        let mut out = format!(
            "{:#?}\n{:#?}\n{:?}\n",
            set.rules, set.correlations, set.emits
        );
        let mut r = set.report.clone();
        r.timings.clear();
        r.cache = Default::default();
        out += &format!("{r:#?}\n{}\n", set.regexes);
        let mut buckets: Vec<String> = set.index.buckets().map(|b| format!("{b:?}")).collect();
        buckets.sort();
        out += &format!("{} {buckets:#?}\n", set.index.keys());
        for i in 0..set.fields.len() {
            out += &format!("{i} {}\n", set.fields.path(i as u32));
        }
        for name in ["CommandLine", "Computer", "SubjectUserName", "NoSuch"] {
            out += &format!("{name} {:?}\n", set.fields.get(name));
        }
        let c = &set.config;
        let sorted = |s: &crate::fields::FxHashSet<String>| {
            let mut v: Vec<&String> = s.iter().collect();
            v.sort();
            format!("{v:?}")
        };
        let mut placeholders: Vec<_> = c.placeholders.iter().collect();
        placeholders.sort();
        let mut details: Vec<_> = c.default_details.iter().collect();
        details.sort();
        out += &format!(
            "{:?} {:?} {} {} {} {placeholders:?} {details:?} {:?}\n",
            c.aliases,
            c.data_mappings,
            sorted(&c.exclude),
            sorted(&c.noisy),
            sorted(&c.target_eids),
            c.generic_abbrev
        );
        out
    }

    /// What a load's outcome is, in terms that do not depend on the order its
    /// threads interned fields in: each rule's id, level and file, and the report.
    #[cfg(unix)] // for the Unix-only tests of the set cache
    fn outcome(set: &RuleSet) -> String {
        let mut rules: Vec<String> = set
            .rules
            .iter()
            .map(|r| format!("{} {:?} {}", r.meta.id, r.meta.level, r.meta.path))
            .collect();
        rules.sort();
        let r = &set.report;
        format!(
            "{rules:?}\n{:?}\n{:?}\n{:?}\n{:?} {} {} {} {}\n{} correlations\n{:?}",
            r.errors,
            r.disabled,
            r.disabled_rules,
            r.duplicate_ids,
            r.files,
            r.documents,
            r.loaded,
            r.enabled,
            set.correlations.len(),
            set.config.placeholders
        )
    }

    /// Asserts two texts are equal, naming the first line that is not.
    fn same(a: &str, b: &str, what: &str) {
        if let Some((i, (x, y))) = a
            .lines()
            .zip(b.lines())
            .enumerate()
            .find(|(_, (x, y))| x != y)
        {
            panic!("{what}: line {i} differs:\n{x}\n{y}");
        }
        assert_eq!(a.lines().count(), b.lines().count(), "{what}");
    }

    #[cfg(unix)] // the set cache is written on Unix only (scanner_files::Stat)
    #[test]
    fn a_set_read_back_is_the_set_loaded_and_an_edit_or_another_option_misses() {
        let (d, rules) = rules_folder("round");
        let cache = d.join("cache");
        let fresh = load_later(&rules, &LoadOptions::default());
        assert_eq!(fresh.report.errors.len(), 1, "{:?}", fresh.report.errors);
        assert!(fresh.index.prefiltered().0 > 0, "a bucket with a prefilter");
        assert!(!fresh.correlations.is_empty());

        let first = load_later(&rules, &opts(&cache));
        let used = &first.report.cache.set;
        assert!(!used.served && used.written, "{used:?}");
        assert_eq!(used.missed.as_deref(), Some("none yet"));
        let second = load_later(&rules, &opts(&cache));
        let used = &second.report.cache.set;
        assert!(used.served, "{used:?}");
        assert_eq!(used.inputs, first.report.cache.set.inputs);
        let phases: Vec<&str> = second.report.timings.iter().map(|t| t.0).collect();
        assert_eq!(
            phases,
            [
                "rule set cache read",
                "its files and folders found unchanged, the rule set decoded from it"
            ]
        );
        same(&described(&second), &described(&first), "read back");
        same(
            &outcome(&first),
            &outcome(&fresh),
            "loaded with a cache and without",
        );
        assert_ne!(second.fields.version(), first.fields.version());

        // Another option: a cache of its own.
        let high = LoadOptions {
            min_level: Level::High,
            ..opts(&cache)
        };
        let h = load_later(&rules, &high);
        assert_eq!(h.report.cache.set.missed.as_deref(), Some("none yet"));
        assert_ne!(h.report.cache.set.file, second.report.cache.set.file);
        assert!(load_later(&rules, &high).report.cache.set.served);
        assert!(load_later(&rules, &opts(&cache)).report.cache.set.served);
        fs::remove_dir_all(&d).unwrap();
    }

    /// Loads once to write the cache, changes the folder with `change`, loads again:
    /// the second load must not be served, must name `changed` as why, and must
    /// equal a load without the cache.
    #[cfg(unix)] // for the Unix-only tests of the set cache
    fn misses_after(tag: &str, change: impl Fn(&Path), changed: &str) -> RuleSet {
        let (d, rules) = rules_folder(tag);
        let cache = d.join("cache");
        assert!(load_later(&rules, &opts(&cache)).report.cache.set.written);
        change(&rules);
        let after = load_later(&rules, &opts(&cache));
        let used = &after.report.cache.set;
        assert!(!used.served, "{tag}: {used:?}");
        let want = format!("{} changed", rules.join(changed).display());
        assert_eq!(used.missed.as_deref(), Some(want.as_str()), "{tag}");
        assert!(used.written && used.note.is_none(), "{tag}: {used:?}");
        let plain = load_later(&rules, &LoadOptions::default());
        same(&outcome(&after), &outcome(&plain), tag);
        assert!(
            load_later(&rules, &opts(&cache)).report.cache.set.served,
            "{tag}"
        );
        fs::remove_dir_all(&d).unwrap();
        after
    }

    #[cfg(unix)] // the set cache is written on Unix only (scanner_files::Stat)
    #[test]
    fn an_edited_added_or_removed_rule_or_config_file_misses() {
        let level = |set: &RuleSet, id: &str| {
            set.rules
                .iter()
                .find(|r| r.meta.id == id)
                .map(|r| r.meta.level)
        };
        let set = misses_after(
            "edit",
            |r| {
                fs::write(
                    r.join("sub/r0.yml"),
                    rule("r0", "needle0").replace("high", "low"),
                )
                .unwrap()
            },
            "sub/r0.yml",
        );
        assert_eq!(level(&set, "r0"), Some(Level::Low));
        let set = misses_after(
            "add",
            |r| fs::write(r.join("sub/new.yml"), rule("new", "x")).unwrap(),
            "sub",
        );
        assert_eq!(level(&set, "new"), Some(Level::High));
        let set = misses_after(
            "remove",
            |r| fs::remove_file(r.join("sub/r1.yml")).unwrap(),
            "sub",
        );
        assert_eq!(level(&set, "r1"), None);
        // A config file looked for and not found, then added (its folder, looked at
        // first, changed with it).
        let set = misses_after(
            "noisy",
            |r| fs::write(r.join("config/noisy_rules.txt"), "r2\n").unwrap(),
            "config",
        );
        assert_eq!(level(&set, "r2"), None, "noisy: disabled");
        let set = misses_after(
            "exclude",
            |r| fs::write(r.join("config/exclude_rules.txt"), "r8\n").unwrap(),
            "config/exclude_rules.txt",
        );
        assert_eq!(
            (level(&set, "r8"), level(&set, "r9")),
            (None, Some(Level::High))
        );
        let set = misses_after(
            "expand",
            |r| fs::write(r.join("config/expand/admins.txt"), "root\n").unwrap(),
            // The folder is read twice, as `expand` and as `../config/expand`: the
            // latter comes first in path order.
            "config/../config/expand/admins.txt",
        );
        assert_eq!(set.config.placeholders["admins"], ["root"]);
        // A rule made a link to another file: its status is the target's.
        #[cfg(unix)]
        misses_after(
            "link",
            |r| {
                fs::remove_file(r.join("sub/r3.yml")).unwrap();
                std::os::unix::fs::symlink(r.join("sub/r4.yml"), r.join("sub/r3.yml")).unwrap();
            },
            "sub",
        );
    }

    #[test]
    fn recent_files_are_not_vouched_for() {
        let (d, rules) = rules_folder("recent");
        let cache = d.join("cache");
        let set = load(&[RuleSource::Path(rules.clone())], &opts(&cache));
        let used = &set.report.cache.set;
        assert!(!used.written, "{used:?}");
        assert!(
            used.not_written
                .as_deref()
                .is_some_and(|w| w.ends_with("changed within 2 s of the load")),
            "{used:?}"
        );
        assert!(!set
            .report
            .cache
            .set
            .file
            .as_deref()
            .is_some_and(Path::exists));
        fs::remove_dir_all(&d).unwrap();
    }

    use crate::load::load;

    #[cfg(unix)] // the set cache is written on Unix only (scanner_files::Stat)
    #[test]
    fn a_damaged_untrusted_or_foreign_file_is_ignored_and_replaced() {
        let (d, rules) = rules_folder("damage");
        let cache = d.join("cache");
        let set = load_later(&rules, &opts(&cache));
        let file = set.report.cache.set.file.clone().unwrap();
        let good = fs::read(&file).unwrap();
        let expect_note = |why: &str| {
            let set = load_later(&rules, &opts(&cache));
            let used = &set.report.cache.set;
            let note = format!(
                "rule set cache {}: {why}; rules loaded from their files",
                file.display()
            );
            assert_eq!(used.note.as_deref(), Some(note.as_str()), "{used:?}");
            assert!(!used.served && used.written, "{used:?}");
            assert!(
                load_later(&rules, &opts(&cache)).report.cache.set.served,
                "rewritten"
            );
        };
        let mut flipped = good.clone();
        flipped[good.len() / 2] ^= 0x10;
        fs::write(&file, &flipped).unwrap();
        expect_note("damaged");
        fs::write(&file, &good[..good.len() - 100]).unwrap();
        expect_note("damaged");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&file, fs::Permissions::from_mode(0o620)).unwrap();
            expect_note("writable by group or others");
            let target = d.join("elsewhere.bin");
            fs::write(&target, &good).unwrap();
            fs::remove_file(&file).unwrap();
            std::os::unix::fs::symlink(&target, &file).unwrap();
            let set = load_later(&rules, &opts(&cache));
            assert!(set.report.cache.set.note.is_some() && !set.report.cache.set.served);
            assert_eq!(
                fs::read(&target).unwrap(),
                good,
                "the link's target untouched"
            );
            assert!(fs::symlink_metadata(&file).unwrap().is_file(), "replaced");
        }
        // Another build's: replaced without a word.
        let mut other = good.clone();
        other[SETS.magic.len() + 5] ^= 1;
        fs::write(&file, &other).unwrap();
        let set = load_later(&rules, &opts(&cache));
        let used = &set.report.cache.set;
        assert_eq!(
            (used.note.as_deref(), used.missed.as_deref()),
            (None, Some("written by another build"))
        );
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn any_change_to_the_encoded_set_is_an_error_or_a_sound_set_never_a_panic() {
        let d = std::env::temp_dir().join(format!("scanner-set-bytes-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        let text = "title: T\nid: t\ndetection:\n  s:\n    Channel: Security\n    CommandLine|contains: ['aa', 'bb', 'cc', 'dd']\n    Image|re: 'x+y'\n  n:\n    - - User: a\n      - User: b\n  condition: s or not n\n---\ntitle: C\ncorrelation:\n  type: event_count\n  rules: [t]\n  group-by: [User]\n  timespan: 1h\n  condition: {gte: 2}\n";
        fs::write(d.join("t.yml"), text).unwrap();
        let set = load(&[RuleSource::Path(d.clone())], &LoadOptions::default());
        assert!(set.report.errors.is_empty(), "{:?}", set.report.errors);
        let (bytes, table) = collecting(|| postcard::to_stdvec(&set).unwrap());
        let mut good = (bytes.len() as u64).to_le_bytes().to_vec();
        good.extend_from_slice(&bytes);
        good.extend_from_slice(&postcard::to_stdvec(&table).unwrap());
        let back = decode(&good).expect("decodes");
        assert!(sound(&back));
        same(&described(&back), &described(&set), "read back");
        let (mut decoded, mut refused) = (0, 0);
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_none(), "cut at {cut}");
        }
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                match decode(&bad) {
                    Some(set) => {
                        decoded += 1;
                        if !sound(&set) {
                            refused += 1;
                        }
                    }
                    None => refused += 1,
                }
            }
        }
        assert!(refused > 0 && decoded > 0, "{refused} {decoded}");
        // A count past the bytes left asks for no huge allocation.
        let mut huge = 1u64.to_le_bytes().to_vec();
        huge.extend_from_slice(&[0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert!(decode(&huge).is_none());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn every_option_but_the_cache_folder_and_every_source_change_the_key() {
        let base = LoadOptions::default();
        let sources = [RuleSource::Path("/rules".into())];
        let k = key(&sources, &base);
        let mut variants: Vec<LoadOptions> = Vec::new();
        let mut v = |f: &dyn Fn(&mut LoadOptions)| {
            let mut o = base.clone();
            f(&mut o);
            variants.push(o);
        };
        v(&|o| o.config_dir = Some("/c".into()));
        v(&|o| o.min_level = Level::High);
        v(&|o| o.enable_deprecated = true);
        v(&|o| o.enable_unsupported = true);
        v(&|o| o.enable_noisy = true);
        v(&|o| o.expand_dir = Some("/e".into()));
        v(&|o| o.keep_derived_duplicates = true);
        v(&|o| o.exact_level = Some(Level::Low));
        v(&|o| o.proven_only = true);
        v(&|o| o.select.include_tags = vec!["attack.t1".into()]);
        v(&|o| o.select.exclude_tags = vec!["x".into()]);
        v(&|o| o.select.include_categories = vec!["x".into()]);
        v(&|o| o.select.exclude_categories = vec!["x".into()]);
        v(&|o| o.select.include_status = vec!["x".into()]);
        v(&|o| o.select.exclude_status = vec!["x".into()]);
        let mut keys: Vec<Vec<u8>> = variants.iter().map(|o| key(&sources, o)).collect();
        keys.push(k.clone());
        keys.push(key(&[RuleSource::Path("/other".into())], &base));
        keys.push(key(
            &[RuleSource::Path("/rules".into()), RuleSource::Builtin],
            &base,
        ));
        let text = |t: &str| RuleSource::Text {
            name: "t".into(),
            text: t.into(),
        };
        keys.push(key(&[text("a")], &base));
        keys.push(key(&[text("b")], &base));
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "all differ");
        let cached_elsewhere = LoadOptions {
            cache_dir: Some("/cache".into()),
            ..base.clone()
        };
        assert_eq!(
            key(&sources, &cached_elsewhere),
            k,
            "the cache folder is no part"
        );
    }
}
