//! The progress bar on standard error: files and bytes done, records per second and
//! the time left, redrawn a few times a second from the scan's counters. It is drawn
//! only when standard error is a terminal; the caller decides (and `-q` turns it off).

use scanner_engine::{Progress, ProgressSnapshot};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running progress bar; [`ProgressBar::finish`] stops it and clears its line.
pub struct ProgressBar {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// One line of the bar for a snapshot, `width` cells wide.
pub fn line(
    s: ProgressSnapshot,
    files: u64,
    bytes: u64,
    elapsed: Duration,
    width: usize,
) -> String {
    let frac = if bytes == 0 {
        1.0
    } else {
        (s.bytes as f64 / bytes as f64).min(1.0)
    };
    let filled = (frac * width as f64).round() as usize;
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 {
        s.records as f64 / secs
    } else {
        0.0
    };
    let eta = if s.bytes > 0 && frac < 1.0 {
        let left = secs * (bytes - s.bytes) as f64 / s.bytes as f64;
        format!("{:02}:{:02}", (left as u64) / 60, (left as u64) % 60)
    } else {
        "--:--".to_string()
    };
    format!(
        "[{}{}] {:>3.0}% {}/{} files, {:.1}/{:.1} MiB, {} records/s, ETA {eta}",
        "#".repeat(filled),
        "-".repeat(width - filled),
        frac * 100.0,
        s.files,
        files,
        s.bytes as f64 / 1048576.0,
        bytes as f64 / 1048576.0,
        crate::summary::group(rate as u64),
    )
}

impl ProgressBar {
    /// Starts drawing `p` against the totals.
    pub fn start(p: Arc<Progress>, files: u64, bytes: u64) -> ProgressBar {
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = Arc::clone(&stop);
        let started = Instant::now();
        let draw = move |p: &Progress| {
            let mut err = std::io::stderr();
            let l = line(p.snapshot(), files, bytes, started.elapsed(), 30);
            let _ = write!(err, "\r\x1b[2K{l}");
            let _ = err.flush();
        };
        // The first line is drawn now, so even a scan that ends before the drawing
        // thread runs shows its bar; the thread redraws every 200 ms after that.
        draw(&p);
        let handle = std::thread::spawn(move || {
            let mut err = std::io::stderr();
            loop {
                std::thread::sleep(Duration::from_millis(200));
                if s2.load(Ordering::Relaxed) {
                    break;
                }
                draw(&p);
            }
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        });
        ProgressBar {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops the bar and clears its line.
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_files_bytes_rate_and_eta() {
        let s = ProgressSnapshot {
            files: 3,
            bytes: 1048576,
            records: 5000,
        };
        let l = line(s, 10, 4 * 1048576, Duration::from_secs(2), 20);
        assert_eq!(
            l,
            "[#####---------------]  25% 3/10 files, 1.0/4.0 MiB, 2,500 records/s, ETA 00:06"
        );
    }
}
