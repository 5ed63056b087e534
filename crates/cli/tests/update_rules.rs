//! `scanner update-rules` against local git repositories the tests make (no network):
//! the first clone, an update's report of added, modified and removed rules, the
//! timeline's use of the downloaded set, and failures (a repository gone, a set that
//! does not load, a planted symlink) that must leave the previous set as it was.
//!
//! git runs with `GIT_CONFIG_NOSYSTEM=1` and `HOME` in the test's folder, and the test
//! repositories set their own author, so a fresh CI machine needs no git config.

#![cfg_attr(not(unix), allow(dead_code))] // the fixtures of the git-based tests

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
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::create_dir_all(dir.join("home")).unwrap();
        // The commands run in `work`, where the test log is at the path it has in the
        // project and no `./rules` comes before the downloaded set.
        #[cfg(unix)]
        std::os::unix::fs::symlink(root().join("testdata"), dir.join("work/testdata")).unwrap();
        #[cfg(windows)]
        std::os::windows::fs::symlink_dir(root().join("testdata"), dir.join("work/testdata"))
            .unwrap();
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
        self.command(args, env).output().expect("run scanner")
    }

    /// The command [`Fixture::scanner_with`] runs, not yet started.
    fn command(&self, args: &[&str], env: &[(&str, String)]) -> Command {
        let mut c = support::command();
        // What the tests of git's configuration set must not come from the machine.
        c.current_dir(self.dir.join("work"))
            .env_remove("GIT_ALLOW_PROTOCOL")
            .args(args)
            .env("XDG_DATA_HOME", self.data())
            .env("HOME", self.dir.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TZ", "UTC")
            .envs(env.iter().map(|(k, v)| (k, v)));
        c
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

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
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
    assert!(
        err.contains("rules: using the rules installed by update-rules at "),
        "{err}"
    );
    assert!(err.contains(" (updated on "), "{err}");
    assert!(err.contains(&format!("from {url};")), "{err}");
    assert!(csv.contains("Downloaded Rule A"), "{csv}");
    assert!(!csv.contains("Successful RDP Logon"), "{csv}");
    // -q says nothing of it.
    let out = fx.scanner(&["csv-timeline", "-f", "testdata/evtx/security.evtx", "-q"]);
    assert!(!text(&out.stderr).contains("using the rules installed by update-rules"));
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
    assert!(!text(&out.stderr).contains("using the rules installed by update-rules"));
    // rules check loads it too.
    let out = fx.scanner(&["rules", "check"]);
    assert!(
        text(&out.stdout).contains("loaded 2 of 2 rules"),
        "{}",
        text(&out.stdout)
    );
}

/// Run from a folder without `./rules/config` and without `-c`, the commands that show
/// event titles read them from the installed set's config, as they would from `-c`.
#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
#[test]
fn event_titles_come_from_the_installed_sets_config() {
    let fx = Fixture::new("titles");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    fx.commit(
        &repo,
        &[(
            "config/channel_eid_info.txt",
            "Channel,EventID,EventTitle\nSecurity,4624,Logon from the downloaded set\n".into(),
        )],
        &[],
    );
    fx.update_ok(&fx.url(&repo));
    let elsewhere = fx.dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let log = root().join("testdata/evtx/security.evtx");
    let out = fx
        .command(&["eid-metrics", "-f", log.to_str().unwrap(), "-q"], &[])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Logon from the downloaded set"),
        "{}",
        text(&out.stdout)
    );
}

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
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

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
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

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
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
        text(&out.stderr).contains("a symbolic link, not followed; not used"),
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
    assert!(!text(&out.stderr).contains("using the rules installed by update-rules"));
    assert!(text(&out.stdout).contains("Successful RDP Logon"));
}

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
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

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
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
        text(&out.stderr).contains("writable by group or others"),
        "{}",
        text(&out.stderr)
    );
    let out = fx.scanner(&["csv-timeline", "-f", "testdata/evtx/security.evtx", "-N"]);
    assert!(!text(&out.stderr).contains("using the rules installed by update-rules"));
    assert!(text(&out.stdout).contains("Successful RDP Logon"));
}

// Bounds on what a downloaded repository can make an update read or write, git's
// configuration, and git's processes (issue "Hardening, second round", parts 4 to 6).

/// The loader's cap for a rule file (`scanner_rules::TextFile::Rule`), which an update
/// checks on the repository's listing before anything is checked out.
const RULE_CAP: u64 = 4 << 20;

