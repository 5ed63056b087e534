//! A folder that belongs to the user running scanner and that no one else may write,
//! opened once and then used through its handle only.
//!
//! scanner runs as root over evidence in folders other local users can write. Any
//! file it writes or rewrites without the user naming it with `-o` (a config file, a
//! rule, a cache, a downloaded rule set) is reached through an [`OwnedDir`]:
//!
//! - the folder is opened once, its last component not followed (`O_NOFOLLOW`), and
//!   its owner and mode are checked on the opened handle: the user's own, writable by
//!   neither group nor others; anything else is refused with the reason;
//! - every read, create, rename and unlink inside it is relative to that handle
//!   (`openat`, `renameat`, `linkat`, `unlinkat`), so no path is resolved twice and a
//!   folder swapped after the check is not the one written;
//! - a name in it is never followed when it is a link: a link or anything that is not
//!   a regular file is neither read nor replaced;
//! - a file is written whole to an exclusively created private temporary file, then
//!   renamed (or, without replace, linked) into place.
//!
//! Since no one else can write the folder, nothing can change its entries between a
//! look and an act. Elsewhere than Unix there are no such handles: the same checks are
//! made by path (types and links; owners are not compared).

use crate::error::{Error, Why};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

#[cfg(unix)]
use rustix::fs::{AtFlags, Mode, OFlags};
#[cfg(unix)]
use std::os::fd::OwnedFd;

/// What an entry of a folder is (not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link.
    Link,
    /// A FIFO, device or socket.
    Other,
}

/// The mode [`OwnedDir::write`] gives the file it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    /// Exactly this mode (a private cache: 0600 whatever was there).
    Exactly(u32),
    /// The mode of the file replaced, or this one for a new file.
    KeepOr(u32),
}

/// An entry of a folder, as listed.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name.
    pub name: OsString,
    /// What it is (a link is a link, not what it points to).
    pub kind: Kind,
    /// Its length in bytes.
    pub len: u64,
    /// When it was last modified.
    pub modified: std::time::SystemTime,
}

/// A folder of the user's own, writable by no one else, used through its handle.
#[derive(Debug)]
pub struct OwnedDir {
    path: PathBuf,
    #[cfg(unix)]
    fd: OwnedFd,
}

impl OwnedDir {
    /// Opens the folder `path` (its last component not followed) and checks it on the
    /// handle.
    pub fn open(path: &Path) -> Result<OwnedDir, Error> {
        #[cfg(unix)]
        {
            let fd = open_folder(rustix::fs::CWD, path).map_err(|w| Error::new(path.into(), w))?;
            Ok(OwnedDir {
                path: path.to_path_buf(),
                fd,
            })
        }
        #[cfg(not(unix))]
        {
            check_by_path(path).map_err(|w| Error::new(path.into(), w))?;
            Ok(OwnedDir {
                path: path.to_path_buf(),
            })
        }
    }

