//! Cells a spreadsheet would take for a formula (CSV injection): a cell that begins
//! with `=` is evaluated by Excel and LibreOffice (LibreOffice 7.4 imports `=1+1` as 2
//! and `=cmd|' /C calc'!A0` as a formula), Excel also evaluates `+`, `-` and `@` ones
//! (`-1+1`, `@SUM(1,1)`) as soon as they are more than a number, and OWASP adds a
//! leading tab or carriage return, which some importers strip before looking. With
//! `--excel-safe` such a cell is written with a leading `'`, OWASP's remedy: the cell
//! is then text (the quote stays visible: LibreOffice 7.4 imports `'=1+1` as that
//! text); its own text, leading whitespace included, is kept after the quote.
//!
//! Two kinds of cell that begin with `-` are left alone, because neither is a formula
//! and an analyst wants them as they are: a lone `-` (Hayabusa's mark of an empty value,
//! in many cells of every timeline; imported as the text `-`) and a plain number
//! (`-12`, `+3`, `-1e-3`: imported as numbers, which sorting or summing a column needs).
//! Anything more after the sign (`-1+1`, `-inf`, `- x`, `--x`) is neutralised.
//!
//! A cell that begins with spaces or line breaks and then a formula character is
//! neutralised too (an importer that trims the cell would find the formula), with its
//! whitespace kept. Other Unicode spaces and full-width signs are not looked at.

/// Whether `cell` may be read as a formula by a spreadsheet (see the module's text).
/// Most cells are decided by their first byte, without a scan.
pub fn is_formula(cell: &str) -> bool {
    match cell.as_bytes().first() {
        None => false,
        Some(b'\t' | b'\r') => true,
        Some(b' ' | b'\n' | 0x0b | 0x0c) => {
            starts_formula(cell.trim_start_matches([' ', '\t', '\r', '\n', '\x0b', '\x0c']))
        }
        Some(_) => starts_formula(cell),
    }
}

/// Whether `s` begins with a formula character, lone `-` and plain numbers aside.
fn starts_formula(s: &str) -> bool {
    match s.as_bytes().first() {
        Some(b'=' | b'@') => true,
        Some(b'+' | b'-') => s != "-" && !is_plain_number(s),
        _ => false,
    }
}

/// Whether `s` is a decimal number a spreadsheet reads as one: an optional sign, digits
/// with an optional decimal point (at least one digit), an optional exponent.
fn is_plain_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_characters_at_the_start_make_a_formula() {
        for f in [
            "=1+1",
            "=cmd|' /C calc'!A0",
            "+1+1",
            "-1+1",
            "-2+3+cmd|' /C calc'!A0",
            "@SUM(1,1)",
            "\t=1+1",
            "\tplain",
            "\r\nx",
            " =1+1",
            "\n@x",
            "  \r\n -x",
            "-inf",
            "-nan",
            "+",
            "--5",
            "- x",
            "-5-",
            "-1e",
            "-1.2.3",
            "-.",
            "-0x10",
            "-1,5",
        ] {
            assert!(is_formula(f), "{f:?}");
        }
    }

    #[test]
    fn other_cells_lone_dashes_and_plain_numbers_are_not_formulas() {
        for t in [
            "",
            "-",
            " -",
            "-12",
            "+3",
            "-1.5",
            "-.5",
            "-5.",
            "-1e-3",
            "+1E+10",
            "0",
            "WS-01",
            "a=b",
            "Cmdline: =1+1",
            "'=1",
            "＝1+1",
            "\u{a0}=1",
            " -5",
            " plain",
        ] {
            assert!(!is_formula(t), "{t:?}");
        }
    }
}
