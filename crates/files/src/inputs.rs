//! What a load looked at on disk: every file it read, every folder it listed and every
//! path it looked for (found or not), each with its status as the system gave it then.
//!
//! A cache keeps this list beside what it holds (the rule set cache does, beside the
//! loaded set). A later load with the same sources looks at each path again, and takes
//! what the cache holds only when every one is as it was: a file edited, added,
//! removed, replaced or relinked changes the status of the file or of its folder (size,
//! modification and change times to the nanosecond, inode, device, mode), so no file
//! needs reading to tell.
//!
//! Statuses are taken before what they describe is read (on the opened file itself
//! when reading one), so a change made during the load shows as a difference next
//! time. A change within the file system's time granularity after the read could keep
//! the times equal: [`Inputs::settled`] tells whether every time recorded is older than
//! the load by a margin past any granularity, and only then may the list vouch for
//! what was loaded.
//!
//! The readers record into a [`Seen`]; the cache compares the [`Inputs`] it became.

use serde::{Deserialize, Serialize};
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The status of a path: what must be equal for it to be taken as unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    dev: u64,
    ino: u64,
    mode: u32,
    size: u64,
    /// Modification time: seconds and nanoseconds since the epoch.
    mtime: (i64, i64),
    /// Status change time (any write, rename, link, owner or mode change).
    ctime: (i64, i64),
}

