//! The parser of the SQL subset [`MemorySql`](super::MemorySql) answers (its grammar is
//! documented there).

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use serde_json::Value;

/// A statement of the subset.
#[derive(Debug)]
pub(super) struct Select {
    pub projection: Projection,
    pub table: String,
    pub filter: Vec<Condition>,
    pub order: Vec<(String, bool)>,
    pub limit: Option<usize>,
    pub offset: usize,
}

/// What a statement returns.
#[derive(Debug)]
pub(super) enum Projection {
    /// Every column.
    All,
    /// The number of matching rows, under this name.
    Count(String),
    /// These columns (name, output name).
    Columns(Vec<(String, String)>),
}

/// One `WHERE` condition.
#[derive(Debug)]
pub(super) enum Condition {
    Compare(String, Op, Operand),
    Like(String, bool, Operand),
    IsNull(String, bool),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy)]
pub(super) enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A literal or a bound parameter (0-based).
#[derive(Debug)]
pub(super) enum Operand {
    Literal(Value),
    Param(usize),
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Quoted(String),
    Text(String),
    Number(Value),
    Param(Option<usize>),
    Symbol(&'static str),
}

fn tokenize(sql: &str) -> Result<Vec<Token>, String> {
    // Two-character symbols first.
    const SYMBOLS: [&str; 14] = [
        "<=", ">=", "<>", "!=", "==", "*", ",", "(", ")", ";", "=", "<", ">", "-",
    ];
    let mut tokens = Vec::new();
    let mut rest = sql;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
        } else if c.is_alphabetic() || c == '_' {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            tokens.push(Token::Word(rest[..end].to_owned()));
            rest = &rest[end..];
        } else if c.is_ascii_digit() {
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(rest.len());
            let text = &rest[..end];
            let number = match text.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => text
                    .parse::<f64>()
                    .ok()
                    .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                    .ok_or_else(|| format!("bad number {text}"))?,
            };
            tokens.push(Token::Number(number));
            rest = &rest[end..];
        } else if c == '\'' || c == '"' {
            let (text, after) = quoted(rest, c)?;
            tokens.push(if c == '\'' {
                Token::Text(text)
            } else {
                Token::Quoted(text)
            });
            rest = after;
        } else if c == '?' {
            let digits = rest[1..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len() - 1);
            let index = match &rest[1..=digits] {
                "" => None,
                n => Some(
                    n.parse::<usize>()
                        .map_err(|_| format!("bad parameter ?{n}"))?,
                ),
            };
            tokens.push(Token::Param(index));
            rest = &rest[1 + digits..];
        } else if let Some(symbol) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            tokens.push(Token::Symbol(symbol));
            rest = &rest[symbol.len()..];
        } else {
            return Err(format!("unexpected character {c:?}"));
        }
    }
    Ok(tokens)
}

/// A quoted string starting at `rest[0]` (a doubled quote is one quote) and what follows.
fn quoted(rest: &str, quote: char) -> Result<(String, &str), String> {
    let mut text = String::new();
    let mut chars = rest.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        if c == quote {
            if chars.peek().map(|&(_, next)| next) == Some(quote) {
                chars.next();
            } else {
                return Ok((text, &rest[i + 1..]));
            }
        }
        text.push(c);
    }
    Err("unterminated string".into())
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// The largest parameter number used so far (1-based).
    largest_param: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn keyword(&mut self, word: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(word));
        self.at += usize::from(found);
        found
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), String> {
        if self.keyword(word) {
            Ok(())
        } else {
            Err(format!("expected {word}"))
        }
    }

    fn symbol(&mut self, symbol: &str) -> bool {
        let found = matches!(self.peek(), Some(Token::Symbol(s)) if *s == symbol);
        self.at += usize::from(found);
        found
    }

    fn name(&mut self) -> Result<String, String> {
        match self.tokens.get(self.at).cloned() {
            Some(Token::Word(w)) if !is_reserved(&w) => {
                self.at += 1;
                Ok(w)
            }
            Some(Token::Quoted(w)) => {
                self.at += 1;
                Ok(w)
            }
            _ => Err("expected a name".into()),
        }
    }

    fn alias(&mut self, default: String) -> Result<String, String> {
        if self.keyword("AS") {
            self.name()
        } else {
            Ok(default)
        }
    }

    fn count(&mut self) -> Result<usize, String> {
        match self.tokens.get(self.at) {
            Some(Token::Number(Value::Number(n))) => {
                let n = n.as_u64().and_then(|n| usize::try_from(n).ok());
                self.at += 1;
                n.ok_or_else(|| "expected a non-negative integer".into())
            }
            _ => Err("expected a non-negative integer".into()),
        }
    }

    fn operand(&mut self) -> Result<Operand, String> {
        let token = self.tokens.get(self.at).cloned();
        self.at += 1;
        Ok(match token {
            Some(Token::Number(n)) => Operand::Literal(n),
            Some(Token::Symbol("-")) => match self.tokens.get(self.at).cloned() {
                Some(Token::Number(n)) => {
                    self.at += 1;
                    Operand::Literal(negate(&n).ok_or("bad number")?)
                }
                _ => return Err("expected a number after -".into()),
            },
            Some(Token::Text(t)) => Operand::Literal(Value::String(t)),
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("TRUE") => Operand::Literal(true.into()),
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("FALSE") => {
                Operand::Literal(false.into())
            }
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("NULL") => Operand::Literal(Value::Null),
            Some(Token::Param(Some(0))) => return Err("parameters are numbered from ?1".into()),
            Some(Token::Param(Some(n))) => {
                self.largest_param = self.largest_param.max(n);
                Operand::Param(n - 1)
            }
            // As in SQLite: one more than the largest number assigned so far.
            Some(Token::Param(None)) => {
                self.largest_param += 1;
                Operand::Param(self.largest_param - 1)
            }
            _ => return Err("expected a value".into()),
        })
    }

    fn condition(&mut self) -> Result<Condition, String> {
        let column = self.name()?;
        if self.keyword("IS") {
            let negated = self.keyword("NOT");
            self.expect_keyword("NULL")?;
            return Ok(Condition::IsNull(column, negated));
        }
        let negated = self.keyword("NOT");
        if self.keyword("LIKE") {
            return Ok(Condition::Like(column, negated, self.operand()?));
        }
        if negated {
            return Err("expected LIKE after NOT".into());
        }
        let op = match self.tokens.get(self.at) {
            Some(Token::Symbol("=" | "==")) => Op::Eq,
            Some(Token::Symbol("!=" | "<>")) => Op::Ne,
            Some(Token::Symbol("<")) => Op::Lt,
            Some(Token::Symbol("<=")) => Op::Le,
            Some(Token::Symbol(">")) => Op::Gt,
            Some(Token::Symbol(">=")) => Op::Ge,
            _ => return Err("expected a comparison".into()),
        };
        self.at += 1;
        Ok(Condition::Compare(column, op, self.operand()?))
    }
}

