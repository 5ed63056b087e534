//! Sigma conditions: `and`, `or`, `not`, parentheses, `1 of`/`any of`/`all of`/`N of`
//! over name patterns and `them`, parsed into a tree over selection indices.
//!
//! Precedence, loosest first: `or`, `and`, `not`, `x of`, parentheses. Quantifiers are
//! expanded at load time into the selections they name.

use crate::error::{ErrorKind, RuleError};

/// A compiled condition over a rule's selections (by index).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Cond {
    /// Selection `i` matches.
    Sel(u32),
    /// Negation.
    Not(#[serde(deserialize_with = "scanner_files::nested")] Box<Cond>),
    /// All of.
    And(#[serde(deserialize_with = "scanner_files::nested")] Vec<Cond>),
    /// Any of.
    Or(#[serde(deserialize_with = "scanner_files::nested")] Vec<Cond>),
    /// At least `n` of.
    AtLeast(
        u32,
        #[serde(deserialize_with = "scanner_files::nested")] Vec<Cond>,
    ),
}

impl Cond {
    /// Moves the members of every AND for which `last` holds behind the others (in
    /// their order).
    pub fn defer(&mut self, last: &impl Fn(&Cond) -> bool) {
        match self {
            Cond::Sel(_) => {}
            Cond::Not(c) => c.defer(last),
            Cond::And(cs) => {
                cs.iter_mut().for_each(|c| c.defer(last));
                cs.sort_by_key(|c| last(c));
            }
            Cond::Or(cs) | Cond::AtLeast(_, cs) => cs.iter_mut().for_each(|c| c.defer(last)),
        }
    }

    /// The same condition with every selection index moved up by `by` (when appending
    /// another detection's selections after a rule's own).
    pub fn shifted(&self, by: u32) -> Cond {
        match self {
            Cond::Sel(i) => Cond::Sel(i + by),
            Cond::Not(c) => Cond::Not(Box::new(c.shifted(by))),
            Cond::And(cs) => Cond::And(cs.iter().map(|c| c.shifted(by)).collect()),
            Cond::Or(cs) => Cond::Or(cs.iter().map(|c| c.shifted(by)).collect()),
            Cond::AtLeast(n, cs) => Cond::AtLeast(*n, cs.iter().map(|c| c.shifted(by)).collect()),
        }
    }

    /// Evaluates with `sel(i)` giving selection `i`'s result, short-circuiting.
    #[inline]
    pub fn eval(&self, sel: &mut impl FnMut(u32) -> bool) -> bool {
        match self {
            Cond::Sel(i) => sel(*i),
            Cond::Not(c) => !c.eval(sel),
            Cond::And(cs) => cs.iter().all(|c| c.eval(sel)),
            Cond::Or(cs) => cs.iter().any(|c| c.eval(sel)),
            Cond::AtLeast(n, cs) => {
                let mut k = 0;
                for c in cs {
                    if c.eval(sel) {
                        k += 1;
                        if k >= *n {
                            return true;
                        }
                    }
                }
                false
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Open,
    Close,
    And,
    Or,
    Not,
    Of,
    Word(String),
}

fn tokenize(s: &str) -> Result<Vec<Tok>, RuleError> {
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<Tok>| {
        if word.is_empty() {
            return;
        }
        let w = std::mem::take(word);
        out.push(match w.as_str() {
            "and" => Tok::And,
            "or" => Tok::Or,
            "not" => Tok::Not,
            "of" => Tok::Of,
            _ => Tok::Word(w),
        });
    };
    for c in s.chars() {
        match c {
            '(' | ')' => {
                flush(&mut word, &mut out);
                out.push(if c == '(' { Tok::Open } else { Tok::Close });
            }
            c if c.is_whitespace() => flush(&mut word, &mut out),
            c if c.is_alphanumeric() || matches!(c, '_' | '-' | '*' | '.') => word.push(c),
            other => return Err(ErrorKind::UnexpectedChar(other).into()),
        }
    }
    flush(&mut word, &mut out);
    Ok(out)
}

/// Deepest nesting of `not` and parentheses a condition may have: real rules use a
/// handful; the bound keeps the recursive parser (and every walk of the tree) off the
/// end of the stack.
pub const MAX_DEPTH: u32 = 64;

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    names: &'a [String],
    /// Current nesting of `not` and parentheses.
    depth: u32,
}

fn glob_match(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// Terms parsed by `term` joined by `op` (`or`, `and`): one term alone, or `join`ed.
    fn joined(
        &mut self,
        op: Tok,
        term: fn(&mut Self) -> Result<Cond, RuleError>,
        join: fn(Vec<Cond>) -> Cond,
    ) -> Result<Cond, RuleError> {
        let mut items = vec![term(self)?];
        while self.peek() == Some(&op) {
            self.pos += 1;
            items.push(term(self)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            join(items)
        })
    }

    fn or(&mut self) -> Result<Cond, RuleError> {
        self.joined(Tok::Or, Self::and, Cond::Or)
    }

    fn and(&mut self) -> Result<Cond, RuleError> {
        self.joined(Tok::And, Self::not, Cond::And)
    }

    /// Enters one level of nesting (`not`, a parenthesis), refusing past [`MAX_DEPTH`].
    fn deeper(&mut self) -> Result<(), RuleError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ErrorKind::ConditionTooDeep { limit: MAX_DEPTH }.into());
        }
        Ok(())
    }

    fn not(&mut self) -> Result<Cond, RuleError> {
        if self.peek() == Some(&Tok::Not) {
            self.pos += 1;
            self.deeper()?;
            let c = Cond::Not(Box::new(self.not()?));
            self.depth -= 1;
            return Ok(c);
        }
        self.primary()
    }

    fn selection(&self, name: &str) -> Result<u32, RuleError> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| i as u32)
            .ok_or_else(|| ErrorKind::UnknownSelection(name.to_string()).into())
    }

    fn quantified(&mut self, quant: &str) -> Result<Cond, RuleError> {
        self.pos += 1; // `of`
        let Some(Tok::Word(target)) = self.next() else {
            return Err(ErrorKind::QuantifierWithoutTarget(quant.to_string()).into());
        };
        let picked: Vec<Cond> = self
            .names
            .iter()
            .enumerate()
            .filter(|(_, n)| {
                if target == "them" {
                    !n.starts_with('_')
                } else {
                    glob_match(&target, n) && (!n.starts_with('_') || target.starts_with('_'))
                }
            })
            .map(|(i, _)| Cond::Sel(i as u32))
            .collect();
        if picked.is_empty() {
            return Err(ErrorKind::QuantifierMatchesNothing {
                quantifier: quant.to_string(),
                target,
            }
            .into());
        }
        Ok(match quant {
            "all" => Cond::And(picked),
            "1" | "any" => Cond::Or(picked),
            n => {
                let n: u32 = n
                    .parse()
                    .map_err(|_| ErrorKind::NotAQuantifier(n.to_string()))?;
                if n == 0 {
                    return Err(ErrorKind::NotAQuantifier("0".into()).into());
                }
                Cond::AtLeast(n, picked)
            }
        })
    }

    fn primary(&mut self) -> Result<Cond, RuleError> {
        match self.next() {
            Some(Tok::Open) => {
                self.deeper()?;
                let c = self.or()?;
                self.depth -= 1;
                match self.next() {
                    Some(Tok::Close) => Ok(c),
                    _ => Err(ErrorKind::UnbalancedParenthesis.into()),
                }
            }
            Some(Tok::Word(w)) => {
                if self.peek() == Some(&Tok::Of) {
                    return self.quantified(&w);
                }
                Ok(Cond::Sel(self.selection(&w)?))
            }
            Some(t) => Err(ErrorKind::UnexpectedToken(format!("{t:?}")).into()),
            None => Err(ErrorKind::ConditionEndsEarly.into()),
        }
    }
}

