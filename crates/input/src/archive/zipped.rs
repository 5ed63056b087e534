//! Zip archives (the `zip` crate: deflate, deflate64, bzip2, LZMA, zip64, AES and
//! ZipCrypto): listing their members, and copying one into a private file.

use super::temp::Held;
use super::{
    bounded, classify, head_len, is_archive_name, refuse, shown_name, Kind, Listed, Password,
    Place, Refused, MAX_MEMBERS,
};
use crate::not_read::taken_by_extension;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use zip::result::ZipError;
use zip::ZipArchive;

/// Lists the zip `file` at `at` into `out`.
pub(super) fn list(file: File, at: &Place<'_>, out: &mut Listed) {
    let mut zip = match ZipArchive::new(file) {
        Ok(z) => z,
        Err(e) => {
            out.errors
                .push(at.error(format!("not a readable zip archive: {e}")));
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
    zip: &'z mut ZipArchive<File>,
    i: usize,
    password: Option<&Password>,
) -> Result<zip::read::ZipFile<'z, File>, Refused> {
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
fn head(
    zip: &mut ZipArchive<File>,
    i: usize,
    password: Option<&Password>,
) -> Result<Vec<u8>, Refused> {
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
fn copy(
    zip: &mut ZipArchive<File>,
    i: usize,
    password: Option<&Password>,
    read: bool,
) -> Result<Held, Refused> {
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

thread_local! {
    /// The zip on disk this thread read a member of last, its central directory read:
    /// the next member of the same archive is reached without reading it again (a
    /// collection's members are scanned one after another).
    static LAST: std::cell::RefCell<Option<(std::path::PathBuf, ZipArchive<File>)>> =
        const { std::cell::RefCell::new(None) };
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
            let file = File::open(path).map_err(|e| Refused::of(format!("cannot open: {e}")))?;
            let zip = ZipArchive::new(file)
                .map_err(|e| Refused::of(format!("not a readable zip archive: {e}")))?;
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
    let mut zip = ZipArchive::new(file)
        .map_err(|e| Refused::of(format!("not a readable zip archive: {e}")))?;
    copy(&mut zip, index, password, read)
}
