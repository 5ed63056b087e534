//! `set-default-profile`, and the default profile the timeline commands read.
//!
//! Hayabusa keeps its default profile next to its executable (`config/default_profile.yaml`).
//! scanner keeps the profile's name in the user's configuration folder,
//! `$XDG_CONFIG_HOME/scanner/default_profile.txt` (`~/.config/scanner/` without it;
//! `%APPDATA%\scanner\` on Windows), so a shared or read-only installation still lets
//! each analyst choose, and one file of one line is all there is to it. The folder is
//! used only when it is the user's own and writable by no one else, through its handle
//! (see [`scanner_files::OwnedDir`]).

use crate::args::SetDefaultProfileArgs;
use crate::exit;
use crate::terminal::safe;
use scanner_files::{FileMode, OwnedDir, Why};
use scanner_timeline::Profile;
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// The file holding the default profile's name, or `None` when no configuration
/// folder can be found (no `XDG_CONFIG_HOME`, `HOME` or `APPDATA`).
pub fn file() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        var("APPDATA")
    } else {
        var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|h| h.join(".config")))
    };
    base.map(|b| b.join("scanner").join("default_profile.txt"))
}

/// A default-profile file that cannot be used.
#[derive(Debug)]
pub enum DefaultProfileError {
    /// No configuration folder (no `XDG_CONFIG_HOME`, `HOME` or `APPDATA`).
    NoConfigDir,
    /// The file or its folder could not be used (it names itself and why).
    Refused(scanner_files::Error),
    /// The configuration folder may not be trusted (another user's, or writable by
    /// others).
    Untrusted(scanner_files::Error),
    /// The file names no profile scanner has.
    Unknown(PathBuf, String),
    /// The profile given to set-default-profile does not exist.
    UnknownArg(String),
}

impl fmt::Display for DefaultProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        match self {
            DefaultProfileError::NoConfigDir => write!(
                f,
                "no configuration folder: set XDG_CONFIG_HOME or HOME (APPDATA on Windows)"
            ),
            DefaultProfileError::Refused(e) | DefaultProfileError::Untrusted(e) => write!(f, "{e}"),
            DefaultProfileError::Unknown(p, name) => write!(
                f,
                "{}: unknown profile '{name}' ({}); run set-default-profile again",
                p.display(),
                names.join(", ")
            ),
            DefaultProfileError::UnknownArg(name) => {
                write!(f, "unknown profile '{name}' ({})", names.join(", "))
            }
        }
    }
}

/// The default profile: the one in [`file`] when it exists, else `standard`. A
/// configuration folder that is not the user's own or that others may write (a `HOME`
/// kept by `sudo`) is not read: `standard`, with a warning unless `quiet`.
pub fn read(quiet: bool) -> Result<Profile, DefaultProfileError> {
    let Some(path) = file() else {
        return Ok(Profile::Standard);
    };
    match read_from(&path) {
        Err(DefaultProfileError::Untrusted(e)) => {
            if !quiet {
                eprintln!(
                    "warning: {} not read: {}; the standard profile is used",
                    safe(&path.display().to_string()),
                    safe(&e.to_string())
                );
            }
            Ok(Profile::Standard)
        }
        r => r,
    }
}

/// The most a default-profile file may hold (one name).
const MAX_BYTES: u64 = 4096;

/// The folder holding `path` and its name in it.
fn split(path: &Path) -> (&Path, &OsStr) {
    (
        scanner_files::folder_of(path),
        path.file_name()
            .unwrap_or(OsStr::new("default_profile.txt")),
    )
}

fn read_from(path: &Path) -> Result<Profile, DefaultProfileError> {
    let (dir, name) = split(path);
    let dir = match OwnedDir::open(dir) {
        Ok(d) => d,
        Err(e) if e.is_not_found() => return Ok(Profile::Standard),
        Err(e) if matches!(e.why(), Why::Io(_)) => return Err(DefaultProfileError::Refused(e)),
        Err(e) => return Err(DefaultProfileError::Untrusted(e)),
    };
    let Some(bytes) = dir
        .read(name, MAX_BYTES)
        .map_err(DefaultProfileError::Refused)?
    else {
        return Ok(Profile::Standard);
    };
    let name = String::from_utf8_lossy(&bytes);
    let name = name.trim();
    Profile::parse(name)
        .ok_or_else(|| DefaultProfileError::Unknown(path.to_path_buf(), name.to_string()))
}

/// `set-default-profile`: writes the name (atomically), or prints the current default.
pub fn run(a: &SetDefaultProfileArgs) -> i32 {
    match set(a) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", safe(&e.to_string()));
            exit::FATAL
        }
    }
}

fn set(a: &SetDefaultProfileArgs) -> Result<(), DefaultProfileError> {
    let path = file().ok_or(DefaultProfileError::NoConfigDir)?;
    let Some(name) = &a.profile else {
        println!("{}", read_from(&path)?.name());
        return Ok(());
    };
    let profile =
        Profile::parse(name).ok_or_else(|| DefaultProfileError::UnknownArg(name.clone()))?;
    let (dir, file_name) = split(&path);
    let dir = OwnedDir::create(dir).map_err(DefaultProfileError::Refused)?;
    dir.write(
        file_name,
        true,
        FileMode::KeepOr(scanner_files::new_file_mode()),
        |f| std::io::Write::write_all(f, format!("{}\n", profile.name()).as_bytes()),
    )
    .map_err(DefaultProfileError::Refused)?;
    if !a.console.quiet {
        println!(
            "default profile: {} (written to {})",
            profile.name(),
            safe(&path.display().to_string())
        );
    }
    Ok(())
}
