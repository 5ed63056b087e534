//! `scanner update-rules` against local git repositories the tests make (no network):
//! the first clone, an update's report of added, modified and removed rules, the
//! timeline's use of the downloaded set, and failures (a repository gone, a set that
//! does not load, a planted symlink) that must leave the previous set as it was.
//!
//! git runs with `GIT_CONFIG_NOSYSTEM=1` and `HOME` in the test's folder, and the test
//! repositories set their own author, so a fresh CI machine needs no git config.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{names_in, root, scratch, text};

/// One test's folders: `home`, `data` (XDG_DATA_HOME) and a repository `repo`.
struct Fixture {
    dir: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = scratch(&format!("update-rules-{name}"));
        std::fs::create_dir_all(dir.join("home")).unwrap();
        Fixture { dir }
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The downloaded set.
    fn set(&self) -> PathBuf {
        self.data().join("scanner/rules")
    }

    fn repo(&self) -> PathBuf {
        self.dir.join("repo")
    }

    fn url(&self, repo: &Path) -> String {
        format!("file://{}", repo.display())
    }

    /// Runs git in `cwd`, which must succeed.
    fn git(&self, cwd: &Path, args: &[&str]) {
        let out = Command::new("git")
            .current_dir(cwd)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", self.dir.join("home"))
            .args(["-c", "user.email=test@example.com", "-c", "user.name=Test"])
            .args(args)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    }

    /// A new repository at `repo` holding `files` (path, text) and the project's
    /// rules config in `config/`, committed.
    fn make_repo(&self, repo: &Path, files: &[(&str, String)]) {
        std::fs::create_dir_all(repo).unwrap();
        self.git(repo, &["init", "-q", "-b", "main"]);
        copy_dir(&root().join("rules/config"), &repo.join("config"));
        self.commit(repo, files, &[]);
    }

    /// Writes `files`, removes `gone`, and commits.
    fn commit(&self, repo: &Path, files: &[(&str, String)], gone: &[&str]) {
        for (p, t) in files {
            let p = repo.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        }
        for p in gone {
            std::fs::remove_file(repo.join(p)).unwrap();
        }
        self.git(repo, &["add", "-A"]);
        self.git(repo, &["commit", "-q", "-m", "rules"]);
    }

    /// Runs `scanner ARGS` with this fixture's data folder and home.
    fn scanner(&self, args: &[&str]) -> Output {
        self.scanner_with(args, &[])
    }

