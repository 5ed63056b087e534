//! YAML read with a bound on what it costs: every YAML text scanner reads (rule files,
//! `logsource.yaml`, `data_mapping/*.yaml`, the rule files `expand-list` looks into)
//! goes through [`documents`] or [`document`], which build `yaml_serde` values.
//!
//! What it is not: it knows nothing of Sigma (a rule is the rules crate's reading of
//! these values), and it reads only text (the caller opens and caps the file).
//!
//! Two decisions shape it:
//!
//! - Rule folders may hold what an attacker wrote, and an alias (`*a`) repeats the
//!   whole node its anchor names: a few hundred kilobytes of aliases to aliases expand
//!   to gigabytes. Every node and scalar byte built is charged to a budget of the
//!   text's length plus a fixed allowance ([`NODE_ALLOWANCE`], [`TEXT_ALLOWANCE`]), and
//!   reading stops at the first node over it ([`Error::Expansion`]). Flow brackets
//!   nested past [`MAX_FLOW_DEPTH`] (the parser's time grows with the square of their
//!   depth) are told by [`nests_too_deep`] before any parse.
//! - The block style rule files are written in is read directly (`block`), to the
//!   values `yaml_serde` builds, in about a quarter of the instructions (a first load of
//!   hayabusa-rules 3,126 → 1,327 M, `docs/performance.md`); any text outside that
//!   subset is parsed by `yaml_serde` (`bounded`), so every error and its text are
//!   `yaml_serde`'s ([`Error::Yaml`]).
//!
//! ```
//! let docs: Vec<_> = scanner_yaml::documents("a: 1\n---\nb: [2]\n").collect();
//! assert_eq!(docs.len(), 2);
//! assert_eq!(docs[1].as_ref().unwrap()["b"][0], yaml_serde::Value::from(2));
//! let bomb = "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n";
//! assert!(scanner_yaml::document(bomb).is_ok(), "within the allowance");
//! ```

#![warn(missing_docs)]

mod block;
mod bounded;
mod error;
mod flow;

pub use crate::{
    bounded::{document, documents, scalar_text, NODE_ALLOWANCE, TEXT_ALLOWANCE},
    error::Error,
    flow::{nests_too_deep, MAX_FLOW_DEPTH},
};
