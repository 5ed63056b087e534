//! Why a folder scanner keeps as its own, or a file in it, was not used: the path and
//! the reason, for an error line that names both.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a folder or a file in it was not used.
#[derive(Debug)]
pub enum Why {
    /// The system's error.
    Io(io::Error),
    /// A symbolic link, not followed.
    Link,
    /// Not a folder.
    NotFolder,
    /// Not a regular file (a FIFO, a device, a socket, a folder).
    NotRegular(&'static str),
    /// Another user's.
    Owner {
        /// The owner's user id.
        owner: u32,
        /// This process's effective user id.
        me: u32,
    },
    /// Writable by group or others.
    Writable,
    /// Larger than the caller allows.
    TooLarge(u64),
    /// Something is at the name already and replacing was not asked for.
    Exists,
    /// A name with a folder separator, `.` or `..`: not a single entry.
    NotAName,
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Io(e) => write!(f, "{e}"),
            Why::Link => f.write_str("a symbolic link, not followed"),
            Why::NotFolder => f.write_str("not a folder"),
            Why::NotRegular(what) => write!(f, "not a regular file ({what})"),
            Why::Owner { owner, me } => write!(
                f,
                "belongs to user {owner}, not to the user running scanner ({me})"
            ),
            Why::Writable => f.write_str("writable by group or others (chmod go-w to use it)"),
            Why::TooLarge(cap) => write!(f, "larger than the {cap} bytes allowed"),
            Why::Exists => f.write_str("exists; not replaced"),
            Why::NotAName => f.write_str("not a single name"),
        }
    }
}

/// A folder or file that was not used, and why.
#[derive(Debug)]
pub struct Error {
    path: PathBuf,
    why: Why,
}

impl Error {
    pub(crate) fn new(path: PathBuf, why: Why) -> Error {
        Error { path, why }
    }

    /// The folder or file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why.
    pub fn why(&self) -> &Why {
        &self.why
    }

    /// Whether nothing is at the path.
    pub fn is_not_found(&self) -> bool {
        matches!(&self.why, Why::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.why)
    }
}

impl std::error::Error for Error {}
