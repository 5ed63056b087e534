//! What makes a file the same file whatever its name (a path with `.` or `..`, a
//! symlink, a hard link): its device and inode on Unix, its volume serial number and
//! file index on Windows.

use std::path::Path;

/// A file's identity, equal for every name of the same file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIdentity {
    volume: u64,
    index: u64,
}

/// The identity of the file at `p` (links followed), if there is one.
pub fn file_identity(p: &Path) -> Option<FileIdentity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).ok().map(|m| FileIdentity {
            volume: m.dev(),
            index: m.ino(),
        })
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS,
        };
        // Opened for no access (neither reading nor writing the file), sharing all.
        let f = std::fs::OpenOptions::new()
            .access_mode(0)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(p)
            .ok()?;
        // SAFETY: the handle is open for the call's duration and `info` is plain data
        // the call fills.
        let info = unsafe {
            let mut info: BY_HANDLE_FILE_INFORMATION = std::mem::zeroed();
            if GetFileInformationByHandle(f.as_raw_handle(), &mut info) == 0 {
                return None;
            }
            info
        };
        Some(FileIdentity {
            volume: u64::from(info.dwVolumeSerialNumber),
            index: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        })
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = p;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::file_identity;

    #[test]
    fn every_name_of_a_file_has_its_identity_and_no_other_file_does() {
        let d = std::env::temp_dir().join(format!("scanner-identity-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        let (a, b, linked) = (d.join("a"), d.join("b"), d.join("linked"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        std::fs::hard_link(&a, &linked).unwrap();
        let id = file_identity(&a).unwrap();
        assert_eq!(file_identity(&linked), Some(id), "a hard link");
        assert_eq!(file_identity(&d.join(".").join("a")), Some(id), "through .");
        assert_ne!(file_identity(&b), Some(id));
        assert_eq!(file_identity(&d.join("missing")), None);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
