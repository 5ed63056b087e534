//! The flags of the commands that work on rule folders rather than logs: expand-list,
//! level-tuning (Hayabusa 3.9.0's, `-r` a folder defaulting to `rules`) and
//! update-rules.

use super::groups::{AcceptedConsoleFlags, NoColorFlag, QuietArgs, RuleFolderArg};
use clap::Args;
use std::path::PathBuf;

/// `expand-list` options.
#[derive(Args, Debug)]
pub struct ExpandListArgs {
    /// `-r`.
    #[command(flatten)]
    pub rules: RuleFolderArg,
    /// Quiet (accepted for Hayabusa's command lines; nothing else is printed).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// `-K`.
    #[command(flatten)]
    pub color: NoColorFlag,
}

/// Where Hayabusa keeps the tuning file.
const TUNING: &str = "./rules/config/level_tuning.txt";

/// `level-tuning` options.
#[derive(Args, Debug)]
pub struct LevelTuningArgs {
    /// The tuning file: `id,new_level` lines after a header (Hayabusa's format).
    #[arg(short = 'f', long = "file", value_name = "FILE", default_value = TUNING)]
    pub file: PathBuf,
    /// `-r`: the rules rewritten.
    #[command(flatten)]
    pub rules: RuleFolderArg,
    /// `-q`, `-K`.
    #[command(flatten)]
    pub console: QuietArgs,
}

/// `update-rules` options (Hayabusa 3.9.0's `-r`, and where to download from).
#[derive(Args, Debug)]
pub struct UpdateRulesArgs {
    /// The folder to update (a git checkout, or absent or empty: cloned into). Default:
    /// $XDG_DATA_HOME/scanner/rules, else ~/.local/share/scanner/rules.
    #[arg(short = 'r', long = "rules", value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// The git repository to download (https, ssh or file URL). Default: the one the set
    /// came from, else https://github.com/Yamato-Security/hayabusa-rules.git.
    #[arg(long = "url", value_name = "URL")]
    pub url: Option<String>,
    /// Stop git after this many seconds.
    #[arg(long = "timeout", value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,
    /// Quiet: only the counts, not each changed rule.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// `-Q`, `-K`.
    #[command(flatten)]
    pub accepted: AcceptedConsoleFlags,
}
