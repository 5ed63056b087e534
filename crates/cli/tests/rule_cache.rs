//! The rule set cache as a user meets it: a second run of the same rules and options
//! takes the whole set from it and prints and finds the same; an edited, added or
//! removed rule, a config file added or changed, or other options, miss it, and the
//! change shows. A damaged or untrusted cache is ignored (with a warning) and rebuilt;
//! `--no-rule-cache` neither reads nor writes one.

// The rule set cache is written on Unix only: off Unix a file's status has no change
// time or inode to vouch that the rules are unchanged (scanner_files::Stat).
#![cfg(unix)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use support::{command, root, scratch, text};

/// A copy of the project's rule folder, to edit.
fn rules_copy(dir: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        fs::create_dir_all(to).unwrap();
        for e in fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.is_dir() {
                copy(&p, &to.join(e.file_name()));
            } else {
                fs::copy(&p, to.join(e.file_name())).unwrap();
            }
        }
    }
    let to = dir.join("rules");
    copy(&root().join("rules"), &to);
    to
}

/// `csv-timeline --debug` of testdata/evtx with `rules`, the cache under `cache`.
fn timeline(rules: &Path, cache: &Path, extra: &[&str]) -> (Output, String) {
    let out = command()
        .env("XDG_CACHE_HOME", cache)
        .env("TZ", "UTC")
        .args(["--debug", "csv-timeline", "-d", "testdata/evtx", "-r"])
        .arg(rules)
        .args(["-p", "verbose", "-U", "-C"])
        .args(extra)
        .output()
        .expect("run scanner");
    let err = text(&out.stderr);
    assert!(matches!(out.status.code(), Some(0) | Some(3)), "{err}");
    (out, err)
}

/// The debug line saying that the rule set cache served all, or that no cache was used.
fn cache_line(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("load: rule cache"))
        .unwrap_or_else(|| panic!("no cache line in:\n{err}"))
}

/// The debug line saying what the rule set cache did when it did not serve.
fn set_line(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("load: rule set cache "))
        .unwrap_or_else(|| panic!("no rule set cache line in:\n{err}"))
}

/// The cache files whose names begin with `kind` under the cache home `cache`.
fn cache_files(cache: &Path, kind: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(cache.join("scanner"))
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    out.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy();
        name.starts_with(kind) && name.ends_with(".bin")
    });
    out.sort();
    out
}

/// Waits until files written now are old enough for a rule set cache to vouch for
/// them (it is not written while a rule or config file changed within two seconds).
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(2200));
}

/// The `.yml` files under `dir`, sorted.
fn rule_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "yml") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

/// `rules check --debug` of `rules` with the cache under `cache`: standard output,
/// standard error as without `--debug` (up to the summary line), and the debug lines
/// that follow it (`load…`: what the caches did, how long each phase took).
fn check(rules: &Path, cache: &Path, extra: &[&str]) -> (String, String, String) {
    let out = command()
        .env("XDG_CACHE_HOME", cache)
        .args(["--debug", "rules", "check", "-r"])
        .arg(rules)
        .args(extra)
        .output()
        .expect("run scanner");
    let err = text(&out.stderr);
    let end = err
        .lines()
        .position(|l| l.starts_with("rules: ") && !l.starts_with("rules: using"))
        .unwrap_or_else(|| panic!("no summary in:\n{err}"));
    let report: Vec<&str> = err.lines().take(end + 1).collect();
    let debug: Vec<&str> = err
        .lines()
        .skip(end + 1)
        .filter(|l| l.starts_with("load"))
        .collect();
    (text(&out.stdout), report.join("\n"), debug.join("\n"))
}

