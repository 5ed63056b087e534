//! Zip archives (the `zip` crate: deflate, deflate64, bzip2, LZMA, zip64, AES and
//! ZipCrypto): listing their members, and copying one into a private file.

use super::positioned::Positioned;
use super::temp::{Held, IN_MEMORY};
use super::{
    bounded, classify, head_len, is_archive_name, refuse, shown_name, Kind, Listed, Password,
    Place, Refused, MAX_MEMBERS,
};
use crate::not_read::taken_by_extension;
use flate2::{Decompress, FlushDecompress, Status};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use zip::result::ZipError;
use zip::{CompressionMethod, ZipArchive};

/// A zip on disk, read through [`Positioned`].
type Zip = ZipArchive<Positioned>;

/// The zip `file`, its central directory read; or why it cannot be.
fn open_zip(file: File) -> Result<Zip, Refused> {
    let file = Positioned::new(file).map_err(|e| Refused::of(format!("cannot read: {e}")))?;
    ZipArchive::new(file).map_err(|e| Refused::of(format!("not a readable zip archive: {e}")))
}

/// Lists the zip `file` at `at` into `out`.
pub(super) fn list(file: File, at: &Place<'_>, out: &mut Listed) {
    let mut zip = match open_zip(file) {
        Ok(z) => z,
        Err(why) => {
            out.errors.push(at.error(why));
            return;
        }
    };

    if zip.len() > MAX_MEMBERS {
        out.errors.push(at.error(format!(
            "lists {} entries, more than the {MAX_MEMBERS} read; not read",
            zip.len()
        )));
        return;
    }
    if at.steps.is_empty() {
        keep_listed(at.archive, &zip);
    }
    // Velociraptor's collections keep their own records (uploads.json, log.json,
    // collection_context.json, …) as JSON at the top, beside the uploads/ folder.
    let collection = zip.file_names().any(|n| n.starts_with("uploads/"));
    let mut total = 0u64;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map(|f| {
            let raw = f.name_raw().to_vec();
            (
                raw,
                f.size(),
                f.compressed_size(),
                f.encrypted(),
                f.is_dir(),
                f.is_symlink(),
            )
        });
        let (raw, size, packed, encrypted, dir, link) = match entry {
            Ok(e) => e,
            Err(e) => {
                out.errors.push(at.error(format!("entry {}: {e}", i + 1)));
                continue;
            }
        };
        if dir {
            continue;
        }
        let name = shown_name(&raw);
        let here = at.member_at(Kind::Zip, i, &name);
        let path = Path::new(&name);
        if link {
            // A link's target is text in the archive; it is never followed.
            out.not_read.add(path);
            continue;
        }
        let metadata = collection && !name.contains('/') && taken_by_extension(path);
        if metadata {
            out.not_read.add(path);
            continue;
        }
        total = total.saturating_add(size);
        if let Err(why) = bounded(size, packed, total) {
            out.errors.push(here.error(why));
            continue;
        }
        let wanted = taken_by_extension(path) || is_archive_name(path);
        if encrypted && at.password.is_none() {
            if wanted {
                out.errors.push(
                    here.error(
                        "encrypted, and no password was given (--archive-password); not read",
                    ),
                );
            } else {
                out.not_read.add(path);
            }
            continue;
        }
        let head = match head(&mut zip, i, at.password) {
            Ok(h) => h,
            Err(why) => {
                out.errors.push(here.error(why));
                continue;
            }
        };
        classify(&head, &here, path, size, out, || {
            copy(&mut zip, i, at.password, false)
        });
    }
}

/// Opens member `i` of `zip` for reading, decrypted with `password` when it is
/// encrypted.
fn member<'z>(
    zip: &'z mut Zip,
    i: usize,
    password: Option<&Password>,
) -> Result<zip::read::ZipFile<'z, Positioned>, Refused> {
    match password {
        Some(p) => zip.by_index_decrypt(i, p.bytes()),
        None => zip.by_index(i),
    }
    .map_err(|e| Refused(why(&e)))
}

/// What a zip error means for a member.
fn why(e: &ZipError) -> String {
    match e {
        ZipError::InvalidPassword => {
            "encrypted, and the password given does not open it; not read".into()
        }
        ZipError::UnsupportedArchive(m) if *m == ZipError::PASSWORD_REQUIRED => {
            "encrypted, and no password was given (--archive-password); not read".into()
        }
        ZipError::UnsupportedArchive(m) => format!("not readable: {m}"),
        e => format!("damaged: {e}"),
    }
}

/// The first bytes of member `i`.
fn head(zip: &mut Zip, i: usize, password: Option<&Password>) -> Result<Vec<u8>, Refused> {
    let mut m = member(zip, i, password)?;
    let n = head_len(m.size());
    let mut head = Vec::with_capacity(n as usize);
    (&mut m)
        .take(n)
        .read_to_end(&mut head)
        .map_err(|e| Refused::of(format!("damaged: {e}")))?;
    Ok(head)
}

