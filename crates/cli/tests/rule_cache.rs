//! The rule cache as a user meets it: a second run of the same rules reads them from
//! the cache and finds the same detections; an edited rule is parsed again and its edit
//! shows; a damaged or untrusted cache is ignored (with a warning) and rebuilt;
//! `--no-rule-cache` neither reads nor writes one.

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

/// The debug line saying what the cache served.
fn cache_line(err: &str) -> &str {
    err.lines()
        .find(|l| l.starts_with("load: rule cache"))
        .unwrap_or_else(|| panic!("no cache line in:\n{err}"))
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

#[test]
fn a_second_run_reads_the_cache_and_finds_the_same() {
    let dir = scratch("rule-cache");
    let rules = rules_copy(&dir);
    let cache = dir.join("cache");
    let n = rule_files(&rules).len();
    assert!(n > 10, "{n} rule files");

    let (first, err) = timeline(&rules, &cache, &[]);
    assert!(
        cache_line(&err).ends_with(&format!(": 0 of {n} files from it, written anew")),
        "{}",
        cache_line(&err)
    );
    let (second, err) = timeline(&rules, &cache, &[]);
    assert!(
        cache_line(&err).ends_with(&format!(": {n} of {n} files from it")),
        "{}",
        cache_line(&err)
    );
    assert!(!first.stdout.is_empty());
    assert_eq!(
        first.stdout, second.stdout,
        "same detections from the cache"
    );

    // An edited rule is parsed again, and its edit shows: every rule's level raised to
    // critical in one file.
    let edited = first_rule_with_detections(&rules, &first.stdout);
    let before = fs::read_to_string(&edited).unwrap();
    let after: String = before
        .lines()
        .map(|l| {
            if l.starts_with("level:") {
                "level: critical".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert_ne!(before, after, "{} has a level line", edited.display());
    fs::write(&edited, after).unwrap();
    let (third, err) = timeline(&rules, &cache, &[]);
    assert!(
        cache_line(&err).ends_with(&format!(": {} of {n} files from it, written anew", n - 1)),
        "{}",
        cache_line(&err)
    );
    let title = rule_title(&before);
    let critical = |out: &[u8]| {
        text(out)
            .lines()
            .filter(|l| l.contains(&title) && l.contains(",\"crit\","))
            .count()
    };
    assert_eq!(critical(&first.stdout), 0);
    assert!(critical(&third.stdout) > 0, "the edit shows");

    // The same rules without the cache: the same timeline, and no cache folder made.
    let none = dir.join("no-cache");
    let (plain, err) = timeline(&rules, &none, &["--no-rule-cache"]);
    assert_eq!(cache_line(&err), "load: rule cache not used");
    assert_eq!(plain.stdout, third.stdout);
    assert!(!none.exists());
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_damaged_or_untrusted_cache_is_ignored_with_a_warning_and_rebuilt() {
    let dir = scratch("rule-cache-damage");
    let rules = rules_copy(&dir);
    let cache = dir.join("cache");
    let n = rule_files(&rules).len();
    let (first, _) = timeline(&rules, &cache, &[]);
    let file = fs::read_dir(cache.join("scanner"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "bin"))
        .expect("a cache file");

    let mut bytes = fs::read(&file).unwrap();
    let i = bytes.len() * 2 / 3;
    bytes[i] ^= 0x55;
    fs::write(&file, &bytes).unwrap();
    let (damaged, err) = timeline(&rules, &cache, &[]);
    assert!(
        err.contains("warning: rule cache ") && err.contains(": damaged; rules parsed"),
        "{err}"
    );
    assert!(cache_line(&err).ends_with(&format!(": 0 of {n} files from it, written anew")));
    assert_eq!(damaged.stdout, first.stdout);
    let (_, err) = timeline(&rules, &cache, &[]);
    assert!(cache_line(&err).ends_with(&format!(": {n} of {n} files from it")));

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(cache.join("scanner"), fs::Permissions::from_mode(0o777)).unwrap();
        let (open, err) = timeline(&rules, &cache, &[]);
        assert!(
            err.contains("warning: rule cache folder ")
                && err.contains("writable by group or others"),
            "{err}"
        );
        assert_eq!(cache_line(&err), "load: rule cache not used");
        assert_eq!(open.stdout, first.stdout);
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