#[test]
fn a_repeat_run_takes_the_whole_set_from_its_cache_and_prints_and_finds_the_same() {
    let dir = scratch("rule-set-cache");
    let rules = rules_copy(&dir);
    let cache = dir.join("cache");
    settle();

    let cold = check(&rules, &cache, &[]);
    let line = set_line(&cold.2);
    assert!(line.contains(": none yet, written anew ("), "{line}");
    assert_eq!(cache_files(&cache, "set-").len(), 1);
    let from_set = check(&rules, &cache, &[]);
    let line = cache_line(&from_set.2);
    assert!(
        line.starts_with("load: rule cache: the whole rule set from ")
            && line.ends_with(" rule and config files and folders unchanged)"),
        "{line}"
    );
    let plain = check(&rules, &dir.join("no-cache"), &["--no-rule-cache"]);
    assert!(!dir.join("no-cache").exists());
    assert_eq!(cache_line(&plain.2), "load: rule cache not used");
    for (run, name) in [(&from_set, "set"), (&plain, "none")] {
        assert_eq!((&run.0, &run.1), (&cold.0, &cold.1), "{name}");
    }
    assert!(cold.0.starts_with("loaded "), "{}", cold.0);

    // A timeline: the same detections from every level. Its rules and options are
    // those `rules check` loaded: their set cache serves.
    let (from_set, err) = timeline(&rules, &cache, &[]);
    assert!(
        cache_line(&err).contains("the whole rule set from"),
        "{err}"
    );
    let (cold, err) = timeline(&rules, &dir.join("cold"), &[]);
    assert!(set_line(&err).contains(": none yet, written anew"), "{err}");
    let (plain, err) = timeline(&rules, &dir.join("no-cache"), &["--no-rule-cache"]);
    assert_eq!(cache_line(&err), "load: rule cache not used");
    assert!(!dir.join("no-cache").exists());
    assert!(!cold.stdout.is_empty());
    assert_eq!(from_set.stdout, cold.stdout);
    assert_eq!(plain.stdout, cold.stdout);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_edited_added_or_removed_rule_a_config_file_or_other_options_miss_the_set_cache() {
    let dir = scratch("rule-set-cache-misses");
    let rules = rules_copy(&dir);
    let cache = dir.join("cache");
    settle();
    let (before, _) = timeline(&rules, &cache, &[]);
    let (_, err) = timeline(&rules, &cache, &[]);
    assert!(
        cache_line(&err).contains("the whole rule set from"),
        "{err}"
    );
    let summary = |c: &(String, String, String)| {
        c.1.lines()
            .find(|l| l.starts_with("rules: ") && !l.starts_with("rules: using"))
            .unwrap_or_default()
            .to_string()
    };
    let missed = |err: &str, path: &Path| {
        let want = format!(": {} changed, ", path.display());
        assert!(set_line(err).contains(&want), "{want} in\n{err}");
    };

    // An edited rule: every level raised to critical in one file.
    let edited = first_rule_with_detections(&rules, &before.stdout);
    let text_before = fs::read_to_string(&edited).unwrap();
    fs::write(
        &edited,
        text_before.replace("\nlevel: ", "\nlevel: critical\n#"),
    )
    .unwrap();
    let (after, err) = timeline(&rules, &cache, &[]);
    missed(&err, &edited);
    assert!(
        set_line(&err).contains(", not written: "),
        "a file just changed: {err}"
    );
    let title = rule_title(&text_before);
    let critical = |out: &[u8]| {
        text(out)
            .lines()
            .filter(|l| l.contains(&title) && l.contains(",\"crit\","))
            .count()
    };
    assert_eq!(critical(&before.stdout), 0);
    assert!(critical(&after.stdout) > 0, "the edit shows");

    // Waits, then loads once to write the set cache anew.
    let rewrite = || {
        settle();
        let run = check(&rules, &cache, &[]);
        assert!(
            set_line(&run.2).ends_with(" files and folders to check)"),
            "{}",
            run.2
        );
        run
    };

    // A rule added, then one removed: their folder changed.
    let base = rewrite();
    let folder = edited.parent().unwrap();
    let added = folder.join("zz-added.yml");
    fs::copy(&edited, &added).unwrap();
    let more = check(&rules, &cache, &[]);
    missed(&more.2, folder);
    assert_ne!(summary(&more), summary(&base), "one more file");
    assert!(
        more.1.contains("rule warning: rule id "),
        "its id now twice:\n{}",
        more.1
    );
    rewrite();
    fs::remove_file(&added).unwrap();
    let fewer = check(&rules, &cache, &[]);
    missed(&fewer.2, folder);
    assert_eq!(summary(&fewer), summary(&base));

    // A config file added to the config folder: the rule it excludes is disabled.
    rewrite();
    let id = text_before
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .expect("an id")
        .trim()
        .to_string();
    fs::write(rules.join("config/exclude_rules.txt"), format!("{id}\n")).unwrap();
    let excluded = check(&rules, &cache, &[]);
    missed(&excluded.2, &rules.join("config"));
    assert!(
        summary(&excluded).contains("1 excluded"),
        "{}",
        summary(&excluded)
    );

    // Changed: the rule it excluded is back.
    rewrite();
    fs::write(rules.join("config/exclude_rules.txt"), "# none\n").unwrap();
    let back = check(&rules, &cache, &[]);
    missed(&back.2, &rules.join("config/exclude_rules.txt"));
    assert_eq!(summary(&back), summary(&base));

    // Other options: a set cache of their own; the first one still serves.
    rewrite();
    assert!(cache_line(&check(&rules, &cache, &[]).2).contains("the whole rule set"));
    let high = check(&rules, &cache, &["--min-level", "high"]);
    assert!(
        set_line(&high.2).contains(": none yet, written anew"),
        "{}",
        high.2
    );
    assert_ne!(summary(&high), summary(&base));
    let high_again = check(&rules, &cache, &["--min-level", "high"]);
    assert!(
        cache_line(&high_again.2).contains("the whole rule set"),
        "{}",
        high_again.2
    );
    assert_eq!((&high_again.0, &high_again.1), (&high.0, &high.1));
    assert!(cache_line(&check(&rules, &cache, &[]).2).contains("the whole rule set"));
    assert_eq!(cache_files(&cache, "set-").len(), 2);
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_or_untrusted_rule_set_cache_is_ignored_with_a_warning_and_rebuilt() {
    let dir = scratch("rule-set-cache-damage");
    let rules = rules_copy(&dir);
    let cache = dir.join("cache");
    settle();
    let good = check(&rules, &cache, &[]);
    let file = cache_files(&cache, "set-").pop().expect("a rule set cache");
    let bytes = fs::read(&file).unwrap();
    let warned = |why: &str| {
        let run = check(&rules, &cache, &[]);
        let warning = format!(
            "warning: rule set cache {}: {why}; rules loaded from their files",
            file.display()
        );
        // After the line saying which rule set runs, before the load report.
        assert!(
            run.1.starts_with("rules: using ") && run.1.contains(&format!("\n{warning}\n")),
            "{warning} in\n{}",
            run.1
        );
        assert_eq!(run.1.replacen(&format!("{warning}\n"), "", 1), good.1);
        assert_eq!(run.0, good.0);
        assert!(set_line(&run.2).contains(", written anew"), "{}", run.2);
        let again = check(&rules, &cache, &[]);
        assert!(
            cache_line(&again.2).contains("the whole rule set"),
            "rebuilt: {}",
            again.2
        );
        assert_eq!((&again.0, &again.1), (&good.0, &good.1));
    };
    fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    warned("damaged");
    let mut flipped = bytes.clone();
    flipped[bytes.len() * 2 / 3] ^= 0x04;
    fs::write(&file, &flipped).unwrap();
    warned("damaged");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&file, fs::Permissions::from_mode(0o664)).unwrap();
        warned("writable by group or others");
        // A link where the cache goes: not followed, replaced.
        let target = dir.join("target.bin");
        fs::write(&target, &bytes).unwrap();
        fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&target, &file).unwrap();
        let run = check(&rules, &cache, &[]);
        assert!(
            run.1
                .contains(&format!("\nwarning: rule set cache {}: ", file.display())),
            "{}",
            run.1
        );
        assert_eq!(run.0, good.0);
        assert_eq!(
            fs::read(&target).unwrap(),
            bytes,
            "the link's target untouched"
        );
        assert!(
            fs::symlink_metadata(&file).unwrap().is_file(),
            "the link replaced"
        );
        // A cache folder others could write: not used at all.
        fs::set_permissions(cache.join("scanner"), fs::Permissions::from_mode(0o777)).unwrap();
        let run = check(&rules, &cache, &[]);
        assert!(
            run.1.contains("\nwarning: rule cache folder ")
                && run.1.contains("writable by group or others"),
            "{}",
            run.1
        );
        assert_eq!(cache_line(&run.2), "load: rule cache not used");
        assert!(!run.2.contains("load: rule set cache"), "{}", run.2);
        assert_eq!(run.0, good.0);
    }
    fs::remove_dir_all(&dir).unwrap();
}

/// A rule file of `rules` whose title appears in `timeline`.
fn first_rule_with_detections(rules: &Path, timeline: &[u8]) -> PathBuf {
    let timeline = text(timeline);
    rule_files(rules)
        .into_iter()
        .find(|f| {
            let t = fs::read_to_string(f).unwrap();
            !t.contains("level: critical")
                && t.matches("\ntitle:").count() + usize::from(t.starts_with("title:")) == 1
                && timeline.contains(&rule_title(&t))
        })
        .expect("a one-rule file with detections")
}

fn rule_title(yaml: &str) -> String {
    yaml.lines()
        .find_map(|l| l.strip_prefix("title:"))
        .map(|t| t.trim().trim_matches(['\'', '"']).to_string())
        .unwrap_or_default()
}
