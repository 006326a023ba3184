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
use super::{
    FUNCTIONS, MAX_CONCATS, MAX_SQL_CHARS, SqlRejection, Table, ValidSql, WORK_BUDGET, cost,
};

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

struct Checker<'a> {
    tables: &'a [&'a str],
    ctes: &'a [String],
    concats: usize,
}

type Step = ControlFlow<SqlRejection>;

fn deny(why: impl Into<String>) -> Step {
    ControlFlow::Break(SqlRejection(why.into()))
}

impl Visitor for Checker<'_> {
    type Break = SqlRejection;

    fn pre_visit_statement(&mut self, statement: &Statement) -> Step {
        match statement {
            Statement::Query(_) => ControlFlow::Continue(()),
            _ => deny("only a SELECT statement is allowed"),
        }
    }

    fn pre_visit_query(&mut self, query: &Query) -> Step {
        if query.with.as_ref().is_some_and(|w| w.recursive) {
            return deny("WITH RECURSIVE is not allowed");
        }
        if query.fetch.is_some()
            || !query.locks.is_empty()
            || query.for_clause.is_some()
            || query.settings.is_some()
            || query.format_clause.is_some()
            || !query.pipe_operators.is_empty()
        {
            return deny("only plain SELECT clauses are allowed");
        }
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                if cte.from.is_some() {
                    return deny("only plain CTEs are allowed");
                }
            }
        }
        check_body(&query.body)
    }

    fn pre_visit_select(&mut self, select: &Select) -> Step {
        if select.into.is_some()
            || select.top.is_some()
            || select.exclude.is_some()
            || !select.lateral_views.is_empty()
            || select.prewhere.is_some()
            || !select.connect_by.is_empty()
            || !select.cluster_by.is_empty()
            || !select.distribute_by.is_empty()
            || !select.sort_by.is_empty()
            || select.qualify.is_some()
            || !select.named_window.is_empty()
            || select.value_table_mode.is_some()
            || !select.optimizer_hints.is_empty()
            || select.select_modifiers.is_some()
        {
            return deny("only plain SELECT clauses are allowed");
        }
        for item in &select.projection {
            match item {
                SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. } => {}
                SelectItem::Wildcard(options) if options.opt_exclude.is_none() => {}
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(n),
                    _,
                ) if n.0.len() == 1 => {}
                _ => return deny("this kind of select item is not allowed"),
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> Step {
        match factor {
            TableFactor::Table {
                name,
                args,
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_hints,
                ..
            } => {
                if args.is_some() {
                    return deny("table-valued functions are not allowed");
                }
                if !with_hints.is_empty()
                    || version.is_some()
                    || *with_ordinality
                    || !partitions.is_empty()
                    || json_path.is_some()
                    || sample.is_some()
                    || !index_hints.is_empty()
                {
                    return deny("table hints are not allowed");
                }
                let [part] = name.0.as_slice() else {
                    return deny(format!("qualified table names are not allowed: {name}"));
                };
                let Some(ident) = part.as_ident() else {
                    return deny("this table name is not allowed");
                };
                let table = ident.value.as_str();
                let known = self.tables.iter().any(|t| t.eq_ignore_ascii_case(table))
                    || self.ctes.iter().any(|c| c.eq_ignore_ascii_case(table));
                if !known || forbidden(table) {
                    let allowed = self.tables.join(", ");
                    return deny(format!("no such table: {table} (tables: {allowed})"));
                }
                ControlFlow::Continue(())
            }
            TableFactor::Derived { lateral: false, .. } | TableFactor::NestedJoin { .. } => {
                ControlFlow::Continue(())
            }
            _ => deny("this kind of FROM item is not allowed"),
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> Step {
        match expr {
            Expr::Identifier(_)
            | Expr::IsFalse(_)
            | Expr::IsNotFalse(_)
            | Expr::IsTrue(_)
            | Expr::IsNotTrue(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::IsDistinctFrom(..)
            | Expr::IsNotDistinctFrom(..)
            | Expr::InList { .. }
            | Expr::InSubquery { .. }
            | Expr::Between { .. }
            | Expr::Nested(_)
            | Expr::Case { .. }
            | Expr::Exists { .. }
            | Expr::Subquery(_) => ControlFlow::Continue(()),
            // `substr(x, a, b)`, as the parser reads it.
            Expr::Substring { special: true, .. } => ControlFlow::Continue(()),
            // `trim(x)` and `trim(x, chars)`, as the parser reads them (never longer than
            // `x`); SQLite has no `TRIM([BOTH|LEADING|TRAILING] … FROM …)`.
            Expr::Trim {
                trim_where: None,
                trim_what: None,
                ..
            } => ControlFlow::Continue(()),
            Expr::CompoundIdentifier(parts) if parts.len() == 2 => ControlFlow::Continue(()),
            Expr::Like { any: false, .. } => ControlFlow::Continue(()),
            Expr::UnaryOp { op, .. } => match op {
                UnaryOperator::Plus | UnaryOperator::Minus | UnaryOperator::Not => {
                    ControlFlow::Continue(())
                }
                _ => deny(format!("the operator {op} is not allowed")),
            },
            Expr::BinaryOp { op, .. } => {
                if *op == BinaryOperator::StringConcat {
                    self.concats += 1;
                    if self.concats > MAX_CONCATS {
                        return deny(format!(
                            "at most {MAX_CONCATS} || operators are allowed in a statement"
                        ));
                    }
                }
                check_operator(op)
            }
            Expr::Cast {
                kind: CastKind::Cast,
                format: None,
                ..
            } => ControlFlow::Continue(()),
            Expr::Value(value) => match &value.value {
                Value::Number(..)
                | Value::SingleQuotedString(_)
                | Value::Boolean(_)
                | Value::Null => ControlFlow::Continue(()),
                Value::Placeholder(_) => deny("bind parameters are not allowed"),
                _ => deny("this kind of literal is not allowed"),
            },
            Expr::Function(function) => {
                let [part] = function.name.0.as_slice() else {
                    return deny(format!(
                        "qualified function names are not allowed: {}",
                        function.name
                    ));
                };
                let name = part
                    .as_ident()
                    .map(|i| i.value.to_ascii_lowercase())
                    .unwrap_or_default();
                if !FUNCTIONS.contains(&name.as_str()) {
                    return deny(format!("the function {} is not allowed", function.name));
                }
                if function.over.is_some()
                    || function.filter.is_some()
                    || function.null_treatment.is_some()
                    || !function.within_group.is_empty()
                    || function.uses_odbc_syntax
                    || !matches!(function.parameters, FunctionArguments::None)
                {
                    return deny(format!("{name}: only plain calls are allowed"));
                }
                if let FunctionArguments::List(list) = &function.args
                    && !list.clauses.is_empty()
                {
                    return deny(format!("{name}: only plain arguments are allowed"));
                }
                check_growth(&name, &function.args)
            }
            _ => deny(format!(
                "this kind of expression is not allowed: {}",
                expr.to_string().chars().take(60).collect::<String>()
            )),
        }
    }
}

/// A string literal argument's text.
fn literal(arg: Option<&FunctionArg>) -> Option<&str> {
    match arg? {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(value))) => match &value.value {
            Value::SingleQuotedString(text) => Some(text),
            _ => None,
        },
        _ => None,
    }
}

/// Functions that could make text grow: bounded by literal arguments.
fn check_growth(name: &str, args: &FunctionArguments) -> Step {
    let list: &[FunctionArg] = match args {
        FunctionArguments::List(list) => &list.args,
        _ => &[],
    };
    match name {
        "replace" => {
            let (Some(pattern), Some(replacement)) = (literal(list.get(1)), literal(list.get(2)))
            else {
                return deny(
                    "replace: the text to find and its replacement must be string literals",
                );
            };
            if replacement.len() > pattern.len() || pattern.is_empty() {
                return deny(
                    "replace: the replacement may not be longer than the (non-empty) text it replaces",
                );
            }
        }
        "strftime" => match literal(list.first()) {
            Some(format) if format.len() <= MAX_FORMAT_BYTES => {}
            _ => {
                return deny(format!(
                    "strftime: the format must be a string literal of at most {MAX_FORMAT_BYTES} bytes"
                ));
            }
        },
        "group_concat" if list.len() > 1 => match literal(list.get(1)) {
            Some(separator) if separator.len() <= MAX_FORMAT_BYTES => {}
            _ => {
                return deny(format!(
                    "group_concat: the separator must be a string literal of at most {MAX_FORMAT_BYTES} bytes"
                ));
            }
        },
        _ => {}
    }
    ControlFlow::Continue(())
}

/// A query body: SELECTs, possibly combined (`UNION`, …) or parenthesised.
fn check_body(body: &SetExpr) -> Step {
    match body {
        SetExpr::Select(_) | SetExpr::Query(_) => ControlFlow::Continue(()),
        SetExpr::SetOperation { left, right, .. } => {
            check_body(left)?;
            check_body(right)
        }
        _ => deny("only SELECT queries are allowed"),
    }
}

fn check_operator(op: &BinaryOperator) -> Step {
    use BinaryOperator as B;
    match op {
        B::Plus
        | B::Minus
        | B::Multiply
        | B::Divide
        | B::Modulo
        | B::StringConcat
        | B::Gt
        | B::Lt
        | B::GtEq
        | B::LtEq
        | B::Eq
        | B::NotEq
        | B::And
        | B::Or => ControlFlow::Continue(()),
        other => deny(format!("the operator {other} is not allowed")),
    }
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