impl Cond {
    /// Parses one condition string over the rule's selection names.
    ///
    /// A `|` (legacy aggregation such as `| count() by X > 5`) is reported as an error by
    /// the caller; this function receives only the boolean part.
    pub fn parse(text: &str, names: &[String]) -> Result<Cond, RuleError> {
        let toks = tokenize(text)?;
        if toks.is_empty() {
            return Err(ErrorKind::EmptyCondition.into());
        }
        let mut p = Parser {
            toks,
            pos: 0,
            names,
            depth: 0,
        };
        let c = p.or()?;
        if p.pos < p.toks.len() {
            return Err(ErrorKind::UnexpectedToken(format!("{:?}", p.toks[p.pos])).into());
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Cond::parse`], the error as text.
    fn parse(text: &str, names: &[String]) -> Result<Cond, String> {
        Cond::parse(text, names).map_err(|e| e.to_string())
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn eval(c: &Cond, truth: &[bool]) -> bool {
        c.eval(&mut |i| truth[i as usize])
    }

    #[test]
    fn precedence_or_and_not() {
        let n = names(&["a", "b", "c"]);
        let c = parse("a or b and not c", &n).unwrap();
        assert_eq!(
            c,
            Cond::Or(vec![
                Cond::Sel(0),
                Cond::And(vec![Cond::Sel(1), Cond::Not(Box::new(Cond::Sel(2)))])
            ])
        );
        assert!(eval(&c, &[false, true, false]));
        assert!(!eval(&c, &[false, true, true]));
        let p = parse("(a or b) and not c", &n).unwrap();
        assert!(!eval(&p, &[true, false, true]));
    }

    #[test]
    fn quantifiers() {
        let n = names(&["selection_a", "selection_b", "filter", "_private"]);
        let c = parse("all of selection_* and not 1 of filter*", &n).unwrap();
        assert!(eval(&c, &[true, true, false, false]));
        assert!(!eval(&c, &[true, false, false, false]));
        let them = parse("1 of them", &n).unwrap();
        assert!(
            !eval(&them, &[false, false, false, true]),
            "_ names are outside them"
        );
        assert!(eval(
            &parse("any of sel*", &n).unwrap(),
            &[false, true, false, false]
        ));
        let two = parse("2 of them", &n).unwrap();
        assert!(eval(&two, &[true, false, true, false]));
        assert!(!eval(&two, &[true, false, false, true]));
        assert!(eval(
            &parse("all of _*", &n).unwrap(),
            &[false, false, false, true]
        ));
    }

    #[test]
    fn nesting_is_bounded() {
        let n = names(&["a"]);
        let ok = format!(
            "{}a{}",
            "(".repeat(MAX_DEPTH as usize),
            ")".repeat(MAX_DEPTH as usize)
        );
        assert!(parse(&ok, &n).is_ok());
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(parse(&deep, &n).unwrap_err().contains("nests deeper"));
        let nots = format!("{}a", "not ".repeat(100_000));
        assert!(parse(&nots, &n).unwrap_err().contains("nests deeper"));
        let mixed = "not (".repeat(60) + "a" + &")".repeat(60);
        assert!(parse(&mixed, &n).is_err());
    }

    #[test]
    fn errors() {
        let n = names(&["a"]);
        assert!(parse("a and", &n).is_err());
        assert!(parse("(a", &n).is_err());
        assert!(parse("b", &n).is_err());
        assert!(parse("1 of x*", &n).is_err());
        assert!(parse("a = b", &n).is_err());
        assert!(parse("a a", &n).is_err());
    }

    #[test]
    fn deferring_moves_members_of_ands_only_and_keeps_truth() {
        let n = names(&["pc", "a", "b", "c"]);
        let mut c = parse("pc and (a or pc) and not (pc and b) and c", &n).unwrap();
        let before = c.clone();
        let last = |c: &Cond| *c == Cond::Sel(0);
        c.defer(&last);
        assert_eq!(
            c,
            Cond::And(vec![
                Cond::Or(vec![Cond::Sel(1), Cond::Sel(0)]),
                Cond::Not(Box::new(Cond::And(vec![Cond::Sel(2), Cond::Sel(0)]))),
                Cond::Sel(3),
                Cond::Sel(0),
            ]),
            "pc last in each AND; the OR keeps its order"
        );
        for bits in 0..16u32 {
            let truth: Vec<bool> = (0..4).map(|i| bits >> i & 1 == 1).collect();
            assert_eq!(eval(&c, &truth), eval(&before, &truth), "{truth:?}");
        }
    }

    #[test]
    fn errors_say_what_is_wrong_in_the_report_text() {
        let n: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let e = |c: &str| parse(c, &n).unwrap_err();
        assert_eq!(e("a = b"), "unexpected character '=' in condition");
        assert_eq!(
            e("c"),
            "condition names 'c', which is not a selection of the rule"
        );
        assert_eq!(
            e("1 of"),
            "'1 of' must be followed by a name pattern or 'them'"
        );
        assert_eq!(e("1 of x*"), "'1 of x*' matches no selection");
        assert_eq!(e("0 of them"), "'0 of' is not a quantifier");
        assert_eq!(e("two of them"), "'two of' is not a quantifier");
        assert_eq!(e("(a"), "unbalanced parenthesis in condition");
        assert_eq!(e("a b"), "unexpected Word(\"b\") in condition");
        assert_eq!(e("a and"), "condition ends too early");
        assert_eq!(e("  "), "empty condition");
        assert!(matches!(
            Cond::parse("c", &n).unwrap_err().kind(),
            ErrorKind::UnknownSelection(s) if s == "c"
        ));
    }
}