    /// Opens the folder `path`, first making it and any missing parent open to the
    /// user only (0700); an existing folder is checked as [`OwnedDir::open`] does.
    pub fn create(path: &Path) -> Result<OwnedDir, Error> {
        let mut b = std::fs::DirBuilder::new();
        b.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        match std::fs::symlink_metadata(path) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                b.create(path)
                    .map_err(|e| Error::new(path.into(), Why::Io(e)))?;
            }
            Err(e) => return Err(Error::new(path.into(), Why::Io(e))),
        }
        OwnedDir::open(path)
    }

    /// The folder's path, as given (for messages; never resolved again).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in this folder, for messages.
    pub fn shown(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    fn err(&self, name: &OsStr, why: Why) -> Error {
        Error::new(self.shown(name), why)
    }

    /// The error for the entry `name` of this folder (a caller's refusal of an entry
    /// it listed, say a link).
    pub fn entry_error(&self, name: &OsStr, why: Why) -> Error {
        self.err(name, why)
    }

    /// The sub-folder `name`, checked as [`OwnedDir::open`] checks.
    pub fn open_dir(&self, name: &OsStr) -> Result<OwnedDir, Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        {
            let fd = open_folder(&self.fd, Path::new(name)).map_err(|w| self.err(name, w))?;
            Ok(OwnedDir {
                path: self.shown(name),
                fd,
            })
        }
        #[cfg(not(unix))]
        OwnedDir::open(&self.shown(name))
    }

    /// The sub-folder `name`, made (0700) when missing.
    pub fn create_dir(&self, name: &OsStr) -> Result<OwnedDir, Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(self.err(name, Why::Io(e.into()))),
        }
        #[cfg(not(unix))]
        match std::fs::create_dir(self.shown(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(self.err(name, Why::Io(e))),
        }
        self.open_dir(name)
    }

    /// Makes the sub-folder `name` (0700), failing when anything is at the name, a
    /// link included.
    pub fn create_new_dir(&self, name: &OsStr) -> Result<(), Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        let made = rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o700))
            .map_err(io::Error::from);
        #[cfg(not(unix))]
        let made = std::fs::create_dir(self.shown(name));
        made.map_err(|e| self.err(name, Why::Io(e)))
    }

    /// The regular file `name` opened for reading and writing, made (0600) when missing;
    /// a link or special file at the name is refused. For lock files.
    pub fn open_or_create(&self, name: &OsStr) -> Result<File, Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        let file = {
            let flags = OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::openat(
                &self.fd,
                name,
                flags | OFlags::NONBLOCK,
                Mode::from_raw_mode(0o600),
            ) {
                Ok(fd) => File::from(fd),
                Err(rustix::io::Errno::LOOP) => return Err(self.err(name, Why::Link)),
                Err(e) => return Err(self.err(name, Why::Io(e.into()))),
            }
        };
        #[cfg(not(unix))]
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.shown(name))
            .map_err(|e| self.err(name, Why::Io(e)))?;
        let meta = file.metadata().map_err(|e| self.err(name, Why::Io(e)))?;
        if !meta.is_file() {
            return Err(self.err(name, Why::NotRegular(kind_name(&meta.file_type()))));
        }
        Ok(file)
    }

    /// Removes the entry `name` and, when it is a folder, everything in it; links are
    /// removed, never followed. Folders deeper than 256 levels are left (an error).
    pub fn remove_tree(&self, name: &OsStr) -> Result<(), Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        return remove_tree_at(&self.fd, name, 256).map_err(|e| self.err(name, Why::Io(e)));
        #[cfg(not(unix))]
        {
            let p = self.shown(name);
            let m = std::fs::symlink_metadata(&p).map_err(|e| self.err(name, Why::Io(e)))?;
            let r = if m.is_dir() {
                std::fs::remove_dir_all(&p)
            } else {
                std::fs::remove_file(&p)
            };
            r.map_err(|e| self.err(name, Why::Io(e)))
        }
    }

    /// Exchanges the entries `a` and `b` of this folder in one step; `Ok(false)` where
    /// the system cannot (anything but Linux, or a file system without it).
    pub fn exchange(&self, a: &OsStr, b: &OsStr) -> Result<bool, Error> {
        single(a).map_err(|w| self.err(a, w))?;
        single(b).map_err(|w| self.err(b, w))?;
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::RenameFlags;
            match rustix::fs::renameat_with(&self.fd, a, &self.fd, b, RenameFlags::EXCHANGE) {
                Ok(()) => Ok(true),
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => Ok(false),
                Err(e) => Err(self.err(b, Why::Io(e.into()))),
            }
        }
        #[cfg(not(target_os = "linux"))]
        Ok(false)
    }

    /// The regular file `name` opened for reading, with its length; `None` when
    /// nothing is there. A link is not followed; a FIFO or device is refused without
    /// blocking.
    pub fn open_file(&self, name: &OsStr) -> Result<Option<(File, u64)>, Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        let opened = {
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            match rustix::fs::openat(&self.fd, name, flags, Mode::empty()) {
                Ok(fd) => File::from(fd),
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(rustix::io::Errno::LOOP) => return Err(self.err(name, Why::Link)),
                Err(e) => return Err(self.err(name, Why::Io(e.into()))),
            }
        };
        #[cfg(not(unix))]
        let opened = {
            let p = self.shown(name);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => return Err(self.err(name, Why::Link)),
                // Windows refuses to open a folder as a file ("access denied"): told here.
                Ok(m) if m.is_dir() => return Err(self.err(name, Why::NotRegular("a folder"))),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
                _ => {}
            }
            File::open(&p).map_err(|e| self.err(name, Why::Io(e)))?
        };
        let meta = opened.metadata().map_err(|e| self.err(name, Why::Io(e)))?;
        if !meta.is_file() {
            return Err(self.err(name, Why::NotRegular(kind_name(&meta.file_type()))));
        }
        Ok(Some((opened, meta.len())))
    }

    /// The bytes of the regular file `name`, at most `cap` of them; `None` when nothing
    /// is there.
    pub fn read(&self, name: &OsStr, cap: u64) -> Result<Option<Vec<u8>>, Error> {
        let Some((file, len)) = self.open_file(name)? else {
            return Ok(None);
        };
        if len > cap {
            return Err(self.err(name, Why::TooLarge(cap)));
        }
        let mut data = Vec::with_capacity(len as usize);
        file.take(cap + 1)
            .read_to_end(&mut data)
            .map_err(|e| self.err(name, Why::Io(e)))?;
        if data.len() as u64 > cap {
            return Err(self.err(name, Why::TooLarge(cap)));
        }
        Ok(Some(data))
    }

    /// What `name` is (not followed), or `None` when nothing is there.
    pub fn entry(&self, name: &OsStr) -> Result<Option<Entry>, Error> {
        single(name).map_err(|w| self.err(name, w))?;
        #[cfg(unix)]
        let status = match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => s,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.err(name, Why::Io(e.into()))),
        };
        #[cfg(unix)]
        return Ok(Some(entry_of(name.to_os_string(), &status)));
        #[cfg(not(unix))]
        match std::fs::symlink_metadata(self.shown(name)) {
            Ok(m) => Ok(Some(Entry {
                name: name.to_os_string(),
                kind: kind_of(&m.file_type()),
                len: m.len(),
                modified: m.modified().unwrap_or(std::time::UNIX_EPOCH),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.err(name, Why::Io(e))),
        }
    }

    /// The folder's entries (`.` and `..` left out), in no set order.
    pub fn entries(&self) -> Result<Vec<Entry>, Error> {
        let fail = |e: io::Error| Error::new(self.path.clone(), Why::Io(e));
        let mut out = Vec::new();
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let list = rustix::fs::Dir::read_from(&self.fd).map_err(|e| fail(e.into()))?;
            for e in list {
                let e = e.map_err(|e| fail(e.into()))?;
                let name = OsStr::from_bytes(e.file_name().to_bytes());
                if name == "." || name == ".." {
                    continue;
                }
                // Gone since it was listed: left out.
                if let Some(entry) = self.entry(name)? {
                    out.push(entry);
                }
            }
        }
        #[cfg(not(unix))]
        for e in std::fs::read_dir(&self.path).map_err(fail)? {
            let e = e.map_err(fail)?;
            if let Some(entry) = self.entry(&e.file_name())? {
                out.push(entry);
            }
        }
        Ok(out)
    }

    /// Writes the file `name` with `f`: into a private temporary file made in this
    /// folder, given its [`FileMode`], synced,
    /// then put in place. With `replace` an existing regular file is replaced; without,
    /// anything at the name is kept and [`Why::Exists`] returned. A link, folder or
    /// other special file at the name is never replaced.
    pub fn write<T>(
        &self,
        name: &OsStr,
        replace: bool,
        mode: FileMode,
        f: impl FnOnce(&mut File) -> io::Result<T>,
    ) -> Result<T, Error> {
        let (keep, mode) = match mode {
            FileMode::Exactly(m) => (false, m),
            FileMode::KeepOr(m) => (true, m),
        };
        let mode = match self.entry(name)? {
            None => mode,
            Some(_) if !replace => return Err(self.err(name, Why::Exists)),
            Some(Entry {
                kind: Kind::File, ..
            }) if keep => self.mode_of(name).unwrap_or(mode),
            Some(Entry {
                kind: Kind::File, ..
            }) => mode,
            Some(Entry {
                kind: Kind::Link, ..
            }) => return Err(self.err(name, Why::Link)),
            Some(Entry {
                kind: Kind::Folder, ..
            }) => return Err(self.err(name, Why::NotRegular("a folder"))),
            Some(_) => return Err(self.err(name, Why::NotRegular("a FIFO, device or socket"))),
        };
        let (tmp, mut file) = self.create_temp(name)?;
        let tmp_path = self.shown(&tmp);
        let result = (|| {
            let value = f(&mut file)?;
            set_mode(&file, mode)?;
            file.sync_all()?;
            drop(file);
            Ok(value)
        })();
        let result = result
            .map_err(|e| self.err(name, Why::Io(e)))
            .and_then(|value| self.install(&tmp, name, replace).map(|()| value));
        if result.is_err() {
            let _ = self.unlink(&tmp);
        }
        crate::temp::forget(&tmp_path);
        result
    }

    /// Removes the file `name` (never a folder; a link is removed, not followed).
    pub fn remove(&self, name: &OsStr) -> Result<(), Error> {
        single(name).map_err(|w| self.err(name, w))?;
        self.unlink(name).map_err(|e| self.err(name, Why::Io(e)))
    }

    /// Renames the entry `from` of this folder to `to`, replacing what `to` names
    /// (a file, or an empty folder when `from` is a folder).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> Result<(), Error> {
        single(from).map_err(|w| self.err(from, w))?;
        single(to).map_err(|w| self.err(to, w))?;
        #[cfg(unix)]
        let r = rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io::Error::from);
        #[cfg(not(unix))]
        let r = std::fs::rename(self.shown(from), self.shown(to));
        r.map_err(|e| self.err(to, Why::Io(e)))
    }

    fn mode_of(&self, name: &OsStr) -> Option<u32> {
        #[cfg(unix)]
        {
            let s = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
            Some(s.st_mode as u32 & 0o7777)
        }
        #[cfg(not(unix))]
        {
            let _ = name;
            None
        }
    }

    /// Makes `.NAME.PID.RANDOM.tmp` exclusively (0600), remembered for removal if the
    /// run is stopped by a signal.
    fn create_temp(&self, name: &OsStr) -> Result<(OsString, File), Error> {
        crate::temp::create_unique(name, |tmp| {
            crate::temp::remembered(&self.shown(tmp), || self.create_new(tmp))
        })
        .map_err(|e| self.err(name, Why::Io(e)))
    }

    fn create_new(&self, name: &OsStr) -> io::Result<File> {
        #[cfg(unix)]
        {
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600))?;
            Ok(File::from(fd))
        }
        #[cfg(not(unix))]
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.shown(name))
    }

    fn install(&self, tmp: &OsStr, name: &OsStr, replace: bool) -> Result<(), Error> {
        if replace {
            return self.rename(tmp, name);
        }
        #[cfg(unix)]
        let linked = rustix::fs::linkat(&self.fd, tmp, &self.fd, name, AtFlags::empty())
            .map_err(io::Error::from);
        #[cfg(not(unix))]
        let linked = std::fs::hard_link(self.shown(tmp), self.shown(name));
        match linked {
            Ok(()) => {
                let _ = self.unlink(tmp);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(self.err(name, Why::Exists)),
            Err(e) => Err(self.err(name, Why::Io(e))),
        }
    }

    fn unlink(&self, name: &OsStr) -> io::Result<()> {
        #[cfg(unix)]
        return rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(io::Error::from);
        #[cfg(not(unix))]
        std::fs::remove_file(self.shown(name))
    }
}

