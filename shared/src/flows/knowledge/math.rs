//! `math_tool`'s evaluator: the model writes an arithmetic expression, Rust computes it
//! (no code execution). Numbers with decimals, `+ - * / %`, parentheses, unary minus.

/// Why an expression was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathError {
    /// Not an expression of the grammar.
    Syntax,
    /// Division or remainder by zero.
    DivisionByZero,
    /// Nested too deeply (more than 32 levels) or longer than 256 characters.
    TooComplex,
}

/// Evaluates `expression`.
pub fn evaluate(expression: &str) -> Result<f64, MathError> {
    if expression.chars().count() > 256 {
        return Err(MathError::TooComplex);
    }
    let bytes: alloc::vec::Vec<u8> = expression
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'_')
        .collect();
    let mut parser = Parser {
        bytes: &bytes,
        at: 0,
    };
    let value = parser.sum(0)?;
    if parser.at != bytes.len() || !value.is_finite() {
        return Err(MathError::Syntax);
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn sum(&mut self, depth: usize) -> Result<f64, MathError> {
        let mut value = self.product(depth)?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.at += 1;
            let rhs = self.product(depth)?;
            value = if op == b'+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    fn product(&mut self, depth: usize) -> Result<f64, MathError> {
        let mut value = self.unary(depth)?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            self.at += 1;
            let rhs = self.unary(depth)?;
            value = match op {
                b'*' => value * rhs,
                _ if rhs == 0.0 => return Err(MathError::DivisionByZero),
                b'/' => value / rhs,
                _ => value % rhs,
            };
        }
        Ok(value)
    }

    fn unary(&mut self, depth: usize) -> Result<f64, MathError> {
        if depth > 32 {
            return Err(MathError::TooComplex);
        }
        match self.peek() {
            Some(b'-') => {
                self.at += 1;
                Ok(-self.unary(depth + 1)?)
            }
            Some(b'+') => {
                self.at += 1;
                self.unary(depth + 1)
            }
            Some(b'(') => {
                self.at += 1;
                let value = self.sum(depth + 1)?;
                if self.peek() != Some(b')') {
                    return Err(MathError::Syntax);
                }
                self.at += 1;
                Ok(value)
            }
            _ => self.number(),
        }
    }

    fn number(&mut self) -> Result<f64, MathError> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit() || b == b'.') {
            self.at += 1;
        }
        let text =
            core::str::from_utf8(&self.bytes[start..self.at]).map_err(|_| MathError::Syntax)?;
        if text.is_empty() || text.matches('.').count() > 1 {
            return Err(MathError::Syntax);
        }
        text.parse::<f64>().map_err(|_| MathError::Syntax)
    }
}

/// The expression in a model's reply: the text after `EXPRESSION:` on its line, or the
/// whole reply's first line.
pub fn expression_in(reply: &str) -> &str {
    reply
        .lines()
        .find_map(|line| line.trim().strip_prefix("EXPRESSION:"))
        .or_else(|| reply.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("")
        .trim()
        .trim_matches('`')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        assert_eq!(evaluate("12 * (3 + 2) - 4 / 2"), Ok(58.0));
        assert_eq!(evaluate("-2.5 * 4 % 3"), Ok(-1.0));
        assert_eq!(evaluate("10000000 / 26 * 2"), Ok(10_000_000.0 / 26.0 * 2.0));
        assert_eq!(evaluate("1 / 0"), Err(MathError::DivisionByZero));
        assert_eq!(evaluate("2 ** 3"), Err(MathError::Syntax));
        assert_eq!(evaluate("alert(1)"), Err(MathError::Syntax));
        assert_eq!(evaluate("(1"), Err(MathError::Syntax));
        assert_eq!(evaluate(&"(".repeat(40)), Err(MathError::TooComplex));
        assert_eq!(expression_in("Sure.\nEXPRESSION: `2*3`"), "2*3");
    }
}
