//! `scanner update-rules`: downloads the community rule set (hayabusa-rules by default)
//! into the user's data folder, or the folder `-r` names, and reports what changed.
//!
//! An update never leaves half a set: the repository is cloned into a new folder beside
//! the set, the new folder must load (its config, and at least one rule), and only then
//! does it take the old set's place in one rename. On any failure (git fails or times
//! out, the set does not load, Ctrl-C) the new folder is removed and the old set is as
//! it was.
//!
//! What is downloaded is bounded before it is written: the clone is made without a
//! checkout, and its listing (each file's size, read without inflating it) must show no
//! rule or config file larger than the loader reads and no more than [`MAX_SET_FILES`]
//! files and [`MAX_SET_BYTES`] in all; only then is it checked out. A URL must be one
//! git reaches by https, ssh or file (see [`check_url`]); how git itself is run (no
//! configuration but the repository's, its own process group) is in `git.rs`.

mod changes;
mod git;
mod place;

use crate::args::UpdateRulesArgs;
use crate::exit;
use crate::terminal::safe;
use changes::{Changes, RuleFile};
use git::{Git, TreeFile};
use scanner_rules::{load, LoadOptions, RuleSource, TextFile};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use place::remove_pending_and_hold;

/// Kills the git commands an update is running (each with the processes it started);
/// for the signal thread, as the process exits next.
#[cfg(unix)]
pub use git::stop_all_and_hold as stop_git_and_hold;

/// The repository an update downloads when neither `--url` nor the set names one.
pub const DEFAULT_URL: &str = "https://github.com/Yamato-Security/hayabusa-rules.git";

/// The most bytes the files of a downloaded set may hold in all. hayabusa-rules holds
/// 10.3 MB in 5,031 files (11.6 MB in a checkout, 24 MB of disk), SigmaHQ's whole
/// repository 27 MB in 4,756 files, its images and regression data included: 128 MiB
/// leaves room for either to grow fivefold, and bounds what checking that a set loads
/// reads (the loader takes about six times the rule text: 67 MB for hayabusa-rules).
const MAX_SET_BYTES: u64 = 128 << 20;

/// The most files a downloaded set may hold: twenty times hayabusa-rules' 5,031.
const MAX_SET_FILES: usize = 100_000;

