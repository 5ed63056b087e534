//! The exit codes every command ends with, as Hayabusa users script against them.

/// Success.
pub const OK: i32 = 0;
/// A fatal error: nothing (or nothing complete) was written.
pub const FATAL: i32 = 1;
/// Finished, but some inputs (files, records or rules) had errors, which were reported.
pub const INPUT_ERRORS: i32 = 3;

/// Prints each of `errors` on standard error as `LABEL: error` (escaped for the
/// terminal) and returns the run's code: [`INPUT_ERRORS`] when there were any, else
/// [`OK`].
pub fn reporting<E: std::fmt::Display>(label: &str, errors: &[E]) -> i32 {
    for e in errors {
        eprintln!("{label}: {}", crate::terminal::safe(&e.to_string()));
    }
    if errors.is_empty() {
        OK
    } else {
        INPUT_ERRORS
    }
}
