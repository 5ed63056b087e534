//! `set-default-profile`, and the default profile the timeline commands read.
//!
//! Hayabusa keeps its default profile next to its executable (`config/default_profile.yaml`).
//! scanner keeps the profile's name in the user's configuration folder,
//! `$XDG_CONFIG_HOME/scanner/default_profile.txt` (`~/.config/scanner/` without it;
//! `%APPDATA%\scanner\` on Windows), so a shared or read-only installation still lets
//! each analyst choose, and one file of one line is all there is to it.

use crate::args::SetDefaultProfileArgs;
use crate::exit;
use crate::terminal::safe;
use scanner_timeline::Profile;
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
    /// The file could not be read.
    Read(PathBuf, std::io::Error),
    /// The file names no profile scanner has.
    Unknown(PathBuf, String),
    /// The profile given to set-default-profile does not exist.
    UnknownArg(String),
    /// The folder or file could not be written.
    Write(PathBuf, String),
}

impl fmt::Display for DefaultProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        match self {
            DefaultProfileError::NoConfigDir => write!(
                f,
                "no configuration folder: set XDG_CONFIG_HOME or HOME (APPDATA on Windows)"
            ),
            DefaultProfileError::Read(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            DefaultProfileError::Unknown(p, name) => write!(
                f,
                "{}: unknown profile '{name}' ({}); run set-default-profile again",
                p.display(),
                names.join(", ")
            ),
            DefaultProfileError::UnknownArg(name) => {
                write!(f, "unknown profile '{name}' ({})", names.join(", "))
            }
            DefaultProfileError::Write(p, e) => write!(f, "cannot write {}: {e}", p.display()),
        }
    }
}

/// The default profile: the one in [`file`] when it exists, else `standard`.
pub fn read() -> Result<Profile, DefaultProfileError> {
    match file() {
        Some(path) => read_from(&path),
        None => Ok(Profile::Standard),
    }
}

fn read_from(path: &Path) -> Result<Profile, DefaultProfileError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            // A FIFO or device would block the read or never end.
            let e = std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
            return Err(DefaultProfileError::Read(path.to_path_buf(), e));
        }
        _ => {}
    }
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Profile::Standard),
        Err(e) => return Err(DefaultProfileError::Read(path.to_path_buf(), e)),
    };
    let name = text.trim();
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
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| DefaultProfileError::Write(dir.to_path_buf(), e.to_string()))?;
    }
    crate::output::write_atomically(&path, true, |f| {
        std::io::Write::write_all(f, format!("{}\n", profile.name()).as_bytes())
    })
    .map_err(|e| DefaultProfileError::Write(path.clone(), e))?;
    if !a.quiet {
        println!(
            "default profile: {} (written to {})",
            profile.name(),
            safe(&path.display().to_string())
        );
    }
    Ok(())
}