/// Why an update failed (the previous set is then unchanged).
#[derive(Debug)]
pub enum UpdateError {
    /// Neither `XDG_DATA_HOME` nor `HOME` names a folder.
    NoDataDir,
    /// A folder the update would write is not safe to use.
    Unsafe {
        /// The folder.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
    /// A folder the update would use is a link, another user's or writable by others
    /// (it names itself and why).
    Folder(scanner_files::Error),
    /// `-r DIR` holds files but is no git checkout: it is not replaced.
    NotACheckout(PathBuf),
    /// Another update of the same set is running.
    Busy(PathBuf),
    /// A file operation failed.
    Io {
        /// On what.
        path: PathBuf,
        /// Doing what.
        action: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// `git` could not be run.
    GitMissing(std::io::Error),
    /// `git` ran and failed.
    GitFailed {
        /// The step.
        what: &'static str,
        /// Its exit status.
        status: String,
        /// What it printed on standard error.
        stderr: String,
    },
    /// `git` ran past the time limit and was stopped.
    GitTimeout {
        /// The step.
        what: &'static str,
        /// The limit.
        secs: u64,
    },
    /// The downloaded set's config folder did not load.
    BadConfig {
        /// The URL.
        url: String,
        /// The config files that failed, with their reasons.
        failures: Vec<String>,
    },
    /// No rule of the downloaded set loads.
    NoRules {
        /// The URL.
        url: String,
        /// Rule files read.
        files: usize,
        /// Rules rejected.
        rejected: usize,
    },
    /// A URL refused before git runs (see [`check_url`]).
    BadUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: &'static str,
    },
    /// A file of the downloaded set is larger than the loader reads (nothing was
    /// checked out).
    FileTooLarge {
        /// The URL.
        url: String,
        /// The file's path in the repository.
        file: String,
        /// Its size in bytes.
        size: u64,
        /// The cap for its kind, in bytes.
        limit: u64,
        /// Its kind (`rule`, `config`).
        kind: &'static str,
    },
    /// The downloaded set holds more files, or more bytes in all, than a set may
    /// (nothing was checked out).
    SetTooLarge {
        /// The URL.
        url: String,
        /// How many files it holds.
        files: usize,
        /// Their bytes in all.
        bytes: u64,
    },
    /// git printed more than is kept of its output.
    GitOutput {
        /// The step.
        what: &'static str,
        /// The bytes kept.
        limit: usize,
    },
}

impl UpdateError {
    fn io(path: &Path, action: &'static str, source: std::io::Error) -> UpdateError {
        UpdateError::Io {
            path: path.to_path_buf(),
            action,
            source,
        }
    }
}

impl fmt::Display for UpdateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpdateError::NoDataDir => write!(
                f,
                "no data folder: set XDG_DATA_HOME or HOME (absolute), or name the folder with -r"
            ),
            UpdateError::Unsafe { path, reason } => {
                write!(f, "{}: {reason}; not used", path.display())
            }
            UpdateError::Folder(e) => write!(f, "{e}; not used"),
            UpdateError::NotACheckout(p) => write!(
                f,
                "{}: holds files but is not a git checkout; move it away or name another folder with -r",
                p.display()
            ),
            UpdateError::Busy(p) => write!(
                f,
                "another update-rules is running (it holds {})",
                p.display()
            ),
            UpdateError::Io {
                path,
                action,
                source,
            } => write!(f, "{}: {action}: {source}", path.display()),
            UpdateError::GitMissing(e) => write!(f, "cannot run git: {e}"),
            UpdateError::GitFailed {
                what,
                status,
                stderr,
            } => write!(f, "git {what} failed ({status}): {stderr}"),
            UpdateError::GitTimeout { what, secs } => {
                write!(f, "git {what} took longer than {secs} s and was stopped (--timeout)")
            }
            UpdateError::BadConfig { url, failures } => write!(
                f,
                "the rules from {} were not installed: their config does not load: {}",
                shown(url),
                failures.join("; ")
            ),
            UpdateError::NoRules {
                url,
                files,
                rejected,
            } => write!(
                f,
                "the rules from {} were not installed: no rule loads ({files} rule files, {rejected} rejected)",
                shown(url)
            ),
            UpdateError::BadUrl { url, reason } => {
                write!(f, "the URL '{}': {reason}", shown(url))
            }
            UpdateError::FileTooLarge {
                url,
                file,
                size,
                limit,
                kind,
            } => write!(
                f,
                "the rules from {} were not installed: {file} is {} ({size} bytes), larger than the {} MiB allowed for a {kind} file; nothing was checked out",
                shown(url),
                mib(*size),
                limit >> 20
            ),
            UpdateError::SetTooLarge { url, files, bytes } => {
                write!(f, "the rules from {} were not installed: ", shown(url))?;
                if *files > MAX_SET_FILES {
                    write!(
                        f,
                        "it holds {files} files, more than the {MAX_SET_FILES} a rule set may hold"
                    )?;
                } else {
                    write!(
                        f,
                        "its {files} files hold {} in all ({bytes} bytes), more than the {} MiB a rule set may hold",
                        mib(*bytes),
                        MAX_SET_BYTES >> 20
                    )?;
                }
                write!(f, "; nothing was checked out")
            }
            UpdateError::GitOutput { what, limit } => write!(
                f,
                "git {what} printed more than the {} MiB read of it; not used",
                limit >> 20
            ),
        }
    }
}

/// A downloaded set the rule-loading commands use by default.
#[derive(Debug, Clone)]
pub struct InstalledSet {
    /// Its folder.
    pub dir: PathBuf,
    /// The URL and date of its update, when recorded.
    source: Option<place::SetSource>,
}

impl InstalledSet {
    /// The line the commands print about it: where it came from and when.
    pub fn describe(&self) -> String {
        match &self.source {
            Some(s) => format!(
                "rules: using the rules installed by update-rules at {} (updated on {} from {}; --builtin-rules for the built-in set)",
                self.dir.display(),
                s.updated,
                shown(&s.url)
            ),
            None => format!(
                "rules: using the rules installed by update-rules at {} (--builtin-rules for the built-in set)",
                self.dir.display()
            ),
        }
    }
}

