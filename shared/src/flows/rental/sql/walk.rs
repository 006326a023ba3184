//! One visitor type for every walk of the AST. sqlparser's walk (`Visit::visit`) is generic
//! over the visitor, so each visitor type compiled its own copy of the walk over every AST
//! type into the Worker (five visitors: five copies, issue 29). Every visitor here is
//! walked through [`Walk`], a single type that forwards each hook to the visitor behind a
//! `dyn` reference: one copy of the walk, one indirect call per hook.

use core::ops::ControlFlow;

use sqlparser::ast::{
    Expr, GroupByExpr, Ident, ObjectName, OrderBy, OrderByExpr, Query, Select, Statement,
    TableFactor, ValueWithSpan, Visit, Visitor,
};

use super::SqlRejection;

/// A visitor of this module: every one breaks (when it does) with a [`SqlRejection`].
pub(super) type DynVisitor<'v> = dyn Visitor<Break = SqlRejection> + 'v;

/// Walk `node` with `visitor` (through [`Walk`]).
pub(super) fn walk<N: Visit + ?Sized>(
    node: &N,
    visitor: &mut DynVisitor<'_>,
) -> ControlFlow<SqlRejection> {
    node.visit(&mut Walk(visitor))
}

struct Walk<'a, 'v>(&'a mut DynVisitor<'v>);

/// Forwards each hook of `Visitor` (all of them: a visitor may implement any).
macro_rules! forward {
    ($($hook:ident($node:ty);)*) => {
        $(fn $hook(&mut self, node: &$node) -> ControlFlow<SqlRejection> {
            self.0.$hook(node)
        })*
    };
}

impl Visitor for Walk<'_, '_> {
    type Break = SqlRejection;
    forward! {
        pre_visit_query(Query);
        post_visit_query(Query);
        pre_visit_select(Select);
        post_visit_select(Select);
        pre_visit_relation(ObjectName);
        post_visit_relation(ObjectName);
        pre_visit_table_factor(TableFactor);
        post_visit_table_factor(TableFactor);
        pre_visit_expr(Expr);
        post_visit_expr(Expr);
        pre_visit_statement(Statement);
        post_visit_statement(Statement);
        pre_visit_value(ValueWithSpan);
        post_visit_value(ValueWithSpan);
        pre_visit_ident(Ident);
        post_visit_ident(Ident);
        pre_visit_order_by(OrderBy);
        post_visit_order_by(OrderBy);
        pre_visit_order_by_expr(OrderByExpr);
        post_visit_order_by_expr(OrderByExpr);
        pre_visit_group_by(GroupByExpr);
        post_visit_group_by(GroupByExpr);
    }
}
