//! The one way the crate reads a file: rule files, config files and placeholder files
//! all come through [`read`], which reads only regular files (or links to them), at
//! most a cap per kind of file, without blocking on a FIFO
//! (`scanner_files::read_text`: rule and config folders may hold what an attacker
//! planted).

use crate::error::{ErrorKind, RuleError};
use crate::report::LoadError;
use scanner_files::{Seen, TextFile};
use std::path::Path;

/// The text of the regular file `path` (a link to one is followed), at most
/// `kind.cap()` bytes of UTF-8, noting in `seen` the status of the file opened (or of the
/// path, when it could not be opened), taken before its text is read. The error says
/// why, not which file: the caller's report names it.
pub fn read_noting(path: &Path, kind: TextFile, seen: &Seen) -> Result<String, RuleError> {
    scanner_files::read_text(path, kind, seen).map_err(|e| ErrorKind::File(e).into())
}

/// The load report's entry for a file that could not be read or parsed.
pub fn read_error(path: &Path, e: impl std::fmt::Display) -> LoadError {
    LoadError {
        file: path.display().to_string(),
        document: 0,
        title: None,
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn read(path: &Path, kind: TextFile) -> Result<String, RuleError> {
        read_noting(path, kind, &Seen::off())
    }

    /// A fresh folder under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("scanner-text-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn error(p: &Path, kind: TextFile) -> String {
        read_error(p, read(p, kind).unwrap_err()).to_string()
    }

    #[test]
    fn regular_files_and_links_to_them_are_read() {
        let d = scratch("regular");
        std::fs::write(d.join("a.txt"), "x\n").unwrap();
        assert_eq!(read(&d.join("a.txt"), TextFile::Config).unwrap(), "x\n");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("a.txt"), d.join("l.txt")).unwrap();
            assert_eq!(read(&d.join("l.txt"), TextFile::Rule).unwrap(), "x\n");
        }
        let p = d.join("missing.txt");
        assert!(error(&p, TextFile::Rule).starts_with(&format!("{}: ", p.display())));
        assert!(error(&d, TextFile::Rule).ends_with("not a regular file (a folder)"));
        std::fs::write(d.join("bin.txt"), [0xff, 0xfe]).unwrap();
        assert!(error(&d.join("bin.txt"), TextFile::Config).ends_with(": not UTF-8 text"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_over_the_cap_is_refused() {
        let d = scratch("cap");
        let p = d.join("big.yml");
        std::fs::write(&p, "x".repeat(4 << 20)).unwrap();
        assert!(read(&p, TextFile::Rule).is_ok());
        std::fs::write(&p, "x".repeat((4 << 20) + 1)).unwrap();
        let e = read(&p, TextFile::Rule).unwrap_err();
        assert!(matches!(
            e.kind(),
            ErrorKind::File(scanner_files::TextError::TooLarge(TextFile::Rule))
        ));
        assert_eq!(
            error(&p, TextFile::Rule),
            format!(
                "{}: larger than the 4 MiB allowed for a rule file",
                p.display()
            )
        );
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn fifos_devices_and_sockets_are_refused_without_blocking() {
        let d = scratch("special");
        let fifo = d.join("fifo.txt");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No writer: a blocking open would wait forever.
        assert_eq!(
            error(&fifo, TextFile::Placeholder),
            format!("{}: not a regular file (a FIFO)", fifo.display())
        );
        let zero = d.join("zero.txt");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(error(&zero, TextFile::Config).ends_with("not a regular file (a device)"));
        let sock = d.join("sock.txt");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        // Opening a socket fails (ENXIO) before any stat: an error naming the file.
        assert!(error(&sock, TextFile::Config).starts_with(&format!("{}: ", sock.display())));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
