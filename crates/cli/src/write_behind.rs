//! An output file sent to disk as it is written: every [`WRITEBACK_EVERY`] bytes, the
//! range just written is handed to the kernel's writeback (`sync_file_range` on Linux,
//! which starts it without waiting), so that the `fsync` that ends an output has
//! little left to wait for. Elsewhere the file is written as it is.

use std::fs::File;
use std::io::{self, Write};

/// Bytes written between two starts of writeback.
const WRITEBACK_EVERY: u64 = 8 << 20;

/// A file being written, its pages sent to disk behind the writes.
pub struct WriteBehind<'f> {
    file: &'f mut File,
    /// Bytes written so far.
    written: u64,
    /// Bytes already handed to writeback.
    started: u64,
}

impl<'f> WriteBehind<'f> {
    /// Writes to `file` from its current end (a new, empty file).
    pub fn new(file: &'f mut File) -> Self {
        WriteBehind {
            file,
            written: 0,
            started: 0,
        }
    }

    /// Starts writeback of what was written since the last start. A failure is left to
    /// the `fsync` at the end, which reports any write error.
    #[cfg(target_os = "linux")]
    fn start_writeback(&mut self) {
        use std::os::fd::AsRawFd;
        let (Ok(from), Ok(len)) = (
            i64::try_from(self.started),
            i64::try_from(self.written - self.started),
        ) else {
            return;
        };
        // SAFETY: a plain system call on an open descriptor; no memory is shared.
        unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                from,
                len,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
        self.started = self.written;
    }

    #[cfg(not(target_os = "linux"))]
    fn start_writeback(&mut self) {}
}

impl Write for WriteBehind<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= WRITEBACK_EVERY {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
