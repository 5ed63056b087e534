//! What the CLI's integration tests share: running the built `scanner` from the
//! project root, scratch folders, and reading what a run left.
//!
//! Each test binary compiles this module and uses part of it.
#![allow(dead_code)]

pub mod mmdb;
pub mod planted;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The project root (where `testdata/` and `rules/` are).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The built binary, run from the project root, with data and configuration folders of
/// its own (empty), so a rule set `update-rules` put in the user's data folder never
/// replaces the built-in rules the tests expect, nor does the user's default profile
/// change their outputs; and a cache folder of its own.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_scanner"));
    let tmp = std::env::temp_dir();
    c.current_dir(root())
        .env("XDG_DATA_HOME", tmp.join("scanner-test-no-data-folder"));
    user_dir(
        &mut c,
        UserDir::Config,
        &tmp.join("scanner-test-no-config-folder"),
    );
    user_dir(
        &mut c,
        UserDir::Cache,
        &tmp.join("scanner-test-cache-folder"),
    );
    c
}

/// A folder of the user's that scanner finds through the environment.
#[derive(Clone, Copy, Debug)]
pub enum UserDir {
    /// The temporary folder (where sort runs spill).
    Temp,
    /// The configuration folder (the default profile).
    Config,
    /// The cache folder (the rule set cache).
    Cache,
}

/// Points `c`'s folder `dir` at `path` through the variables the platform reads, so
/// that a test never reads or writes the real user's folders: `TMPDIR`,
/// `XDG_CONFIG_HOME`, `XDG_CACHE_HOME` on Unix; `TMP` and `TEMP`, `APPDATA`,
/// `LOCALAPPDATA` on Windows (with `XDG_CACHE_HOME` removed: scanner reads it first
/// there too).
pub fn user_dir<'a>(c: &'a mut Command, dir: UserDir, path: &Path) -> &'a mut Command {
    let vars: &[&str] = match (cfg!(windows), dir) {
        (false, UserDir::Temp) => &["TMPDIR"],
        (false, UserDir::Config) => &["XDG_CONFIG_HOME"],
        (false, UserDir::Cache) => &["XDG_CACHE_HOME"],
        (true, UserDir::Temp) => &["TMP", "TEMP"],
        (true, UserDir::Config) => &["APPDATA"],
        (true, UserDir::Cache) => &["LOCALAPPDATA"],
    };
    if cfg!(windows) && matches!(dir, UserDir::Cache) {
        c.env_remove("XDG_CACHE_HOME");
    }
    for v in vars {
        c.env(v, path);
    }
    c
}

/// Runs `scanner ARGS` from the project root, in the machine's time zone.
pub fn scanner(args: &[&str]) -> Output {
    command().args(args).output().expect("run scanner")
}

/// Runs `scanner ARGS` with local time as UTC and `NO_COLOR` unset, so outputs do not
/// depend on the machine.
pub fn scanner_utc(args: &[&str]) -> Output {
    command()
        .args(args)
        .env("TZ", "UTC")
        .env_remove("NO_COLOR")
        .output()
        .expect("run scanner")
}

/// [`scanner_utc`] with `tmp` as the temporary folder (where sort runs spill).
pub fn scanner_in(tmp: &Path, args: &[&str]) -> Output {
    let mut c = command();
    user_dir(&mut c, UserDir::Temp, tmp)
        .args(args)
        .env("TZ", "UTC")
        .env_remove("NO_COLOR")
        .output()
        .expect("run scanner")
}

/// `rel` (components separated by `/`) below `base`, joined one component at a time as
/// the platform joins paths: the form scanner prints for a path it built so (`\`
/// between components on Windows, where `Path::join` keeps a `/` inside `rel` as it is).
pub fn path_below(base: impl AsRef<Path>, rel: &str) -> PathBuf {
    rel.split('/')
        .fold(base.as_ref().to_path_buf(), |p, c| p.join(c))
}

/// A new empty folder for one test, unique to this process.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scanner-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Bytes as text (lossy), for messages and searches.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The standard output of a run of `args` that must have succeeded (exit 0; its
/// standard error in the failure message).
pub fn succeeded(args: &[&str], out: Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The names of the entries of folder `d`, sorted.
pub fn names_in(d: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(d)
        .expect("read folder")
        .map(|e| {
            e.expect("folder entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A file for outputs a test does not read, in the temporary folder, one for each test
/// (each runs on a thread of its own): on Windows a run replacing a file another run is
/// replacing at that moment can be refused ("access denied"). Never the machine's
/// `/dev/null`: devices are written in place, but a regression there would replace the
/// device node with a regular file when the tests run as root (as CI does), breaking
/// whatever runs next.
pub fn discard() -> &'static str {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static PATH: (&'static str, Discarded) = {
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let p = std::env::temp_dir()
                .join(format!("scanner-test-{}-{n}-discarded", std::process::id()));
            (Box::leak(p.display().to_string().into_boxed_str()), Discarded(p))
        };
    }
    PATH.with(|(p, _)| *p)
}

/// A test's discarded output, removed when its thread (the test) ends.
struct Discarded(PathBuf);

impl Drop for Discarded {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
