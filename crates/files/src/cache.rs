//! Cache files scanner keeps between runs in a folder of the user's: what a load made
//! from files (the rule set cache is one), kept so that the next load with the same
//! inputs reads one file instead. A [`CheckedCache`] is one such file, for one key.
//!
//! - Key: what the content was made from besides the files (the caller's encoding of
//!   its sources and options). The file's name is a hash of it, and the file holds it
//!   whole: a file made for another key, even under the same name, is not used.
//! - Check: the statuses of every file and folder the load looked at ([`Inputs`]) are
//!   kept beside the content, and it is used only while all are as they were; none is
//!   read to tell. Content whose inputs changed within [`SETTLE`] of the load is not
//!   written at all (a later change could leave their times equal).
//! - Trust: a file is read only when it is a regular file (not followed if a link), the
//!   user's, writable by nobody else, at most [`MAX_CACHE_BYTES`], whose header names
//!   this very build and whose checksum holds. Its header names the caller's format,
//!   scanner's version and this very binary (its size and modification time), so a
//!   rebuilt binary never reads another build's file: what the caller encodes may
//!   follow its internal types without a format number being bumped.
//! - Writing: whole, to a private temporary file beside it, then renamed over it, so
//!   concurrent runs each see a whole file, old or new, and a planted link is replaced,
//!   never followed. The most recently written few of a kind are kept.
//!
//! What the content is, and whether the bytes decoded from it hold together, is the
//! caller's: it hands bytes in and takes bytes out.

use crate::{Error, FileMode, Inputs, Kind, OwnedDir, Seen, Why};
use std::cell::Cell;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Largest cache file read (the hayabusa rules' set takes about 6 MiB).
pub const MAX_CACHE_BYTES: u64 = 256 << 20;

/// How much older than the load every input's times must be for its content to be
/// written: past the coarsest time stamps of common file systems (FAT's 2 s), and of
/// a clock a little off on a network file system.
pub const SETTLE: Duration = Duration::from_secs(2);

/// A kind of cache file.
#[derive(Debug)]
pub struct CacheKind {
    /// What its files start with.
    pub magic: &'static [u8],
    /// The caller's format of its content (the header names the binary besides).
    pub format: u32,
    /// How its files' names begin (`<prefix><hash of the key>.bin`).
    pub prefix: &'static str,
    /// How many files of the kind a folder keeps (one per key); past it, the least
    /// recently written go.
    pub keep: usize,
}

/// The cache file of one key, in a folder opened once: every later read, write and
/// removal is relative to its handle, so a folder swapped for a link meanwhile is never
/// written.
pub struct CheckedCache {
    dir: OwnedDir,
    kind: &'static CacheKind,
    name: OsString,
    /// What the file starts with: the kind's magic and the header naming this build.
    start: Vec<u8>,
    key: Vec<u8>,
    /// Room to write the file in: the size of the one read, else a guess.
    capacity: Cell<usize>,
}

/// Why a cache file served nothing.
#[derive(Debug)]
pub enum Miss {
    /// Nothing is there.
    Missing,
    /// Another format, version or binary wrote it (an upgrade): to be replaced without
    /// a word.
    OtherBuild,
    /// It was made for another key.
    OtherKey,
    /// This file or folder is not as it was.
    Changed(PathBuf),
    /// Something is there that must not be used: a link, not a regular file, another
    /// owner, writable by others, too large, or damaged (`damaged`: the checksum,
    /// layout or the caller's decoding does not hold).
    Unusable(io::Error),
}

/// Why a cache file was not written.
#[derive(Debug)]
pub enum NotWritten {
    /// An input changed too recently to vouch for the content (or its status cannot be
    /// told on this system).
    Unsettled(PathBuf),
    /// A path was seen twice with different statuses during the load.
    ChangedWhileLoading,
    /// The content or its inputs could not be encoded (a path that is not UTF-8).
    Encode(Box<dyn std::error::Error + Send + Sync>),
    /// The file could not be written.
    Io(io::Error),
}

impl std::fmt::Display for NotWritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotWritten::Unsettled(p) => write!(
                f,
                "{} changed within {} s of the load",
                p.display(),
                SETTLE.as_secs()
            ),
            NotWritten::ChangedWhileLoading => f.write_str("a file changed while loading"),
            NotWritten::Encode(e) => write!(f, "cannot encode: {e}"),
            NotWritten::Io(e) => e.fmt(f),
        }
    }
}

