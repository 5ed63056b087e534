//! One pass over an archive that is a stream (tar, tar.gz, tar.bz2, 7z): its members
//! cannot be reached but by reading through those before them, so the first worker to
//! ask for one of them copies every member the listing found in one pass, and each
//! worker then takes its own copy from here. A member asked for again (or whose
//! archive was not listed by this process) is copied by its own pass, as before.
//!
//! Copies are held in memory while they fit [`IN_MEMORY`] each and [`STASH_MEMORY`]
//! together, else in private files; each is dropped as its worker takes it.

use super::temp::IN_MEMORY;
use super::{Held, Refused};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// The most bytes of one archive's members held in memory at once (256 MiB).
pub(crate) const STASH_MEMORY: u64 = 256 << 20;

/// An archive in a stream: the archive on disk, and the members leading to it.
pub(super) type Key = (PathBuf, Box<[usize]>);

/// The members of one archive wanted, and their copies once its pass was made.
#[derive(Default)]
struct Stash {
    wanted: Vec<usize>,
    walked: bool,
    copies: HashMap<usize, Result<Held, Refused>>,
}

type Stashes = HashMap<Key, Arc<Mutex<Stash>>>;

static STASHES: Mutex<Option<Stashes>> = Mutex::new(None);

/// Notes that member `index` of the archive `key` is input, to be copied in its pass.
pub(super) fn want(key: Key, index: usize) {
    let mut all = STASHES.lock().unwrap_or_else(PoisonError::into_inner);
    let stash = all.get_or_insert_with(HashMap::new).entry(key).or_default();
    let mut stash = stash.lock().unwrap_or_else(PoisonError::into_inner);
    if !stash.wanted.contains(&index) {
        stash.wanted.push(index);
        stash.walked = false;
    }
}

/// Notes that member `index` of the archive `key` will not be read after all (the
/// channel check skipped it): its pass does not copy it.
pub(super) fn unwant(key: &Key, index: usize) {
    let all = STASHES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(stash) = all.as_ref().and_then(|a| a.get(key)) {
        let mut stash = stash.lock().unwrap_or_else(PoisonError::into_inner);
        stash.wanted.retain(|&i| i != index);
    }
}

/// What to do in an archive's one pass: copy the members listed (ascending), handing
/// each copy (or why it was not made) to the first function, the second telling from
/// a member's size whether it may be held in memory.
pub(super) type Pass<'a> = dyn FnOnce(&[usize], &mut dyn FnMut(usize, Result<Held, Refused>), &mut dyn FnMut(u64) -> bool)
    + 'a;

/// Member `index` of the archive `key`, from its one pass (made now, by `pass`, if it
/// was not yet); None when the pass does not hold it (not listed, or taken already).
pub(super) fn take(key: &Key, index: usize, pass: Box<Pass<'_>>) -> Option<Result<Held, Refused>> {
    let stash = {
        let all = STASHES.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(all.as_ref()?.get(key)?)
    };
    let mut stash = stash.lock().unwrap_or_else(PoisonError::into_inner);
    if !stash.walked && stash.wanted.contains(&index) {
        stash.walked = true;
        let mut wanted = std::mem::take(&mut stash.wanted);
        wanted.sort_unstable();
        let mut in_memory = 0u64;
        let copies = &mut stash.copies;
        pass(
            &wanted,
            &mut |i, copy| {
                copies.insert(i, copy);
            },
            &mut |size| {
                let fits = size <= IN_MEMORY && in_memory + size <= STASH_MEMORY;
                if fits {
                    in_memory += size;
                }
                fits
            },
        );
    }
    stash.copies.remove(&index)
}

#[cfg(test)]
mod tests {
    use super::super::{list, open, tarred::PASSES, Kind};
    use crate::evtx::test_log::TempFile;
    use std::io::Write;

    /// A tar.gz of `members` (name, bytes).
    fn tar_gz(members: &[(String, Vec<u8>)]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut b = tar::Builder::new(gz);
        for (name, bytes) in members {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, bytes.as_slice()).unwrap();
        }
        let mut gz = b.into_inner().unwrap();
        gz.flush().unwrap();
        gz.finish().unwrap()
    }

    /// The bytes of the copy `open` gives of `m`.
    fn bytes_of(path: &std::path::Path, m: &crate::Member) -> Vec<u8> {
        let (source, _copy) = open(path, m).unwrap().into_source().unwrap();
        let mut buf = vec![0; source.len().unwrap() as usize];
        assert_eq!(source.read_at(0, &mut buf).unwrap(), buf.len());
        buf
    }

    #[test]
    fn a_tar_gz_is_decompressed_once_for_all_its_members() {
        let members: Vec<(String, Vec<u8>)> = (0..5u8)
            .map(|i| {
                (
                    format!("logs/{i}.evtx"),
                    vec![i; 1000 + usize::from(i) * 300],
                )
            })
            .collect();
        let t = TempFile::new("stash.tar.gz", &tar_gz(&members));
        let listed = list(t.path(), Kind::TarGz, None);
        assert!(listed.errors.is_empty());
        assert_eq!(listed.members.len(), 5);
        PASSES.with(|p| p.set(0));
        // In the scan's order (largest first), not the stream's.
        for (m, _) in listed.members.iter().rev() {
            let i: usize = m.names().next().unwrap()[5..6].parse().unwrap();
            assert_eq!(bytes_of(t.path(), m), members[i].1, "member {i}");
        }
        assert_eq!(PASSES.with(|p| p.get()), 1, "one pass for the five members");
        // A member asked for again is copied by a pass of its own.
        let (m, _) = &listed.members[2];
        assert_eq!(bytes_of(t.path(), m), members[2].1);
        assert_eq!(PASSES.with(|p| p.get()), 2);
    }

    #[test]
    fn a_member_skipped_is_not_copied_by_the_pass() {
        let members: Vec<(String, Vec<u8>)> = (0..3u8)
            .map(|i| (format!("logs/{i}.evtx"), vec![i; 2000]))
            .collect();
        let t = TempFile::new("stash-skip.tar.gz", &tar_gz(&members));
        let listed = list(t.path(), Kind::TarGz, None);
        assert_eq!(listed.members.len(), 3);
        super::super::skip(t.path(), &listed.members[1].0);
        PASSES.with(|p| p.set(0));
        assert_eq!(bytes_of(t.path(), &listed.members[0].0), members[0].1);
        assert_eq!(bytes_of(t.path(), &listed.members[2].0), members[2].1);
        assert_eq!(PASSES.with(|p| p.get()), 1);
        let key = super::super::key(t.path(), &[]);
        let all = super::STASHES.lock().unwrap();
        let stash = all.as_ref().unwrap()[&key].lock().unwrap();
        assert!(
            stash.copies.is_empty(),
            "nothing held for the member skipped"
        );
    }
}