/// Removes `name` under `at`, a folder's contents first, links not followed.
#[cfg(unix)]
fn remove_tree_at<Fd: std::os::fd::AsFd>(at: Fd, name: &OsStr, depth: usize) -> io::Result<()> {
    let at = at.as_fd();
    match rustix::fs::unlinkat(at, name, AtFlags::empty()) {
        Ok(()) => return Ok(()),
        // A folder: Linux says EISDIR, POSIX EPERM.
        Err(rustix::io::Errno::ISDIR | rustix::io::Errno::PERM) => {}
        Err(e) => return Err(e.into()),
    }
    if depth == 0 {
        return Err(io::Error::other("folders nested too deep"));
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = rustix::fs::openat(at, name, flags, Mode::empty())?;
    let mut names = Vec::new();
    for e in rustix::fs::Dir::read_from(&dir)? {
        let e = e?;
        let n = e.file_name().to_bytes();
        if n != b"." && n != b".." {
            names.push(std::ffi::OsString::from(
                <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(n),
            ));
        }
    }
    for n in &names {
        remove_tree_at(&dir, n, depth - 1)?;
    }
    rustix::fs::unlinkat(at, name, AtFlags::REMOVEDIR).map_err(io::Error::from)
}

/// Refuses a name that is not one entry of a folder.
fn single(name: &OsStr) -> Result<(), Why> {
    let p = Path::new(name);
    let mut parts = p.components();
    match (parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(_)), None) => Ok(()),
        _ => Err(Why::NotAName),
    }
}