const RESERVED: [&str; 14] = [
    "SELECT", "FROM", "WHERE", "AND", "OR", "ORDER", "BY", "LIMIT", "OFFSET", "AS", "IS", "NOT",
    "LIKE", "NULL",
];

fn is_reserved(word: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(word))
}

/// Parses one statement of the subset.
pub(super) fn parse(sql: &str) -> Result<Select, String> {
    let mut p = Parser {
        tokens: tokenize(sql)?,
        at: 0,
        largest_param: 0,
    };
    if !p.keyword("SELECT") {
        return Err("only SELECT statements are run".into());
    }
    let projection = if p.symbol("*") {
        Projection::All
    } else if matches!(p.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case("COUNT"))
        && p.tokens.get(p.at + 1) == Some(&Token::Symbol("("))
    {
        p.at += 2;
        if !(p.symbol("*") && p.symbol(")")) {
            return Err("only COUNT(*) is supported".into());
        }
        Projection::Count(p.alias("COUNT(*)".into())?)
    } else {
        let mut columns = Vec::new();
        loop {
            let column = p.name()?;
            let alias = p.alias(column.clone())?;
            columns.push((column, alias));
            if !p.symbol(",") {
                break;
            }
        }
        Projection::Columns(columns)
    };
    p.expect_keyword("FROM")?;
    let table = p.name()?;
    let mut filter = Vec::new();
    if p.keyword("WHERE") {
        filter.push(p.condition()?);
        while p.keyword("AND") {
            filter.push(p.condition()?);
        }
    }
    let mut order = Vec::new();
    if p.keyword("ORDER") {
        p.expect_keyword("BY")?;
        loop {
            let column = p.name()?;
            let descending = p.keyword("DESC");
            if !descending {
                p.keyword("ASC");
            }
            order.push((column, descending));
            if !p.symbol(",") {
                break;
            }
        }
    }
    let (mut limit, mut offset) = (None, 0);
    if p.keyword("LIMIT") {
        limit = Some(p.count()?);
        if p.keyword("OFFSET") {
            offset = p.count()?;
        }
    }
    let terminated = p.symbol(";");
    match p.peek() {
        None => Ok(Select {
            projection,
            table,
            filter,
            order,
            limit,
            offset,
        }),
        Some(Token::Word(w)) if w.eq_ignore_ascii_case("OR") => Err("OR is not supported".into()),
        Some(_) if terminated => Err("one statement only".into()),
        Some(token) => Err(format!("unexpected {}", describe(token))),
    }
}

fn describe(token: &Token) -> String {
    match token {
        Token::Word(w) | Token::Quoted(w) => w.clone(),
        Token::Text(t) => format!("'{t}'"),
        Token::Number(n) => n.to_string(),
        Token::Param(Some(n)) => format!("?{n}"),
        Token::Param(None) => "?".into(),
        Token::Symbol(s) => (*s).into(),
    }
}

/// `-n`.
fn negate(n: &Value) -> Option<Value> {
    match n.as_i64() {
        Some(i) => Some(Value::from(i.checked_neg()?)),
        None => serde_json::Number::from_f64(-n.as_f64()?).map(Value::Number),
    }
}
