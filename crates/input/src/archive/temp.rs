//! The private temporary file a member is copied into: created exclusively in the
//! temporary folder under a name no one can know ahead, readable by its owner only,
//! and (on Unix) unlinked at once, so that it is gone however the run ends; elsewhere
//! it is removed when dropped, and by the signal handler's clean-up meanwhile.

use std::fs::File;
use std::io;
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
