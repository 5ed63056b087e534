//! `scanner search`.

use crate::args::SearchArgs;

/// Runs the command; returns the exit code.
pub fn run(_a: &SearchArgs) -> i32 {
    crate::exit::FATAL
}
