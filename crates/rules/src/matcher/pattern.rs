//! Sigma string values: wildcards, escapes, and the plain-string shapes they reduce to.
//!
//! A value is parsed once, at load time, into pieces. Most values reduce to an exact,
//! prefix, suffix or substring test on the lowercased field value; only values with a
//! wildcard in the middle need an (anchored) regex.

/// A piece of a parsed Sigma string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal text.
    Lit(String),
    /// `*`: any run of characters, possibly empty.
    Star,
    /// `?`: exactly one character.
    One,
}

/// Parses a Sigma value: `*` and `?` are wildcards; `\*`, `\?` and `\\` are escapes;
/// a backslash before anything else (or at the end) is a literal backslash.
pub fn parse(value: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    let mut lit = String::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some(&n @ ('*' | '?' | '\\')) => {
                    lit.push(n);
                    chars.next();
                }
                _ => lit.push('\\'),
            },
            '*' | '?' => {
                if !lit.is_empty() {
                    out.push(Piece::Lit(std::mem::take(&mut lit)));
                }
                let p = if c == '*' { Piece::Star } else { Piece::One };
                // Consecutive stars are one star.
                if !(p == Piece::Star && out.last() == Some(&Piece::Star)) {
                    out.push(p);
                }
            }
            _ => lit.push(c),
        }
    }
    if !lit.is_empty() {
        out.push(Piece::Lit(lit));
    }
    out
}

/// Pieces of a literal (no wildcard interpretation), e.g. an encoded value.
pub fn literal(value: &str) -> Vec<Piece> {
    if value.is_empty() {
        Vec::new()
    } else {
        vec![Piece::Lit(value.to_string())]
    }
}

/// What a parsed pattern reduces to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// The whole value equals the text.
    Exact(String),
    /// The value starts with the text.
    Prefix(String),
    /// The value ends with the text.
    Suffix(String),
    /// The value contains the text.
    Contains(String),
    /// Any value at all (a lone `*`).
    Any,
    /// Needs a regex: wildcards in the middle, or `?`.
    Glob(Vec<Piece>),
}

/// Reduces pieces to the cheapest shape that tests them exactly.
pub fn shape(pieces: Vec<Piece>) -> Shape {
    use Piece::*;
    match pieces.as_slice() {
        [] => Shape::Exact(String::new()),
        [Lit(s)] => Shape::Exact(s.clone()),
        [Star] => Shape::Any,
        [Lit(s), Star] => Shape::Prefix(s.clone()),
        [Star, Lit(s)] => Shape::Suffix(s.clone()),
        [Star, Lit(s), Star] => Shape::Contains(s.clone()),
        _ => Shape::Glob(pieces),
    }
}

/// The anchored regex source for pieces, matched against text that is lowercased
/// (when `lower`) the same way.
pub fn glob_regex(pieces: &[Piece], lower: bool) -> String {
    let mut re = String::from("(?s)^");
    for p in pieces {
        match p {
            Piece::Lit(s) if lower => re.push_str(&regex::escape(&crate::event::lowercase(s))),
            Piece::Lit(s) => re.push_str(&regex::escape(s)),
            Piece::Star => re.push_str(".*"),
            Piece::One => re.push('.'),
        }
    }
    re.push('$');
    re
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_spec() {
        assert_eq!(parse(r"a\*b"), vec![Piece::Lit("a*b".into())]);
        assert_eq!(parse(r"a\?b"), vec![Piece::Lit("a?b".into())]);
        assert_eq!(
            parse(r"C:\\*"),
            vec![Piece::Lit(r"C:\".into()), Piece::Star]
        );
        assert_eq!(parse(r"\Windows\"), vec![Piece::Lit(r"\Windows\".into())]);
        assert_eq!(parse(r"a\\\*"), vec![Piece::Lit(r"a\*".into())]);
    }

    #[test]
    fn shapes() {
        assert_eq!(shape(parse("*.exe")), Shape::Suffix(".exe".into()));
        assert_eq!(shape(parse("cmd*")), Shape::Prefix("cmd".into()));
        assert_eq!(shape(parse("*whoami*")), Shape::Contains("whoami".into()));
        assert_eq!(shape(parse("**")), Shape::Any);
        assert!(matches!(shape(parse("a*b")), Shape::Glob(_)));
        assert!(matches!(shape(parse("3????")), Shape::Glob(_)));
        assert_eq!(glob_regex(&parse("A*b?"), true), "(?s)^a.*b.$");
    }
}