/// Makes `repo/rel` a file of `len` zero bytes (sparse: nothing is written to disk).
#[cfg(unix)] // for the Unix-only tests of large files and memory
fn zeros(repo: &Path, rel: &str, len: u64) {
    let p = repo.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::File::create(&p).unwrap().set_len(len).unwrap();
}

/// Lets git stream blobs over 1 MiB in `repo`: `git add` hashes a large file without
/// holding it, and the serving side of a clone (upload-pack reads this repository's
/// config) sends it as it is stored, so the peak a test measures is the update's own.
#[cfg(unix)] // for the Unix-only tests of large files and memory
fn stream_big_blobs(fx: &Fixture, repo: &Path) {
    fx.git(repo, &["config", "core.bigFileThreshold", "1m"]);
}

/// `text` (a rule) padded with a YAML comment to exactly `len` bytes.
fn padded(text: String, len: u64) -> String {
    let pad = len as usize - text.len() - 2;
    format!("{text}#{}\n", "x".repeat(pad))
}

/// Runs `c` to its end; its output, and the peak resident memory in KiB of it and of
/// every process it waited for (git and git's own children), as `wait4` reports it.
#[cfg(unix)]
fn measured(mut c: Command) -> (Output, u64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    // Reaped below by wait4, which the standard library's Child does not know of.
    #[allow(clippy::zombie_processes)]
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scanner");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        out.read_to_end(&mut v).unwrap();
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        err.read_to_end(&mut v).unwrap();
        v
    });
    let mut status = 0;
    // SAFETY: rusage is plain data (all zeroes is a valid value); wait4 writes it and
    // `status`, both of which live for the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // SAFETY: as above; the child is ours and not waited for by anyone else.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    // macOS gives bytes, Linux KiB.
    let peak = if cfg!(target_os = "macos") {
        ru.ru_maxrss as u64 / 1024
    } else {
        ru.ru_maxrss as u64
    };
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (output, peak)
}

/// The most memory (KiB) an update of the tests' small repositories may take at its
/// peak, git included: a file read whole, or inflated whole by git, passes it.
#[cfg(unix)] // for the Unix-only tests of large files and memory
const PEAK_KIB: u64 = 100_000;

#[cfg(unix)]
#[test]
fn a_rule_file_over_the_loaders_cap_is_refused_before_checkout() {
    let fx = Fixture::new("huge-file");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    stream_big_blobs(&fx, &repo);
    fx.update_ok(&fx.url(&repo));
    let before = Fixture::snapshot(&fx.set());
    // 256 MiB of zeros, which git packs into 256 KiB (3 GiB made 3.2 MB and took an
    // update 40 s and 3 GiB of memory: the change report read the file whole).
    zeros(&repo, "sigma/huge.yml", 256 << 20);
    fx.commit(&repo, &[], &[]);
    let (out, peak) = measured(fx.command(&["update-rules"], &[]));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "sigma/huge.yml is 256.0 MiB (268435456 bytes), larger than the 4 MiB allowed for a rule file"
        ),
        "{err}"
    );
    assert!(err.contains("nothing was checked out"), "{err}");
    assert_eq!(Fixture::snapshot(&fx.set()), before);
    no_leftovers(&fx);
    assert!(peak < PEAK_KIB, "the update's peak was {peak} KiB");
}

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
#[test]
fn a_rule_file_at_the_cap_installs_and_one_byte_more_is_refused() {
    let fx = Fixture::new("at-cap");
    let repo = fx.repo();
    let at_cap = padded(rule("Rule At Cap", 1), RULE_CAP);
    fx.make_repo(
        &repo,
        &[
            ("r/at-cap.yml", at_cap.clone()),
            ("r/b.yml", rule("Rule B", 2)),
        ],
    );
    let out = fx.update_ok(&fx.url(&repo));
    assert!(
        out.contains("2 added, 0 modified, 0 removed; 2 rules load"),
        "{out}"
    );
    let before = Fixture::snapshot(&fx.set());
    fx.commit(&repo, &[("r/at-cap.yml", format!("{at_cap}#"))], &[]);
    let out = fx.scanner(&["update-rules"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "r/at-cap.yml is 4.0 MiB (4194305 bytes), larger than the 4 MiB allowed for a rule file"
        ),
        "{err}"
    );
    assert_eq!(Fixture::snapshot(&fx.set()), before);
    no_leftovers(&fx);
}

