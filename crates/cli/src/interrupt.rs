//! Ctrl-C and termination signals: the temporary files of the run (spilled detections,
//! outputs not yet renamed into place) are removed, and the process exits with 128 +
//! the signal's number (130 for Ctrl-C), leaving no partial output behind. On Windows
//! the console's Ctrl-C and Ctrl-Break do the same (exit 130), and closing the console,
//! logging off or shutting down exits with 129 (as SIGHUP).
//!
//! On Unix the signals are blocked in every thread and taken by one thread with `sigwait`, so
//! the clean-up runs as ordinary code, not inside a signal handler. The mask is not
//! passed on: `update-rules` runs git with no signal blocked, in a process group of its
//! own that this thread kills before exiting.

/// Starts the signal thread; call first thing in `main`, before any other thread.
#[cfg(unix)]
pub fn install() {
    // SAFETY: the sigset is initialised by sigemptyset before use, and
    // pthread_sigmask/sigwait only read it; no Rust invariant is involved.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let waiter = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut sig = 0;
                if libc::sigwait(&set, &mut sig) == 0 {
                    let n = scanner_files::remove_all_temp_files_and_hold();
                    // git first (its group, with the helpers it started), so nothing
                    // writes into the update's folder while it is removed.
                    crate::update_rules::stop_git_and_hold();
                    crate::update_rules::remove_pending_and_hold();
                    eprintln!("\ninterrupted (signal {sig}); {n} temporary file(s) removed");
                    std::process::exit(128 + sig);
                }
            });
        if waiter.is_err() {
            // Nobody would take the signals: let them act as they normally do.
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Registers the console control handler. Windows runs it on a thread of its own, so
/// the clean-up runs as ordinary code, as on Unix; git, in the same console, gets the
/// event itself.
#[cfg(windows)]
pub fn install() {
    use windows_sys::Win32::System::Console::{
        SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_C_EVENT,
    };

    unsafe extern "system" fn on_event(event: u32) -> windows_sys::core::BOOL {
        let n = scanner_files::remove_all_temp_files_and_hold();
        crate::update_rules::remove_pending_and_hold();
        eprintln!("\ninterrupted (console event {event}); {n} temporary file(s) removed");
        std::process::exit(if event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT {
            130
        } else {
            129
        })
    }
    // SAFETY: `on_event` is a function with the signature the handler list takes, and
    // it stays valid for the life of the process.
    unsafe {
        SetConsoleCtrlHandler(Some(on_event), 1);
    }
}

/// Elsewhere signals act as they normally do.
#[cfg(not(any(unix, windows)))]
pub fn install() {}
