//! The cost model's `FROM` clauses: table factors, join lists in a greedy order, and a
//! `SELECT` in its scope.

use super::*;

impl Analyser<'_> {
    pub(super) fn factor(
        &mut self,
        factor: &TableFactor,
        outer_joined: bool,
        constraint: Option<JoinConstraint>,
        factors: &mut Vec<Factor>,
        relations: &mut Vec<Relation>,
    ) -> Result<(), SqlRejection> {
        match factor {
            TableFactor::Table { name, alias, .. } => {
                let table = name
                    .0
                    .last()
                    .and_then(|p| p.as_ident())
                    .map(|i| lower(&i.value))
                    .unwrap_or_default();
                let Source {
                    rows,
                    work,
                    columns,
                    outer,
                    logical,
                } = self.table(&table)?;
                let columns = match alias {
                    Some(alias) if !alias.columns.is_empty() => {
                        Some(alias.columns.iter().map(|c| lower(&c.name.value)).collect())
                    }
                    _ => columns,
                };
                relations.push(Relation {
                    name: Some(alias.as_ref().map_or(table, |a| lower(&a.name.value))),
                    columns,
                    logical,
                });
                factors.push(Factor {
                    rows,
                    work,
                    outer,
                    outer_joined,
                    constraint,
                });
            }
            TableFactor::Derived {
                subquery, alias, ..
            } => {
                let shape = self.query(subquery)?;
                let columns = match alias {
                    Some(alias) if !alias.columns.is_empty() => {
                        Some(alias.columns.iter().map(|c| lower(&c.name.value)).collect())
                    }
                    _ => shape.columns,
                };
                relations.push(Relation {
                    name: alias.as_ref().map(|a| lower(&a.name.value)),
                    columns,
                    logical: false,
                });
                factors.push(Factor {
                    rows: shape.rows,
                    work: shape.work + shape.rows,
                    outer: shape.outer,
                    outer_joined,
                    constraint,
                });
            }
            TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return reject("a parenthesised join may not have an alias");
                }
                // Its own constraint joins a group: it keys nothing.
                self.join_list(table_with_joins, outer_joined, factors, relations)?;
            }
            _ => return reject("this kind of FROM item is not allowed"),
        }
        Ok(())
    }

    pub(super) fn join_list(
        &mut self,
        item: &TableWithJoins,
        outer_joined: bool,
        factors: &mut Vec<Factor>,
        relations: &mut Vec<Relation>,
    ) -> Result<(), SqlRejection> {
        self.factor(&item.relation, outer_joined, None, factors, relations)?;
        for join in &item.joins {
            let (outer, constraint) = match &join.join_operator {
                JoinOperator::Join(c) | JoinOperator::Inner(c) | JoinOperator::CrossJoin(c) => {
                    (false, c)
                }
                JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c) => (true, c),
                _ => return reject("only JOIN, LEFT JOIN and CROSS JOIN are allowed"),
            };
            self.factor(
                &join.relation,
                outer || outer_joined,
                Some(constraint.clone()),
                factors,
                relations,
            )?;
            if matches!(
                join.join_operator,
                JoinOperator::Right(_) | JoinOperator::RightOuter(_) | JoinOperator::FullOuter(_)
            ) {
                // Every relation may be null-extended or unmatched: none is keyed.
                for f in factors.iter_mut() {
                    f.outer_joined = true;
                    f.constraint = None;
                }
            }
        }
        Ok(())
    }

    pub(super) fn select(
        &mut self,
        select: &Select,
        order_by: Option<&OrderBy>,
    ) -> Result<Shape, SqlRejection> {
        let mut factors = Vec::new();
        let mut relations = Vec::new();
        let mut ons: Vec<Expr> = Vec::new();
        for item in &select.from {
            self.join_list(item, false, &mut factors, &mut relations)?;
            collect_on(item, &mut ons);
        }
        let base = self.scopes.len();
        let aliases = select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::ExprWithAlias { alias, .. } => Some(lower(&alias.value)),
                _ => None,
            })
            .collect();
        self.scopes.push(Scope { relations, aliases });
        let result = self.select_in_scope(select, order_by, base, &factors, &ons);
        self.scopes.pop();
        result
    }

    pub(super) fn select_in_scope(
        &mut self,
        select: &Select,
        order_by: Option<&OrderBy>,
        base: usize,
        factors: &[Factor],
        ons: &[Expr],
    ) -> Result<Shape, SqlRejection> {
        let keys = self.keys(select, base, factors)?;
        // The greedy join order: keyed relations as soon as their keys are bound.
        let n = factors.len();
        let mut chosen = vec![false; n];
        let mut rows = 1.0;
        // A subquery or CTE next to other relations may be re-run (as a co-routine) once
        // per combination of their rows, whatever the join order SQLite picks.
        let mut work = 0.0;
        for (i, factor) in factors.iter().enumerate() {
            let others: f64 = factors
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, f)| at_least_one(f.rows))
                .product();
            work += factor.work * others;
            if others > 1.0 && factor.work > 1.0 {
                self.reasons.derived = true;
            }
        }
        for _ in 0..n {
            let keyed = (0..n).find(|&i| {
                !chosen[i] && keys[i].iter().any(|deps| deps.iter().all(|&d| chosen[d]))
            });
            if let Some(i) = keyed {
                chosen[i] = true;
                work += rows;
                continue;
            }
            let Some(i) = (0..n).filter(|&i| !chosen[i]).min_by(|&a, &b| {
                factors[a]
                    .rows
                    .partial_cmp(&factors[b].rows)
                    .unwrap_or(core::cmp::Ordering::Equal)
            }) else {
                break;
            };
            chosen[i] = true;
            let size = at_least_one(factors[i].rows);
            work += rows * size;
            if rows > 1.0 && size > 1.0 {
                self.reasons.product = true;
            }
            rows *= size;
        }
        let mut exprs = self.exprs(base);
        for factor in factors {
            exprs.outer = exprs.outer.min(factor.outer);
        }
        for on in ons {
            self.expr(on, &mut exprs)?;
        }
        for item in &select.projection {
            match item {
                SelectItem::UnnamedExpr(expr) | SelectItem::ExprWithAlias { expr, .. } => {
                    self.expr(expr, &mut exprs)?;
                }
                _ => {}
            }
        }
        if let Some(selection) = &select.selection {
            self.expr(selection, &mut exprs)?;
        }
        let grouped = match &select.group_by {
            GroupByExpr::Expressions(list, modifiers) if modifiers.is_empty() => {
                for expr in list {
                    self.expr(expr, &mut exprs)?;
                }
                list.len()
            }
            _ => return reject("only GROUP BY with expressions is allowed"),
        };
        if let Some(having) = &select.having {
            self.expr(having, &mut exprs)?;
        }
        if let Some(order_by) = order_by {
            self.order_by(order_by, &mut exprs)?;
        }
        work += exprs.once;
        work += rows * (1.0 + exprs.nodes as f64 / NODES_PER_UNIT + exprs.per_row);
        let columns = self.columns(select, base);
        let mut out = rows;
        if grouped > 0 || exprs.distinct_aggregate {
            let sorting = sort(rows, grouped.max(1) + 1);
            work += sorting;
            self.note_sort(sorting);
        } else if exprs.aggregate {
            out = 1.0;
        }
        if select.distinct.is_some() {
            if matches!(select.distinct, Some(Distinct::On(_))) {
                return reject("DISTINCT ON is not allowed");
            }
            let sorting = sort(out, width(&columns));
            work += sorting;
            self.note_sort(sorting);
        }
        if let Some(order_by) = order_by {
            let keys = match &order_by.kind {
                OrderByKind::Expressions(list) => list.len(),
                OrderByKind::All(_) => 0,
            };
            let sorting = sort(out, width(&columns) + keys);
            work += sorting;
            self.note_sort(sorting);
        }
        Ok(Shape {
            rows: out,
            work,
            columns,
            outer: exprs.outer,
        })
    }
}
