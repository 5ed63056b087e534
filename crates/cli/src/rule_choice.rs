//! Which rule set a command runs when `-r` does not say (Hayabusa's `./rules` when it may
//! be trusted, else the set `update-rules` installed, else the built-in rules), the line
//! that says which, and the check of the paths `-r` names.
//!
//! scanner runs as root in case folders other users can write. `./rules` is read only
//! when it passes the check every folder scanner keeps as its own passes
//! ([`scanner_files::OwnedDir`]: the user's own, writable by no one else); a planted
//! rule set, or a planted `rules/config/noisy_rules.txt`, would decide what the analyst
//! is shown.

use crate::args::RuleArgs;
use crate::terminal::safe;
use std::path::{Path, PathBuf};

/// `./rules`, Hayabusa's default rule folder, in the current folder.
const CURRENT_FOLDER_RULES: &str = "rules";

/// `./rules` when it is a folder that may be trusted: the user's own and writable by no
/// one else ([`scanner_files::OwnedDir`]'s check). scanner runs as root over folders
/// other users can write, and rules decide what an analyst is shown (a planted
/// `rules/config` can hide every detection): a folder that fails the check is not used,
/// with a warning unless `quiet`. A symbolic link named `rules` (a Hayabusa folder may
/// link its rules) is followed only when the link too is the user's (no one else can
/// have made it), and the folder it leads to must pass the check; that folder is then
/// the one returned, so the link is not read again. `None` too when nothing or a file
/// is there.
pub fn current_folder_rules(quiet: bool) -> Option<PathBuf> {
    let path = Path::new(CURRENT_FOLDER_RULES);
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) if !m.is_file() => m,
        _ => return None,
    };
    match trusted_folder(path, &link) {
        Ok(dir) => Some(dir),
        Err(why) => {
            if !quiet {
                eprintln!(
                    "warning: ./{CURRENT_FOLDER_RULES} not used: {}; give it with -r to use it anyway",
                    safe(&why)
                );
            }
            None
        }
    }
}

/// The folder `path` (of status `link`, not followed) names, checked as
/// [`current_folder_rules`] says, or why it may not be used.
fn trusted_folder(path: &Path, link: &std::fs::Metadata) -> Result<PathBuf, String> {
    if !link.file_type().is_symlink() {
        scanner_files::OwnedDir::open(path).map_err(|e| e.why().to_string())?;
        return Ok(path.to_path_buf());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        scanner_files::trusted(link.uid(), 0)
            .map_err(|why| format!("a symbolic link that {why}"))?;
    }
    let target = std::fs::canonicalize(path)
        .map_err(|e| format!("a symbolic link that leads nowhere usable: {e}"))?;
    scanner_files::OwnedDir::open(&target)
        .map_err(|e| format!("a symbolic link to {}: {}", target.display(), e.why()))?;
    Ok(target)
}

/// Which rule set a command runs, in Hayabusa's order where it has one: the paths `-r`
/// names; else the built-in rules with `--builtin-rules`; else `./rules` (Hayabusa's
/// default) when it may be trusted ([`current_folder_rules`]); else the set
/// `update-rules` installed; else the built-in rules.
pub enum RuleChoice {
    /// `-r`.
    Given(Vec<PathBuf>),
    /// `./rules`.
    CurrentFolder(PathBuf),
    /// The set `update-rules` installed.
    Installed(crate::update_rules::InstalledSet),
    /// The built-in rules (`true`: asked for with `--builtin-rules`).
    BuiltIn(bool),
}

impl RuleChoice {
    /// The set the flags `a` choose (a warning about an untrusted `./rules` unless
    /// `quiet`).
    pub fn of(a: &RuleArgs, quiet: bool) -> RuleChoice {
        if !a.rules.is_empty() {
            return RuleChoice::Given(a.rules.clone());
        }
        if a.builtin_rules {
            return RuleChoice::BuiltIn(true);
        }
        if let Some(dir) = current_folder_rules(quiet) {
            return RuleChoice::CurrentFolder(dir);
        }
        match crate::update_rules::installed() {
            Some(set) => RuleChoice::Installed(set),
            None => RuleChoice::BuiltIn(false),
        }
    }

    /// The rule folders and files (none for the built-in rules).
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            RuleChoice::Given(p) => p.clone(),
            RuleChoice::CurrentFolder(d) => vec![d.clone()],
            RuleChoice::Installed(set) => vec![set.dir.clone()],
            RuleChoice::BuiltIn(_) => Vec::new(),
        }
    }

    /// The line said on standard error: which set runs.
    pub fn describe(&self) -> String {
        match self {
            RuleChoice::Given(p) => {
                let shown: Vec<String> = p.iter().map(|p| p.display().to_string()).collect();
                format!("rules: using {}", shown.join(", "))
            }
            RuleChoice::CurrentFolder(d) => format!(
                "rules: using ./{CURRENT_FOLDER_RULES}{} (the current folder's, as Hayabusa; -r PATH for another set, --builtin-rules for the built-in one)",
                if d == Path::new(CURRENT_FOLDER_RULES) {
                    String::new()
                } else {
                    format!(", a link to {}", d.display())
                }
            ),
            RuleChoice::Installed(set) => set.describe(),
            RuleChoice::BuiltIn(true) => "rules: using the built-in rules (--builtin-rules)".into(),
            RuleChoice::BuiltIn(false) => "rules: using the built-in rules (no -r, no usable ./rules folder, no set installed by update-rules)".into(),
        }
    }
}

/// `-r` paths that do not exist, named as `rules check` names them ("no such file or
/// folder"): a mistyped path would otherwise load nothing and end in "no rule to run".
pub fn check_rule_paths(a: &RuleArgs) -> Result<(), String> {
    for p in &a.rules {
        if let Err(e) = std::fs::metadata(p) {
            let why = if e.kind() == std::io::ErrorKind::NotFound {
                "no such file or folder".to_string()
            } else {
                e.to_string()
            };
            return Err(format!("-r {}: {why}", p.display()));
        }
    }
    Ok(())
}