#[cfg(unix)]
#[test]
fn a_repository_over_the_total_bound_is_refused_before_checkout() {
    let fx = Fixture::new("total");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Rule A", 1))]);
    stream_big_blobs(&fx, &repo);
    // No rule file, so no cap of its own: the bound of the whole set holds it.
    zeros(&repo, "samples/data.bin", 129 << 20);
    fx.commit(&repo, &[], &[]);
    let (out, peak) = measured(fx.command(&["update-rules", "--url", &fx.url(&repo)], &[]));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("MiB in all ("), "{err}");
    assert!(
        err.contains("bytes), more than the 128 MiB a rule set may hold"),
        "{err}"
    );
    assert!(err.contains("nothing was checked out"), "{err}");
    assert!(!fx.set().exists());
    no_leftovers(&fx);
    assert!(peak < PEAK_KIB, "the update's peak was {peak} KiB");
}

#[cfg(unix)]
#[test]
fn the_change_report_reads_a_bounded_part_of_each_file() {
    let fx = Fixture::new("report-bounds");
    let repo = fx.repo();
    fx.make_repo(
        &repo,
        &[("a.yml", rule("Rule A", 1)), ("b.yml", rule("Rule B", 2))],
    );
    fx.update_ok(&fx.url(&repo));
    // A set installed before sizes were checked (or edited since) may hold files of any
    // size: one the update modifies and one it removes, 256 MiB each, title first.
    for (name, title) in [("a.yml", "Old A"), ("gone.yml", "Old Gone")] {
        let p = fx.set().join(name);
        std::fs::write(&p, format!("title: {title}\n")).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(256 << 20)
            .unwrap();
    }
    fx.commit(&repo, &[("a.yml", rule("Rule A2", 1))], &[]);
    let (out, peak) = measured(fx.command(&["update-rules"], &[]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(
        report.contains("Modified rules: 1\n - Rule A2 (Modified: 2024/01/02 | Path: a.yml)\n"),
        "{report}"
    );
    assert!(
        report.contains("Removed rules: 1\n - Old Gone (Modified: - | Path: gone.yml)\n"),
        "{report}"
    );
    assert!(peak < PEAK_KIB, "the update's peak was {peak} KiB");
}

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
#[test]
fn files_are_checked_out_byte_for_byte_as_listed() {
    let fx = Fixture::new("attributes");
    let repo = fx.repo();
    // Attributes that would make the checkout larger than the sizes checked: CRLF line
    // ends, `$Id$` expanded to a hash.
    let text = format!("{}# $Id$\n", rule("Rule A", 1));
    fx.make_repo(
        &repo,
        &[
            ("a.yml", text.clone()),
            (".gitattributes", "*.yml text eol=crlf ident\n".to_string()),
        ],
    );
    fx.update_ok(&fx.url(&repo));
    assert_eq!(
        std::fs::read_to_string(fx.set().join("a.yml")).unwrap(),
        text
    );
}

#[cfg(unix)] // its repositories are made with git: no git.exe under Wine (README)
#[test]
fn the_users_git_configuration_is_not_read() {
    let fx = Fixture::new("gitconfig");
    let repo = fx.repo();
    fx.make_repo(&repo, &[("a.yml", rule("Real Rule", 1))]);
    let decoy = fx.dir.join("decoy");
    fx.make_repo(&decoy, &[("a.yml", rule("Decoy Rule", 2))]);
    let (url, decoy_url) = (fx.url(&repo), fx.url(&decoy));
    let marker = fx.dir.join("marker");
    // The URL rewritten to a command git's ext:: helper runs (`% ` is a space).
    let ext = format!("ext::sh -c touch% {}% >&2", marker.display());
    let to_ext =
        format!("[protocol \"ext\"]\n\tallow = always\n[url \"{ext}\"]\n\tinsteadOf = {url}\n");
    let to_decoy = format!("[url \"{decoy_url}\"]\n\tinsteadOf = {url}\n");
    let file = |name: &str, text: &str| {
        let p = fx.dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let home_config = fx.dir.join("home/.gitconfig");
    let cases: Vec<(&str, Vec<(&str, String)>)> = vec![
        // A HOME another user owns: their ~/.gitconfig.
        ("~/.gitconfig", vec![]),
        (
            "$XDG_CONFIG_HOME/git/config",
            vec![("XDG_CONFIG_HOME", {
                file("xdg/git/config", &to_decoy);
                fx.dir.join("xdg").display().to_string()
            })],
        ),
        (
            "GIT_CONFIG_GLOBAL",
            vec![("GIT_CONFIG_GLOBAL", file("global", &to_decoy))],
        ),
        (
            "GIT_CONFIG_COUNT",
            vec![
                ("GIT_CONFIG_COUNT", "2".into()),
                ("GIT_CONFIG_KEY_0", "protocol.ext.allow".into()),
                ("GIT_CONFIG_VALUE_0", "always".into()),
                ("GIT_CONFIG_KEY_1", format!("url.{ext}.insteadOf")),
                ("GIT_CONFIG_VALUE_1", url.clone()),
            ],
        ),
        (
            "GIT_CONFIG_PARAMETERS",
            vec![(
                "GIT_CONFIG_PARAMETERS",
                format!("'url.{decoy_url}.insteadof'='{url}'"),
            )],
        ),
    ];
    for (what, env) in cases {
        if what == "~/.gitconfig" {
            std::fs::write(&home_config, &to_ext).unwrap();
        } else {
            let _ = std::fs::remove_file(&home_config);
        }
        let out = fx.scanner_with(&["update-rules", "--url", &url], &env);
        assert!(
            !marker.exists(),
            "{what}: git ran the command of an ext:: URL"
        );
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out.stderr));
        let installed = std::fs::read_to_string(fx.set().join("a.yml")).unwrap();
        assert!(installed.contains("Real Rule"), "{what}: {installed}");
    }
}

#[test]
fn urls_of_other_protocols_are_refused() {
    let fx = Fixture::new("protocols");
    let marker = fx.dir.join("marker");
    for url in [
        format!("ext::sh -c touch% {}% >&2", marker.display()),
        "fd::17".to_string(),
        "http://example.invalid/r.git".to_string(),
        "git://example.invalid/r.git".to_string(),
        "ftp://example.invalid/r.git".to_string(),
    ] {
        let out = fx.scanner(&["update-rules", "--url", &url]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{url}: {err}");
        assert!(
            err.contains("only https://, ssh:// (or host:path) and file:// URLs"),
            "{url}: {err}"
        );
        assert!(!marker.exists());
        assert!(!fx.set().exists());
    }
}

#[cfg(unix)]
#[test]
fn git_runs_without_configuration_from_the_environment_and_with_three_protocols() {
    let fx = Fixture::new("git-env");
    let rec = fx.dir.join("env");
    let path = fake_git(&fx, &format!("env > '{}'\nexit 1", rec.display()));
    let out = fx.scanner_with(
        &["update-rules", "--url", "https://example.invalid/r.git"],
        &[
            ("PATH", path),
            ("GIT_CONFIG_COUNT", "1".into()),
            ("GIT_CONFIG_KEY_0", "protocol.ext.allow".into()),
            ("GIT_CONFIG_VALUE_0", "always".into()),
            (
                "GIT_CONFIG_PARAMETERS",
                "'protocol.ext.allow'='always'".into(),
            ),
            ("GIT_CONFIG", "/tmp/elsewhere".into()),
            ("GIT_CONFIG_SYSTEM", "/tmp/elsewhere".into()),
            ("GIT_CONFIG_GLOBAL", "/tmp/elsewhere".into()),
            ("GIT_ALLOW_PROTOCOL", "ext:https".into()),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let env = std::fs::read_to_string(&rec).unwrap();
    let mut config: Vec<&str> = env
        .lines()
        .filter(|l| l.starts_with("GIT_CONFIG") || l.starts_with("GIT_ALLOW_PROTOCOL="))
        .collect();
    config.sort();
    assert_eq!(
        config,
        [
            "GIT_ALLOW_PROTOCOL=https:ssh:file",
            "GIT_CONFIG_GLOBAL=/dev/null",
            "GIT_CONFIG_NOSYSTEM=1"
        ]
    );
}

/// What a fake git recorded about itself: its pid, process group and blocked signals,
/// and the pid of a helper it started in the background (as git starts
/// `git-remote-https` or `ssh`).
#[cfg(target_os = "linux")]
struct Recorded {
    git: i32,
    pgid: i32,
    helper: i32,
    sigblk: u64,
}

/// A fake git that records a [`Recorded`] in `fx.dir/rec`, starts a helper that sleeps,
/// and becomes `sleep 300` itself; the PATH that runs it.
#[cfg(target_os = "linux")]
fn recording_git(fx: &Fixture) -> (String, PathBuf) {
    let rec = fx.dir.join("rec");
    std::fs::create_dir_all(&rec).unwrap();
    let path = fake_git(
        fx,
        &format!(
            // The mask is read by the shell itself (builtins, no fork): dash blocks
            // every signal while it forks, so a child reading the shell's status
            // could see that.
            r#"rec='{}'
while IFS= read -r line; do
  case $line in SigBlk:*) echo "$line" > "$rec/sigblk";; esac
done < /proc/$$/status
cat /proc/$$/stat > "$rec/stat"
sleep 300 &
echo $! > "$rec/helper.tmp" && mv "$rec/helper.tmp" "$rec/helper"
exec sleep 300"#,
            rec.display()
        ),
    );
    (path, rec)
}

/// The fields of `/proc/PID/stat` after the command name: state, ppid, pgrp, …
#[cfg(target_os = "linux")]
fn stat_fields(stat: &str) -> Vec<String> {
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').map(str::to_string).collect()
}

/// Whether process `pid` runs (a zombie, dead and waiting to be reaped, does not).
#[cfg(target_os = "linux")]
fn runs(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !matches!(stat_fields(&s)[0].as_str(), "Z" | "X"),
        Err(_) => false,
    }
}

/// The processes of the group `pgid` that run.
#[cfg(target_os = "linux")]
fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let f = stat_fields(&stat);
        if f[2] == pgid.to_string() && !matches!(f[0].as_str(), "Z" | "X") {
            out.push(pid);
        }
    }
    out
}

