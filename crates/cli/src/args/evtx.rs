//! `evtx write` and `evtx generate`: writing EVTX files for rule authors and tests. Their
//! `-o` is the EVTX file itself, required ([`EvtxTarget`]), so it shares no group with
//! the scanning commands' `-o`; their `-C` is the shared one.

use super::groups::{OverwriteFile, OverwriteFiles};
use clap::Args;
use std::path::PathBuf;

/// `-o` of the `evtx` commands.
#[derive(Args, Debug)]
pub struct EvtxTarget {
    /// The EVTX file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// `evtx write` options.
#[derive(Args, Debug)]
pub struct EvtxWriteArgs {
    /// Source events: .xml, .json (one event or an array) or .jsonl.
    #[arg(long = "from", value_name = "FILE")]
    pub from: PathBuf,
    /// `-o`.
    #[command(flatten)]
    pub target: EvtxTarget,
    /// `-C`.
    #[command(flatten)]
    pub overwrite: OverwriteFile,
}

/// `evtx generate` options.
#[derive(Args, Debug)]
pub struct EvtxGenerateArgs {
    /// Number of records.
    #[arg(long = "records", value_name = "N")]
    pub records: u64,
    /// Seed: the same seed gives the same file.
    #[arg(long = "seed", default_value_t = 1)]
    pub seed: u64,
    /// `-o`.
    #[command(flatten)]
    pub target: EvtxTarget,
    /// Ground-truth file (`<EventRecordID>\t<rule id>` lines); default: OUTPUT with `.truth.tsv`.
    #[arg(long = "truth", value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// `-C`.
    #[command(flatten)]
    pub overwrite: OverwriteFiles,
}
