//! Why a rule, a part of one, or a config file could not be read: one error type for the
//! crate, [`RuleError`], whose [`ErrorKind`] says what was wrong and whose context says
//! where (`selection 'sel': field 'Image|bogus': unknown modifier 'bogus'`).
//!
//! The text an error displays is the text the load report prints, so it is part of the
//! output: changing a message changes `rules check` and the scan summary.

use std::fmt;

/// An error met reading or compiling a rule, a condition, a log-source table or a config
/// file.
///
/// Small (one pointer), so that compiling, which returns a `Result` per value, pays
/// nothing for it on success.
#[derive(Debug)]
pub struct RuleError(Box<Repr>);

#[derive(Debug)]
struct Repr {
    kind: ErrorKind,
    /// Where, innermost first (each caller that knows more pushes its part).
    context: Vec<Context>,
}

/// What was wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A part of a rule or file is missing or of the wrong YAML type; the text says which.
    Malformed(&'static str),
    /// A map key that should be text is not (`what` is `selection` or `detection`;
    /// `key` the key as YAML debug text).
    KeyNotText {
        /// Which map.
        what: &'static str,
        /// The key.
        key: String,
    },
    /// Invalid YAML, or YAML whose aliases expand past the budget for its text
    /// (`scanner_yaml`, which says which).
    Yaml(scanner_yaml::Error),
    /// A rule, config or placeholder file could not be read (`scanner_files`, which
    /// says why: the system's error, not a regular file, too large, not text).
    File(scanner_files::TextError),
    /// A regex that compiles to more than the limit for one regex.
    RegexTooLarge {
        /// The pattern.
        pattern: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// A regex whose compiled size would take the rule set past its total budget.
    RegexBudget {
        /// The pattern.
        pattern: String,
        /// What the rule set had left, in bytes.
        left: usize,
        /// The total budget, in bytes.
        limit: usize,
    },
    /// `level` names no Sigma level.
    UnknownLevel(String),
    /// A character no condition may hold.
    UnexpectedChar(char),
    /// A token where the condition grammar allows none (its debug text).
    UnexpectedToken(String),
    /// A condition nests `not` and parentheses deeper than the limit.
    ConditionTooDeep {
        /// The deepest nesting allowed.
        limit: u32,
    },
    /// A condition names a selection the rule does not have.
    UnknownSelection(String),
    /// `x of` without a name pattern or `them` after it (the quantifier).
    QuantifierWithoutTarget(String),
    /// `x of pattern` where the pattern names no selection.
    QuantifierMatchesNothing {
        /// `1`, `any`, `all` or a number.
        quantifier: String,
        /// The name pattern.
        target: String,
    },
    /// `x of` where `x` is neither `1`, `any`, `all` nor a positive number.
    NotAQuantifier(String),
    /// A parenthesis without its partner.
    UnbalancedParenthesis,
    /// A condition that stops where more must follow.
    ConditionEndsEarly,
    /// An empty condition.
    EmptyCondition,
    /// An empty modifier (`field||contains`).
    EmptyModifier,
    /// A modifier this crate does not know.
    UnknownModifier(String),
    /// Modifiers that exclude each other or do not apply here; the text says which.
    Modifiers(&'static str),
    /// An `expand` placeholder (its name) with no values: the rule is valid but disabled.
    NoPlaceholderValues(String),
    /// A `gt`/`gte`/`lt`/`lte` value that is not a number.
    NotANumber(String),
    /// A `cidr` value that is not an address or network.
    NotANetwork(String),
    /// A `cidr` value whose prefix length is out of range.
    PrefixLength(String),
    /// `windash` on a value with so many option dashes that its variants pass the limit.
    TooManyVariants {
        /// Option dashes in the value.
        dashes: usize,
        /// Variants they would give.
        variants: usize,
        /// Most variants allowed.
        limit: usize,
    },
    /// A regex that does not compile (or is too large).
    Regex {
        /// The pattern.
        pattern: String,
        /// Why.
        error: regex::Error,
    },
    /// A timespan that is not `<number><unit>`.
    Timespan(String),
    /// A timespan of an unknown unit.
    TimespanUnit(String),
    /// A legacy aggregation that does not parse.
    Aggregation(String),
    /// A legacy aggregation other than `count()`.
    UnsupportedAggregation(String),
    /// A correlation type this crate does not know.
    UnsupportedCorrelation(String),
    /// An unknown key in a correlation's condition (its debug text).
    CorrelationKey(String),
    /// A correlation condition's bound that is not a whole number (the key's debug text).
    CorrelationBound(String),
}

/// Where an error sits, outermost last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Context {
    /// A selection entry, by its key (`field|modifiers`).
    Field(String),
    /// A selection, by name.
    Selection(String),
    /// A filter document's detection.
    Filter,
    /// A file or folder, by name or path.
    File(String),
    /// An entry of a log-source table (`category process_creation`).
    Entry(String),
}

impl RuleError {
    /// What was wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The same error, inside `context` (which the text then names first).
    pub(crate) fn within(mut self, context: Context) -> RuleError {
        self.0.context.push(context);
        self
    }
}

impl From<ErrorKind> for RuleError {
    fn from(kind: ErrorKind) -> RuleError {
        RuleError(Box::new(Repr {
            kind,
            context: Vec::new(),
        }))
    }
}

impl From<scanner_yaml::Error> for RuleError {
    fn from(e: scanner_yaml::Error) -> RuleError {
        ErrorKind::Yaml(e).into()
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Context::Field(key) => write!(f, "field '{key}'"),
            Context::Selection(name) => write!(f, "selection '{name}'"),
            Context::Filter => f.write_str("filter"),
            Context::File(name) | Context::Entry(name) => f.write_str(name),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            Malformed(text) | Modifiers(text) => f.write_str(text),
            KeyNotText { what, key } => write!(f, "{what} key {key} is not text"),
            Yaml(e) => write!(f, "{e}"),
            File(e) => write!(f, "{e}"),
            RegexTooLarge { pattern, limit } => write!(
                f,
                "regex '{pattern}' compiles to more than {} KiB, the limit for one regex",
                limit >> 10
            ),
            RegexBudget {
                pattern,
                left,
                limit,
            } => write!(
                f,
                "regex '{pattern}' compiles to more than the {} KiB left of the rule set's {} MiB budget for compiled regexes",
                left >> 10,
                limit >> 20
            ),
            UnknownLevel(s) => write!(f, "unknown level '{s}'"),
            UnexpectedChar(c) => write!(f, "unexpected character '{c}' in condition"),
            UnexpectedToken(t) => write!(f, "unexpected {t} in condition"),
            ConditionTooDeep { limit } => write!(
                f,
                "condition nests deeper than {limit} levels of 'not' and parentheses"
            ),
            UnknownSelection(name) => write!(
                f,
                "condition names '{name}', which is not a selection of the rule"
            ),
            QuantifierWithoutTarget(q) => {
                write!(f, "'{q} of' must be followed by a name pattern or 'them'")
            }
            QuantifierMatchesNothing { quantifier, target } => {
                write!(f, "'{quantifier} of {target}' matches no selection")
            }
            NotAQuantifier(q) => write!(f, "'{q} of' is not a quantifier"),
            UnbalancedParenthesis => f.write_str("unbalanced parenthesis in condition"),
            ConditionEndsEarly => f.write_str("condition ends too early"),
            EmptyCondition => f.write_str("empty condition"),
            EmptyModifier => f.write_str("empty modifier"),
            UnknownModifier(m) => write!(f, "unknown modifier '{m}'"),
            NoPlaceholderValues(name) => write!(
                f,
                "placeholder %{name}% has no values (add expand/{name}.txt to the config folder)"
            ),
            NotANumber(v) => write!(f, "'{v}' is not a number"),
            NotANetwork(v) => write!(f, "'{v}' is not an IP network"),
            PrefixLength(v) => write!(f, "'{v}' has an invalid prefix length"),
            TooManyVariants {
                dashes,
                variants,
                limit,
            } => write!(
                f,
                "windash on a value with {dashes} option dashes would give {variants} variants (limit {limit})"
            ),
            Regex { pattern, error } => write!(f, "regex '{pattern}' does not compile: {error}"),
            Timespan(s) => write!(f, "timespan '{s}' is not <number><unit>"),
            TimespanUnit(s) => write!(f, "timespan '{s}' has an unknown unit (s, m, h, d, w, M, y)"),
            Aggregation(t) => write!(
                f,
                "aggregation '{t}' is not 'count([field]) [by f1, f2] <op> N'"
            ),
            UnsupportedAggregation(t) => write!(
                f,
                "aggregation '{t}' is not supported (only count() is; near, min, max, avg and sum are not)"
            ),
            UnsupportedCorrelation(t) => write!(f, "correlation type '{t}' is not supported"),
            CorrelationKey(k) => write!(f, "unknown correlation condition key {k}"),
            CorrelationBound(k) => {
                write!(f, "correlation condition {k} is not a whole number")
            }
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.context.iter().rev() {
            write!(f, "{c}: ")?;
        }
        write!(f, "{}", self.0.kind)
    }
}

impl std::error::Error for RuleError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Yaml(e) => Some(e),
            ErrorKind::File(e) => Some(e),
            ErrorKind::Regex { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(kind: ErrorKind) -> String {
        RuleError::from(kind).to_string()
    }

    #[test]
    fn context_reads_outermost_first() {
        let e = RuleError::from(ErrorKind::UnknownModifier("bogus".into()))
            .within(Context::Field("Image|bogus".into()))
            .within(Context::Selection("sel".into()))
            .within(Context::Filter);
        assert_eq!(
            e.to_string(),
            "filter: selection 'sel': field 'Image|bogus': unknown modifier 'bogus'"
        );
        assert!(matches!(e.kind(), ErrorKind::UnknownModifier(m) if m == "bogus"));
        let e = RuleError::from(ErrorKind::Malformed("a variant has no channel"))
            .within(Context::Entry("category x".into()))
            .within(Context::File("logsource.yaml".into()));
        assert_eq!(
            e.to_string(),
            "logsource.yaml: category x: a variant has no channel"
        );
    }

    #[test]
    fn messages_keep_the_load_reports_text() {
        assert_eq!(
            text(ErrorKind::NoPlaceholderValues("admins".into())),
            "placeholder %admins% has no values (add expand/admins.txt to the config folder)"
        );
        assert_eq!(
            text(ErrorKind::ConditionTooDeep { limit: 64 }),
            "condition nests deeper than 64 levels of 'not' and parentheses"
        );
        assert_eq!(
            text(ErrorKind::QuantifierMatchesNothing {
                quantifier: "1".into(),
                target: "filter_*".into()
            }),
            "'1 of filter_*' matches no selection"
        );
        assert_eq!(
            text(ErrorKind::TooManyVariants {
                dashes: 5,
                variants: 3125,
                limit: 625
            }),
            "windash on a value with 5 option dashes would give 3125 variants (limit 625)"
        );
        assert_eq!(
            text(ErrorKind::KeyNotText {
                what: "selection",
                key: "Number(1)".into()
            }),
            "selection key Number(1) is not text"
        );
        assert_eq!(
            text(ErrorKind::Timespan("5x5".into())),
            "timespan '5x5' is not <number><unit>"
        );
        assert_eq!(
            text(ErrorKind::CorrelationKey("String(\"foo\")".into())),
            "unknown correlation condition key String(\"foo\")"
        );
    }

    #[test]
    fn wrapped_errors_are_sources() {
        use std::error::Error as _;
        let pattern = String::from("(");
        let re = regex::Regex::new(&pattern).unwrap_err();
        let e = RuleError::from(ErrorKind::Regex {
            pattern: "(".into(),
            error: re.clone(),
        });
        assert_eq!(e.to_string(), format!("regex '(' does not compile: {re}"));
        assert!(e.source().is_some());
        assert!(RuleError::from(ErrorKind::EmptyCondition)
            .source()
            .is_none());
    }
}
