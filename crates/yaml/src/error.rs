//! Why a YAML text could not be read. The texts are part of the output (the rules
//! crate's load report prints them), so they stay as they are.

use std::fmt;

/// A YAML text that could not be read.
#[derive(Debug)]
pub enum Error {
    /// Invalid YAML, as `yaml_serde` says.
    Yaml(yaml_serde::Error),
    /// YAML whose aliases expand past the budget for its text.
    Expansion {
        /// The most nodes the text could build.
        nodes: usize,
        /// The most bytes of scalar text it could build.
        bytes: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Yaml(e) => write!(f, "{e}"),
            Error::Expansion { nodes, bytes } => write!(
                f,
                "expands to more than {nodes} nodes or {bytes} bytes of text \
                 (the file's size plus a fixed allowance): aliases repeat too much"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Yaml(e) => Some(e),
            Error::Expansion { .. } => None,
        }
    }
}
