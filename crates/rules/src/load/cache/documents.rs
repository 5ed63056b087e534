//! The document cache: each rule file's parsed YAML documents, kept between runs so
//! that a rule file read before is not parsed again.
//!
//! Parsing the YAML was half of loading the hayabusa rules; compiling what was parsed
//! is cheap once automata and regexes are built on first use (`matcher`). Compiled
//! automata and regexes cannot be written out (their crates offer no way), and need not
//! be: what the cache holds is exactly what the YAML parser gave, so a cached load
//! compiles the same values through the same code as a fresh one.
//!
//! One file per list of rule sources, `rules-<hash of the sources>.bin` in the cache
//! folder. An entry is keyed by a 128-bit hash of a rule file's text: a file edited,
//! added or removed misses, is parsed, and the cache is written anew with it. The
//! header names the cache format, the binary's version and the binary itself (size and
//! modification time), so another build never reads this one's cache.
//!
//! Nothing in it is trusted (the file as `cache` checks it), and any of its entries
//! that does not decode makes the whole cache ignored (the rules are parsed as if there
//! were none) and replaced.

use super::{
    codec, header, prune, read_trusted, sealed, unsealed, write_atomic, Unusable, MAX_CACHES,
};
use crate::fields::FxHashMap;
use crate::load::RuleSource;
use scanner_files::OwnedDir;
use std::ffi::OsString;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use yaml_serde::Value;

/// Bumped whenever the encoding or what the parser produces changes.
const FORMAT: u32 = 1;
const MAGIC: &[u8; 8] = b"SCNRULE\0";
/// How its files' names begin.
const PREFIX: &str = "rules-";

/// A rule file's text, hashed.
pub type Key = u128;

/// The key of a rule file's text: its CRC-32 and length beside a 64-bit multiplicative
/// hash of its words. Not a defence against a forger (whoever can write the rule files
/// chooses the rules anyway), but two texts an edit tells apart do not collide by
/// chance; and both are cheap (SipHash over the hayabusa rules' 8.6 MB cost 6% of a
/// cached load).
pub fn key(text: &str) -> Key {
    let mut h = crate::fields::FxHasher::default();
    h.write(text.as_bytes());
    let crc = u128::from(crc32fast::hash(text.as_bytes()));
    (crc << 96) ^ ((text.len() as u128 & 0xffff_ffff) << 64) ^ u128::from(h.finish())
}

/// An opened cache: its entries, where they lie in its bytes.
pub struct Cache {
    dir: Arc<OwnedDir>,
    name: OsString,
    /// The file's path, for messages.
    file: PathBuf,
    /// What this build writes after the magic, and expects to read there.
    header: Vec<u8>,
    data: Vec<u8>,
    entries: FxHashMap<Key, (usize, usize)>,
}

/// What could not be used, said once.
fn note(path: &Path, why: impl std::fmt::Display) -> String {
    format!("rule cache {}: {why}; rules parsed", path.display())
}

impl Cache {
    /// The cache of `sources` under `dir`: its entries when the file is there and
    /// sound, else none (with why, when a file was there).
    pub fn open(dir: &Arc<OwnedDir>, sources: &[RuleSource]) -> (Cache, Option<String>) {
        let name = OsString::from(format!("{PREFIX}{:016x}.bin", sources_hash(sources)));
        let mut cache = Cache {
            file: dir.shown(&name),
            dir: Arc::clone(dir),
            name,
            header: header(FORMAT),
            data: Vec::new(),
            entries: FxHashMap::default(),
        };
        let why = match read_trusted(&cache.dir, &cache.name) {
            Ok(None) => return (cache, None),
            Ok(Some(data)) => match index(&data, &cache.header) {
                Ok(entries) => {
                    cache.data = data;
                    cache.entries = entries;
                    return (cache, None);
                }
                // Written by another build (an upgrade): replaced without a word.
                Err(Unusable::OtherBuild) => return (cache, None),
                Err(Unusable::Damaged) => "damaged".to_string(),
            },
            Err(e) => e.to_string(),
        };
        let n = note(&cache.file, why);
        (cache, Some(n))
    }

    /// The cache file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The documents of the rule file of text `key`, when cached and sound.
    pub fn get(&self, key: Key) -> Option<Vec<Value>> {
        let mut r = codec::Reader::new(self.raw(key)?);
        let n = r.len().ok()?;
        let mut docs = Vec::with_capacity(n);
        for _ in 0..n {
            docs.push(r.value().ok()?);
        }
        r.is_done().then_some(docs)
    }

