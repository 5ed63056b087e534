//! Finding base64 in a field and saying what it decodes to, by Hayabusa 3.9.0's rules:
//! a token is a run of word characters, `+` and `/`; it counts when it is at least 10
//! long, not only letters, and canonical base64 (standard alphabet, no padding, unused
//! bits zero); its bytes are UTF-16 LE, UTF-16 BE or UTF-8 text when all of at least 5
//! bytes decode to ASCII, else a binary whose type its magic bytes name, else dropped.

/// What a token decoded to.
pub enum Decoded {
    /// Text, in the encoding named (`UTF-16 LE`, `UTF-16 BE`, `UTF-8`).
    Text(&'static str, String),
    /// Bytes of a known file type (its MIME type) and their length.
    Binary(&'static str, usize),
}

/// One base64 token found in a field.
pub struct Found<'a> {
    /// The token as written.
    pub token: &'a str,
    /// What it decodes to.
    pub decoded: Decoded,
}

fn symbol(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes unpadded canonical base64 (`None` if it is not).
fn decode_unpadded(s: &[u8]) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in s {
        acc = (acc << 6) | u32::from(symbol(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // The bits left over must be zero (a canonical encoding).
    (acc == 0).then_some(out)
}

/// Whether `s` is canonical base64, unpadded or with exactly the padding it needs.
pub fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    let body = b
        .strip_suffix(b"==")
        .or_else(|| b.strip_suffix(b"="))
        .unwrap_or(b);
    let pad = b.len() - body.len();
    if pad > 0 && (b.len() % 4 != 0 || (body.len() % 4 == 2) != (pad == 2)) {
        return false;
    }
    decode_unpadded(body).is_some()
}

/// The words of `field`: runs of word characters (Unicode letters, digits, `_`), `+`, `/`.
fn tokens(field: &str) -> impl Iterator<Item = &str> {
    field
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '+' || c == '/'))
        .filter(|t| !t.is_empty())
}

/// `bytes` as text when every unit of at least 5 bytes is ASCII.
fn as_text(bytes: &[u8]) -> Option<(&'static str, String)> {
    if bytes.len() < 5 {
        return None;
    }
    let units = |le: bool| -> Option<String> {
        if bytes.len() % 2 != 0 {
            return None;
        }
        bytes
            .chunks_exact(2)
            .map(|p| {
                let u = if le {
                    u16::from_le_bytes([p[0], p[1]])
                } else {
                    u16::from_be_bytes([p[0], p[1]])
                };
                (u < 0x80).then_some(u as u8 as char)
            })
            .collect()
    };
    if let Some(s) = units(true) {
        return Some(("UTF-16 LE", s));
    }
    if let Some(s) = units(false) {
        return Some(("UTF-16 BE", s));
    }
    bytes
        .is_ascii()
        .then(|| ("UTF-8", bytes.iter().map(|&b| b as char).collect()))
}

/// The MIME type of a few kinds of file, by their first bytes.
fn file_type(b: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (&[0x1f, 0x8b, 0x08], "application/gzip"),
        (b"PK\x03\x04", "application/zip"),
        (b"\x7fELF", "application/x-executable"),
        (b"%PDF", "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (&[0xff, 0xd8, 0xff], "image/jpeg"),
        (b"GIF8", "image/gif"),
        (b"7z\xbc\xaf\x27\x1c", "application/x-7z-compressed"),
        (b"Rar!\x1a\x07", "application/vnd.rar"),
        (b"BZh", "application/x-bzip2"),
        (&[0xfd, b'7', b'z', b'X', b'Z', 0x00], "application/x-xz"),
        (b"MSCF", "application/vnd.ms-cab-compressed"),
        (&[0x28, 0xb5, 0x2f, 0xfd], "application/zstd"),
        (b"MZ", "application/vnd.microsoft.portable-executable"),
    ];
    MAGIC
        .iter()
        .find(|(m, _)| b.starts_with(m))
        .map(|(_, t)| *t)
}

/// The base64 tokens of `field` that decode to text or a known file type, in order.
pub fn find(field: &str) -> impl Iterator<Item = Found<'_>> {
    tokens(field).filter_map(|token| {
        if token.len() < 10 || token.chars().all(char::is_alphabetic) {
            return None;
        }
        let bytes = decode_unpadded(token.as_bytes())?;
        let decoded = match as_text(&bytes) {
            Some((enc, s)) => Decoded::Text(enc, s),
            None => Decoded::Binary(file_type(&bytes)?, bytes.len()),
        };
        Some(Found { token, decoded })
    })
}

/// The field with every copy of `token` (and the `=` padding after it) shown as
/// `<Base64String>`.
pub fn original_field(field: &str, token: &str) -> String {
    const MARK: &str = "<Base64String>";
    let replaced = field.replace(token, MARK);
    let mut out = String::with_capacity(replaced.len());
    let mut rest = replaced.as_str();
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at + MARK.len()]);
        rest = rest[at + MARK.len()..].trim_start_matches('=');
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_base64_only() {
        assert!(is_base64("SGVsbG8sIHdvcmxkIQ"));
        assert!(is_base64("SGVsbG8sIHdvcmxkIQ=="));
        assert!(!is_base64("SGVsbG8sIHdvcmxkIQ="));
        assert!(!is_base64("SGVsbG8sIHdvcmxkIR"), "unused bits set");
        assert!(!is_base64("Hello, world!"));
        assert!(!is_base64("abcde"), "length 1 mod 4");
    }

    #[test]
    fn text_encodings_and_file_types() {
        // "Write-Host hi" in UTF-16 LE, "Hello world" in UTF-8; gzip magic.
        let le: Vec<Found> = find("-e VwByAGkAdABlAC0ASABvAHMAdAAgAGgAaQA x").collect();
        assert_eq!(le.len(), 1);
        assert!(matches!(&le[0].decoded, Decoded::Text("UTF-16 LE", s) if s == "Write-Host hi"));
        // "Hello world" in UTF-16 LE is only letters: 3.9.0 passes over it.
        assert_eq!(find("SABlAGwAbABvACAAdwBvAHIAbABkAA").count(), 0);
        let u8s: Vec<Found> = find("x SGVsbG8gd29ybGQ").collect();
        assert!(matches!(&u8s[0].decoded, Decoded::Text("UTF-8", s) if s == "Hello world"));
        let gz: Vec<Found> = find("H4sIAAAAAAAA").collect();
        assert!(matches!(
            gz[0].decoded,
            Decoded::Binary("application/gzip", 9)
        ));
        // Short, all letters, or undecodable: nothing.
        assert_eq!(find("abc SGVsbG8 ThisIsAllLetters").count(), 0);
    }

    #[test]
    fn original_field_marks_every_copy_and_drops_padding() {
        assert_eq!(
            original_field("a QUJDREVGR0g= b QUJDREVGR0g", "QUJDREVGR0g"),
            "a <Base64String> b <Base64String>"
        );
    }
}