#[cfg(target_os = "linux")]
impl Recorded {
    /// Waits (up to a minute) for the fake git to have recorded everything.
    fn wait(rec: &Path) -> Option<Recorded> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !rec.join("helper").exists() {
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let read = |n: &str| std::fs::read_to_string(rec.join(n)).unwrap();
        let stat = read("stat");
        let sigblk = read("sigblk");
        let sigblk = sigblk.trim().strip_prefix("SigBlk:").unwrap().trim();
        Some(Recorded {
            git: stat.split(' ').next().unwrap().parse().unwrap(),
            pgid: stat_fields(&stat)[2].parse().unwrap(),
            helper: read("helper").trim().parse().unwrap(),
            sigblk: u64::from_str_radix(sigblk, 16).unwrap(),
        })
    }

    /// After scanner ended: git and its helper are gone (waiting up to 20 s for the
    /// kill to land), they were a process group of their own of which nothing runs, and
    /// git started with no signal blocked.
    fn assert_all_gone(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while (runs(self.helper) || runs(self.git)) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            !runs(self.helper),
            "git's helper (pid {}) still runs after scanner ended",
            self.helper
        );
        assert!(!runs(self.git), "git (pid {}) still runs", self.git);
        assert_eq!(
            self.pgid, self.git,
            "git runs in a process group of its own"
        );
        assert_eq!(group_members(self.pgid), Vec::<i32>::new());
        assert_eq!(
            self.sigblk, 0,
            "git started with signals blocked: {:x}",
            self.sigblk
        );
    }
}