    /// The encoded documents of entry `key`, to carry into a new cache.
    pub fn raw(&self, key: Key) -> Option<&[u8]> {
        let &(start, end) = self.entries.get(&key)?;
        self.data.get(start..end)
    }

    /// Writes a cache of `entries` (each a key and its encoded documents, from
    /// [`encode_docs`] or [`Cache::raw`]) in place of this one.
    pub fn save<'e>(&self, entries: impl Iterator<Item = (Key, &'e [u8])>) -> io::Result<()> {
        let mut out = unsealed(MAGIC, &self.header, self.data.len().max(1 << 20));
        let count = out.len();
        out.extend_from_slice(&0u64.to_le_bytes());
        let mut n = 0u64;
        for (key, bytes) in entries {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(bytes);
            n += 1;
        }
        out[count..count + 8].copy_from_slice(&n.to_le_bytes());
        let out = sealed(out);
        write_atomic(&self.dir, &self.name, &out)?;
        prune(&self.dir, PREFIX, MAX_CACHES);
        Ok(())
    }
}

/// A rule file's documents, encoded for the cache.
pub fn encode_docs(docs: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    codec::put_len(docs.len(), &mut out);
    for d in docs {
        codec::encode(d, &mut out);
    }
    out
}

/// Which sources a cache file serves: their kinds and absolute paths.
fn sources_hash(sources: &[RuleSource]) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    for s in sources {
        match s {
            RuleSource::Builtin => "builtin".hash(&mut h),
            RuleSource::Path(p) => fs::canonicalize(p)
                .unwrap_or_else(|_| p.clone())
                .hash(&mut h),
            RuleSource::Text { name, .. } => name.hash(&mut h),
        }
    }
    h.finish()
}

/// The entries of a cache file's bytes (offsets into them), when its header is this
/// build's and its checksum holds.
fn index(data: &[u8], header: &[u8]) -> Result<FxHashMap<Key, (usize, usize)>, Unusable> {
    let body = super::body(data, MAGIC, header)?;
    let at = data.len() - 4 - body.len();
    entries(&data[..at + body.len()], at).ok_or(Unusable::Damaged)
}

