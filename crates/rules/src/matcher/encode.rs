//! Value transformations done at load time: base64, base64offset, UTF-16 and windash.

use crate::error::{ErrorKind, RuleError};

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with `=` padding.
pub fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The three encodings of `data` at byte offsets 0, 1 and 2 inside a longer base64
/// text, with the characters that depend on the neighbouring bytes cut off.
pub fn base64_offsets(data: &[u8]) -> Vec<String> {
    const START: [usize; 3] = [0, 2, 3];
    const END_CUT: [usize; 3] = [0, 3, 2];
    (0..3)
        .map(|i| {
            let mut shifted = vec![b' '; i];
            shifted.extend_from_slice(data);
            let enc = base64(&shifted);
            let cut = END_CUT[(data.len() + i) % 3];
            let end = enc.len().saturating_sub(cut);
            enc.get(START[i]..end.max(START[i]))
                .unwrap_or("")
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// UTF-16 encodings selected by the `utf16le`/`wide`, `utf16be` and `utf16` modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Utf16 {
    /// Little endian (`utf16le`, `wide`).
    Le,
    /// Big endian (`utf16be`).
    Be,
    /// Little endian with a byte-order mark (`utf16`).
    Bom,
}

/// Encodes text as UTF-16 bytes.
pub fn utf16(text: &str, how: Utf16) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 2 + 2);
    if how == Utf16::Bom {
        out.extend_from_slice(&[0xFF, 0xFE]);
    }
    for u in text.encode_utf16() {
        let b = if how == Utf16::Be {
            u.to_be_bytes()
        } else {
            u.to_le_bytes()
        };
        out.extend_from_slice(&b);
    }
    out
}

/// The characters Windows command lines accept as option prefixes.
pub const WINDASH: [char; 5] = ['-', '/', '\u{2013}', '\u{2014}', '\u{2015}'];

/// Most variants one value may expand to under `windash` (5 per dash).
const WINDASH_LIMIT: usize = 5usize.pow(4);

/// Every variant of `value` with each `-` or `/` that starts a word (not preceded by a
/// word character, followed by one) replaced by each of [`WINDASH`].
pub fn windash(value: &str) -> Result<Vec<String>, RuleError> {
    let chars: Vec<char> = value.chars().collect();
    let word = |c: Option<&char>| c.is_some_and(|c| c.is_alphanumeric() || *c == '_');
    let spots: Vec<usize> = (0..chars.len())
        .filter(|&i| {
            matches!(chars[i], '-' | '/')
                && !word(i.checked_sub(1).and_then(|j| chars.get(j)))
                && word(chars.get(i + 1))
        })
        .collect();
    let total = 5usize.checked_pow(spots.len() as u32).unwrap_or(usize::MAX);
    if total > WINDASH_LIMIT {
        return Err(ErrorKind::TooManyVariants {
            dashes: spots.len(),
            variants: total,
            limit: WINDASH_LIMIT,
        }
        .into());
    }
    let mut out = Vec::with_capacity(total);
    for n in 0..total {
        let mut v = chars.clone();
        let mut k = n;
        for &s in &spots {
            v[s] = WINDASH[k % 5];
            k /= 5;
        }
        out.push(v.into_iter().collect());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_values() {
        assert_eq!(base64(b"whoami"), "d2hvYW1p");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }

    #[test]
    fn base64_offsets_match_the_spec_formula() {
        // Python: [b64encode(i*b' '+v)[s[i]:e[(len(v)+i)%3]] ...] for v = b'http://'
        assert_eq!(
            base64_offsets(b"http://"),
            vec!["aHR0cDovL", "h0dHA6Ly", "odHRwOi8v"]
        );
    }

    #[test]
    fn utf16_forms() {
        assert_eq!(utf16("ab", Utf16::Le), vec![b'a', 0, b'b', 0]);
        assert_eq!(utf16("ab", Utf16::Be), vec![0, b'a', 0, b'b']);
        assert_eq!(utf16("a", Utf16::Bom), vec![0xFF, 0xFE, b'a', 0]);
    }

    #[test]
    fn windash_expands_option_dashes_only() {
        let v = windash(" -enc ").unwrap();
        assert_eq!(v.len(), 5);
        assert!(v.contains(&" /enc ".to_string()));
        assert!(v.contains(&" \u{2014}enc ".to_string()));
        // A dash inside a word is not an option prefix.
        assert_eq!(windash("a-b").unwrap(), vec!["a-b".to_string()]);
    }
}
