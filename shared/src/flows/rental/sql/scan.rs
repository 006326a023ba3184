//! Syntax helpers of the cost model: what one expression reads and calls (not looking
//! inside its subqueries), the CTE names of a statement, `LIMIT` numbers, `AND` chains
//! and the `ON` expressions of a `FROM` item.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, FunctionArguments, JoinConstraint, JoinOperator, Query, TableFactor,
    TableWithJoins, UnaryOperator, Value, Visitor,
};

use super::SqlRejection;
use super::walk::walk;

pub(super) fn lower(text: &str) -> String {
    text.to_ascii_lowercase()
}

/// Every CTE name the statement defines, at any depth (lowercase, with repeats).
pub(super) fn cte_names(query: &Query) -> Vec<String> {
    struct Names(Vec<String>);
    impl Visitor for Names {
        type Break = SqlRejection;
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<SqlRejection> {
            if let Some(with) = &query.with {
                for cte in &with.cte_tables {
                    self.0.push(lower(&cte.alias.name.value));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut names = Names(Vec::new());
    let _ = walk(query, &mut names);
    names.0
}

/// The identifiers, direct subqueries and calls of one expression (not looking inside
/// its subqueries).
#[derive(Default)]
pub(super) struct Scan {
    pub(super) depth: usize,
    pub(super) idents: Vec<Vec<String>>,
    pub(super) subqueries: Vec<Query>,
    pub(super) nodes: usize,
    pub(super) aggregate: bool,
    pub(super) distinct_aggregate: bool,
    pub(super) group_concat: bool,
}

impl Visitor for Scan {
    type Break = SqlRejection;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<SqlRejection> {
        if self.depth == 0 {
            self.subqueries.push(query.clone());
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &Query) -> ControlFlow<SqlRejection> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<SqlRejection> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        self.nodes += 1;
        match expr {
            Expr::Identifier(ident) => self.idents.push(vec![lower(&ident.value)]),
            Expr::CompoundIdentifier(parts) => self
                .idents
                .push(parts.iter().map(|p| lower(&p.value)).collect()),
            Expr::Function(function) => {
                let name = function
                    .name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| lower(&i.value))
                    .unwrap_or_default();
                let (count, distinct) = match &function.args {
                    FunctionArguments::List(list) => {
                        (list.args.len(), list.duplicate_treatment.is_some())
                    }
                    _ => (0, false),
                };
                let aggregate = match name.as_str() {
                    "count" | "sum" | "avg" | "total" | "group_concat" => true,
                    "min" | "max" => count == 1,
                    _ => false,
                };
                if aggregate {
                    self.aggregate = true;
                    self.distinct_aggregate |= distinct;
                }
                self.group_concat |= name == "group_concat";
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

pub(super) fn scan(expr: &Expr) -> Scan {
    let mut scan = Scan::default();
    let _ = walk(expr, &mut scan);
    scan
}

/// Integer literal of a `LIMIT`/`OFFSET` (`-1` is "no limit").
pub(super) fn limit_number(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::Value(value) => match &value.value {
            Value::Number(text, _) => text.parse().ok(),
            _ => None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => limit_number(expr).map(|n| -n),
        Expr::Nested(inner) => limit_number(inner),
        _ => None,
    }
}

pub(super) fn conjuncts<'e>(expr: &'e Expr, out: &mut Vec<&'e Expr>) {
    match expr {
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            conjuncts(left, out);
            conjuncts(right, out);
        }
        Expr::Nested(inner) => conjuncts(inner, out),
        other => out.push(other),
    }
}

pub(super) fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Nested(inner) => strip(inner),
        other => other,
    }
}

/// The `ON` expressions of a `FROM` item, at any nesting.
pub(super) fn collect_on(item: &TableWithJoins, out: &mut Vec<Expr>) {
    if let TableFactor::NestedJoin {
        table_with_joins, ..
    } = &item.relation
    {
        collect_on(table_with_joins, out);
    }
    for join in &item.joins {
        if let TableFactor::NestedJoin {
            table_with_joins, ..
        } = &join.relation
        {
            collect_on(table_with_joins, out);
        }
        let constraint = match &join.join_operator {
            JoinOperator::Join(c)
            | JoinOperator::Inner(c)
            | JoinOperator::CrossJoin(c)
            | JoinOperator::Left(c)
            | JoinOperator::LeftOuter(c)
            | JoinOperator::Right(c)
            | JoinOperator::RightOuter(c)
            | JoinOperator::FullOuter(c) => Some(c),
            _ => None,
        };
        if let Some(JoinConstraint::On(expr)) = constraint {
            out.push(expr.clone());
        }
    }
}
