//! Running the `git` command-line tool for `update-rules`, which users run as root on
//! repositories, URLs and home folders that others may control. Every call:
//!
//! - gets its arguments as a list (no shell), with `--` before a URL;
//! - runs no hook, checks symlinks out as plain files, and never prompts (neither git
//!   for a password nor ssh for a passphrase or a host key);
//! - reads no configuration but the repository's own: not the system's, not the user's
//!   (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`), and no `GIT_CONFIG_*` variable of
//!   the environment. A `.gitconfig` in a HOME another user owns once made root run
//!   that user's command: `protocol.ext.allow=always` and an `insteadOf` rewriting the
//!   URL to `ext::sh -c …`;
//! - reaches a remote by https, ssh or file only (`GIT_ALLOW_PROTOCOL`, which git
//!   applies over any configuration, to redirects and to every process it starts),
//!   never through a remote helper such as `ext::` that runs a command;
//! - runs in a process group of its own with no signal blocked, killed as a group at the
//!   time limit, on Ctrl-C, SIGTERM and SIGHUP (see [`stop_all_and_hold`]), so no
//!   `git-remote-https`, `index-pack` or `ssh` it started is left running;
//! - keeps a bounded part of what git prints.
//!
//! A clone is made without a checkout; its listing ([`Git::tree`]) gives each file's
//! size without inflating it, so the caller can refuse a set too large before anything
//! is written, and only then check it out ([`Git::checkout`]).
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

/// The most of git's standard error kept for an error message (its end).
const STDERR_KEEP: usize = 4096;

/// The most of git's standard output kept: the listing of a set of 100,000 files (see
/// `MAX_SET_FILES` in `mod.rs`) with paths of 200 bytes takes 26 MiB; hayabusa-rules'
/// takes 0.7 MiB.
const STDOUT_KEEP: usize = 32 << 20;

/// The protocols git may use, for `GIT_ALLOW_PROTOCOL`.
const PROTOCOLS: &str = "https:ssh:file";

/// Attributes for every path of a checkout, in its `.git/info/attributes` (which takes
/// precedence over the repository's `.gitattributes`): no end-of-line conversion, no
/// re-encoding, no filter, no `$Id$` expansion. A file is written byte for byte as the
/// listing measured it (`eol=crlf` could double a file, `working-tree-encoding` could
/// double it again).
const CHECKOUT_ATTRIBUTES: &str = "* -text -eol -crlf -filter -ident -working-tree-encoding\n";

/// One file of a commit's tree, as [`Git::tree`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    /// Its path in the repository, with `/` separators (not UTF-8: lossily).
    pub path: String,
    /// Its size in bytes once checked out.
    pub size: u64,
}

