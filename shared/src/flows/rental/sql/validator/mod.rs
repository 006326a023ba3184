//! The validator proper (the `rental-sql` feature): parsing, the allow-lists, scoping and
//! the cost budget; see the parent module for what is accepted.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Query, Select,
    SelectItem, SelectItemQualifiedWildcardKind, SetExpr, Statement, TableFactor, UnaryOperator,
    Value, Visitor,
};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use super::walk::walk;

mod checker;

use super::{
    FUNCTIONS, MAX_CONCATS, MAX_SQL_CHARS, SqlRejection, Table, ValidSql, WORK_BUDGET, cost,
};
use checker::Checker;

/// How deep the parser may nest (subqueries, parentheses) before it refuses.
const RECURSION_LIMIT: usize = 40;

/// Names no statement may use, even as its own CTE (physical tables, system tables).
const FORBIDDEN_PREFIXES: [&str; 5] = ["sqlite_", "pragma_", "rental_", "d1_", "_cf_"];

/// Longest `strftime` format and `group_concat` separator, in bytes.
const MAX_FORMAT_BYTES: usize = 64;

pub(super) fn reject<T>(why: impl Into<String>) -> Result<T, SqlRejection> {
    Err(SqlRejection(why.into()))
}

/// Validates a model-written statement against the logical `tables` (names as statements
/// use them, e.g. `rooms`), with the columns and row bounds of the default schema
/// ([`crate::flows::rental::schema::RentalSchema::default`]; a name it lacks has unknown
/// columns); returns it re-serialised. [`validate_in`] takes a site's own catalog.
pub fn validate(sql: &str, tables: &[&str]) -> Result<ValidSql, SqlRejection> {
    let known = crate::flows::rental::schema::RentalSchema::default().catalog(true);
    let catalog: Vec<Table> = tables
        .iter()
        .map(|name| {
            known
                .iter()
                .find(|t| t.name.eq_ignore_ascii_case(name))
                .cloned()
                .unwrap_or_else(|| Table {
                    name: (*name).into(),
                    columns: None,
                    max_rows: crate::flows::rental::schema::MAX_ROWS_PER_TABLE,
                })
        })
        .collect();
    validate_in(sql, &catalog)
}

/// Validates a model-written statement against a catalog of logical tables; returns it
/// re-serialised.
pub fn validate_in(sql: &str, catalog: &[Table]) -> Result<ValidSql, SqlRejection> {
    let names: Vec<&str> = catalog.iter().map(|t| t.name.as_str()).collect();
    let tables = names.as_slice();
    if sql.chars().count() > MAX_SQL_CHARS {
        return reject(format!(
            "the statement is longer than {MAX_SQL_CHARS} characters"
        ));
    }
    let statement = parse_one(sql)?;
    check(&statement, tables)?;
    estimate(&statement, catalog)?;
    let text = statement.to_string();
    // The serialisation must mean the same statement: parse it again and compare.
    let again = parse_one(&text)?;
    if again != statement {
        return reject("the statement does not re-serialise faithfully");
    }
    check(&again, tables)?;
    estimate(&again, catalog)?;
    Ok(ValidSql {
        sql: text,
        first_table: first_table_of(&again),
    })
}

/// Scoping and the cost budget ([`cost`]).
fn estimate(statement: &Statement, catalog: &[Table]) -> Result<(), SqlRejection> {
    let Statement::Query(query) = statement else {
        return reject("only a SELECT statement is allowed");
    };
    let mut analyser = cost::Analyser::new(catalog);
    let work = analyser.statement(query)?;
    if work.is_nan() || work > WORK_BUDGET {
        return Err(analyser.too_costly(work));
    }
    Ok(())
}

