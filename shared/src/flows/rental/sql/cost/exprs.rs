//! The cost model's set operations, names and expressions: `UNION`s, column resolution
//! through the scopes in force, expressions and their subqueries, `ORDER BY`, table names.

use super::*;

impl Analyser<'_> {
    pub(super) fn set_expr(&mut self, body: &SetExpr) -> Result<Shape, SqlRejection> {
        match body {
            SetExpr::Select(select) => self.select(select, None),
            SetExpr::Query(query) => self.query(query),
            SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let left = self.set_expr(left)?;
                let right = self.set_expr(right)?;
                let rows = left.rows + right.rows;
                let mut work = left.work + right.work;
                let all = *op == SetOperator::Union && *set_quantifier == SetQuantifier::All;
                if !all {
                    let sorting = sort(rows, width(&left.columns));
                    work += sorting;
                    self.note_sort(sorting);
                }
                Ok(Shape {
                    rows,
                    work,
                    columns: left.columns,
                    outer: left.outer.min(right.outer),
                })
            }
            _ => reject("only SELECT queries are allowed"),
        }
    }

    pub(super) fn note_sort(&mut self, work: f64) {
        if work > WORK_BUDGET / 4.0 {
            self.reasons.sort = true;
        }
    }

    pub(super) fn exprs(&self, base: usize) -> Exprs {
        Exprs {
            base,
            outer: NONE,
            nodes: 0,
            aggregate: false,
            distinct_aggregate: false,
            once: 0.0,
            per_row: 0.0,
        }
    }

    /// Resolves a column reference: the scopes it may read (innermost first), with the
    /// relation when known.
    pub(super) fn resolve(
        &self,
        parts: &[String],
    ) -> Result<Vec<(usize, Option<usize>)>, SqlRejection> {
        match parts {
            [column] => {
                if matches!(column.as_str(), "rowid" | "oid" | "_rowid_") {
                    return reject(format!("{column} is not available: use id"));
                }
                let mut hits = Vec::new();
                for (k, scope) in self.scopes.iter().enumerate().rev() {
                    let mut certain = false;
                    for (i, relation) in scope.relations.iter().enumerate() {
                        match &relation.columns {
                            Some(columns) if columns.contains(column) => {
                                hits.push((k, Some(i)));
                                certain = true;
                            }
                            Some(_) => {}
                            None => hits.push((k, None)),
                        }
                    }
                    if scope.aliases.contains(column) {
                        hits.push((k, None));
                        certain = true;
                    }
                    if certain {
                        break;
                    }
                }
                if hits.is_empty() {
                    // A name the model cannot place (SQLite's `name:1` for a repeated
                    // column, a typo): it may read any enclosing query.
                    hits.push((0, None));
                }
                Ok(hits)
            }
            [table, _column] => {
                for (k, scope) in self.scopes.iter().enumerate().rev() {
                    if let Some(i) = scope
                        .relations
                        .iter()
                        .position(|r| r.name.as_deref() == Some(table.as_str()))
                    {
                        return Ok(vec![(k, Some(i))]);
                    }
                }
                reject(format!(
                    "{table} is not a table or alias the statement reads at this point"
                ))
            }
            _ => reject("column names have at most two parts (alias.column)"),
        }
    }

    /// Adds one expression of the `SELECT` at `exprs.base`.
    pub(super) fn expr(&mut self, expr: &Expr, exprs: &mut Exprs) -> Result<(), SqlRejection> {
        let found = scan(expr);
        for ident in &found.idents {
            for (k, _) in self.resolve(ident)? {
                if k < exprs.base {
                    exprs.outer = exprs.outer.min(k);
                }
            }
        }
        if found.group_concat && self.depth != 1 {
            return reject(
                "group_concat is allowed only in the outermost SELECT, not in a subquery or CTE",
            );
        }
        exprs.nodes += found.nodes;
        exprs.aggregate |= found.aggregate;
        exprs.distinct_aggregate |= found.distinct_aggregate;
        for subquery in &found.subqueries {
            let shape = self.query(subquery)?;
            if shape.outer <= exprs.base {
                exprs.per_row += shape.work;
                if shape.work > 1.0 {
                    self.reasons.correlated = true;
                }
                if shape.outer < exprs.base {
                    exprs.outer = exprs.outer.min(shape.outer);
                }
            } else {
                exprs.once += shape.work + sort(shape.rows, 1);
            }
        }
        Ok(())
    }

    pub(super) fn order_by(
        &mut self,
        order_by: &OrderBy,
        exprs: &mut Exprs,
    ) -> Result<(), SqlRejection> {
        match &order_by.kind {
            OrderByKind::Expressions(list) => {
                for item in list {
                    if item.with_fill.is_some() {
                        return reject("ORDER BY … WITH FILL is not allowed");
                    }
                    self.expr(&item.expr, exprs)?;
                }
                Ok(())
            }
            OrderByKind::All(_) => reject("ORDER BY ALL is not allowed"),
        }
    }

    /// Resolves a table name: a CTE in scope, else a logical table.
    pub(super) fn table(&self, name: &str) -> Result<Source, SqlRejection> {
        for frame in self.frames.iter().rev() {
            if let Some(cte) = frame.iter().find(|c| c.name == name) {
                return Ok(Source {
                    rows: cte.rows,
                    work: cte.work + cte.rows,
                    columns: cte.columns.clone(),
                    outer: cte.outer,
                    logical: false,
                });
            }
        }
        if self.defining.iter().any(|d| d == name) {
            return reject(format!(
                "the CTE {name} reads itself: recursive queries are not allowed"
            ));
        }
        if self.all_ctes.iter().any(|c| c == name) {
            return reject(format!(
                "the CTE {name} is not in scope here: a CTE can be read only by the CTEs \
                 defined after it in its WITH and by that WITH's query (no recursion)"
            ));
        }
        if let Some(table) = self
            .tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
            && !forbidden(name)
        {
            let rows = table.max_rows as f64;
            return Ok(Source {
                rows,
                work: 0.0,
                columns: table.columns.clone(),
                outer: NONE,
                logical: true,
            });
        }
        let allowed: Vec<&str> = self.tables.iter().map(|t| t.name.as_str()).collect();
        reject(format!(
            "no such table: {name} (tables: {})",
            allowed.join(", ")
        ))
    }
}
