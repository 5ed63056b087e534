//! The private temporary file a member is copied into: created exclusively in the
//! temporary folder under a name no one can know ahead, readable by its owner only,
//! and (on Unix) unlinked at once, so that it is gone however the run ends; elsewhere
//! it is removed when dropped, and by the signal handler's clean-up meanwhile.

use super::{refuse, Refused};
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;

/// A member's private copy: the file, and (where it could not be unlinked while open)
/// its path, removed on drop.
pub(crate) struct TempCopy {
    pub(crate) file: File,
    path: Option<PathBuf>,
}

impl TempCopy {
    /// A new, empty private file.
    pub(crate) fn new() -> io::Result<TempCopy> {
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

/// Copies a member of `size` bytes, whose first bytes `head` were read already and the
/// rest of which `rest` gives, into a private file, rewound.
pub(crate) fn copy_rest(head: &[u8], rest: &mut dyn Read, size: u64) -> Result<TempCopy, Refused> {
    use std::io::{Seek, Write};
    let mut copy = TempCopy::new()
        .map_err(|e| Refused::of(format!("cannot make a private temporary copy: {e}")))?;
    let mut w = io::BufWriter::with_capacity(1 << 16, &copy.file);
    let write = |e: io::Error| Refused::of(format!("cannot write its private temporary copy: {e}"));
    w.write_all(head).map_err(write)?;
    let n = io::copy(
        &mut rest.take(size.saturating_sub(head.len() as u64)),
        &mut w,
    )
    .map_err(|e| Refused::of(format!("damaged: {e}")))?;
    w.flush().map_err(write)?;
    drop(w);
    if head.len() as u64 + n < size {
        return refuse(format!(
            "holds {} of the {size} bytes its header declares (damaged); not read",
            head.len() as u64 + n
        ));
    }
    copy.file
        .rewind()
        .map_err(|e| Refused::of(format!("cannot read its private temporary copy: {e}")))?;
    Ok(copy)
}
