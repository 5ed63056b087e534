//! Running the `git` command-line tool: arguments passed as a list (no shell), hooks
//! off, symlinks checked out as plain files, no credential prompt, and a time limit.
//!
//! The `git` tool rather than a library (git2, gix): git is on every machine this
//! project runs on, and a library would add a C dependency (libgit2, with OpenSSL) or
//! several hundred crates to a build that otherwise has none for the network.

use super::UpdateError;
use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most of git's standard error kept for an error message.
const STDERR_KEEP: usize = 4096;

/// One git invocation's settings shared by every call of an update.
pub struct Git {
    /// Longest any one call may run.
    pub timeout: Duration,
}

impl Git {
    /// Runs `git ARGS` (with the safety settings first); returns its standard output.
    /// `what` names the step for errors ("clone", "rev-parse").
    pub fn run<I, S>(&self, what: &'static str, args: I) -> Result<String, UpdateError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = Command::new("git");
        c.args([
            // No hook of any repository or template runs.
            "-c",
            "core.hooksPath=/dev/null",
            // A symlink in a rule repository becomes a plain file holding its target:
            // nothing downloaded points outside the rule folder.
            "-c",
            "core.symlinks=false",
            "-c",
            "advice.detachedHead=false",
        ])
        .args(args)
        // Never wait for a password on a terminal: fail instead.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C");
        // A repository named by the caller's environment must not replace ours.
        for v in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_CEILING_DIRECTORIES",
        ] {
            c.env_remove(v);
        }
        c.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().map_err(UpdateError::GitMissing)?;
        // Both pipes are drained by threads, so a chatty git never blocks on a full pipe.
        let out = child.stdout.take().map(drain);
        let err = child.stderr.take().map(drain);
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(UpdateError::GitTimeout {
                        what,
                        secs: self.timeout.as_secs(),
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(UpdateError::GitMissing(e)),
            }
        };
        let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
        let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
        if !status.success() {
            let mut stderr = String::from_utf8_lossy(&stderr).trim().to_string();
            if stderr.len() > STDERR_KEEP {
                let mut cut = stderr.len() - STDERR_KEEP;
                while !stderr.is_char_boundary(cut) {
                    cut += 1;
                }
                stderr.replace_range(..cut, "…");
            }
            return Err(UpdateError::GitFailed {
                what,
                status: status.to_string(),
                stderr,
            });
        }
        Ok(String::from_utf8_lossy(&stdout).trim().to_string())
    }

    /// A shallow clone (`--depth 1`, one branch, no tags) of `url` into the new folder
    /// `dest`. One commit is all an update needs: the report compares the files of the
    /// old and new sets, not their history.
    pub fn clone(&self, url: &str, dest: &Path) -> Result<(), UpdateError> {
        let dest = dest.as_os_str();
        self.run(
            "clone",
            [
                OsStr::new("clone"),
                OsStr::new("--quiet"),
                OsStr::new("--depth"),
                OsStr::new("1"),
                OsStr::new("--single-branch"),
                OsStr::new("--no-tags"),
                // `--` ends the options: a URL is never read as a flag.
                OsStr::new("--"),
                OsStr::new(url),
                dest,
            ],
        )
        .map(drop)
    }

    /// The commit checked out in `dir`.
    pub fn head(&self, dir: &Path) -> Result<String, UpdateError> {
        self.run(
            "rev-parse",
            [
                OsStr::new("-C"),
                dir.as_os_str(),
                OsStr::new("rev-parse"),
                OsStr::new("HEAD"),
            ],
        )
    }

    /// The `origin` URL of the checkout `dir`, when it has one.
    pub fn origin(&self, dir: &Path) -> Option<String> {
        self.run(
            "config",
            [
                OsStr::new("-C"),
                dir.as_os_str(),
                OsStr::new("config"),
                OsStr::new("--get"),
                OsStr::new("remote.origin.url"),
            ],
        )
        .ok()
        .filter(|u| !u.is_empty())
    }
}

/// Reads a pipe to its end on its own thread.
fn drain<R: Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}
