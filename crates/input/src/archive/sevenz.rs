//! 7z archives (the `sevenz-rust2` crate: LZMA, LZMA2, AES-256): listing their members
//! and copying one into a private file. A solid 7z is one stream: members are reached
//! by decoding through those before them, each read to its end, in the crate's order
//! (blocks, then empty files), which numbers them.

use super::temp::{copy_rest, Held};
use super::{
    bounded, classify, head_len, ratio, refuse, shown_name, Kind, Listed, Password, Place, Refused,
    MAX_MEMBERS,
};
use sevenz_rust2::{ArchiveReader, Error};
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The crate's password for `p` (none: the empty one).
fn password(p: Option<&Password>) -> sevenz_rust2::Password {
    match p {
        Some(p) => sevenz_rust2::Password::new(&String::from_utf8_lossy(p.bytes())),
        None => sevenz_rust2::Password::empty(),
    }
}

/// What a 7z error means.
fn why(e: &Error) -> String {
    match e {
        Error::PasswordRequired => {
            "encrypted, and no password was given (--archive-password); not read".into()
        }
        Error::MaybeBadPassword(e) => {
            format!("encrypted, and the password given does not open it ({e}); not read")
        }
        e => format!("damaged or not readable: {e}"),
    }
}

/// Reads the rest of `r` and drops it (a solid block's next member starts after it).
fn drain(r: &mut dyn Read) -> Result<(), Error> {
    io::copy(r, &mut io::sink())?;
    Ok(())
}

/// Lists the 7z `file` at `at` into `out`.
pub(super) fn list(file: File, at: &Place<'_>, out: &mut Listed) {
    let packed = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut reader = match ArchiveReader::new(file, password(at.password)) {
        Ok(r) => r,
        Err(e) => return out.errors.push(at.error(why(&e))),
    };
    let files = &reader.archive().files;
    if files.len() > MAX_MEMBERS {
        return out.errors.push(at.error(format!(
            "lists {} entries, more than the {MAX_MEMBERS} read; not read",
            files.len()
        )));
    }
    // The members' sizes are declared together: bounded against the archive's size.
    let declared = files.iter().fold(0u64, |t, f| t.saturating_add(f.size()));
    if let Err(why) = bounded(0, packed, declared).and_then(|()| ratio(declared, packed)) {
        return out.errors.push(at.error(why));
    }
    let mut n = 0;
    let walked = reader.for_each_entries(|entry, data| {
        let i = n;
        n += 1;
        if entry.is_directory() || entry.is_anti_item() {
            drain(data)?;
            return Ok(true);
        }
        let name = shown_name(entry.name().as_bytes());
        let here = at.member_at(Kind::SevenZ, i, &name);
        let size = entry.size();
        let mut head = Vec::with_capacity(head_len(size) as usize);
        data.take(head_len(size)).read_to_end(&mut head)?;
        classify(&head, &here, Path::new(&name), size, out, || {
            copy_rest(&head, data, size, false)
        });
        drain(data)?;
        Ok(true)
    });
    if let Err(e) = walked {
        out.errors.push(at.error(why(&e)));
    }
}

/// Copies member `index` (in the crate's order) of the 7z `file`, in memory when
/// `read` allows it, else into a private file.
pub(super) fn extract(
    file: File,
    index: usize,
    p: Option<&Password>,
    read: bool,
) -> Result<Held, Refused> {
    let mut copied = None;
    extract_each(file, p, &[index], &mut |_, r| copied = Some(r), &mut |_| {
        read
    });
    copied
        .unwrap_or_else(|| refuse("the archive ends before the member (damaged); not read".into()))
}

/// Copies the members `wanted` (their indices in the crate's order, ascending) of the
/// 7z `file` in one pass (a solid block is decoded once), each in memory when `read`
/// (given its size) allows it, else into a private file; hands `got` each copy, or why
/// it was not made, as the walk reaches it.
pub(super) fn extract_each(
    file: File,
    p: Option<&Password>,
    wanted: &[usize],
    got: &mut dyn FnMut(usize, Result<Held, Refused>),
    read: &mut dyn FnMut(u64) -> bool,
) {
    let mut rest = wanted.iter().copied().peekable();
    let why = match ArchiveReader::new(file, password(p)) {
        Err(e) => why(&e),
        Ok(mut reader) => {
            let mut n = 0;
            let walked = reader.for_each_entries(|entry, data| {
                let i = n;
                n += 1;
                let Some(&next) = rest.peek() else {
                    return Ok(false);
                };
                if i == next {
                    rest.next();
                    let size = entry.size();
                    let copy = bounded(size, u64::MAX, 0)
                        .and_then(|()| copy_rest(&[], data, size, read(size)));
                    got(i, copy);
                    if rest.peek().is_none() {
                        return Ok(false);
                    }
                }
                drain(data)?;
                Ok(true)
            });
            match walked {
                Err(e) => why(&e),
                Ok(()) => "the archive ends before the member (damaged); not read".into(),
            }
        }
    };
    for i in rest {
        got(i, refuse(why.clone()));
    }
}
