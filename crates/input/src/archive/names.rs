//! A member's name as shown: the bytes its archive stores, with `%XX` escapes decoded
//! (Velociraptor stores `C:` as `C%3A` and `\\.\C:` as `%5C%5C.%5CC%3A`), as UTF-8
//! (invalid sequences and NUL shown as U+FFFD). The name is never used as a path on
//! this machine, so `..`, a leading `/` or a drive letter in it are only text.

/// The name shown for a member stored as `raw`.
pub(crate) fn shown_name(raw: &[u8]) -> String {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        if b == b'%' && i + 2 < raw.len() {
            if let (Some(h), Some(l)) = (hex(raw[i + 1]), hex(raw[i + 2])) {
                bytes.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        bytes.push(b);
        i += 1;
    }
    String::from_utf8_lossy(&bytes).replace('\0', "\u{FFFD}")
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn velociraptor_components_are_decoded_and_nothing_else_changes() {
        assert_eq!(
            shown_name(b"uploads/auto/C%3A/Windows/System32/winevt/Logs/Security.evtx"),
            "uploads/auto/C:/Windows/System32/winevt/Logs/Security.evtx"
        );
        assert_eq!(
            shown_name(b"uploads/ntfs/%5C%5C.%5CC%3A/Windows/x.evtx"),
            "uploads/ntfs/\\\\.\\C:/Windows/x.evtx"
        );
        assert_eq!(shown_name(b"100%.evtx"), "100%.evtx");
        assert_eq!(shown_name(b"a%4"), "a%4");
        assert_eq!(
            shown_name(b"../../etc/passwd\0x"),
            "../../etc/passwd\u{FFFD}x"
        );
        assert_eq!(shown_name(b"bad\xff"), "bad\u{FFFD}");
    }
}