/// Opens `path` relative to `at` as a folder, not following its last component, and
/// checks owner and mode on the handle.
#[cfg(unix)]
fn open_folder<Fd: std::os::fd::AsFd>(at: Fd, path: &Path) -> Result<OwnedFd, Why> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let at = at.as_fd();
    let fd = match rustix::fs::openat(at, path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::LOOP) => return Err(Why::Link),
        // With O_DIRECTORY, Linux says "not a folder" for a link too.
        Err(rustix::io::Errno::NOTDIR) => {
            let link = rustix::fs::statat(at, path, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|s| {
                rustix::fs::FileType::from_raw_mode(s.st_mode as _) == rustix::fs::FileType::Symlink
            });
            return Err(if link { Why::Link } else { Why::NotFolder });
        }
        Err(e) => return Err(Why::Io(e.into())),
    };
    let s = rustix::fs::fstat(&fd).map_err(|e| Why::Io(e.into()))?;
    trusted(s.st_uid, s.st_mode as u32)?;
    Ok(fd)
}

/// Refuses what belongs to another user than the one running scanner, or what group
/// or others may write (its owner and mode bits as the system reports them): the
/// check every folder and cache file scanner keeps as its own passes.
#[cfg(unix)]
pub fn trusted(owner: u32, mode: u32) -> Result<(), Why> {
    let me = rustix::process::geteuid().as_raw();
    if owner != me {
        return Err(Why::Owner { owner, me });
    }
    if mode & 0o022 != 0 {
        return Err(Why::Writable);
    }
    Ok(())
}