/// Parses `sql` as exactly one statement, a query (`SELECT`, `WITH`, `VALUES`, or one in
/// parentheses), as sqlparser's `parse_statements` would, empty statements (`;`) aside.
///
/// Only queries are parsed (`Parser::parse_query`): any other statement is refused by its
/// first keyword, unparsed. sqlparser's parser of every other statement (`CREATE`,
/// `ALTER`, `GRANT`… about 0.3 MB of the Worker's wasm) is then never linked (issue 29).
fn parse_one(sql: &str) -> Result<Statement, SqlRejection> {
    let syntax = |error: ParserError| SqlRejection(format!("syntax error: {error}"));
    let dialect = SQLiteDialect {};
    let mut parser = Parser::new(&dialect)
        // `parse_statement` took one level of the limit before `parse_query`.
        .with_recursion_limit(RECURSION_LIMIT - 1)
        .try_with_sql(sql)
        .map_err(syntax)?;
    while parser.consume_token(&Token::SemiColon) {}
    let query_start = match &parser.peek_token_ref().token {
        Token::EOF => return reject("exactly one SELECT statement is allowed, found 0"),
        Token::LParen => true,
        Token::Word(word) => match word.keyword {
            Keyword::SELECT | Keyword::WITH | Keyword::VALUES | Keyword::FROM => true,
            Keyword::NoKeyword => {
                let found = parser.peek_token();
                return parser.expected("an SQL statement", found).map_err(syntax);
            }
            _ => false,
        },
        _ => {
            let found = parser.peek_token();
            return parser.expected("an SQL statement", found).map_err(syntax);
        }
    };
    if !query_start {
        return reject("only a SELECT statement is allowed");
    }
    let query = parser.parse_query().map_err(syntax)?;
    // What may follow: empty statements, the end, or (sqlparser's) `END`.
    let mut delimited = false;
    while parser.consume_token(&Token::SemiColon) {
        delimited = true;
    }
    match &parser.peek_token_ref().token {
        Token::EOF => {}
        Token::Word(word) if !delimited && word.keyword == Keyword::END => {}
        _ if delimited => {
            return reject("exactly one SELECT statement is allowed, found more than one");
        }
        _ => {
            let found = parser.peek_token();
            return parser.expected("end of statement", found).map_err(syntax);
        }
    }
    Ok(Statement::Query(query))
}

fn check(statement: &Statement, tables: &[&str]) -> Result<(), SqlRejection> {
    let Statement::Query(_) = statement else {
        return reject("only a SELECT statement is allowed");
    };
    let mut ctes = Vec::new();
    collect_ctes(statement, &mut ctes);
    for cte in &ctes {
        if tables.iter().any(|t| t.eq_ignore_ascii_case(cte)) {
            return reject(format!("a CTE may not be named like the table {cte}"));
        }
        if forbidden(cte) {
            return reject(format!("the name {cte} is not allowed"));
        }
    }
    let mut checker = Checker {
        tables,
        ctes: &ctes,
        concats: 0,
    };
    match walk(statement, &mut checker) {
        ControlFlow::Break(rejection) => Err(rejection),
        ControlFlow::Continue(()) => Ok(()),
    }
}

pub(super) fn forbidden(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    FORBIDDEN_PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// Every CTE name the statement defines, at any depth.
fn collect_ctes(statement: &Statement, out: &mut Vec<String>) {
    struct Ctes<'o>(&'o mut Vec<String>);
    impl Visitor for Ctes<'_> {
        type Break = SqlRejection;
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<SqlRejection> {
            if let Some(with) = &query.with {
                for cte in &with.cte_tables {
                    self.0.push(cte.alias.name.value.clone());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = walk(statement, &mut Ctes(out));
}

/// The first table a (validated) statement reads, for the entity of its rows.
pub fn first_table(sql: &str) -> Option<String> {
    first_table_of(&parse_one(sql).ok()?)
}

fn first_table_of(statement: &Statement) -> Option<String> {
    struct First(Option<String>);
    impl Visitor for First {
        type Break = SqlRejection;
        fn pre_visit_relation(
            &mut self,
            relation: &sqlparser::ast::ObjectName,
        ) -> ControlFlow<SqlRejection> {
            if self.0.is_none() {
                self.0 = relation
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| i.value.clone());
            }
            ControlFlow::Continue(())
        }
    }
    let mut first = First(None);
    let _ = walk(statement, &mut first);
    first.0
}
