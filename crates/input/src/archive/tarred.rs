//! tar archives, plain, gzip- or bzip2-compressed (the `tar` crate over `flate2` and
//! `bzip2`): listing their members, and copying one into a private file. A tar is a
//! stream: a member is reached by reading through those before it, and the stream's
//! expansion is bounded as it is read ([`Guard`]). Links (symbolic or hard) are never
//! followed: they are counted as not read.

use super::temp::{copy_rest, Held};
use super::{
    bounded, classify, head_len, refuse, shown_name, Kind, Listed, Place, Refused, MAX_MEMBERS,
    MAX_RATIO, MAX_TOTAL, RATIO_FLOOR,
};
use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::rc::Rc;

/// Counts the compressed bytes read from the file.
struct Counted<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// The expanded stream, failing once it passes [`MAX_TOTAL`] (plus tar's headers) or,
/// past [`RATIO_FLOOR`], expands more than [`MAX_RATIO`] times the compressed bytes.
struct Guard<R> {
    inner: R,
    packed: Rc<Cell<u64>>,
    out: u64,
    compressed: bool,
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out += n as u64;
        if self.out > MAX_TOTAL + (MAX_TOTAL >> 6) {
            return Err(io::Error::other(format!(
                "the archive expands past {} GiB",
                MAX_TOTAL >> 30
            )));
        }
        let packed = self.packed.get().max(1);
        if self.compressed && self.out >= RATIO_FLOOR && self.out / packed > MAX_RATIO {
            return Err(io::Error::other(format!(
                "the archive expands {} times, past the {MAX_RATIO} allowed (a bomb?)",
                self.out / packed
            )));
        }
        Ok(n)
    }
}

/// The tar stream of `file`, of kind `kind`.
fn stream(file: File, kind: Kind) -> Box<dyn Read> {
    let packed = Rc::new(Cell::new(0));
    let raw = BufReader::with_capacity(
        1 << 16,
        Counted {
            inner: file,
            read: Rc::clone(&packed),
        },
    );
    let (inner, compressed): (Box<dyn Read>, bool) = match kind {
        Kind::TarGz => (Box::new(flate2::bufread::MultiGzDecoder::new(raw)), true),
        Kind::TarBz2 => (Box::new(bzip2::bufread::MultiBzDecoder::new(raw)), true),
        _ => (Box::new(raw), false),
    };
    Box::new(Guard {
        inner,
        packed,
        out: 0,
        compressed,
    })
}

/// Lists the tar `file` (of kind `kind`) at `at` into `out`.
pub(super) fn list(file: File, kind: Kind, at: &Place<'_>, out: &mut Listed) {
    let mut ar = tar::Archive::new(stream(file, kind));
    let entries = match ar.entries() {
        Ok(e) => e,
        Err(e) => {
            out.errors
                .push(at.error(format!("not a readable tar archive: {e}")));
            return;
        }
    };
    let mut total = 0u64;
    for (i, entry) in entries.enumerate() {
        if i >= MAX_MEMBERS {
            out.errors.push(at.error(format!(
                "lists more than the {MAX_MEMBERS} entries read; the rest is not read"
            )));
            return;
        }
        let mut e = match entry {
            Ok(e) => e,
            Err(err) => {
                out.errors.push(at.error(format!(
                    "stops after {i} of its entries: {err}; the rest is not read"
                )));
                return;
            }
        };
        let name = shown_name(&e.path_bytes());
        let here = at.member_at(kind, i, &name);
        let path = std::path::Path::new(&name);
        let t = e.header().entry_type();
        if t.is_dir() {
            continue;
        }
        if !(t.is_file() || t.is_contiguous()) {
            // Links (never followed), devices, FIFOs, sparse files.
            out.not_read.add(path);
            continue;
        }
        let size = e.size();
        total = total.saturating_add(size);
        if let Err(why) = bounded(size, size, total) {
            out.errors.push(here.error(why));
            continue;
        }
        let mut head = Vec::with_capacity(head_len(size) as usize);
        if let Err(err) = (&mut e).take(head_len(size)).read_to_end(&mut head) {
            out.errors.push(here.error(format!("damaged: {err}")));
            return;
        }
        classify(&head, &here, path, size, out, || {
            copy_rest(&head, &mut e, size, false)
        });
    }
}

/// Copies member `index` of the tar `file` (of kind `kind`), in memory when `read`
/// allows it, else into a private file.
pub(super) fn extract(file: File, kind: Kind, index: usize, read: bool) -> Result<Held, Refused> {
    let mut copied = None;
    extract_each(
        file,
        kind,
        &[index],
        &mut |_, r| copied = Some(r),
        &mut |_| read,
    );
    copied
        .unwrap_or_else(|| refuse("the archive ends before the member (damaged); not read".into()))
}

/// Copies the members `wanted` (their indices, ascending) of the tar `file` (of kind
/// `kind`) in one pass over its stream, each in memory when `read` (given its size)
/// allows it, else into a private file; hands `got` each copy, or why it was not made,
/// as the stream reaches it.
pub(super) fn extract_each(
    file: File,
    kind: Kind,
    wanted: &[usize],
    got: &mut dyn FnMut(usize, Result<Held, Refused>),
    read: &mut dyn FnMut(u64) -> bool,
) {
    #[cfg(test)]
    PASSES.with(|p| p.set(p.get() + 1));
    let mut rest = wanted.iter().copied().peekable();
    let mut ar = tar::Archive::new(stream(file, kind));
    let why = match ar.entries() {
        Err(e) => format!("not a readable tar archive: {e}"),
        Ok(entries) => 'walk: {
            for (i, entry) in entries.enumerate() {
                let Some(&next) = rest.peek() else { return };
                let mut e = match entry {
                    Ok(e) => e,
                    Err(e) => break 'walk format!("damaged: {e}"),
                };
                if i == next {
                    rest.next();
                    let size = e.size();
                    let copy = bounded(size, size, 0)
                        .and_then(|()| copy_rest(&[], &mut e, size, read(size)));
                    got(i, copy);
                }
            }
            "the archive ends before the member (damaged); not read".into()
        }
    };
    for i in rest {
        got(i, refuse(why.clone()));
    }
}

#[cfg(test)]
thread_local! {
    /// Passes over a tar's stream made by this thread to copy members out.
    pub(super) static PASSES: Cell<usize> = const { Cell::new(0) };
}