/// The set `update-rules` keeps in the user's data folder, when there is one (a folder
/// of this user, not a symlink).
pub fn installed() -> Option<InstalledSet> {
    let dir = place::default_dir()?;
    let place = place::Place::open(&dir, false).ok()??;
    if place.state().ok()? == place::SetState::Absent {
        return None;
    }
    let source = place::read_source(&dir);
    Some(InstalledSet { dir, source })
}

/// `update-rules`.
pub fn run(a: &UpdateRulesArgs) -> i32 {
    match update(a) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", safe(&e.to_string()));
            eprintln!("(the previous rule set, if any, is unchanged)");
            exit::FATAL
        }
    }
}

fn update(a: &UpdateRulesArgs) -> Result<(), UpdateError> {
    let target = match &a.rules {
        Some(d) => d.clone(),
        None => place::default_dir().ok_or(UpdateError::NoDataDir)?,
    };
    // The data folder is made when missing; a folder -r names must exist.
    let place = place::Place::open(&target, a.rules.is_none())?.ok_or_else(|| {
        UpdateError::io(
            scanner_files::folder_of(&target),
            "cannot use folder",
            std::io::ErrorKind::NotFound.into(),
        )
    })?;
    let git = Git {
        timeout: Duration::from_secs(a.timeout.max(1)),
    };
    let _lock = place.lock()?;
    let stale = place.remove_leftovers();
    if stale > 0 && !a.quiet {
        eprintln!("removed {stale} folder(s) an interrupted update left");
    }
    let had_old = place.state()? == place::SetState::Holds;
    if had_old && !target.join(".git").exists() {
        return Err(UpdateError::NotACheckout(target));
    }
    let old_source = had_old.then(|| place::read_source(&target)).flatten();
    let url = match &a.url {
        Some(u) => u.clone(),
        None => old_source
            .as_ref()
            .map(|s| s.url.clone())
            .or_else(|| had_old.then(|| git.origin(&target)).flatten())
            .unwrap_or_else(|| DEFAULT_URL.to_string()),
    };
    if let Err(reason) = check_url(&url) {
        return Err(UpdateError::BadUrl { url, reason });
    }
    if !a.quiet {
        eprintln!(
            "{} {} into {} …",
            if had_old { "fetching" } else { "cloning" },
            safe(&shown(&url)),
            target.display()
        );
    }
    let new = place.new_sibling("new")?;
    place::set_pending(Some(&new));
    let result = fetch_and_install(&git, &url, &new, &place, had_old, a.quiet);
    place::set_pending(None);
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&new);
    }
    result
}

/// Clones into `new`, checks that it loads, compares it with the set at `target`, and
/// swaps it in; prints the report.
fn fetch_and_install(
    git: &Git,
    url: &str,
    new: &Path,
    place: &place::Place,
    had_old: bool,
    quiet: bool,
) -> Result<(), UpdateError> {
    let target = place.target();
    git.clone(url, new)?;
    check_sizes(url, &git.tree(new)?)?;
    git.checkout(new)?;
    let commit = git.head(new)?;
    let loaded = check_loads(url, new)?;
    let changes = changes::compare(had_old.then_some(target), new);
    place::write_source(
        new,
        &place::SetSource {
            url: url.to_string(),
            updated: jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string(),
            commit: commit.clone(),
        },
    )?;
    place.swap_in(new, had_old)?;
    print_report(&changes, quiet);
    println!(
        "{} {} from {} (commit {}): {} added, {} modified, {} removed; {} rules load.",
        if had_old { "Updated" } else { "Installed" },
        target.display(),
        safe(&shown(url)),
        safe(&commit[..commit.len().min(12)]),
        changes.added.len(),
        changes.modified.len(),
        changes.removed.len(),
        loaded
    );
    Ok(())
}