    /// [`Fixture::scanner`] with more environment variables.
    fn scanner_with(&self, args: &[&str], env: &[(&str, String)]) -> Output {
        support::command()
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("XDG_DATA_HOME", self.data())
            .env("HOME", self.dir.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TZ", "UTC")
            .output()
            .expect("run scanner")
    }

    /// `update-rules --url URL`, which must succeed; its standard output.
    fn update_ok(&self, url: &str) -> String {
        let out = self.scanner(&["update-rules", "--url", url]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    }

    /// Every file of the set below `dir` but `.git`, with its text: what must not change
    /// when an update fails.
    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if e.file_name() == ".git" {
                    continue;
                }
                if e.file_type().unwrap().is_dir() {
                    stack.push(p);
                } else {
                    let rel = p.strip_prefix(dir).unwrap().display().to_string();
                    out.push((rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        out.sort();
        out
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A rule for Security 4624 logons (which `testdata/evtx/security.evtx` holds).
fn rule(title: &str, id: u32) -> String {
    format!(
        "title: {title}\nid: 00000000-0000-4000-8000-{id:012}\nstatus: test\n\
         description: a test rule\nauthor: test\ndate: 2024/01/0{}\n\
         logsource:\n  product: windows\n  service: security\n\
         detection:\n  selection:\n    Channel: Security\n    EventID: 4624\n  condition: selection\n\
         level: high\n",
        id % 9 + 1
    )
}

/// The folders beside the set (data/scanner): the set and the lock file, nothing left.
fn no_leftovers(fx: &Fixture) {
    let names = names_in(&fx.data().join("scanner"));
    assert!(
        names.iter().all(|n| n == "rules" || n == ".rules.lock"),
        "left behind: {names:?}"
    );
}

#[test]
fn first_clone_installs_the_set_and_the_timeline_uses_it() {
    let fx = Fixture::new("first");
    let repo = fx.repo();
    fx.make_repo(
        &repo,
        &[
            ("hayabusa/a.yml", rule("Downloaded Rule A", 1)),
            ("sigma/b.yml", rule("Downloaded Rule B", 2)),
        ],
    );
    let url = fx.url(&repo);
    let out = fx.update_ok(&url);
    assert!(out.contains("Added rules: 2\n"), "{out}");
    assert!(
        out.contains(" - Downloaded Rule A (Modified: 2024/01/02 | Path: hayabusa/a.yml)"),
        "{out}"
    );
    assert!(
        out.contains("2 added, 0 modified, 0 removed; 2 rules load"),
        "{out}"
    );
    assert!(fx.set().join("sigma/b.yml").is_file());
    assert!(fx.set().join("config").is_dir());
    no_leftovers(&fx);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for d in [fx.data().join("scanner"), fx.set()] {
            let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", d.display());
        }
    }

    // The timeline now runs the downloaded set, and says so.
    let out = fx.scanner(&[
        "csv-timeline",
        "-f",
        "testdata/evtx/security.evtx",
        "-U",
        "-N",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (csv, err) = (text(&out.stdout), text(&out.stderr));
    assert!(err.contains("rules: using the set updated on "), "{err}");
    assert!(err.contains(&format!("from {url} at ")), "{err}");
    assert!(csv.contains("Downloaded Rule A"), "{csv}");
    assert!(!csv.contains("Successful RDP Logon"), "{csv}");
    // -q says nothing of it.
    let out = fx.scanner(&["csv-timeline", "-f", "testdata/evtx/security.evtx", "-q"]);
    assert!(!text(&out.stderr).contains("using the set"));
    // --builtin-rules runs the built-in set.
    let out = fx.scanner(&[
        "csv-timeline",
        "-f",
        "testdata/evtx/security.evtx",
        "-N",
        "--builtin-rules",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("Successful RDP Logon"));
    assert!(!text(&out.stdout).contains("Downloaded Rule A"));
    assert!(!text(&out.stderr).contains("using the set"));
    // rules check loads it too.
    let out = fx.scanner(&["rules", "check"]);
    assert!(
        text(&out.stdout).contains("loaded 2 of 2 rules"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_update_reports_added_modified_and_removed_rules() {
    let fx = Fixture::new("update");
    let repo = fx.repo();
    fx.make_repo(
        &repo,
        &[
            ("r/a.yml", rule("Rule A", 1)),
            ("r/b.yml", rule("Rule B", 2)),
            ("r/c.yml", rule("Rule C", 3)),
        ],
    );
    let url = fx.url(&repo);
    fx.update_ok(&url);
    fx.commit(
        &repo,
        &[
            ("r/b.yml", rule("Rule B Renamed", 2)),
            ("r/d.yml", rule("Rule D", 4)),
        ],
        &["r/c.yml"],
    );
    // No --url: the set remembers where it came from.
    let out = fx.scanner(&["update-rules"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = text(&out.stdout);
    let want = "Added rules: 1\n - Rule D (Modified: 2024/01/05 | Path: r/d.yml)\n\
                Modified rules: 1\n - Rule B Renamed (Modified: 2024/01/03 | Path: r/b.yml)\n\
                Removed rules: 1\n - Rule C (Modified: 2024/01/04 | Path: r/c.yml)\n";
    assert!(out.starts_with(want), "{out}");
    assert!(
        out.contains("1 added, 1 modified, 1 removed; 3 rules load"),
        "{out}"
    );
    assert!(!fx.set().join("r/c.yml").exists());
    assert!(fx.set().join("r/d.yml").exists());
    no_leftovers(&fx);

    let out = fx.update_ok(&url);
    assert!(
        out.starts_with("You currently have the latest rules.\n"),
        "{out}"
    );
}

#[test]
fn a_failed_fetch_leaves_the_previous_set() {
    let fx = Fixture::new("gone");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    let url = fx.url(&repo);
    fx.update_ok(&url);
    let before = Fixture::snapshot(&fx.set());
    std::fs::remove_dir_all(&repo).unwrap();
    let out = fx.scanner(&["update-rules", "--url", &url]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("git clone failed"), "{err}");
    assert!(err.contains("previous rule set"), "{err}");
    assert_eq!(Fixture::snapshot(&fx.set()), before);
    no_leftovers(&fx);
}

#[test]
fn a_set_that_does_not_load_is_not_installed() {
    let fx = Fixture::new("broken");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    fx.update_ok(&fx.url(&repo));
    let before = Fixture::snapshot(&fx.set());
    let broken = fx.dir.join("broken");
    fx.make_repo(
        &broken,
        &[
            ("x.yml", "title: [unclosed\n".to_string()),
            ("y.yml", "not: a rule\n".to_string()),
        ],
    );
    let out = fx.scanner(&["update-rules", "--url", &fx.url(&broken)]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("were not installed: no rule loads (2 rule files, 2 rejected)"),
        "{err}"
    );
    assert_eq!(Fixture::snapshot(&fx.set()), before);
    no_leftovers(&fx);
    // And the set still names where it came from.
    let out = fx.scanner(&["rules", "check"]);
    assert!(
        text(&out.stderr).contains(&fx.url(&repo)),
        "{}",
        text(&out.stderr)
    );
}

#[cfg(unix)]
#[test]
fn a_planted_symlink_is_not_followed() {
    let fx = Fixture::new("symlink");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    let elsewhere = fx.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(fx.data().join("scanner")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, fx.set()).unwrap();
    let out = fx.scanner(&["update-rules", "--url", &fx.url(&repo)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is a symbolic link"),
        "{}",
        text(&out.stderr)
    );
    assert!(names_in(&elsewhere).is_empty());
    assert!(std::fs::symlink_metadata(fx.set())
        .unwrap()
        .file_type()
        .is_symlink());
    // Nor used by the timeline: the built-in rules run.
    let out = fx.scanner(&["csv-timeline", "-f", "testdata/evtx/security.evtx", "-N"]);
    assert!(!text(&out.stderr).contains("using the set"));
    assert!(text(&out.stdout).contains("Successful RDP Logon"));
}

#[test]
fn dash_r_clones_into_a_new_folder_and_refuses_one_that_is_no_checkout() {
    let fx = Fixture::new("dash-r");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    let url = fx.url(&repo);
    let mine = fx.dir.join("my-rules");
    let mine_s = mine.display().to_string();
    let out = fx.scanner(&["update-rules", "-r", &mine_s, "--url", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(mine.join("a.yml").is_file());
    assert!(
        !fx.data().exists(),
        "the data folder is not touched with -r"
    );

    let plain = fx.dir.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("own.yml"), rule("Own", 9)).unwrap();
    let out = fx.scanner(&[
        "update-rules",
        "-r",
        &plain.display().to_string(),
        "--url",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is not a git checkout"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(names_in(&plain), ["own.yml"]);
}

#[test]
fn folders_an_interrupted_update_left_are_removed() {
    let fx = Fixture::new("leftover");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    let stale = fx.data().join("scanner/.rules.new-999999-00000000deadbeef");
    std::fs::create_dir_all(stale.join("sub")).unwrap();
    std::fs::write(stale.join("sub/half.yml"), "title: half\n").unwrap();
    fx.update_ok(&fx.url(&repo));
    no_leftovers(&fx);
}

#[test]
fn a_url_that_reads_as_an_option_is_refused() {
    let fx = Fixture::new("dash-url");
    let out = fx.scanner(&["update-rules", "--url=--upload-pack=touch /tmp/x"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot begin with '-'"),
        "{}",
        text(&out.stderr)
    );
    assert!(!fx.set().exists());
}

/// A folder holding a `git` that runs `script` (sh), for the PATH of a run.
#[cfg(unix)]
fn fake_git(fx: &Fixture, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = fx.dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let git = bin.join("git");
    std::fs::write(&git, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", bin.display())
}

#[cfg(unix)]
#[test]
fn an_interrupted_update_removes_its_folder_and_leaves_the_set() {
    let fx = Fixture::new("interrupt");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    fx.update_ok(&fx.url(&repo));
    let before = Fixture::snapshot(&fx.set());
    // A git that writes half a clone into its last argument, sends Ctrl-C's signal to
    // scanner, and waits for scanner to end.
    let path = fake_git(
        &fx,
        r#"for a; do dest=$a; done
mkdir -p "$dest/half" && echo 'title: half' > "$dest/half/x.yml"
kill -INT $PPID
while kill -0 $PPID 2>/dev/null; do sleep 0.05; done
exit 1"#,
    );
    let out = fx.scanner_with(&["update-rules"], &[("PATH", path)]);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert_eq!(Fixture::snapshot(&fx.set()), before);
    no_leftovers(&fx);
}

#[cfg(unix)]
#[test]
fn a_git_that_hangs_is_stopped_at_the_timeout() {
    let fx = Fixture::new("timeout");
    // A git that never ends by itself (until the test's folder goes).
    let path = fake_git(&fx, "while :; do sleep 1; done");
    let out = fx.scanner_with(
        &[
            "update-rules",
            "--url",
            "https://example.invalid/r.git",
            "--timeout",
            "1",
        ],
        &[("PATH", path)],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("git clone took longer than 1 s and was stopped"),
        "{err}"
    );
    assert!(!fx.set().exists());
    no_leftovers(&fx);
}

#[cfg(unix)]
#[test]
fn a_set_others_may_write_to_is_neither_updated_nor_used() {
    use std::os::unix::fs::PermissionsExt;
    let fx = Fixture::new("writable");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    fx.update_ok(&fx.url(&repo));
    let holder = fx.data().join("scanner");
    std::fs::set_permissions(&holder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = fx.scanner(&["update-rules"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("may be written by other users"),
        "{}",
        text(&out.stderr)
    );
    let out = fx.scanner(&["csv-timeline", "-f", "testdata/evtx/security.evtx", "-N"]);
    assert!(!text(&out.stderr).contains("using the set"));
    assert!(text(&out.stdout).contains("Successful RDP Logon"));
}