/// Copies member `i` of `zip`, within the bounds, in memory when `read` allows it
/// ([`Held::new`]), else into a private file, rewound.
fn copy(zip: &mut Zip, i: usize, password: Option<&Password>, read: bool) -> Result<Held, Refused> {
    if read && password.is_none() {
        if let Some(copy) = inflate_whole(zip, i) {
            return Ok(copy);
        }
    }
    let mut m = member(zip, i, password)?;
    let (declared, packed) = (m.size(), m.compressed_size());
    bounded(declared, packed, 0)?;
    let mut copy = Held::new(declared, read)?;
    let n = copy.fill(&[], &mut m, declared + 1)?;
    if n > declared {
        return refuse(format!(
            "holds more than the {declared} bytes its header declares; not read"
        ));
    }
    if n < declared {
        return refuse(format!(
            "holds {n} of the {declared} bytes its header declares (damaged); not read"
        ));
    }
    Ok(copy)
}

/// A deflated member of at most [`IN_MEMORY`] bytes, not encrypted, inflated in one
/// call from its compressed bytes (read whole, with one read) straight into the memory
/// it is scanned from: no window kept between calls, no buffer between the reader and
/// the inflater, no zeroing of the memory first. `None` for any other member, and for
/// any member this does not read whole and intact (its bytes or checksum not those its
/// header declares, its stream not ending where it should): [`copy`] then reads it
/// through the `zip` crate's reader, which says what is wrong as before.
fn inflate_whole(zip: &mut Zip, i: usize) -> Option<Held> {
    let mut m = zip.by_index_raw(i).ok()?;
    let (declared, packed, crc) = (m.size(), m.compressed_size(), m.crc32());
    let plain = m.compression() == CompressionMethod::Deflated && !m.encrypted();
    if !plain || declared > IN_MEMORY || packed > IN_MEMORY || bounded(declared, packed, 0).is_err()
    {
        return None;
    }
    INFLATE.with(|cell| {
        let (room, inflater) = &mut *cell.borrow_mut();
        // The room is kept initialised: grown (and zeroed) only past its largest yet.
        if room.len() < packed as usize {
            room.resize(packed as usize, 0);
        }
        let mut inflate = || {
            let raw = &mut room[..packed as usize];
            m.read_exact(raw).ok()?;
            inflater.reset(false);
            // One byte of room past the declared size: a member holding more fails.
            let mut out = Vec::with_capacity(declared as usize + 1);
            let status = inflater
                .decompress_vec(raw, &mut out, FlushDecompress::Finish)
                .ok()?;
            let whole = status == Status::StreamEnd
                && out.len() as u64 == declared
                && crc32fast::hash(&out) == crc;
            whole.then_some(Held::Memory(out))
        };
        let copy = inflate();
        if room.len() > KEEP_RAW {
            *room = Vec::new();
        }
        copy
    })
}

/// The most compressed bytes a thread keeps room for between members (8 MiB).
const KEEP_RAW: usize = 8 << 20;

thread_local! {
    /// A thread's room for a member's compressed bytes, and its inflater (raw deflate,
    /// as zip members are), both reused from member to member.
    static INFLATE: std::cell::RefCell<(Vec<u8>, Decompress)> =
        std::cell::RefCell::new((Vec::new(), Decompress::new(false)));
}

thread_local! {
    /// The zip on disk this thread read a member of last, its central directory read:
    /// the next member of the same archive is reached without reading it again (a
    /// collection's members are scanned one after another).
    static LAST: std::cell::RefCell<Option<(PathBuf, Zip)>> =
        const { std::cell::RefCell::new(None) };
}

/// The zips on disk listed last, central directory read, that the scan's threads take
/// a clone of (sharing the directory read, the file, each with its own position)
/// rather than read the directory again, each (8,310 entries: some 30 ms). At most
/// [`LISTED_KEPT`] archives of [`MAX_MEMBERS`] entries together, the oldest let go
/// first: each holds its archive open and its directory in memory.
static LISTED: Mutex<Vec<(PathBuf, Zip)>> = Mutex::new(Vec::new());

/// How many listed zips [`LISTED`] keeps.
const LISTED_KEPT: usize = 16;

/// Keeps `zip`, the archive on disk at `path` just listed, for the scan's threads.
fn keep_listed(path: &Path, zip: &Zip) {
    let mut listed = LISTED.lock().unwrap_or_else(PoisonError::into_inner);
    listed.retain(|(p, _)| p != path);
    listed.push((path.to_path_buf(), zip.clone()));
    let entries = |l: &Vec<(PathBuf, Zip)>| l.iter().map(|(_, z)| z.len()).sum::<usize>();
    while listed.len() > LISTED_KEPT || entries(&listed) > MAX_MEMBERS {
        listed.remove(0);
    }
}

