//! Cache files scanner keeps between runs in a folder of the user's (the rule set
//! cache is one): bytes that make a later run faster and that no run may trust more
//! than it trusts itself.
//!
//! A cache file is read only when it can be trusted: a regular file (not followed if
//! a link), the user's, writable by nobody else, at most [`MAX_CACHE_BYTES`], whose
//! header names this very build and whose checksum holds. Its header names the format
//! the caller gives, scanner's version and this very binary (its size and modification
//! time), so a rebuilt binary never reads another build's file: what the caller
//! encodes may follow its internal types without a format number being bumped.
//! Files are written whole to a private temporary file beside them, then renamed over
//! them, so concurrent runs each see a whole file, old or new, and a planted link is
//! replaced, never followed.

use crate::{Error, FileMode, Kind, OwnedDir, Why};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Largest cache file read (the hayabusa rules' set takes about 6 MiB).
pub const MAX_CACHE_BYTES: u64 = 256 << 20;

/// A folder of cache files of one kind, opened once: every later read, write and
/// removal is relative to its handle, so a folder swapped for a link meanwhile is never
/// written.
pub struct CacheDir {
    dir: OwnedDir,
    /// What each file starts with: the kind's magic and the header naming this build.
    start: Vec<u8>,
}

/// Why a cache file was not read.
#[derive(Debug)]
pub enum Unread {
    /// Nothing is there.
    Missing,
    /// Another format, version or binary wrote it (an upgrade): to be replaced without
    /// a word.
    OtherBuild,
    /// Something is there that must not be used: a link, not a regular file, another
    /// owner, writable by others, too large, or damaged (`damaged`: the checksum or
    /// layout does not hold).
    Unusable(io::Error),
}

/// A cache file's bytes, its header and checksum checked.
pub struct CacheFile {
    data: Vec<u8>,
    body: Range<usize>,
}

impl CacheFile {
    /// What the caller wrote after the header.
    pub fn body(&self) -> &[u8] {
        &self.data[self.body.clone()]
    }

    /// The file's size, in bytes.
    pub fn size(&self) -> usize {
        self.data.len()
    }
}

impl CacheDir {
    /// The cache folder `path`, made (private) if missing, for files that start with
    /// `magic` and hold what the caller's `format` encodes; an error when the folder
    /// must not be trusted (a link, another user's, writable by others).
    pub fn open(path: &Path, magic: &[u8], format: u32) -> Result<CacheDir, Error> {
        let dir = OwnedDir::create(path)?;
        let mut start = magic.to_vec();
        start.extend_from_slice(&header(format));
        Ok(CacheDir { dir, start })
    }

    /// The path of the file `name`, for messages.
    pub fn shown(&self, name: &OsStr) -> PathBuf {
        self.dir.shown(name)
    }

    /// What the file `name` holds after its header, when it can be trusted, this
    /// build wrote it and its checksum holds.
    pub fn read(&self, name: &OsStr) -> Result<CacheFile, Unread> {
        let data = match read_trusted(&self.dir, name) {
            Ok(Some(data)) => data,
            Ok(None) => return Err(Unread::Missing),
            Err(e) => return Err(Unread::Unusable(e)),
        };
        let damaged = || Unread::Unusable(io::Error::other("damaged"));
        let rest = data
            .strip_prefix(&self.start[..])
            .ok_or(Unread::OtherBuild)?;
        let at = data.len() - rest.len();
        let end = data.len().checked_sub(4).filter(|&e| e >= at);
        let end = end.ok_or_else(damaged)?;
        let (all, sum) = data.split_at(end);
        let sum = u32::from_le_bytes(sum.try_into().map_err(|_| damaged())?);
        if crc32fast::hash(all) != sum {
            return Err(damaged());
        }
        Ok(CacheFile {
            data,
            body: at..end,
        })
    }

    /// The start of a file's bytes (its header), with room for `capacity` bytes in all:
    /// the caller appends the body and hands it to [`write`](Self::write).
    pub fn start(&self, capacity: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(capacity.max(self.start.len() + 4));
        out.extend_from_slice(&self.start);
        out
    }

    /// Writes `out` (from [`start`](Self::start)) and its checksum as the file `name`:
    /// to a private file made in the folder exclusively, then renamed over it. A link
    /// planted at the name is removed, never followed.
    pub fn write(&self, name: &OsStr, mut out: Vec<u8>) -> io::Result<()> {
        let sum = crc32fast::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        if let Ok(Some(e)) = self.dir.entry(name) {
            if e.kind == Kind::Link {
                self.dir.remove(name).map_err(why)?;
            }
        }
        let write = |f: &mut fs::File| f.write_all(&out);
        self.dir
            .write(name, true, FileMode::Exactly(0o600), write)
            .map_err(why)
    }

    /// Removes all but the `keep` most recently written files of the folder named
    /// `<prefix>…bin` (regular files only; links and anything else are left alone).
    pub fn prune(&self, prefix: &str, keep: usize) {
        let Ok(list) = self.dir.entries() else { return };
        let mut caches: Vec<(std::time::SystemTime, OsString)> = list
            .into_iter()
            .filter(|e| {
                let name = e.name.to_string_lossy();
                e.kind == Kind::File && name.starts_with(prefix) && name.ends_with(".bin")
            })
            .map(|e| (e.modified, e.name))
            .collect();
        if caches.len() <= keep {
            return;
        }
        caches.sort();
        for (_, name) in &caches[..caches.len() - keep] {
            let _ = self.dir.remove(name);
        }
    }
}

/// What a cache must have been written by: this `format` of it, this version of
/// scanner, this very binary (its size and modification time).
fn header(format: u32) -> Vec<u8> {
    // The binary is looked at once per process.
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let exe = EXE.get_or_init(|| {
        std::env::current_exe()
            .and_then(fs::metadata)
            .map(|m| {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{}:{mtime}", m.len())
            })
            .unwrap_or_default()
    });
    let text = format!("{format}|{}|{exe}", env!("CARGO_PKG_VERSION"));
    let mut out = (text.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out
}

/// The bytes of the file `name` of `dir`; `None` when there is none. An error when
/// something is there that must not be trusted: a link, not a regular file, another
/// owner, writable by others, too large.
fn read_trusted(dir: &OwnedDir, name: &OsStr) -> io::Result<Option<Vec<u8>>> {
    let Some((f, len)) = dir.open_file(name).map_err(why)? else {
        return Ok(None);
    };
    untrusted_owner(&f.metadata()?)?;
    if len > MAX_CACHE_BYTES {
        return Err(io::Error::other(format!(
            "larger than {} MiB",
            MAX_CACHE_BYTES >> 20
        )));
    }
    let mut data = Vec::with_capacity(len as usize);
    f.take(MAX_CACHE_BYTES + 1).read_to_end(&mut data)?;
    if data.len() as u64 > MAX_CACHE_BYTES {
        return Err(io::Error::other("grew while read"));
    }
    Ok(Some(data))
}

/// The reason of a folder error, as an I/O error (the caller names the file).
fn why(e: Error) -> io::Error {
    match e.why() {
        Why::Io(io) => io::Error::new(io.kind(), io.to_string()),
        other => io::Error::other(other.to_string()),
    }
}

/// An error unless the file is the user's and writable by nobody else.
#[cfg(unix)]
fn untrusted_owner(meta: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // The check every folder scanner keeps passes; the cache's notes keep their words.
    crate::trusted(meta.uid(), meta.mode()).map_err(|w| match w {
        Why::Owner { owner, me } => {
            io::Error::other(format!("owned by user {owner}, not by this one ({me})"))
        }
        _ => io::Error::other("writable by group or others"),
    })
}

#[cfg(not(unix))]
fn untrusted_owner(_: &fs::Metadata) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("scanner-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_file_written_is_read_back_and_damage_or_another_build_is_told() {
        let d = scratch("round");
        let cache = CacheDir::open(&d, b"TEST\0", 1).unwrap();
        let name = OsStr::new("t-1.bin");
        assert!(matches!(cache.read(name), Err(Unread::Missing)));
        let mut out = cache.start(0);
        out.extend_from_slice(b"body");
        cache.write(name, out).unwrap();
        let file = cache.read(name).unwrap();
        assert_eq!(file.body(), b"body");
        assert_eq!(file.size(), fs::read(d.join("t-1.bin")).unwrap().len());

        let other = CacheDir::open(&d, b"TEST\0", 2).unwrap();
        assert!(matches!(other.read(name), Err(Unread::OtherBuild)));
        let good = fs::read(d.join("t-1.bin")).unwrap();
        let mut bad = good.clone();
        bad[good.len() - 6] ^= 1;
        fs::write(d.join("t-1.bin"), &bad).unwrap();
        let e = cache.read(name).err().unwrap();
        assert!(
            matches!(&e, Unread::Unusable(e) if e.to_string() == "damaged"),
            "{e:?}"
        );
        fs::write(d.join("t-1.bin"), &good[..good.len() - 5]).unwrap();
        assert!(matches!(cache.read(name), Err(Unread::Unusable(_))));
        fs::remove_dir_all(&d).unwrap();
    }

    /// The cache folder swapped for a link to another folder after it was opened (a
    /// race a local user with write access to its parent could run): a cache is
    /// written into, and pruned from, the folder opened, never the other.
    #[cfg(unix)]
    #[test]
    fn a_cache_folder_swapped_for_a_link_is_not_written_or_pruned_through() {
        let dir = scratch("swap");
        let owned = CacheDir::open(&dir, b"", 1).unwrap();
        let other = dir.with_extension("other");
        let _ = fs::remove_dir_all(&other);
        fs::create_dir(&other).unwrap();
        for i in 0..=16 {
            fs::write(other.join(format!("set-{i:016x}.bin")), b"theirs").unwrap();
        }
        let moved = dir.with_extension("moved");
        let _ = fs::remove_dir_all(&moved);
        fs::rename(&dir, &moved).unwrap();
        std::os::unix::fs::symlink(&other, &dir).unwrap();
        owned
            .write(OsStr::new("set-mine.bin"), b"mine".to_vec())
            .unwrap();
        owned.prune("set-", 0);
        let theirs = fs::read_dir(&other).unwrap().count();
        assert_eq!(theirs, 17, "nothing written or pruned in the other folder");
        assert!(!moved.join("set-mine.bin").exists(), "pruned where written");
        owned
            .write(OsStr::new("set-mine.bin"), b"mine".to_vec())
            .unwrap();
        assert_eq!(&fs::read(moved.join("set-mine.bin")).unwrap()[..4], b"mine");
        for d in [&moved, &other] {
            fs::remove_dir_all(d).unwrap();
        }
        fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn the_most_recently_written_files_of_a_kind_are_kept() {
        let dir = scratch("prune");
        let owned = CacheDir::open(&dir, b"", 1).unwrap();
        for i in 0..=16 {
            let name = format!("set-{i:02}.bin");
            owned.write(OsStr::new(&name), b"s".to_vec()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        fs::write(dir.join("rules-old.bin"), b"d").unwrap();
        fs::write(dir.join("other.bin"), b"o").unwrap();
        owned.prune("set-", 16);
        owned.prune("rules-", 0);
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), 17, "{left:?}");
        assert_eq!(
            (left[0].as_str(), left[1].as_str()),
            ("other.bin", "set-01.bin")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