/// Loads the set in `dir` as the timeline would (every level); it must load its config
/// and at least one rule. Returns how many rules loaded.
fn check_loads(url: &str, dir: &Path) -> Result<usize, UpdateError> {
    let set = load(
        &[RuleSource::Path(dir.to_path_buf())],
        &LoadOptions::default(),
    );
    let r = set.report();
    if !r.config_failures.is_empty() {
        return Err(UpdateError::BadConfig {
            url: url.to_string(),
            failures: r.config_failures.iter().map(|e| e.to_string()).collect(),
        });
    }
    if r.loaded == 0 {
        return Err(UpdateError::NoRules {
            url: url.to_string(),
            files: r.files,
            rejected: r.errors.len(),
        });
    }
    Ok(r.loaded)
}

/// Why `url` is refused, if it is: one that begins with `-` (it would read as a git
/// option), or one git would reach otherwise than by https, ssh or file. Allowed:
/// `https://`, `ssh://` (and git's spellings `git+ssh://`, `ssh+git://`), `file://`,
/// ssh's `[user@]host:path`, and a local path. Refused: `http://` and `git://` (no
/// authentication of the server), any other scheme, and git's `<helper>::<address>`
/// (`ext::` runs a command, `fd::` reads a descriptor). git is also run with
/// `GIT_ALLOW_PROTOCOL=https:ssh:file` (see `git.rs`), which holds for redirects and
/// for URLs a configuration would rewrite.
fn check_url(url: &str) -> Result<(), &'static str> {
    const OTHER: &str =
        "only https://, ssh:// (or host:path) and file:// URLs, or a local path, are allowed";
    if url.starts_with('-') {
        return Err("a URL cannot begin with '-'");
    }
    if url.is_empty() {
        return Err("empty");
    }
    if let Some(end) = url.find("://") {
        return match &url[..end] {
            "https" | "ssh" | "git+ssh" | "ssh+git" | "file" => Ok(()),
            _ => Err(OTHER),
        };
    }
    // Without a scheme git reads `NAME::ADDRESS` as a remote helper's; the remaining
    // forms (`host:path`, a path) are ssh's and the file protocol's.
    if url.contains("::") {
        return Err(OTHER);
    }
    Ok(())
}

/// Refuses a set, from its listing before checkout, that holds a file larger than the
/// loader reads for its kind (a rule file 4 MiB, a config file 16 MiB: see
/// [`cap_of`]), more than [`MAX_SET_FILES`] files or more than [`MAX_SET_BYTES`] in all.
fn check_sizes(url: &str, files: &[TreeFile]) -> Result<(), UpdateError> {
    for f in files {
        let Some((kind, name)) = cap_of(&f.path) else {
            continue;
        };
        if f.size > kind.cap() {
            return Err(UpdateError::FileTooLarge {
                url: url.to_string(),
                file: f.path.clone(),
                size: f.size,
                limit: kind.cap(),
                kind: name,
            });
        }
    }
    let bytes = files.iter().fold(0u64, |n, f| n.saturating_add(f.size));
    if files.len() > MAX_SET_FILES || bytes > MAX_SET_BYTES {
        return Err(UpdateError::SetTooLarge {
            url: url.to_string(),
            files: files.len(),
            bytes,
        });
    }
    Ok(())
}

/// What the file at `path` of a set is read as, and so its cap: everything in the top
/// `config` folder is a config file; any other `.yml` or `.yaml` file a rule file (the
/// loader reads it as one, the report reads its first lines). Other files are never
/// read: they count in the total only.
fn cap_of(path: &str) -> Option<(TextFile, &'static str)> {
    if path.starts_with("config/") {
        return Some((TextFile::Config, "config"));
    }
    let lower = path.to_ascii_lowercase();
    (lower.ends_with(".yml") || lower.ends_with(".yaml")).then_some((TextFile::Rule, "rule"))
}

/// `n` bytes in MiB, or GiB from 1 GiB, with one decimal.
fn mib(n: u64) -> String {
    if n >= 1 << 30 {
        format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64)
    }
}