/// A clone of the zip on disk at `path` as listed, if kept.
fn listed(path: &Path) -> Option<Zip> {
    let listed = LISTED.lock().unwrap_or_else(PoisonError::into_inner);
    listed
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, z)| z.clone())
}

/// Copies member `index` of the zip on disk at `path` ([`copy`]).
pub(super) fn extract_at(
    path: &Path,
    index: usize,
    password: Option<&Password>,
    read: bool,
) -> Result<Held, Refused> {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if last.as_ref().is_none_or(|(p, _)| p != path) {
            *last = None;
            let zip = match listed(path) {
                Some(zip) => zip,
                None => {
                    let file =
                        File::open(path).map_err(|e| Refused::of(format!("cannot open: {e}")))?;
                    open_zip(file)?
                }
            };
            *last = Some((path.to_path_buf(), zip));
        }
        let (_, zip) = last.as_mut().expect("just opened");
        copy(zip, index, password, read)
    })
}

/// Copies member `index` of the zip `file` ([`copy`]).
pub(super) fn extract(
    file: File,
    index: usize,
    password: Option<&Password>,
    read: bool,
) -> Result<Held, Refused> {
    let mut zip = open_zip(file)?;
    copy(&mut zip, index, password, read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evtx::test_log::TempFile;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    /// A zip of one member, `bytes` under `method`.
    fn zip_of(bytes: &[u8], method: CompressionMethod) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = SimpleFileOptions::default().compression_method(method);
        w.start_file("Security.evtx", o).unwrap();
        w.write_all(bytes).unwrap();
        w.finish().unwrap().into_inner()
    }

    /// Writes `value` at `local` in the local header and `central` in the central
    /// directory entry of the zip of one member.
    fn patch(zip: &mut [u8], local: usize, central: usize, value: u32) {
        let c = zip.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
        zip[local..local + 4].copy_from_slice(&value.to_le_bytes());
        zip[c + central..c + central + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// What reading member 0 of `zip` gives: whether it was inflated whole, and the
    /// copy's bytes or the refusal.
    fn read(name: &str, zip: &[u8]) -> (bool, Result<Vec<u8>, String>) {
        let t = TempFile::new(name, zip);
        let mut z = open_zip(File::open(t.path()).unwrap()).unwrap();
        let whole = inflate_whole(&mut z, 0).is_some();
        let copy = copy(&mut z, 0, None, true).map_err(|r| r.0);
        let bytes = copy.map(|c| match c {
            Held::Memory(b) => b,
            Held::File(_) => panic!("held in a file"),
        });
        (whole, bytes)
    }

    #[test]
    fn a_listed_zip_is_kept_for_the_threads_that_read_its_members() {
        let log: Vec<u8> = (0..70_000u32)
            .flat_map(|i| (i % 241).to_le_bytes())
            .collect();
        let t = TempFile::new("kept.zip", &zip_of(&log, CompressionMethod::Deflated));
        assert!(listed(t.path()).is_none());
        let out = super::super::list(t.path(), super::super::Kind::Zip, None);
        assert_eq!(out.members.len(), 1);
        assert_eq!(listed(t.path()).map(|z| z.len()), Some(1));
        // Read on another thread, from the clone.
        let path = t.path().to_path_buf();
        let got = std::thread::spawn(move || match extract_at(&path, 0, None, true) {
            Ok(Held::Memory(b)) => b,
            _ => panic!("not read into memory"),
        });
        assert_eq!(got.join().unwrap(), log);
    }

    #[test]
    fn deflated_members_are_inflated_whole_and_the_rest_as_before() {
        let log: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let deflated = zip_of(&log, CompressionMethod::Deflated);
        assert_eq!(read("whole.zip", &deflated), (true, Ok(log.clone())));

        // Stored: through the crate's reader.
        let stored = zip_of(&log, CompressionMethod::Stored);
        assert_eq!(read("stored.zip", &stored), (false, Ok(log.clone())));

        // A checksum that does not match: the crate's reader says so.
        let mut bad = deflated.clone();
        patch(&mut bad, 14, 16, 0xDEAD_BEEF);
        let (whole, got) = read("crc.zip", &bad);
        assert!(!whole);
        assert_eq!(got, Err("damaged: Invalid checksum".into()));

        // Holding more than declared, and less.
        let mut more = deflated.clone();
        patch(&mut more, 22, 24, 1000);
        let (whole, got) = read("more.zip", &more);
        assert!(!whole);
        let want = "holds more than the 1000 bytes its header declares; not read";
        assert_eq!(got, Err(want.into()));
        let mut less = deflated.clone();
        let declared = log.len() as u32 + 10;
        patch(&mut less, 22, 24, declared);
        let (whole, got) = read("less.zip", &less);
        assert!(!whole);
        let want = format!(
            "holds {} of the {declared} bytes its header declares (damaged); not read",
            log.len()
        );
        assert_eq!(got, Err(want));
    }
}
