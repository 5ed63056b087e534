//! Reading a text file that may be hostile: rule files, config files and placeholder
//! files come from folders that may hold what an attacker planted. A FIFO would block
//! the open or the read forever, a link to `/dev/zero` would grow memory without
//! bound. So the file is opened without blocking (`O_NONBLOCK`, which a regular file
//! ignores), its type is checked on the opened handle (so a swap between a check and
//! the open changes nothing), and the read stops one byte past the cap.

use crate::Seen;
use std::io::{self, Read};
use std::path::Path;

/// Why a text file was not read.
#[derive(Debug)]
pub enum TextError {
    /// The system's error, opening or reading it.
    Io(io::Error),
    /// Not a regular file (nor a link to one): what it is (`a FIFO`, `a device`, …).
    NotRegular(&'static str),
    /// Larger than the cap.
    TooLarge,
    /// Not UTF-8 text.
    NotText,
}

/// The text of the regular file `path` (a link to one is followed), at most `cap`
/// bytes of UTF-8, noting in `seen` the status of the file opened (or of the path,
/// when it could not be opened), taken before its text is read.
pub fn read_text(path: &Path, cap: u64, seen: &Seen) -> Result<String, TextError> {
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
        return Err(TextError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // The size may have grown since the stat: read one byte past the cap to see.
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(TextError::Io)?;
    if bytes.len() as u64 > cap {
        return Err(TextError::TooLarge);
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

#[cfg(not(unix))]
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
        assert_eq!(read_text(&p, 11, &seen).unwrap().len(), 11);
        assert!(matches!(read_text(&p, 10, &seen), Err(TextError::TooLarge)));
        assert!(matches!(
            read_text(&d.join("none"), 10, &seen),
            Err(TextError::Io(_))
        ));
        assert!(matches!(
            read_text(&d, 10, &seen),
            Err(TextError::NotRegular("a folder"))
        ));
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_text(&p, 10, &Seen::off()),
            Err(TextError::NotText)
        ));
        // The file (seen twice alike), the path that was not there, the folder.
        assert_eq!(seen.into_inputs().map(|i| i.len()), Some(3));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
