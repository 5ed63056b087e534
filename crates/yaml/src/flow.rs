//! The nesting of flow collections (`[`, `{`), told before a text is parsed: the YAML
//! parser's time grows with the square of it, so a hostile file of a few kilobytes of
//! brackets would take minutes; real rules nest a few levels.

/// Deepest nesting of YAML flow collections a rule file may have.
pub const MAX_FLOW_DEPTH: usize = 64;

/// Whether flow brackets may nest deeper than [`MAX_FLOW_DEPTH`] in `text`: never
/// when it opens no more brackets than that in all (nearly every rule file: the count is
/// a vector scan, where `flow_depth`'s walk was 5% of a first load), else as
/// `flow_depth` estimates.
pub fn nests_too_deep(text: &str) -> bool {
    let openers = memchr::memchr2_iter(b'[', b'{', text.as_bytes());
    openers.take(MAX_FLOW_DEPTH + 1).count() > MAX_FLOW_DEPTH && flow_depth(text) > MAX_FLOW_DEPTH
}

/// The deepest nesting of flow brackets outside quotes and comments (a cheap upper
/// estimate: quotes are taken to end with their line).
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for line in text.lines() {
        let mut quote = None;
        let mut prev = b' ';
        for &c in line.as_bytes() {
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'\'' | b'"') => quote = Some(c),
                (None, b'#') if prev == b' ' || prev == b'\t' => break,
                (None, b'[' | b'{') => {
                    depth += 1;
                    max = max.max(depth);
                }
                (None, b']' | b'}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            prev = c;
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_texts_with_more_openers_than_the_bound_are_walked() {
        let deep = |n: usize| format!("a: {}{}", "[".repeat(n), "]".repeat(n));
        assert!(!nests_too_deep(&deep(MAX_FLOW_DEPTH)));
        assert!(nests_too_deep(&deep(MAX_FLOW_DEPTH + 1)));
        // Many openers, none nested: walked, and let through.
        let flat = "a: [1]\n".repeat(MAX_FLOW_DEPTH * 2);
        assert!(!nests_too_deep(&flat));
        // Brackets in quotes do not nest.
        let quoted = format!("a: '{}'", "[".repeat(MAX_FLOW_DEPTH * 2));
        assert!(!nests_too_deep(&quoted));
    }

    #[test]
    fn flow_depth_skips_quotes_and_comments() {
        assert_eq!(flow_depth("a: [1, [2, {b: 3}]]"), 3);
        assert_eq!(flow_depth("a: '[[[[' # [[[["), 0);
        assert_eq!(
            flow_depth("a: x#[["),
            2,
            "a # inside a word starts no comment"
        );
    }
}