/// One invocation's settings shared by every call of an update.
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
        let (stdout, truncated) = self.run_bytes(what, args)?;
        if truncated {
            return Err(UpdateError::GitOutput {
                what,
                limit: STDOUT_KEEP,
            });
        }
        Ok(String::from_utf8_lossy(&stdout).trim().to_string())
    }

    /// [`Git::run`]'s work: standard output as bytes, and whether it was cut at
    /// [`STDOUT_KEEP`].
    fn run_bytes<I, S>(&self, what: &'static str, args: I) -> Result<(Vec<u8>, bool), UpdateError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = command(args);
        let mut child = group::spawn(&mut c).map_err(UpdateError::GitMissing)?;
        // Both pipes are drained by threads, so a chatty git never blocks on a full pipe.
        let out = child
            .stdout
            .take()
            .map(|r| drain(r, Keep::Head(STDOUT_KEEP)));
        let err = child
            .stderr
            .take()
            .map(|r| drain(r, Keep::Tail(STDERR_KEEP)));
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match group::exited(&mut child) {
                Ok(true) => break group::end(&mut child).map_err(UpdateError::GitMissing)?,
                Ok(false) if Instant::now() >= deadline => {
                    let _ = group::end(&mut child);
                    return Err(UpdateError::GitTimeout {
                        what,
                        secs: self.timeout.as_secs(),
                    });
                }
                Ok(false) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    let _ = group::end(&mut child);
                    return Err(UpdateError::GitMissing(e));
                }
            }
        };
        let (stdout, truncated) = out.and_then(|h| h.join().ok()).unwrap_or_default();
        let (stderr, cut) = err.and_then(|h| h.join().ok()).unwrap_or_default();
        if !status.success() {
            let mut stderr = String::from_utf8_lossy(&stderr).trim().to_string();
            if cut {
                stderr.insert(0, '…');
            }
            return Err(UpdateError::GitFailed {
                what,
                status: status.to_string(),
                stderr,
            });
        }
        Ok((stdout, truncated))
    }

    /// A shallow clone (`--depth 1`, one branch, no tags) of `url` into the new folder
    /// `dest`, not checked out (see [`Git::checkout`]). One commit is all an update
    /// needs: the report compares the files of the old and new sets, not their history.
    pub fn clone(&self, url: &str, dest: &Path) -> Result<(), UpdateError> {
        let dest = dest.as_os_str();
        self.run(
            "clone",
            [
                OsStr::new("clone"),
                OsStr::new("--quiet"),
                OsStr::new("--no-checkout"),
                // No template: nothing but what git itself makes goes into `.git`.
                OsStr::new("--template="),
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

    /// Every file of the commit checked out in `dir` (or to be: `HEAD`) with its size,
    /// read from git's object headers: nothing is inflated or written.
    pub fn tree(&self, dir: &Path) -> Result<Vec<TreeFile>, UpdateError> {
        let (out, truncated) = self.run_bytes(
            "ls-tree",
            [
                OsStr::new("-C"),
                dir.as_os_str(),
                OsStr::new("ls-tree"),
                OsStr::new("-r"),
                OsStr::new("-l"),
                OsStr::new("-z"),
                OsStr::new("--full-tree"),
                OsStr::new("HEAD"),
            ],
        )?;
        if truncated {
            return Err(UpdateError::GitOutput {
                what: "ls-tree",
                limit: STDOUT_KEEP,
            });
        }
        parse_tree(&out)
    }

    /// Writes the files of `HEAD` into the clone `dir`, byte for byte as
    /// [`Git::tree`] listed them (see [`CHECKOUT_ATTRIBUTES`]).
    pub fn checkout(&self, dir: &Path) -> Result<(), UpdateError> {
        let info = dir.join(".git").join("info");
        std::fs::create_dir_all(&info)
            .map_err(|e| UpdateError::io(&info, "cannot create folder", e))?;
        let attributes = info.join("attributes");
        std::fs::write(&attributes, CHECKOUT_ATTRIBUTES)
            .map_err(|e| UpdateError::io(&attributes, "cannot write", e))?;
        self.run(
            "checkout",
            [
                OsStr::new("-C"),
                dir.as_os_str(),
                OsStr::new("checkout"),
                OsStr::new("--quiet"),
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

/// `git ARGS` with the settings every call gets (see the module's header), not started.
fn command<I, S>(args: I) -> Command
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
        // Blobs over 4 MiB (the largest rule file the loader reads) are hashed and
        // written as a stream, never held whole (git's default streams only past
        // 512 MiB): receiving a 256 MiB file of zeros took git 266 MB, 6 MB with this.
        "-c",
        "core.bigFileThreshold=4m",
        // No attributes file of the user's (`~/.config/git/attributes`).
        "-c",
        "core.attributesFile=/dev/null",
        // ssh never asks: git runs in a process group of its own, which cannot read the
        // terminal (a prompt would stop it until the time limit). Keys come from the
        // agent; `GIT_SSH_COMMAND`, when set, still takes precedence.
        "-c",
        "core.sshCommand=ssh -o BatchMode=yes",
    ])
    .args(args);
    // No configuration from the environment: every GIT_CONFIG* variable (GIT_CONFIG,
    // GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n, GIT_CONFIG_VALUE_n,
    // GIT_CONFIG_SYSTEM, GIT_CONFIG_GLOBAL, …) removed, then the two below set.
    for (k, _) in std::env::vars_os() {
        let upper = k.to_string_lossy().to_ascii_uppercase();
        if upper.starts_with("GIT_CONFIG") {
            c.env_remove(&k);
        }
    }
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
    c
        // Neither the system's configuration nor the user's (`~/.gitconfig` and
        // `$XDG_CONFIG_HOME/git/config`): only the repository's own, which the clone
        // writes.
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ALLOW_PROTOCOL", PROTOCOLS)
        // Never wait for a password on a terminal: fail instead.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its own group (its pgid is its pid), so that it and everything it starts can
        // be killed at once and a signal meant for scanner's group does not reach it.
        c.process_group(0);
        // No signal blocked in git. scanner blocks SIGINT, SIGTERM and SIGHUP in every
        // thread (`interrupt.rs`), a child inherits the mask across fork and exec, and
        // the standard library does not empty it (Rust 1.95: a child of a thread with
        // those blocked shows SigBlk 0x4003, with or without `process_group`). With
        // them blocked, `kill` and Ctrl-C stay pending and never stop git nor any
        // helper it starts; so the mask is emptied here.
        // SAFETY: the closure runs in the child between fork and exec; it calls only
        // sigemptyset and pthread_sigmask, which are async-signal-safe, on a set of its
        // own, and allocates nothing.
        unsafe {
            c.pre_exec(|| {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                match libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) {
                    0 => Ok(()),
                    e => Err(std::io::Error::from_raw_os_error(e)),
                }
            });
        }
    }
    c
}

/// Reads `ls-tree -r -l -z` output: `MODE TYPE OID SIZE\tPATH\0` per entry. Entries
/// other than blobs (a submodule's commit) are skipped; an entry it cannot read fails
/// the listing, naming it.
fn parse_tree(out: &[u8]) -> Result<Vec<TreeFile>, UpdateError> {
    let mut files = Vec::new();
    for entry in out.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let bad = || UpdateError::GitFailed {
            what: "ls-tree",
            status: "an entry it printed is unreadable".into(),
            stderr: String::from_utf8_lossy(entry).into_owned(),
        };
        let tab = entry.iter().position(|&b| b == b'\t').ok_or_else(bad)?;
        let head = std::str::from_utf8(&entry[..tab]).map_err(|_| bad())?;
        let fields: Vec<&str> = head.split_ascii_whitespace().collect();
        let [_mode, kind, _oid, size] = fields[..] else {
            return Err(bad());
        };
        if kind != "blob" {
            continue;
        }
        let size = size.parse().map_err(|_| bad())?;
        let path = String::from_utf8_lossy(&entry[tab + 1..]).into_owned();
        files.push(TreeFile { path, size });
    }
    Ok(files)
}