impl From<postcard::Error> for NotWritten {
    fn from(e: postcard::Error) -> NotWritten {
        NotWritten::Encode(Box::new(e))
    }
}

impl CheckedCache {
    /// The cache file of `kind` for `key` in the folder `dir`, made (private) if
    /// missing; an error when the folder must not be trusted (a link, another user's,
    /// writable by others).
    pub fn open(dir: &Path, kind: &'static CacheKind, key: Vec<u8>) -> Result<Self, Error> {
        let dir = OwnedDir::create(dir)?;
        let mut h = std::hash::DefaultHasher::new();
        key.hash(&mut h);
        let name = OsString::from(format!("{}{:016x}.bin", kind.prefix, h.finish()));
        let mut start = kind.magic.to_vec();
        start.extend_from_slice(&header(kind.format));
        Ok(CheckedCache {
            dir,
            kind,
            name,
            start,
            key,
            capacity: Cell::new(8 << 20),
        })
    }

    /// The file's path, for messages.
    pub fn file(&self) -> PathBuf {
        self.dir.shown(&self.name)
    }

    /// What the file holds for this key, decoded by `decode` while the files and
    /// folders it was made from are checked (system calls beside memory), with how many
    /// those are; `read` is called once the file is read and its key matched.
    /// Content decoded for nothing is dropped; `decode` giving `None` makes the file
    /// damaged.
    pub fn find<T>(
        &self,
        read: impl FnOnce(),
        decode: impl FnOnce(&[u8]) -> Option<T>,
    ) -> Result<(T, usize), Miss> {
        let damaged = || Miss::Unusable(io::Error::other("damaged"));
        let data = match read_trusted(&self.dir, &self.name) {
            Ok(Some(data)) => data,
            Ok(None) => return Err(Miss::Missing),
            Err(e) => return Err(Miss::Unusable(e)),
        };
        self.capacity.set(data.len() + (data.len() >> 4));
        let rest = data.strip_prefix(&self.start[..]).ok_or(Miss::OtherBuild)?;
        let (body, sum) = rest.split_last_chunk::<4>().ok_or_else(damaged)?;
        if crc32fast::hash(&data[..data.len() - 4]) != u32::from_le_bytes(*sum) {
            return Err(damaged());
        }
        let Some(rest) = split_section(body).filter(|k| k.0 == self.key).map(|k| k.1) else {
            return Err(Miss::OtherKey);
        };
        let Ok((inputs, rest)) = postcard::take_from_bytes::<Inputs>(rest) else {
            return Err(damaged());
        };
        read();
        let (changed, value) = std::thread::scope(|s| {
            let checking = s.spawn(|| inputs.changed().map(|i| i.path().to_path_buf()));
            let value = decode(rest);
            let changed = checking
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (changed, value)
        });
        if let Some(path) = changed {
            return Err(Miss::Changed(path));
        }
        value.map(|v| (v, inputs.len())).ok_or_else(damaged)
    }