/// The folder holding `path`: its parent, or `.` for a bare name.
pub fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

#[cfg(not(unix))]
fn check_by_path(path: &Path) -> Result<(), Why> {
    let m = std::fs::symlink_metadata(path).map_err(Why::Io)?;
    if m.file_type().is_symlink() {
        Err(Why::Link)
    } else if !m.is_dir() {
        Err(Why::NotFolder)
    } else {
        Ok(())
    }
}

#[cfg(unix)]
fn entry_of(name: OsString, s: &rustix::fs::Stat) -> Entry {
    use rustix::fs::FileType;
    let kind = match FileType::from_raw_mode(s.st_mode as _) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Folder,
        FileType::Symlink => Kind::Link,
        _ => Kind::Other,
    };
    let secs = u64::try_from(s.st_mtime).unwrap_or(0);
    let nanos = u32::try_from(s.st_mtime_nsec).unwrap_or(0);
    Entry {
        name,
        kind,
        len: u64::try_from(s.st_size).unwrap_or(0),
        modified: std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos.min(999_999_999)),
    }
}

#[cfg(not(unix))]
fn kind_of(t: &std::fs::FileType) -> Kind {
    if t.is_symlink() {
        Kind::Link
    } else if t.is_dir() {
        Kind::Folder
    } else if t.is_file() {
        Kind::File
    } else {
        Kind::Other
    }
}

/// What a file that is not regular is, for an error: "a FIFO", "a device", "a socket",
/// "a folder".
pub fn kind_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// The mode a new file gets under the process's umask: `0o666 & !umask` (Linux reports
/// the umask in `/proc/self/status`; 022 is assumed elsewhere).
pub fn new_file_mode() -> u32 {
    #[cfg(unix)]
    {
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022);
        0o666 & !umask
    }
    #[cfg(not(unix))]
    0o644
}

#[cfg(test)]
mod tests {
    // Folder handles, owners and modes are Unix's.
    #[cfg(unix)]
    mod unix {
        use super::super::*;
        use std::os::unix::fs::PermissionsExt;

