//! The rule set cache, kept between runs in the user's cache folder so that rules
//! loaded before load fast (`set`): the whole loaded set, compiled, with the list of
//! every file and folder the load looked at and their statuses. A load with the same
//! sources and options that finds each of them as it was reads the set from it and
//! nothing else: no rule file is read, nothing compiled. The loader sees one type,
//! [`SetCache`]: `open` it for a load's sources and options, `find` the set there, or
//! `keep` the set loaded from the files; what it did goes into the load report.
//!
//! A cache file is read only when it can be trusted (this module): a regular file (not
//! followed if a link), the user's, writable by nobody else, at most
//! [`MAX_CACHE_BYTES`], whose header names this very build and whose checksum holds.
//! Anything else is ignored, said in a note, and replaced; another build's file is
//! replaced without a word. Files are written whole to a private temporary file beside
//! them, then renamed over them, so concurrent runs each see a whole file, old or new,
//! and a planted link is replaced, never followed. The [`MAX_CACHES`] most recently
//! written files are kept.

mod set;
mod sound;

pub(super) use set::SetCache;

use scanner_files::{FileMode, Kind, OwnedDir, Why};
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

/// Largest cache file read (the hayabusa rules' set takes about 6 MiB).
const MAX_CACHE_BYTES: u64 = 256 << 20;

/// Cache files kept in the folder (one per list of rule sources and options); past
/// it, the least recently written go.
const MAX_CACHES: usize = 16;

/// Removes all but the `keep` most recently written cache files of `dir` named
/// `<prefix>…bin` (regular files only; links and anything else are left alone).
fn prune(dir: &OwnedDir, prefix: &str, keep: usize) {
    let Ok(list) = dir.entries() else { return };
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
        let _ = dir.remove(name);
    }
}

/// What a cache must have been written by: this format of it, this version of
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

/// Why a cache file's bytes cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unusable {
    /// Another format, version or binary wrote it.
    OtherBuild,
    /// Its checksum or layout does not hold.
    Damaged,
}

/// The body of a cache file's bytes (between the header and the checksum), when they
/// start with `magic` and `header` and the checksum over all before it holds.
fn body<'d>(data: &'d [u8], magic: &[u8], header: &[u8]) -> Result<&'d [u8], Unusable> {
    let rest = data
        .strip_prefix(magic)
        .and_then(|r| r.strip_prefix(header))
        .ok_or(Unusable::OtherBuild)?;
    let at = data.len() - rest.len();
    let end = data.len().checked_sub(4).filter(|&e| e >= at);
    let end = end.ok_or(Unusable::Damaged)?;
    let (all, sum) = data.split_at(end);
    let sum = u32::from_le_bytes(sum.try_into().map_err(|_| Unusable::Damaged)?);
    if crc32fast::hash(all) != sum {
        return Err(Unusable::Damaged);
    }
    Ok(&data[at..end])
}

/// The start of a cache file's bytes: `magic` and `header`, with room for `capacity`
/// bytes in all; the body follows, then [`sealed`] appends the checksum.
fn unsealed(magic: &[u8], header: &[u8], capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity.max(magic.len() + header.len() + 4));
    out.extend_from_slice(magic);
    out.extend_from_slice(header);
    out
}

/// A cache file's bytes: `out` and the checksum over them.
fn sealed(mut out: Vec<u8>) -> Vec<u8> {
    let sum = crc32fast::hash(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The bytes of the cache file `name` of `dir`; `None` when there is none. An error
/// when something is there that must not be trusted: a link, not a regular file,
/// another owner, writable by others, too large.
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
fn why(e: scanner_files::Error) -> io::Error {
    match e.why() {
        Why::Io(io) => io::Error::new(io.kind(), io.to_string()),
        other => io::Error::other(other.to_string()),
    }
}

/// An error unless the file or folder is the user's and writable by nobody else.
#[cfg(unix)]
fn untrusted_owner(meta: &fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // The check every folder scanner keeps passes; the cache's notes keep their words.
    scanner_files::trusted(meta.uid(), meta.mode()).map_err(|w| match w {
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

/// The cache folder, made (private) if missing, opened once; an error when it must not
/// be trusted (a link, another user's, writable by others). Every later read, write
/// and removal is relative to the handle, so a folder swapped for a link meanwhile is
/// never written.
fn folder(dir: &Path) -> Result<Arc<OwnedDir>, scanner_files::Error> {
    OwnedDir::create(dir).map(Arc::new)
}

/// Writes `bytes` as the cache file `name` of `dir`: to a private file made there
/// exclusively, then renamed over it. A link planted at the name is removed, never
/// followed.
fn write_atomic(dir: &OwnedDir, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
    if let Ok(Some(e)) = dir.entry(name) {
        if e.kind == Kind::Link {
            dir.remove(name).map_err(why)?;
        }
    }
    dir.write(name, true, FileMode::Exactly(0o600), |f| f.write_all(bytes))
        .map(drop)
        .map_err(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache folder swapped for a link to another folder after it was opened (a
    /// race a local user with write access to its parent could run): a cache is
    /// written into, and pruned from, the folder opened, never the other.
    #[cfg(unix)]
    #[test]
    fn a_cache_folder_swapped_for_a_link_is_not_written_or_pruned_through() {
        let dir = std::env::temp_dir().join(format!("scanner-cache-swap-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let owned = folder(&dir).unwrap();
        let other = dir.with_extension("other");
        let _ = fs::remove_dir_all(&other);
        fs::create_dir(&other).unwrap();
        for i in 0..=MAX_CACHES {
            fs::write(other.join(format!("set-{i:016x}.bin")), b"theirs").unwrap();
        }
        let moved = dir.with_extension("moved");
        let _ = fs::remove_dir_all(&moved);
        fs::rename(&dir, &moved).unwrap();
        std::os::unix::fs::symlink(&other, &dir).unwrap();
        write_atomic(&owned, OsStr::new("set-mine.bin"), b"mine").unwrap();
        prune(&owned, "set-", 0);
        let theirs = fs::read_dir(&other).unwrap().count();
        assert_eq!(
            theirs,
            MAX_CACHES + 1,
            "nothing written or pruned in the other folder"
        );
        assert!(!moved.join("set-mine.bin").exists(), "pruned where written");
        write_atomic(&owned, OsStr::new("set-mine.bin"), b"mine").unwrap();
        assert_eq!(fs::read(moved.join("set-mine.bin")).unwrap(), b"mine");
        for d in [&moved, &other] {
            fs::remove_dir_all(d).unwrap();
        }
        fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn the_most_recently_written_files_of_a_kind_are_kept() {
        let dir = std::env::temp_dir().join(format!("scanner-cache-prune-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let owned = folder(&dir).unwrap();
        for i in 0..=MAX_CACHES {
            write_atomic(&owned, OsStr::new(&format!("set-{i:02}.bin")), b"s").unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        fs::write(dir.join("rules-old.bin"), b"d").unwrap();
        fs::write(dir.join("other.bin"), b"o").unwrap();
        prune(&owned, "set-", MAX_CACHES);
        prune(&owned, "rules-", 0);
        let mut left: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), MAX_CACHES + 1, "{left:?}");
        assert_eq!(
            (left[0].as_str(), left[1].as_str()),
            ("other.bin", "set-01.bin")
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
