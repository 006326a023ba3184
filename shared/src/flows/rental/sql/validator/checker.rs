//! The allow-list walk: every relation, function, expression and operator of a statement
//! checked against what the validator admits, and text growth bounded.

use super::*;

/// The allow-list walk over a statement's AST.
pub(super) struct Checker<'a> {
    pub(super) tables: &'a [&'a str],
    pub(super) ctes: &'a [String],
    pub(super) concats: usize,
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