        fn scratch(tag: &str) -> PathBuf {
            let d = std::env::temp_dir()
                .join(format!("scanner-owned-dir-{}-{tag}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
            d
        }

        fn os(s: &str) -> &OsStr {
            OsStr::new(s)
        }

        #[test]
        fn a_folder_others_may_write_a_link_or_a_file_is_refused() {
            let d = scratch("refused");
            let open = d.join("open");
            std::fs::create_dir(&open).unwrap();
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
            let e = OwnedDir::open(&open).unwrap_err();
            assert!(matches!(e.why(), Why::Writable), "{e}");
            assert!(
                e.to_string().starts_with(&open.display().to_string()),
                "{e}"
            );
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o775)).unwrap();
            assert!(matches!(
                OwnedDir::open(&open).unwrap_err().why(),
                Why::Writable
            ));
            std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
            OwnedDir::open(&open).unwrap();

            let link = d.join("link");
            std::os::unix::fs::symlink(&open, &link).unwrap();
            assert!(matches!(
                OwnedDir::open(&link).unwrap_err().why(),
                Why::Link
            ));
            let file = d.join("file");
            std::fs::write(&file, "x").unwrap();
            assert!(matches!(
                OwnedDir::open(&file).unwrap_err().why(),
                Why::NotFolder
            ));
            assert!(OwnedDir::open(&d.join("absent"))
                .unwrap_err()
                .is_not_found());

            let dir = OwnedDir::open(&d).unwrap();
            assert!(matches!(
                dir.open_dir(os("link")).unwrap_err().why(),
                Why::Link
            ));
            assert!(matches!(
                dir.open_dir(os("../x")).unwrap_err().why(),
                Why::NotAName
            ));
            assert!(matches!(
                dir.open_dir(os("..")).unwrap_err().why(),
                Why::NotAName
            ));
            let _ = std::fs::remove_dir_all(&d);
        }

        #[test]
        fn another_users_folder_is_refused() {
            if rustix::process::geteuid().as_raw() != 0 {
                // Only root can give a folder away; the mode test above covers the rest.
                return;
            }
            let d = scratch("owner");
            let theirs = d.join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
            let e = OwnedDir::open(&theirs).unwrap_err();
            assert!(
                matches!(
                    e.why(),
                    Why::Owner {
                        owner: 65534,
                        me: 0
                    }
                ),
                "{e}"
            );
            let _ = std::fs::remove_dir_all(&d);
        }

        #[test]
        fn a_link_in_the_folder_is_neither_read_nor_written_through() {
            let d = scratch("links");
            let victim = d.join("victim");
            std::fs::write(&victim, "root's").unwrap();
            let inner = d.join("inner");
            std::fs::create_dir(&inner).unwrap();
            std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::symlink(&victim, inner.join("planted")).unwrap();
            let dir = OwnedDir::open(&inner).unwrap();
            assert!(matches!(
                dir.read(os("planted"), 100).unwrap_err().why(),
                Why::Link
            ));
            for replace in [false, true] {
                let e = dir
                    .write(os("planted"), replace, FileMode::KeepOr(0o644), |f| {
                        io::Write::write_all(f, b"attacker's")
                    })
                    .unwrap_err();
                assert!(matches!(e.why(), Why::Link | Why::Exists), "{e}");
            }
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
            let left: Vec<_> = dir.entries().unwrap().into_iter().map(|e| e.name).collect();
            assert_eq!(
                left,
                vec![OsString::from("planted")],
                "no temporary file left"
            );
            let _ = std::fs::remove_dir_all(&d);
        }

