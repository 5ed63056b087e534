//! What a file holds, told by its first bytes, never by its name: EVTX (`ElfFile\0`),
//! JSON (`{` or `[`) or event XML (`<`), so one folder can hold them side by side; a
//! gzip file (`1f 8b`) is told by its first decompressed bytes and read as a stream.

use crate::error::{ErrorKind, InputError, Position};
use crate::source::Source;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

const GZIP: &[u8] = b"\x1f\x8b";

/// Opens `path` for reading as a stream, decompressing it when it is gzip (several
/// concatenated members included). A truncated or damaged gzip stream fails the read
/// where the damage starts, after the data before it was handed over.
pub(crate) fn open_stream(path: &Path) -> std::io::Result<Box<dyn BufRead>> {
    stream_of(std::fs::File::open(path)?)
}

/// [`open_stream`] on `file`, read from its start.
pub(crate) fn stream_of(file: impl Into<Source>) -> std::io::Result<Box<dyn BufRead>> {
    let mut file = file.into().buffered()?;
    if file.fill_buf()?.starts_with(GZIP) {
        let gz = flate2::bufread::MultiGzDecoder::new(file);
        return Ok(Box::new(BufReader::new(gz)));
    }
    Ok(file)
}

/// An input file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Windows event log file.
    Evtx,
    /// JSON, JSON Lines or a JSON array of events, in any shape `shape.rs` reads.
    Json,
    /// Windows Event XML (`<Events><Event>…`).
    Xml,
    /// EvtxECmd's CSV (its header's first columns: `RecordNumber,EventRecordId,…`).
    EvtxECmdCsv,
}

/// Bytes looked at: enough to pass a byte-order mark and leading blank lines.
const HEAD: usize = 4096;

/// Tells `path`'s format from its first bytes. A file named `.evtx` whose first bytes are
/// none of these is read as EVTX (whose reader says what is wrong with it); another
/// empty file (or one of blanks) is JSON with no events.
pub fn sniff(path: &Path) -> Result<Format, InputError> {
    sniff_open(path).map(|(format, _)| format)
}

/// [`sniff`], handing back the file opened (at some position in its first bytes), for
/// its reader to go on with rather than open it again.
pub fn sniff_open(path: &Path) -> Result<(Format, std::fs::File), InputError> {
    let (format, source) = sniff_file(path, std::fs::File::open(path).map(Source::File))?;
    let file = source
        .into_file()
        .map_err(|e| InputError::new(path, Position::None, ErrorKind::CannotOpen(e)))?;
    Ok((format, file))
}

/// [`sniff_open`] on `opened`, the file shown as `path` (a member's copy, or the file
/// opened from `path`).
pub(crate) fn sniff_file(
    path: &Path,
    opened: std::io::Result<Source>,
) -> Result<(Format, Source), InputError> {
    let mut head = vec![0; HEAD];
    let opened = opened.and_then(|f| {
        let n = f.read_at(0, &mut head)?;
        head.truncate(n);
        Ok(f)
    });
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            return Err(InputError::new(
                path,
                Position::None,
                ErrorKind::CannotOpen(e),
            ))
        }
    };
    if head.starts_with(GZIP) {
        head.clear();
        // A stream damaged this early is reported by its reader; tell what came through.
        let _ = file
            .try_clone()
            .and_then(stream_of)
            .and_then(|r| r.take(HEAD as u64).read_to_end(&mut head));
        return match format_of(&head) {
            Some(Format::Evtx) => Err(InputError::new(
                path,
                Position::None,
                ErrorKind::CompressedEvtx,
            )),
            Some(f) => Ok((f, file)),
            None if head.iter().all(u8::is_ascii_whitespace) => Ok((Format::Json, file)),
            None => Err(InputError::new(
                path,
                Position::None,
                ErrorKind::UnknownFormat,
            )),
        };
    }
    let evtx = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("evtx"));
    let format = match format_of(&head) {
        Some(f) => f,
        None if evtx => Format::Evtx,
        None if head.iter().all(u8::is_ascii_whitespace) => Format::Json,
        None => {
            return Err(InputError::new(
                path,
                Position::None,
                ErrorKind::UnknownFormat,
            ))
        }
    };
    Ok((format, file))
}

/// The format [`format_of`] tells from the first bytes of the file `path`, if it opens.
pub(crate) fn sniff_head(path: &Path) -> Option<Format> {
    let mut head = Vec::with_capacity(512);
    let f = std::fs::File::open(path).ok()?;
    f.take(512).read_to_end(&mut head).ok()?;
    format_of(&head)
}

/// The format of a file starting with `head`, if known.
pub fn format_of(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"ElfFile\0") {
        return Some(Format::Evtx);
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if text.starts_with(crate::evtxecmd::CSV_HEADER.as_bytes()) {
        return Some(Format::EvtxECmdCsv);
    }
    match text.iter().find(|b| !b.is_ascii_whitespace())? {
        b'{' | b'[' => Some(Format::Json),
        b'<' => Some(Format::Xml),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_first_bytes() {
        assert_eq!(format_of(b"ElfFile\0\0\0"), Some(Format::Evtx));
        assert_eq!(format_of(b"\xEF\xBB\xBF\r\n {\"a\":1}"), Some(Format::Json));
        assert_eq!(format_of(b"[{}]"), Some(Format::Json));
        assert_eq!(
            format_of(b"<?xml version=\"1.0\"?><Events>"),
            Some(Format::Xml)
        );
        assert_eq!(format_of(b"\x00\x05\x16\x07Mac OS X"), None);
        assert_eq!(format_of(b"ElfChnk\0"), None);
    }
}
