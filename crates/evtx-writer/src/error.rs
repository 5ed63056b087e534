//! The crate's one error type: what can go wrong writing events or reading them from
//! XML or JSON.

/// What can go wrong writing or reading events.
#[derive(Debug)]
pub enum Error {
    /// Writing failed.
    Io(std::io::Error),
    /// A value BinXML cannot store (a non-ASCII ANSI string, a mixed array, ...).
    InvalidValue(String),
    /// An element or attribute name BinXML cannot store.
    InvalidName(String),
    /// A record that does not fit in a 64 KiB chunk.
    RecordTooLarge,
    /// An event whose `TimeCreated/@SystemTime` is not a time (the value as written).
    InvalidTime(String),
    /// The record id passed `u64::MAX`.
    RecordIdOverflow,
    /// The writer was already finished.
    Finished,
    /// Source XML that does not parse; the byte offset and what was wrong.
    Xml(usize, String),
    /// Source JSON that is not an event in the `evtx` crate's shape.
    Json(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::InvalidValue(m) => write!(f, "invalid value: {m}"),
            Error::InvalidName(n) => write!(f, "invalid element or attribute name {n:?}"),
            Error::RecordTooLarge => f.write_str("record does not fit in a 64 KiB chunk"),
            Error::InvalidTime(v) => write!(
                f,
                "invalid TimeCreated SystemTime {v:?}: not a time from 1601 to 9999 such as 2024-03-12T09:16:06.080577Z"
            ),
            Error::RecordIdOverflow => f.write_str("record id overflow"),
            Error::Finished => f.write_str("the writer is already finished"),
            Error::Xml(at, m) => write!(f, "XML at byte {at}: {m}"),
            Error::Json(m) => write!(f, "JSON event: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn messages_name_what_went_wrong() {
        assert_eq!(
            Error::Xml(48, "unterminated start tag".into()).to_string(),
            "XML at byte 48: unterminated start tag"
        );
        assert_eq!(
            Error::InvalidName("a\0b".into()).to_string(),
            "invalid element or attribute name \"a\\0b\""
        );
        assert_eq!(
            Error::RecordTooLarge.to_string(),
            "record does not fit in a 64 KiB chunk"
        );
        assert_eq!(
            Error::Json("no Event".into()).to_string(),
            "JSON event: no Event"
        );
    }

    #[test]
    fn io_errors_keep_their_source() {
        let e = Error::from(std::io::Error::other("disk full"));
        assert_eq!(e.to_string(), "disk full");
        assert!(e.source().is_some());
        assert!(Error::Finished.source().is_none());
    }
}
