//! The private temporary file a member is copied into. On Linux a member of at most
//! [`IN_MEMORY`] bytes goes to an anonymous file in memory (`memfd_create`): no name
//! leads to it, nothing reaches a disk, and it is gone with its last handle. Larger
//! members, and systems without anonymous files, use a file created exclusively in the
//! temporary folder under a name no one can know ahead, readable by its owner only,
//! and (on Unix) unlinked at once, so that it is gone however the run ends; elsewhere
//! it is removed when dropped, and by the signal handler's clean-up meanwhile.

use super::{refuse, Refused};
use crate::source::{Bytes, Source};
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

/// A member's private copy: the file, and (where it could not be unlinked while open)
/// its path, removed on drop.
pub(crate) struct TempCopy {
    pub(crate) file: File,
    path: Option<PathBuf>,
}

/// The largest member copied into memory rather than into a file on disk (64 MiB):
/// each of the scan's workers holds one member (and the archives it is nested in) at
/// a time, so memory stays within a few times this per worker.
pub(crate) const IN_MEMORY: u64 = 64 << 20;

impl TempCopy {
    /// A new, empty private file for a member of `size` bytes: in memory when it is at
    /// most [`IN_MEMORY`] bytes and the system allows it, else on disk.
    pub(crate) fn new(size: u64) -> io::Result<TempCopy> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if size <= IN_MEMORY {
            use rustix::fs::{memfd_create, MemfdFlags};
            if let Ok(fd) = memfd_create("scanner-member", MemfdFlags::CLOEXEC) {
                return Ok(TempCopy {
                    file: File::from(fd),
                    path: None,
                });
            }
        }
        let _ = size;
        TempCopy::on_disk()
    }

    /// A new, empty private file in the temporary folder.
    fn on_disk() -> io::Result<TempCopy> {
        let dir = std::env::temp_dir();
        let (name, (file, path)) =
            scanner_files::create_unique_temp("scanner-member".as_ref(), |name| {
                let path = dir.join(name);
                scanner_files::create_temp_file(&path).map(|f| (f, path))
            })?;
        let _ = name;
        #[cfg(unix)]
        {
            scanner_files::remove_temp_file(&path)?;
            Ok(TempCopy { file, path: None })
        }
        #[cfg(not(unix))]
        {
            Ok(TempCopy {
                file,
                path: Some(path),
            })
        }
    }
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = scanner_files::remove_temp_file(&p);
        }
    }
}

/// A member's copy: in a private file (an archive to list, or a member too large for
/// memory), or in memory (a member read as input, of at most [`IN_MEMORY`] bytes).
pub(crate) enum Held {
    File(TempCopy),
    Memory(Vec<u8>),
}

impl Held {
    /// An empty copy for a member of `size` bytes: in memory when `read` (the member
    /// is input to read, not an archive to list) and it is at most [`IN_MEMORY`]
    /// bytes, else in a private file.
    pub(crate) fn new(size: u64, read: bool) -> Result<Held, Refused> {
        if read && size <= IN_MEMORY {
            // The declared size is only a hint: a member may hold less.
            return Ok(Held::Memory(Vec::with_capacity(size as usize)));
        }
        TempCopy::new(size)
            .map(Held::File)
            .map_err(|e| Refused::of(format!("cannot make a private temporary copy: {e}")))
    }

    /// Copies `head`, then at most `limit` bytes of `rest`, into the copy (a file's
    /// rewound after); returns the bytes copied, `head`'s included.
    pub(crate) fn fill(
        &mut self,
        head: &[u8],
        rest: &mut dyn Read,
        limit: u64,
    ) -> Result<u64, Refused> {
        use std::io::{Seek, Write};
        let damaged = |e: io::Error| Refused::of(format!("damaged: {e}"));
        match self {
            Held::Memory(bytes) => {
                bytes.extend_from_slice(head);
                let n = rest.take(limit).read_to_end(bytes).map_err(damaged)?;
                Ok(head.len() as u64 + n as u64)
            }
            Held::File(copy) => {
                let write = |e: io::Error| {
                    Refused::of(format!("cannot write its private temporary copy: {e}"))
                };
                let mut w = io::BufWriter::with_capacity(1 << 16, &copy.file);
                w.write_all(head).map_err(write)?;
                let n = io::copy(&mut rest.take(limit), &mut w).map_err(damaged)?;
                w.flush().map_err(write)?;
                drop(w);
                copy.file.rewind().map_err(|e| {
                    Refused::of(format!("cannot read its private temporary copy: {e}"))
                })?;
                Ok(head.len() as u64 + n)
            }
        }
    }

    /// The copy's file, to list as an archive in turn.
    pub(crate) fn file(&self) -> Result<File, Refused> {
        match self {
            Held::File(copy) => copy
                .file
                .try_clone()
                .map_err(|e| Refused::of(format!("cannot read its private temporary copy: {e}"))),
            Held::Memory(_) => Err(Refused::of(
                "an archive held in memory cannot be listed (internal error)".into(),
            )),
        }
    }

    /// The copy as a reader's source, and the private file to keep while it is read.
    pub(crate) fn into_source(self) -> std::io::Result<(Source, Option<TempCopy>)> {
        match self {
            Held::Memory(bytes) => Ok((Source::Memory(Bytes::new(bytes)), None)),
            Held::File(copy) => {
                let file = copy.file.try_clone()?;
                Ok((Source::File(file), Some(copy)))
            }
        }
    }
}

/// Copies a member of `size` bytes, whose first bytes `head` were read already and the
/// rest of which `rest` gives, in memory when `read` allows it, else into a private
/// file, rewound.
pub(crate) fn copy_rest(
    head: &[u8],
    rest: &mut dyn Read,
    size: u64,
    read: bool,
) -> Result<Held, Refused> {
    let mut copy = Held::new(size, read)?;
    let n = copy.fill(head, rest, size.saturating_sub(head.len() as u64))?;
    if n < size {
        return refuse(format!(
            "holds {n} of the {size} bytes its header declares (damaged); not read"
        ));
    }
    Ok(copy)
}
