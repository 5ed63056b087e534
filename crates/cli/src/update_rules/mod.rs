//! `scanner update-rules`: downloads the community rule set (hayabusa-rules by default)
//! into the user's data folder, or the folder `-r` names, and reports what changed.
//!
//! An update never leaves half a set: the repository is cloned into a new folder beside
//! the set, the new folder must load (its config, and at least one rule), and only then
//! does it take the old set's place in one rename. On any failure (git fails or times
//! out, the set does not load, Ctrl-C) the new folder is removed and the old set is as
//! it was.

mod changes;
mod git;
mod place;

use crate::args::UpdateRulesArgs;
use crate::exit;
use crate::terminal::safe;
use changes::{Changes, RuleFile};
use git::Git;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use place::remove_pending_and_hold;

/// The repository an update downloads when neither `--url` nor the set names one.
pub const DEFAULT_URL: &str = "https://github.com/Yamato-Security/hayabusa-rules.git";

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
    /// A URL that begins with `-` (it would read as a git option).
    BadUrl(String),
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
            UpdateError::BadUrl(u) => write!(f, "--url '{u}': a URL cannot begin with '-'"),
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
                "rules: using the set updated on {} from {} at {} (--builtin-rules for the built-in set)",
                s.updated,
                shown(&s.url),
                self.dir.display()
            ),
            None => format!(
                "rules: using the set at {} (--builtin-rules for the built-in set)",
                self.dir.display()
            ),
        }
    }
}

/// The set `update-rules` keeps in the user's data folder, when there is one (a folder
/// of this user, not a symlink).
pub fn installed() -> Option<InstalledSet> {
    let dir = place::default_dir()?;
    let safe_folder = |d: &Path| matches!(place::check_folder(d), Ok(true));
    if !safe_folder(place::parent(&dir)) || !safe_folder(&dir) {
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
    if target.file_name().is_none() {
        return Err(UpdateError::Unsafe {
            path: target,
            reason: "does not end in a folder name",
        });
    }
    if a.rules.is_none() {
        place::make_folder(place::parent(&target))?;
    }
    let git = Git {
        timeout: Duration::from_secs(a.timeout.max(1)),
    };
    let _lock = place::lock(&target)?;
    let stale = place::remove_leftovers(&target);
    if stale > 0 && !a.quiet {
        eprintln!("removed {stale} folder(s) an interrupted update left");
    }
    let had_old = place::check_folder(&target)? && !is_empty(&target)?;
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
    if url.starts_with('-') {
        return Err(UpdateError::BadUrl(url));
    }
    if !a.quiet {
        eprintln!(
            "{} {} into {} …",
            if had_old { "fetching" } else { "cloning" },
            safe(&shown(&url)),
            target.display()
        );
    }
    let new = place::new_sibling(&target, "new")?;
    place::set_pending(Some(&new));
    let result = fetch_and_install(&git, &url, &new, &target, had_old, a.quiet);
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
    target: &Path,
    had_old: bool,
    quiet: bool,
) -> Result<(), UpdateError> {
    git.clone(url, new)?;
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
    place::swap_in(new, target, had_old)?;
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

/// Whether the folder `d` has no entries.
fn is_empty(d: &Path) -> Result<bool, UpdateError> {
    let mut rd = std::fs::read_dir(d).map_err(|e| UpdateError::io(d, "cannot read folder", e))?;
    Ok(rd.next().is_none())
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
    use super::shown;

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