    /// Writes the content `encode` appends to the bytes it is given, with the key and
    /// what the load that made it saw (`seen`; the load began at `started`), and prunes
    /// the folder; how many paths it lists.
    pub fn keep<E: std::error::Error + Send + Sync + 'static>(
        &self,
        seen: Seen,
        started: SystemTime,
        encode: impl FnOnce(Vec<u8>) -> Result<Vec<u8>, E>,
    ) -> Result<usize, NotWritten> {
        let inputs = seen.into_inputs().ok_or(NotWritten::ChangedWhileLoading)?;
        inputs
            .settled(started, SETTLE)
            .map_err(|i| NotWritten::Unsettled(i.path().to_path_buf()))?;
        // Written in place, in the order read: the key, the inputs, the content.
        let mut out = Vec::with_capacity(self.capacity.get());
        out.extend_from_slice(&self.start);
        out.extend_from_slice(&(self.key.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.key);
        let out = postcard::to_extend(&inputs, out)?;
        let mut out = encode(out).map_err(|e| NotWritten::Encode(Box::new(e)))?;
        let sum = crc32fast::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        write_atomic(&self.dir, &self.name, &out).map_err(NotWritten::Io)?;
        self.prune(self.kind.prefix, self.kind.keep);
        Ok(inputs.len())
    }

    /// Removes all but the `keep` most recently written files of the folder named
    /// `<prefix>…bin` (regular files only; links and anything else are left alone):
    /// also those of a kind no longer written.
    pub fn prune(&self, prefix: &str, keep: usize) {
        let Ok(list) = self.dir.entries() else { return };
        let mut caches: Vec<(SystemTime, OsString)> = list
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

/// The section at the start of `bytes` (its length, 8 bytes, then as many bytes), and
/// the bytes after it: how the key is kept, and how a caller may keep a section of its
/// own.
pub fn split_section(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    (len <= rest.len()).then(|| rest.split_at(len))
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

/// Writes `bytes` as the file `name` of `dir`: to a private file made there
/// exclusively, then renamed over it. A link planted at the name is removed, never
/// followed.
fn write_atomic(dir: &OwnedDir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    if let Ok(Some(e)) = dir.entry(name) {
        if e.kind == Kind::Link {
            dir.remove(name).map_err(why)?;
        }
    }
    dir.write(name, true, FileMode::Exactly(0o600), |f| f.write_all(bytes))
        .map_err(why)
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

    static KIND: CacheKind = CacheKind {
        magic: b"TEST\0",
        format: 1,
        prefix: "t-",
        keep: 16,
    };
    #[cfg(unix)]
    static OTHER: CacheKind = CacheKind { format: 2, ..KIND };

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("scanner-cache-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    /// Writes `body` under `key`, having seen `seen`, as a load long after it.
    fn keep(cache: &CheckedCache, seen: Seen, body: &[u8]) -> Result<usize, NotWritten> {
        let later = SystemTime::now() + 2 * SETTLE;
        cache.keep(seen, later, |mut out| {
            out.extend_from_slice(body);
            Ok::<_, io::Error>(out)
        })
    }

    #[cfg(unix)]
    fn found(cache: &CheckedCache) -> Result<(Vec<u8>, usize), Miss> {
        cache.find(|| {}, |b| (b != b"bad").then(|| b.to_vec()))
    }

    // Unix only: elsewhere inputs have no change time and inode (`Stat::of`), so a cache
    // is never kept.
    #[cfg(unix)]
    #[test]
    fn content_is_read_back_for_its_key_while_its_inputs_are_unchanged() {
        let d = scratch("round");
        let cache = CheckedCache::open(&d, &KIND, b"key".to_vec()).unwrap();
        assert!(matches!(found(&cache), Err(Miss::Missing)));
        let input = d.join("input.txt");
        fs::write(&input, "a").unwrap();
        let seen = Seen::on();
        seen.stat(&input);
        assert_eq!(keep(&cache, seen, b"body").unwrap(), 1);
        assert_eq!(found(&cache).unwrap(), (b"body".to_vec(), 1));

        let other = CheckedCache::open(&d, &OTHER, b"key".to_vec()).unwrap();
        assert!(matches!(found(&other), Err(Miss::OtherBuild)));
        let elsewhere = CheckedCache::open(&d, &KIND, b"other key".to_vec()).unwrap();
        fs::copy(cache.file(), elsewhere.file()).unwrap();
        assert!(matches!(found(&elsewhere), Err(Miss::OtherKey)));

        let good = fs::read(cache.file()).unwrap();
        let mut bad = good.clone();
        bad[good.len() - 6] ^= 1;
        fs::write(cache.file(), &bad).unwrap();
        let e = found(&cache).unwrap_err();
        assert!(
            matches!(&e, Miss::Unusable(e) if e.to_string() == "damaged"),
            "{e:?}"
        );
        fs::write(cache.file(), &good[..good.len() - 5]).unwrap();
        assert!(matches!(found(&cache), Err(Miss::Unusable(_))));
        keep(&cache, Seen::on(), b"bad").unwrap();
        assert!(
            matches!(found(&cache), Err(Miss::Unusable(_))),
            "refused by the caller"
        );

        let seen = Seen::on();
        seen.stat(&input);
        keep(&cache, seen, b"body").unwrap();
        fs::write(&input, "b").unwrap();
        assert!(matches!(found(&cache), Err(Miss::Changed(p)) if p == input));
        fs::remove_dir_all(&d).unwrap();
    }

    // Unix only: elsewhere inputs have no change time and inode (`Stat::of`), so a cache
    // is never kept.
    #[cfg(unix)]
    #[test]
    fn recent_or_changing_inputs_are_not_vouched_for() {
        let d = scratch("recent");
        let cache = CheckedCache::open(&d, &KIND, b"key".to_vec()).unwrap();
        let input = d.join("input.txt");
        fs::write(&input, "a").unwrap();
        let seen = Seen::on();
        seen.stat(&input);
        let now = cache.keep(seen, SystemTime::now(), Ok::<_, io::Error>);
        let e = now.unwrap_err().to_string();
        assert!(e.ends_with("changed within 2 s of the load"), "{e}");
        let seen = Seen::on();
        seen.stat(&input);
        fs::write(&input, "longer").unwrap();
        seen.stat(&input);
        assert!(matches!(
            keep(&cache, seen, b""),
            Err(NotWritten::ChangedWhileLoading)
        ));
        assert!(!cache.file().exists());
        fs::remove_dir_all(&d).unwrap();
    }

    /// The cache folder swapped for a link to another folder after it was opened (a
    /// race a local user with write access to its parent could run): a cache is
    /// written into, and pruned from, the folder opened, never the other.
    #[cfg(unix)]
    #[test]
    fn a_cache_folder_swapped_for_a_link_is_not_written_or_pruned_through() {
        let dir = scratch("swap");
        let owned = CheckedCache::open(&dir, &KIND, b"mine".to_vec()).unwrap();
        let other = dir.with_extension("other");
        let _ = fs::remove_dir_all(&other);
        fs::create_dir(&other).unwrap();
        for i in 0..=16 {
            fs::write(other.join(format!("t-{i:016x}.bin")), b"theirs").unwrap();
        }
        let moved = dir.with_extension("moved");
        let _ = fs::remove_dir_all(&moved);
        fs::rename(&dir, &moved).unwrap();
        std::os::unix::fs::symlink(&other, &dir).unwrap();
        keep(&owned, Seen::on(), b"mine").unwrap();
        owned.prune("t-", 0);
        let theirs = fs::read_dir(&other).unwrap().count();
        assert_eq!(theirs, 17, "nothing written or pruned in the other folder");
        assert_eq!(
            fs::read_dir(&moved).unwrap().count(),
            0,
            "pruned where written"
        );
        keep(&owned, Seen::on(), b"mine").unwrap();
        assert_eq!(fs::read_dir(&moved).unwrap().count(), 1);
        for d in [&moved, &other] {
            fs::remove_dir_all(d).unwrap();
        }
        fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn the_most_recently_written_files_of_a_kind_are_kept() {
        let dir = scratch("prune");
        for i in 0..=16 {
            let cache = CheckedCache::open(&dir, &KIND, vec![i]).unwrap();
            keep(&cache, Seen::on(), b"s").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let first = CheckedCache::open(&dir, &KIND, vec![0]).unwrap();
        let second = CheckedCache::open(&dir, &KIND, vec![1]).unwrap();
        assert!(!first.file().exists() && second.file().exists());
        fs::write(dir.join("rules-old.bin"), b"d").unwrap();
        fs::write(dir.join("other.bin"), b"o").unwrap();
        second.prune("rules-", 0);
        let left = fs::read_dir(&dir).unwrap().count();
        assert_eq!(left, 16 + 1, "16 of the kind and other.bin");
        assert!(dir.join("other.bin").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