/// The entries of `body` from `at` on, when every one lies within it.
fn entries(body: &[u8], mut at: usize) -> Option<FxHashMap<Key, (usize, usize)>> {
    let u64_at = |at: &mut usize| -> Option<u64> {
        let v = u64::from_le_bytes(body.get(*at..*at + 8)?.try_into().ok()?);
        *at += 8;
        Some(v)
    };
    let n = u64_at(&mut at)?;
    let mut entries = FxHashMap::default();
    for _ in 0..n {
        let key = u128::from_le_bytes(body.get(at..at + 16)?.try_into().ok()?);
        at += 16;
        let len = usize::try_from(u64_at(&mut at)?).ok()?;
        let end = at.checked_add(len).filter(|&e| e <= body.len())?;
        entries.insert(key, (at, end));
        at = end;
    }
    (at == body.len()).then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::super::folder;
    use super::*;

    /// A fresh cache folder: its path, and the folder opened as the caches open it.
    fn temp_dir(tag: &str) -> (PathBuf, Arc<OwnedDir>) {
        let d = std::env::temp_dir().join(format!("scanner-cache-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        let owned = folder(&d).unwrap();
        (d, owned)
    }

    fn docs(text: &str) -> Vec<Value> {
        crate::yaml::documents(text).map(Result::unwrap).collect()
    }

    #[test]
    fn entries_written_read_back_and_damage_is_ignored() {
        let (dir, owned) = temp_dir("rw");
        let sources = [RuleSource::Path(dir.clone())];
        let (cache, note) = Cache::open(&owned, &sources);
        assert_eq!(note, None, "no cache yet is no problem");
        let a = docs("title: a\ndetection: {s: {x: 1}, condition: s}\n---\ntitle: b\n");
        let (ka, kb) = (key("A"), key("B"));
        let ea = encode_docs(&a);
        cache.save([(ka, ea.as_slice())].into_iter()).unwrap();
        let (cache, note) = Cache::open(&owned, &sources);
        assert_eq!(note, None);
        assert_eq!(cache.get(ka), Some(a));
        assert_eq!(cache.get(kb), None);
        // Another list of sources has a cache of its own.
        let (other, _) = Cache::open(&owned, &[RuleSource::Builtin]);
        assert_ne!(other.file(), cache.file());
        assert_eq!(other.get(ka), None);
        // One byte changed anywhere: the whole cache is ignored, with why.
        let mut bytes = fs::read(cache.file()).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x20;
        fs::write(cache.file(), &bytes).unwrap();
        let (damaged, note) = Cache::open(&owned, &sources);
        assert_eq!(damaged.get(ka), None);
        assert!(note.unwrap().contains("damaged"));
        // A cut file likewise.
        fs::write(cache.file(), &bytes[..mid]).unwrap();
        assert!(Cache::open(&owned, &sources).1.is_some());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_others_could_write_or_a_link_is_not_read() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, owned) = temp_dir("trust");
        let sources = [RuleSource::Path(dir.clone())];
        let (cache, _) = Cache::open(&owned, &sources);
        let a = docs("title: a\n");
        cache
            .save([(key("A"), encode_docs(&a).as_slice())].into_iter())
            .unwrap();
        fs::set_permissions(cache.file(), fs::Permissions::from_mode(0o666)).unwrap();
        let (c, note) = Cache::open(&owned, &sources);
        assert_eq!(c.get(key("A")), None);
        assert!(note.unwrap().contains("writable by group or others"));
        // A link where the cache goes: not followed when read, replaced when written.
        let target = dir.join("elsewhere");
        fs::write(&target, b"keep").unwrap();
        fs::remove_file(cache.file()).unwrap();
        std::os::unix::fs::symlink(&target, cache.file()).unwrap();
        let (c, note) = Cache::open(&owned, &sources);
        assert!(note.is_some(), "a link is not read");
        c.save([(key("A"), encode_docs(&a).as_slice())].into_iter())
            .unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert!(fs::symlink_metadata(c.file()).unwrap().is_file());
        assert_eq!(Cache::open(&owned, &sources).0.get(key("A")), Some(a));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn another_builds_cache_is_replaced_without_a_word_and_old_caches_go() {
        let (dir, owned) = temp_dir("prune");
        let sources = [RuleSource::Path(dir.clone())];
        let (cache, _) = Cache::open(&owned, &sources);
        let mut other = MAGIC.to_vec();
        other.extend_from_slice(b"\x05\0\0\0other");
        fs::write(cache.file(), &other).unwrap();
        let (c, note) = Cache::open(&owned, &sources);
        assert_eq!((note, c.entries.len()), (None, 0));
        // Seventeen lists of sources: the least recently written cache goes.
        for i in 0..=MAX_CACHES {
            let (c, _) = Cache::open(&owned, &[RuleSource::Path(dir.join(i.to_string()))]);
            c.save(std::iter::empty()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let left = fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".bin")
            })
            .count();
        assert_eq!(left, MAX_CACHES);
        assert!(!cache.file().exists(), "the oldest went");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn keys_tell_texts_apart() {
        assert_ne!(key("title: a\n"), key("title: b\n"));
        assert_eq!(key("x"), key("x"));
    }

    /// The cache folder swapped for a link to another folder after it was opened (a
    /// race a local user with write access to its parent could run): the cache is
    /// written into, and pruned from, the folder opened, never the other.
    #[cfg(unix)]
    #[test]
    fn a_cache_folder_swapped_for_a_link_is_not_written_or_pruned_through() {
        let (dir, owned) = temp_dir("swapped");
        let sources = [RuleSource::Path(dir.clone())];
        let (cache, _) = Cache::open(&owned, &sources);
        let other = dir.with_extension("other");
        let _ = fs::remove_dir_all(&other);
        fs::create_dir(&other).unwrap();
        for i in 0..=MAX_CACHES {
            fs::write(other.join(format!("{PREFIX}{i:016x}.bin")), b"theirs").unwrap();
        }
        let moved = dir.with_extension("moved");
        let _ = fs::remove_dir_all(&moved);
        fs::rename(&dir, &moved).unwrap();
        std::os::unix::fs::symlink(&other, &dir).unwrap();
        cache
            .save([(key("A"), encode_docs(&docs("title: a\n")).as_slice())].into_iter())
            .unwrap();
        let theirs = fs::read_dir(&other).unwrap().count();
        assert_eq!(
            theirs,
            MAX_CACHES + 1,
            "nothing written or pruned in the other folder"
        );
        assert!(moved.join(cache.file().file_name().unwrap()).is_file());
        for d in [&moved, &other] {
            fs::remove_dir_all(d).unwrap();
        }
        fs::remove_file(&dir).unwrap();
    }
}
