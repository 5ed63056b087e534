//! Why a metrics command could not run (as opposed to input errors, which are reported
//! and counted past).

use std::fmt;
use std::path::PathBuf;

/// A fatal problem: nothing (or nothing complete) was written.
#[derive(Debug)]
pub enum MetricsError {
    /// Neither `-d` nor `-f`.
    NoInput,
    /// `-t N`: the thread pool did not start.
    Threads(crate::config::ThreadsError),
    /// `-c DIR` is not a folder.
    ConfigNotFolder(PathBuf),
    /// The output was refused or could not be written (the output module's message,
    /// which names the file).
    Output(String),
    /// Standard output could not be written.
    Stdout(std::io::Error),
    /// `--timeline-start` or `--timeline-end` (the flag) is not a time (the reason).
    Time(String, String),
    /// `--time-offset` is not an offset (the message names the flag).
    Offset(String),
}

impl fmt::Display for MetricsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricsError::NoInput => f.write_str("nothing to read: give -d DIR or -f FILE"),
            MetricsError::Threads(e) => write!(f, "{e}"),
            MetricsError::ConfigNotFolder(d) => write!(f, "-c {}: not a folder", d.display()),
            MetricsError::Output(m) => f.write_str(m),
            MetricsError::Stdout(e) => write!(f, "cannot write to standard output: {e}"),
            MetricsError::Time(flag, why) => write!(f, "{flag}: {why}"),
            MetricsError::Offset(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for MetricsError {}
