//! The exit codes every command ends with, as Hayabusa users script against them.

/// Success.
pub const OK: i32 = 0;
/// A fatal error: nothing (or nothing complete) was written.
pub const FATAL: i32 = 1;
/// Finished, but some inputs (files, records or rules) had errors, which were reported.
pub const INPUT_ERRORS: i32 = 3;
