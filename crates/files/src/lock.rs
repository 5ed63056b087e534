//! An advisory lock on a whole file, taken at once or not at all: `flock` on Unix,
//! `LockFileEx` on Windows; held until the file is closed.

use std::fs::File;

/// Takes the exclusive lock of `file` without waiting; `false` when another open file
/// holds it (or the system cannot lock the file).
pub fn try_lock_exclusive(file: &File) -> bool {
    #[cfg(unix)]
    {
        use rustix::fs::{flock, FlockOperation};
        flock(file, FlockOperation::NonBlockingLockExclusive).is_ok()
    }
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::Storage::FileSystem::{
            LockFileEx, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
        };
        use windows_sys::Win32::System::IO::OVERLAPPED;
        // SAFETY: the handle is open for the call's duration; OVERLAPPED is plain data,
        // zeroed (offset 0), and the call is synchronous (the file is not opened for
        // overlapped I/O), so it does not outlive the call.
        unsafe {
            let mut at: OVERLAPPED = std::mem::zeroed();
            let flags = LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY;
            LockFileEx(file.as_raw_handle(), flags, 0, u32::MAX, u32::MAX, &mut at) != 0
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = file;
        true
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_second_handle_cannot_take_a_held_lock() {
        let p = std::env::temp_dir().join(format!("scanner-lock-{}", std::process::id()));
        let a = std::fs::File::create(&p).unwrap();
        let b = std::fs::File::open(&p).unwrap();
        assert!(super::try_lock_exclusive(&a));
        assert!(!super::try_lock_exclusive(&b), "held by the first handle");
        drop(a);
        assert!(
            super::try_lock_exclusive(&b),
            "released when the first is closed"
        );
        drop(b);
        std::fs::remove_file(&p).unwrap();
    }
}