#[cfg(target_os = "linux")]
impl Drop for Recorded {
    /// Whatever the test found, the fake git's processes end with it.
    fn drop(&mut self) {
        for pid in [self.helper, self.git] {
            if runs(pid) {
                // SAFETY: kill has no memory preconditions; the pid is one the test's
                // fake git recorded, seen running just now.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn at_the_timeout_git_and_its_helpers_are_killed_as_a_group() {
    let fx = Fixture::new("group-timeout");
    let (path, rec) = recording_git(&fx);
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
    let recorded = Recorded::wait(&rec).expect("the fake git ran");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("git clone took longer than 1 s"), "{err}");
    recorded.assert_all_gone();
    assert!(!fx.set().exists());
    no_leftovers(&fx);
}

#[cfg(target_os = "linux")]
#[test]
fn on_ctrl_c_git_and_its_helpers_are_killed_as_a_group() {
    use std::process::Stdio;
    let fx = Fixture::new("group-int");
    let (path, rec) = recording_git(&fx);
    let mut scanner = fx
        .command(
            &["update-rules", "--url", "https://example.invalid/r.git"],
            &[("PATH", path)],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run scanner");
    let Some(recorded) = Recorded::wait(&rec) else {
        let _ = scanner.kill();
        panic!("the fake git did not run");
    };
    // SAFETY: kill has no memory preconditions; the pid is our child's, not yet reaped.
    unsafe { libc::kill(scanner.id() as libc::pid_t, libc::SIGINT) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(s) = scanner.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = scanner.kill();
            panic!("scanner did not end on SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    recorded.assert_all_gone();
    assert!(!fx.set().exists());
    no_leftovers(&fx);
}