impl Stat {
    /// The status in `meta`; `None` off Unix, where the system does not give the change
    /// time and inode this needs.
    #[cfg(unix)]
    pub fn of(meta: &Metadata) -> Option<Stat> {
        use std::os::unix::fs::MetadataExt;
        Some(Stat {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    /// See the Unix version.
    #[cfg(not(unix))]
    pub fn of(_: &Metadata) -> Option<Stat> {
        None
    }

    /// Whether both times are older than `before`.
    fn older_than(&self, before: Duration) -> bool {
        let at =
            |(s, ns): (i64, i64)| Duration::new(s.max(0) as u64, ns.clamp(0, 999_999_999) as u32);
        // A time before the epoch is old enough.
        let negative = |(s, _): (i64, i64)| s < 0;
        (negative(self.mtime) || at(self.mtime) < before)
            && (negative(self.ctime) || at(self.ctime) < before)
    }
}

/// One path looked at, and its status then (`None`: nothing was there, or it could
/// not be looked at).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    /// The path as the loader used it (relative ones against the working folder).
    path: PathBuf,
    stat: Option<Stat>,
    /// The status could not be told (off Unix): the list can vouch for nothing.
    unknown: bool,
}

impl Input {
    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Records what a load looks at, when asked to (shared by the threads reading files).
#[derive(Debug, Default)]
pub struct Seen {
    list: Option<Mutex<Vec<Input>>>,
}

impl Seen {
    /// A recorder that records nothing (a load without a rule set cache).
    pub fn off() -> Seen {
        Seen { list: None }
    }

    /// A recorder.
    pub fn on() -> Seen {
        Seen {
            list: Some(Mutex::default()),
        }
    }

    fn push(&self, path: &Path, meta: Option<&Metadata>) {
        let Some(list) = &self.list else { return };
        let stat = meta.and_then(Stat::of);
        let input = Input {
            path: path.to_path_buf(),
            unknown: meta.is_some() && stat.is_none(),
            stat,
        };
        list.lock().unwrap_or_else(|e| e.into_inner()).push(input);
    }

    /// The status of `path` (links followed), recorded: what the loader asks before
    /// listing a folder, or to learn whether something is there.
    pub fn stat(&self, path: &Path) -> Option<Metadata> {
        let meta = std::fs::metadata(path).ok();
        self.push(path, meta.as_ref());
        meta
    }

    /// Records `meta`, taken on the file at `path` opened for reading.
    pub fn opened(&self, path: &Path, meta: &Metadata) {
        self.push(path, Some(meta));
    }

    /// Records that `path` could not be opened (its status now, if it has one).
    pub fn unopened(&self, path: &Path) {
        if self.list.is_some() {
            self.stat(path);
        }
    }

    /// What was recorded: each path once, in order of path. `None` when the same path
    /// was seen with two statuses (it changed while loading).
    pub fn into_inputs(self) -> Option<Inputs> {
        let mut list = self.list?.into_inner().unwrap_or_else(|e| e.into_inner());
        // Paths compared as bytes: compared component by component, sorting the
        // hayabusa rules' 5,600 took 60 million instructions. A stable sort, as the
        // list comes in sorted runs (the walk's order, read by a few threads), which it
        // takes as they are: 16 million instructions unstable, 10 million stable.
        list.sort_by(|a, b| {
            let (a, b) = (a.path.as_os_str(), b.path.as_os_str());
            a.as_encoded_bytes().cmp(b.as_encoded_bytes())
        });
        let same_path = |a: &Input, b: &Input| {
            a.path.as_os_str().as_encoded_bytes() == b.path.as_os_str().as_encoded_bytes()
        };
        list.dedup_by(|a, b| same_path(a, b) && a.stat == b.stat && a.unknown == b.unknown);
        if list.windows(2).any(|w| same_path(&w[0], &w[1])) {
            return None;
        }
        Some(Inputs(list))
    }
}

/// The paths a load looked at, each once, with their statuses.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inputs(Vec<Input>);

impl Inputs {
    /// How many paths.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no path was looked at.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The first path whose status is not as recorded (or that cannot be told), if any.
    pub fn changed(&self) -> Option<&Input> {
        self.0.iter().find(|i| {
            if i.unknown {
                return true;
            }
            let now = std::fs::metadata(&i.path).ok();
            match (&i.stat, now) {
                (None, None) => false,
                (Some(was), Some(now)) => Stat::of(&now).as_ref() != Some(was),
                _ => true,
            }
        })
    }

    /// The first path whose times are not older than `started` (when the load began)
    /// by `margin`, or whose status is unknown: a change to it made in the same tick
    /// of the file system's clock as the load read it could leave its status equal.
    pub fn settled(&self, started: SystemTime, margin: Duration) -> Result<(), &Input> {
        let before = started
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .saturating_sub(margin);
        match self
            .0
            .iter()
            .find(|i| i.unknown || i.stat.is_some_and(|s| !s.older_than(before)))
        {
            Some(i) => Err(i),
            None => Ok(()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("scanner-inputs-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn recorded(paths: &[&Path]) -> Inputs {
        let seen = Seen::on();
        for p in paths {
            seen.stat(p);
        }
        seen.into_inputs().unwrap()
    }

    #[test]
    fn an_edit_an_addition_a_removal_or_a_change_of_mode_shows() {
        use std::os::unix::fs::PermissionsExt;
        let d = scratch("changes");
        let (a, b) = (d.join("a.yml"), d.join("b.yml"));
        fs::write(&a, "title: a\n").unwrap();
        let inputs = recorded(&[&d, &a, &b]);
        assert_eq!(inputs.len(), 3);
        assert_eq!(inputs.changed(), None, "nothing changed");

        // Same size, new text.
        fs::write(&a, "title: b\n").unwrap();
        assert_eq!(inputs.changed().map(Input::path), Some(a.as_path()));

        let inputs = recorded(&[&d, &a, &b]);
        fs::write(&b, "title: b\n").unwrap();
        assert_eq!(
            inputs.changed().map(Input::path),
            Some(d.as_path()),
            "the folder first"
        );
        let inputs = recorded(&[&a, &b]);
        fs::remove_file(&b).unwrap();
        assert_eq!(inputs.changed().map(Input::path), Some(b.as_path()), "gone");

        let inputs = recorded(&[&a]);
        fs::set_permissions(&a, fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(inputs.changed().map(Input::path), Some(a.as_path()), "mode");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_reset_to_its_old_modification_time_shows_by_its_change_time() {
        let d = scratch("mtime");
        let a = d.join("a.yml");
        fs::write(&a, "title: a\n").unwrap();
        let old = fs::metadata(&a).unwrap().modified().unwrap();
        let inputs = recorded(&[&a]);
        std::thread::sleep(Duration::from_millis(20));
        fs::write(&a, "title: b\n").unwrap();
        fs::File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert_eq!(fs::metadata(&a).unwrap().modified().unwrap(), old);
        assert_eq!(inputs.changed().map(Input::path), Some(a.as_path()));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn recent_times_are_not_settled_and_one_path_seen_twice_differently_is_no_list() {
        let d = scratch("settled");
        let a = d.join("a.yml");
        fs::write(&a, "x").unwrap();
        let inputs = recorded(&[&a, &d.join("absent")]);
        let now = SystemTime::now();
        assert_eq!(
            inputs
                .settled(now, Duration::from_secs(2))
                .map_err(Input::path),
            Err(a.as_path())
        );
        assert_eq!(
            inputs.settled(now + Duration::from_secs(3), Duration::from_secs(2)),
            Ok(())
        );

        let seen = Seen::on();
        seen.stat(&a);
        seen.stat(&a);
        assert_eq!(seen.into_inputs().map(|i| i.len()), Some(1), "once");
        let seen = Seen::on();
        seen.stat(&a);
        fs::write(&a, "longer").unwrap();
        seen.stat(&a);
        assert_eq!(seen.into_inputs(), None, "changed while loading");
        assert_eq!(Seen::off().into_inputs(), None);
        fs::remove_dir_all(&d).unwrap();
    }
}