/// Which part of a pipe [`drain`] keeps.
#[derive(Clone, Copy)]
enum Keep {
    /// The first bytes, up to this many.
    Head(usize),
    /// The last bytes, up to this many.
    Tail(usize),
}

/// Reads a pipe to its end on its own thread, keeping a bounded part of it; the part
/// kept, and whether anything was left out.
fn drain<R: Read + Send + 'static>(
    mut r: R,
    keep: Keep,
) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let mut cut = false;
        let mut buf = [0u8; 8192];
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            match keep {
                Keep::Head(max) => {
                    let room = max.saturating_sub(v.len());
                    v.extend_from_slice(&buf[..n.min(room)]);
                    cut |= n > room;
                }
                Keep::Tail(max) => {
                    v.extend_from_slice(&buf[..n]);
                    if v.len() > 2 * max {
                        v.drain(..v.len() - max);
                        cut = true;
                    }
                }
            }
        }
        if let Keep::Tail(max) = keep {
            if v.len() > max {
                v.drain(..v.len() - max);
                cut = true;
            }
        }
        (v, cut)
    })
}

/// Kills every git process group an update is running and keeps them from starting
/// more; for the signal thread (`interrupt.rs`), as the process exits next.
#[cfg(unix)]
pub fn stop_all_and_hold() {
    group::stop_all_and_hold();
}

/// Starting, watching and ending git as a process group (Unix), and the record of the
/// groups running, for the signal thread.
#[cfg(unix)]
mod group {
    use std::process::{Child, Command, ExitStatus};
    use std::sync::{Mutex, MutexGuard};

