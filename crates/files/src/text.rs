//! Reading a text file that may be hostile: rule files, config files and placeholder
//! files come from folders that may hold what an attacker planted. A FIFO would block
//! the open or the read forever, a link to `/dev/zero` would grow memory without
//! bound. So the file is opened without blocking (`O_NONBLOCK`, which a regular file
//! ignores), its type is checked on the opened handle (so a swap between a check and
//! the open changes nothing), and the read stops one byte past the cap of its kind.

use crate::Seen;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// What a text file holds, which decides its size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFile {
    /// A rule file (`.yml`): the largest real rule (SigmaHQ, Hayabusa) is 50 KB; 4 MiB
    /// leaves room for files of many documents and bounds what parsing one costs.
    Rule,
    /// A config file (`*.txt` tables, `data_mapping/*.yaml`, `logsource.yaml`): the
    /// largest real one is 47 KB; 16 MiB leaves room for long site-made lists.
    Config,
    /// An `expand` placeholder file (one value per line): lists of hosts or accounts
    /// a site keeps may be long; 16 MiB.
    Placeholder,
}

impl TextFile {
    /// The most bytes a file of this kind may hold.
    pub fn cap(self) -> u64 {
        match self {
            TextFile::Rule => 4 << 20,
            TextFile::Config | TextFile::Placeholder => 16 << 20,
        }
    }

    fn name(self) -> &'static str {
        match self {
            TextFile::Rule => "rule",
            TextFile::Config => "config",
            TextFile::Placeholder => "placeholder",
        }
    }
}

/// Why a text file was not read. The text says why, not which file: the caller names
/// it.
#[derive(Debug)]
pub enum TextError {
    /// The system's error, opening or reading it.
    Io(io::Error),
    /// Not a regular file (nor a link to one): what it is (`a FIFO`, `a device`, …).
    NotRegular(&'static str),
    /// Larger than the cap of its kind.
    TooLarge(TextFile),
    /// Not UTF-8 text.
    NotText,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Io(e) => write!(f, "{e}"),
            TextError::NotRegular(what) => write!(f, "not a regular file ({what})"),
            TextError::TooLarge(kind) => write!(
                f,
                "larger than the {} MiB allowed for a {} file",
                kind.cap() >> 20,
                kind.name()
            ),
            TextError::NotText => f.write_str("not UTF-8 text"),
        }
    }
}

impl std::error::Error for TextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TextError::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// The text of the regular file `path` (a link to one is followed), at most
/// `kind.cap()` bytes of UTF-8, noting in `seen` the status of the file opened (or of
/// the path, when it could not be opened), taken before its text is read.
pub fn read_text(path: &Path, kind: TextFile, seen: &Seen) -> Result<String, TextError> {
    read_capped(path, kind, kind.cap(), seen)
}

fn read_capped(path: &Path, kind: TextFile, cap: u64, seen: &Seen) -> Result<String, TextError> {
    let (file, meta) = match open_nonblocking(path).and_then(|f| Ok((f.metadata()?, f))) {
        Ok((meta, file)) => (file, meta),
        Err(e) => {
            seen.unopened(path);
            return Err(TextError::Io(e));
        }
    };
    seen.opened(path, &meta);
    if !meta.is_file() {
        return Err(TextError::NotRegular(crate::kind_name(&meta.file_type())));
    }
    if meta.len() > cap {
        return Err(TextError::TooLarge(kind));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The size may have grown since the stat: read one byte past the cap to see.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(TextError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(TextError::TooLarge(kind));
    }
    String::from_utf8(bytes).map_err(|_| TextError::NotText)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

/// On Windows with the flag that lets a folder be opened too, so that it is told apart
/// (as "a folder") rather than refused as access denied.
#[cfg(windows)]
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    use std::os::windows::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
}

#[cfg(not(any(unix, windows)))]
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_within_its_cap_and_noted() {
        let d = std::env::temp_dir().join(format!("scanner-text-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join("a.txt");
        std::fs::write(&p, "x".repeat(11)).unwrap();
        let seen = Seen::on();
        let rule = TextFile::Rule;
        assert_eq!(read_capped(&p, rule, 11, &seen).unwrap().len(), 11);
        let e = read_capped(&p, rule, 10, &seen).unwrap_err();
        assert!(matches!(e, TextError::TooLarge(TextFile::Rule)));
        assert_eq!(
            e.to_string(),
            "larger than the 4 MiB allowed for a rule file"
        );
        assert!(matches!(
            read_text(&d.join("none"), rule, &seen),
            Err(TextError::Io(_))
        ));
        assert!(matches!(
            read_text(&d, rule, &seen),
            Err(TextError::NotRegular("a folder"))
        ));
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        let e = read_text(&p, rule, &Seen::off()).unwrap_err();
        assert_eq!(e.to_string(), "not UTF-8 text");
        // The file (seen twice alike), the path that was not there, the folder.
        assert_eq!(seen.into_inputs().map(|i| i.len()), Some(3));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