/// Prints each added, modified and removed rule (title, date, path), as Hayabusa 3.9.0
/// lists updated rules; with `quiet`, only the closing counts are printed.
fn print_report(c: &Changes, quiet: bool) {
    if c.is_empty() {
        println!("You currently have the latest rules.");
        return;
    }
    if quiet {
        return;
    }
    for (label, files) in [
        ("Added", &c.added),
        ("Modified", &c.modified),
        ("Removed", &c.removed),
    ] {
        if files.is_empty() {
            continue;
        }
        println!("{label} rules: {}", files.len());
        for RuleFile {
            path,
            title,
            modified,
        } in files
        {
            println!(
                " - {} (Modified: {} | Path: {})",
                safe(title),
                safe(modified),
                safe(path)
            );
        }
    }
}

/// `url` as printed: a user name or token in it (`https://user:token@host/…`) shown as
/// `…`, since the line goes to terminals and logs on every timeline run.
fn shown(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{}://…{}", &url[..scheme_end], &rest[at..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_git_reaches_by_https_ssh_or_file_only() {
        for ok in [
            "https://github.com/Yamato-Security/hayabusa-rules.git",
            "ssh://git@github.com/team/rules.git",
            "git+ssh://host/r.git",
            "git@github.com:team/rules.git",
            "host:rules",
            "file:///srv/rules.git",
            "/srv/rules.git",
            "rules.git",
            "C:\\rules",
        ] {
            assert_eq!(check_url(ok), Ok(()), "{ok}");
        }
        for bad in [
            "ext::sh -c touch% /tmp/x",
            "fd::17",
            "foo::bar",
            "http://example.com/r.git",
            "git://example.com/r.git",
            "HTTPS://example.com/r.git",
            "ftp://example.com/r.git",
            "/path/with://inside",
            "",
            "--upload-pack=touch /tmp/x",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_are_checked_per_kind_and_in_all() {
        let f = |path: &str, size: u64| TreeFile {
            path: path.into(),
            size,
        };
        let url = "file:///r";
        let rule_cap = TextFile::Rule.cap();
        let config_cap = TextFile::Config.cap();
        assert!(check_sizes(url, &[f("a.yml", rule_cap), f("config/x.txt", config_cap)]).is_ok());
        // Other files have no cap of their own.
        assert!(check_sizes(url, &[f("images/logo.png", 100 << 20)]).is_ok());
        let e = check_sizes(url, &[f("zeros.yml", 3 << 30)]).unwrap_err();
        assert!(
            e.to_string()
                .contains("zeros.yml is 3.0 GiB (3221225472 bytes), larger than"),
            "{e}"
        );
        let e = check_sizes(url, &[f("r/B.YAML", rule_cap + 1)]).unwrap_err();
        assert!(
            e.to_string().contains(
                "r/B.YAML is 4.0 MiB (4194305 bytes), larger than the 4 MiB allowed for a rule file"
            ),
            "{e}"
        );
        let e = check_sizes(url, &[f("config/big.txt", config_cap + 1)]).unwrap_err();
        assert!(
            e.to_string()
                .contains("larger than the 16 MiB allowed for a config file"),
            "{e}"
        );
        let e = check_sizes(url, &[f("a.bin", MAX_SET_BYTES), f("b.yml", 1)]).unwrap_err();
        assert!(
            e.to_string().contains(
                "its 2 files hold 128.0 MiB in all (134217729 bytes), more than the 128 MiB"
            ),
            "{e}"
        );
        let many: Vec<TreeFile> = (0..=MAX_SET_FILES)
            .map(|i| f(&format!("{i}.yml"), 1))
            .collect();
        let e = check_sizes(url, &many).unwrap_err();
        assert!(
            e.to_string()
                .contains("it holds 100001 files, more than the 100000 a rule set may hold"),
            "{e}"
        );
        assert!(check_sizes(url, &many[1..]).is_ok());
    }

    #[test]
    fn credentials_in_a_url_are_not_shown() {
        assert_eq!(
            shown("https://me:ghp_secret@github.com/team/rules.git"),
            "https://…@github.com/team/rules.git"
        );
        assert_eq!(shown("ssh://git@host/r.git"), "ssh://…@host/r.git");
        assert_eq!(shown("file:///tmp/a@b/repo"), "file:///tmp/a@b/repo");
        assert_eq!(shown("git@github.com:x/y.git"), "git@github.com:x/y.git");
    }
}