    /// The process groups of the git commands running (each git leads its own, so its
    /// pid is the group's id). Held while a git starts and while one is reaped, so that
    /// a group is killed only while its leader is not yet reaped: its id can name no
    /// other group.
    static RUNNING: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

    fn running() -> MutexGuard<'static, Vec<libc::pid_t>> {
        RUNNING.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts `c` and records its group.
    pub fn spawn(c: &mut Command) -> std::io::Result<Child> {
        let mut running = running();
        let child = c.spawn()?;
        running.push(child.id() as libc::pid_t);
        Ok(child)
    }

    /// Whether `child` has ended, without reaping it (so its group id stays its own).
    pub fn exited(child: &mut Child) -> std::io::Result<bool> {
        // SAFETY: siginfo_t is plain data (all zeroes is valid, and a zero si_pid is
        // how a child that has not ended shows, as waitid's manual says); waitid writes
        // it for the call's duration only.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let r = libc::waitid(
                libc::P_PID,
                child.id() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            if r != 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    return Ok(false);
                }
                return Err(e);
            }
            Ok(info.si_pid() != 0)
        }
    }

    /// Kills `child`'s group (what is left of it when git has ended: a helper that
    /// outlived it), then reaps `child` and forgets the group.
    pub fn end(child: &mut Child) -> std::io::Result<ExitStatus> {
        let mut running = running();
        let pgid = child.id() as libc::pid_t;
        // SAFETY: kill has no memory preconditions. The group is `child`'s, whose
        // leader is not reaped yet (below), so the id names no other group.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let status = child.wait();
        running.retain(|&p| p != pgid);
        status
    }

    /// Kills every group recorded and keeps the record locked: no git starts after.
    pub fn stop_all_and_hold() {
        let running = running();
        for &pgid in running.iter() {
            // SAFETY: as in `end`: a recorded leader is not reaped while recorded.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
        std::mem::forget(running);
    }
}

/// Elsewhere git is one process, watched and killed as the standard library does.
#[cfg(not(unix))]
mod group {
    use std::process::{Child, Command, ExitStatus};

    /// Starts `c`.
    pub fn spawn(c: &mut Command) -> std::io::Result<Child> {
        c.spawn()
    }

    /// Whether `child` has ended (it is then reaped).
    pub fn exited(child: &mut Child) -> std::io::Result<bool> {
        Ok(child.try_wait()?.is_some())
    }

    /// Kills `child` if it runs, and reaps it.
    pub fn end(child: &mut Child) -> std::io::Result<ExitStatus> {
        if child.try_wait()?.is_none() {
            let _ = child.kill();
        }
        child.wait()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_gives_blobs_with_their_sizes() {
        let out = b"100644 blob 0bb8bda88da4b8ca26fe263156b5ae6ad9039636       9\tr/a.yml\0\
160000 commit 89b65bcc7a1f3f68f45654de865cab3c4b649b71       -\tsub\0\
100644 blob 89b65bcc7a1f3f68f45654de865cab3c4b649b71 268435456\tr/big\tname.yml\0";
        assert_eq!(
            parse_tree(out).unwrap(),
            [
                TreeFile {
                    path: "r/a.yml".into(),
                    size: 9
                },
                TreeFile {
                    path: "r/big\tname.yml".into(),
                    size: 268435456
                }
            ]
        );
        assert!(parse_tree(b"100644 blob x\tno-size\0").is_err());
        assert!(parse_tree(b"garbage\0").is_err());
        assert!(parse_tree(b"").unwrap().is_empty());
    }

    #[test]
    fn drain_keeps_the_head_or_the_tail() {
        let data: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let (v, cut) = drain(std::io::Cursor::new(data.clone()), Keep::Head(1000))
            .join()
            .unwrap();
        assert!(cut);
        assert_eq!(v, data[..1000]);
        let (v, cut) = drain(std::io::Cursor::new(data.clone()), Keep::Tail(1000))
            .join()
            .unwrap();
        assert!(cut);
        assert_eq!(v, data[data.len() - 1000..]);
        let (v, cut) = drain(std::io::Cursor::new(data.clone()), Keep::Head(100_000))
            .join()
            .unwrap();
        assert!(!cut);
        assert_eq!(v, data);
    }
}