        #[test]
        fn files_are_written_whole_replaced_only_when_asked_and_read_within_a_cap() {
            let d = scratch("write");
            let dir = OwnedDir::open(&d).unwrap();
            dir.write(os("a.txt"), false, FileMode::KeepOr(0o640), |f| {
                io::Write::write_all(f, b"one")
            })
            .unwrap();
            let mode = std::fs::metadata(d.join("a.txt"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o640);
            let e = dir
                .write(os("a.txt"), false, FileMode::KeepOr(0o640), |f| {
                    io::Write::write_all(f, b"two")
                })
                .unwrap_err();
            assert!(matches!(e.why(), Why::Exists));
            std::fs::set_permissions(d.join("a.txt"), std::fs::Permissions::from_mode(0o600))
                .unwrap();
            dir.write(os("a.txt"), true, FileMode::KeepOr(0o644), |f| {
                io::Write::write_all(f, b"three")
            })
            .unwrap();
            assert_eq!(dir.read(os("a.txt"), 5).unwrap().unwrap(), b"three");
            let mode = std::fs::metadata(d.join("a.txt"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "the replaced file's mode is kept");
            dir.write(os("a.txt"), true, FileMode::Exactly(0o640), |f| {
                io::Write::write_all(f, b"three")
            })
            .unwrap();
            let mode = std::fs::metadata(d.join("a.txt"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o640, "or not, when asked");
            assert!(matches!(
                dir.read(os("a.txt"), 4).unwrap_err().why(),
                Why::TooLarge(4)
            ));
            assert!(dir.read(os("absent"), 4).unwrap().is_none());
            // A failing writer leaves the old file and no temporary file.
            let e = dir
                .write(
                    os("a.txt"),
                    true,
                    FileMode::KeepOr(0o644),
                    |_| -> io::Result<()> { Err(io::Error::other("disk full")) },
                )
                .unwrap_err();
            assert!(e.to_string().contains("disk full"), "{e}");
            assert_eq!(dir.read(os("a.txt"), 5).unwrap().unwrap(), b"three");
            assert_eq!(dir.entries().unwrap().len(), 1);
            dir.create_dir(os("sub")).unwrap();
            let e = dir
                .write(os("sub"), true, FileMode::KeepOr(0o644), |f| {
                    io::Write::write_all(f, b"x")
                })
                .unwrap_err();
            assert!(matches!(e.why(), Why::NotRegular(_)), "{e}");
            let _ = std::fs::remove_dir_all(&d);
        }

        #[test]
        fn trees_are_removed_without_following_links_and_folders_exchanged() {
            let d = scratch("tree");
            let outside = d.join("outside");
            std::fs::create_dir(&outside).unwrap();
            std::fs::write(outside.join("keep"), "x").unwrap();
            let inner = d.join("inner");
            std::fs::create_dir_all(inner.join("t/a/b")).unwrap();
            std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::fs::write(inner.join("t/a/b/f"), "x").unwrap();
            std::os::unix::fs::symlink(&outside, inner.join("t/a/link")).unwrap();
            let dir = OwnedDir::open(&inner).unwrap();
            dir.create_new_dir(os("u")).unwrap();
            assert!(dir.create_new_dir(os("u")).is_err(), "exclusive");
            std::fs::write(inner.join("u/mark"), "u").unwrap();
            assert!(dir.exchange(os("t"), os("u")).unwrap());
            assert!(inner.join("t/mark").exists() && inner.join("u/a/b/f").exists());
            dir.remove_tree(os("u")).unwrap();
            assert!(!inner.join("u").exists());
            assert!(outside.join("keep").exists(), "the link's target is left");
            let lock = dir.open_or_create(os("lock")).unwrap();
            drop(lock);
            std::os::unix::fs::symlink(d.join("victim"), inner.join("l2")).unwrap();
            assert!(matches!(
                dir.open_or_create(os("l2")).unwrap_err().why(),
                Why::Link
            ));
            assert!(!d.join("victim").exists());
            let _ = std::fs::remove_dir_all(&d);
        }

        #[test]
        fn a_fifo_is_refused_without_blocking() {
            let d = scratch("fifo");
            rustix::fs::mknodat(
                rustix::fs::CWD,
                d.join("fifo"),
                rustix::fs::FileType::Fifo,
                Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap();
            let dir = OwnedDir::open(&d).unwrap();
            let e = dir.read(os("fifo"), 10).unwrap_err();
            assert!(matches!(e.why(), Why::NotRegular("a FIFO")), "{e}");
            let _ = std::fs::remove_dir_all(&d);
        }

        #[test]
        fn a_folder_swapped_after_opening_is_not_the_one_written() {
            let d = scratch("swap");
            let config = d.join("config");
            std::fs::create_dir(&config).unwrap();
            std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o700)).unwrap();
            let dir = OwnedDir::open(&config).unwrap();
            let elsewhere = d.join("elsewhere");
            std::fs::create_dir(&elsewhere).unwrap();
            std::fs::rename(&config, d.join("moved")).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &config).unwrap();
            dir.write(os("x.txt"), false, FileMode::Exactly(0o644), |f| {
                io::Write::write_all(f, b"x")
            })
            .unwrap();
            assert!(d.join("moved/x.txt").exists());
            assert!(!elsewhere.join("x.txt").exists());
            let _ = std::fs::remove_dir_all(&d);
        }
    }
}
