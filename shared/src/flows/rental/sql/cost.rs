//! Name scoping and the static cost model of a model-written statement, decided before
//! the database sees it (issue 24).
//!
//! Names: a table name resolves to a CTE only where that CTE is in scope (the query of
//! its `WITH`, and the CTEs defined after it in the same `WITH`); anywhere else it must be
//! one of the logical tables. A CTE that reads itself or a later CTE — directly, through
//! another CTE or from inside a subquery — is therefore never in scope where it is read:
//! SQLite would treat it as recursive, so it is refused. CTE names are unique in a
//! statement (no shadowing), so this resolution and SQLite's agree.
//!
//! Cost: every relation has an upper bound on its rows (a logical table: its declared
//! maximum; a CTE or derived table: the bound of its query). A `SELECT` visits, in a
//! greedy join order, one row of a logical table per row so far when that table's `id`
//! is equated to columns of relations already joined (an index lookup; the wrapper's CTEs
//! are `NOT MATERIALIZED`, so the primary key serves it), and every row of any other
//! relation (a product). A CTE or derived table next to other relations may be re-run
//! once per combination of their rows (SQLite 3.46 runs such a subquery as a co-routine
//! in an inner loop), so its work multiplies by their bounds. Subqueries that read a
//! column of an enclosing query run once per row of it (their work multiplies); others
//! run once. Sorting (`ORDER BY`, `GROUP BY`, `DISTINCT`, `UNION`, an `IN` list) costs
//! one unit per row plus [`SORT`] per column it carries. The total is compared with
//! [`WORK_BUDGET`]; the benchmark `scripts/bench-rental-sql.sh` measures that what fits
//! runs within 250 ms over the 5,000-listing demo data.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use sqlparser::ast::{
    BinaryOperator, Distinct, Expr, GroupByExpr, JoinConstraint, JoinOperator, LimitClause,
    OrderBy, OrderByKind, Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr,
    SetOperator, SetQuantifier, TableFactor, TableWithJoins,
};

use super::scan::{collect_on, conjuncts, cte_names, limit_number, lower, scan, strip};
use super::{SqlRejection, Table, forbidden, reject};

/// Work units (≈ one row visited, ≈ 1 µs of SQLite) a statement may cost.
pub const WORK_BUDGET: f64 = 250_000.0;

/// The cost of sorting or hashing one row, per column it carries, in work units (on top
/// of one unit per row).
pub const SORT: f64 = 0.5;

/// The width assumed for a row whose columns are unknown.
const UNKNOWN_WIDTH: usize = 16;

/// Work to sort `rows` rows of `width` columns.
fn sort(rows: f64, width: usize) -> f64 {
    rows * (1.0 + SORT * width as f64)
}

fn width(columns: &Option<Vec<String>>) -> usize {
    columns.as_ref().map_or(UNKNOWN_WIDTH, Vec::len)
}

/// Expression nodes per row that cost one more work unit.
const NODES_PER_UNIT: f64 = 16.0;

/// "No reference to an enclosing query".
const NONE: usize = usize::MAX;

/// What a query yields, for the query that reads it.
struct Shape {
    /// Upper bound of its rows.
    rows: f64,
    /// Upper bound of the work to run it once.
    work: f64,
    /// Its column names (lowercase); `None` when unknown.
    columns: Option<Vec<String>>,
    /// The outermost scope it reads a column of, below its own ([`NONE`] if none).
    outer: usize,
}

/// A relation in a `FROM` list.
struct Relation {
    /// The name columns are qualified with (alias, else table name), lowercase.
    name: Option<String>,
    columns: Option<Vec<String>>,
    /// A logical table read directly (its `id` is a key).
    logical: bool,
}

/// The relations (and result aliases) one `SELECT` makes visible.
#[derive(Default)]
struct Scope {
    relations: Vec<Relation>,
    aliases: Vec<String>,
}

/// What a table name resolves to.
struct Source {
    rows: f64,
    work: f64,
    columns: Option<Vec<String>>,
    outer: usize,
    logical: bool,
}

/// A CTE in scope.
struct Cte {
    name: String,
    rows: f64,
    work: f64,
    columns: Option<Vec<String>>,
    outer: usize,
}

/// Which multiplications pushed the estimate up (for the refusal sentence).
#[derive(Default)]
struct Reasons {
    product: bool,
    derived: bool,
    correlated: bool,
    sort: bool,
}

/// The analysis of one statement.
pub(super) struct Analyser<'c> {
    tables: &'c [Table],
    scopes: Vec<Scope>,
    frames: Vec<Vec<Cte>>,
    defining: Vec<String>,
    all_ctes: Vec<String>,
    depth: usize,
    reasons: Reasons,
}

fn at_least_one(rows: f64) -> f64 {
    if rows < 1.0 { 1.0 } else { rows }
}

/// What the expressions of one `SELECT` add up to.
struct Exprs {
    /// This `SELECT`'s scope index.
    base: usize,
    outer: usize,
    nodes: usize,
    aggregate: bool,
    distinct_aggregate: bool,
    /// Work of subqueries run once.
    once: f64,
    /// Work of subqueries run once per row.
    per_row: f64,
}

/// One relation of a `FROM` list, as a cost.
struct Factor {
    rows: f64,
    /// One-off work to produce it (a CTE's or derived table's query).
    work: f64,
    outer: usize,
    /// Whether a `LEFT`/`RIGHT`/`FULL` join brings it in (then it is never keyed).
    outer_joined: bool,
    /// Its own `ON`/`USING` constraint.
    constraint: Option<JoinConstraint>,
}

impl<'c> Analyser<'c> {
    pub(super) fn new(tables: &'c [Table]) -> Self {
        Self {
            tables,
            scopes: Vec::new(),
            frames: Vec::new(),
            defining: Vec::new(),
            all_ctes: Vec::new(),
            depth: 0,
            reasons: Reasons::default(),
        }
    }

    /// Checks names and returns the estimated work of the statement `query`.
    pub(super) fn statement(&mut self, query: &Query) -> Result<f64, SqlRejection> {
        self.all_ctes = cte_names(query);
        for (i, name) in self.all_ctes.iter().enumerate() {
            if self.all_ctes[..i].contains(name) {
                return reject(format!(
                    "two CTEs are named {name}: give every CTE its own name"
                ));
            }
            if self
                .tables
                .iter()
                .any(|t| t.name.eq_ignore_ascii_case(name))
            {
                return reject(format!(
                    "a CTE may not be named like the table {name}: choose another name"
                ));
            }
            if forbidden(name) {
                return reject(format!("the name {name} is not allowed"));
            }
        }
        let shape = self.query(query)?;
        Ok(shape.work)
    }

    /// The refusal sentence for a statement whose estimate is `work`.
    pub(super) fn too_costly(&self, work: f64) -> SqlRejection {
        let mut advice = Vec::new();
        if self.reasons.product {
            advice.push(
                "join tables only on their id (e.g. JOIN my_rooms m ON m.id = rooms.id); \
                 tables listed or joined without an id match multiply each other's rows, which is not allowed",
            );
        }
        if self.reasons.derived {
            advice.push(
                "a subquery or CTE in FROM next to other tables may run again for every row of \
                 them: read it with IN (SELECT …) instead, or make it the only item in FROM",
            );
        }
        if self.reasons.correlated {
            advice.push(
                "a subquery that uses a column of the outer query runs once per outer row: \
                 use an uncorrelated IN (SELECT …) or a subquery that looks a row up by id",
            );
        }
        if self.reasons.sort || advice.is_empty() {
            advice.push(
                "read fewer rows: filter with WHERE, aggregate once instead of several times, \
                 and avoid sorting or combining several large results",
            );
        }
        let estimate = if work > 1e12 {
            String::from("more than a trillion")
        } else {
            format!("about {}", work as u64)
        };
        SqlRejection(format!(
            "the statement would read too many rows ({estimate} row visits; at most {} are allowed): {}",
            WORK_BUDGET as u64,
            advice.join("; ")
        ))
    }

    fn query(&mut self, query: &Query) -> Result<Shape, SqlRejection> {
        self.depth += 1;
        let limit = match &query.limit_clause {
            None => None,
            Some(LimitClause::LimitOffset {
                limit,
                offset,
                limit_by,
            }) => {
                if !limit_by.is_empty() {
                    return reject("LIMIT BY is not allowed");
                }
                if let Some(offset) = offset
                    && limit_number(&offset.value).is_none()
                {
                    return reject("OFFSET takes a whole number");
                }
                match limit {
                    None => None,
                    Some(expr) => Some(
                        limit_number(expr)
                            .ok_or_else(|| SqlRejection("LIMIT takes a whole number".into()))?,
                    ),
                }
            }
            Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
                if limit_number(offset).is_none() {
                    return reject("OFFSET takes a whole number");
                }
                Some(
                    limit_number(limit)
                        .ok_or_else(|| SqlRejection("LIMIT takes a whole number".into()))?,
                )
            }
        };
        let with = query.with.is_some();
        if let Some(with) = &query.with {
            self.frames.push(Vec::new());
            for cte in &with.cte_tables {
                let name = lower(&cte.alias.name.value);
                self.defining.push(name.clone());
                let shape = self.query(&cte.query)?;
                self.defining.pop();
                let columns = if cte.alias.columns.is_empty() {
                    shape.columns
                } else {
                    Some(
                        cte.alias
                            .columns
                            .iter()
                            .map(|c| lower(&c.name.value))
                            .collect(),
                    )
                };
                if let Some(frame) = self.frames.last_mut() {
                    frame.push(Cte {
                        name,
                        rows: shape.rows,
                        work: shape.work,
                        columns,
                        outer: shape.outer,
                    });
                }
            }
        }
        let mut shape = match query.body.as_ref() {
            SetExpr::Select(select) => self.select(select, query.order_by.as_ref())?,
            body => {
                let mut shape = self.set_expr(body)?;
                if let Some(order_by) = &query.order_by {
                    let base = self.scopes.len();
                    self.scopes.push(Scope {
                        relations: vec![Relation {
                            name: None,
                            columns: shape.columns.clone(),
                            logical: false,
                        }],
                        aliases: Vec::new(),
                    });
                    let mut exprs = self.exprs(base);
                    let result = self.order_by(order_by, &mut exprs);
                    self.scopes.pop();
                    result?;
                    let sorting = sort(shape.rows, width(&shape.columns));
                    shape.work += exprs.once + shape.rows * exprs.per_row + sorting;
                    shape.outer = shape.outer.min(exprs.outer);
                    self.note_sort(sorting);
                }
                shape
            }
        };
        if let Some(limit) = limit
            && limit >= 0
            && (limit as f64) < shape.rows
        {
            shape.rows = limit as f64;
        }
        if with {
            self.frames.pop();
        }
        self.depth -= 1;
        Ok(shape)
    }

    fn set_expr(&mut self, body: &SetExpr) -> Result<Shape, SqlRejection> {
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

    fn note_sort(&mut self, work: f64) {
        if work > WORK_BUDGET / 4.0 {
            self.reasons.sort = true;
        }
    }

    fn exprs(&self, base: usize) -> Exprs {
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
    fn resolve(&self, parts: &[String]) -> Result<Vec<(usize, Option<usize>)>, SqlRejection> {
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
    fn expr(&mut self, expr: &Expr, exprs: &mut Exprs) -> Result<(), SqlRejection> {
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

    fn order_by(&mut self, order_by: &OrderBy, exprs: &mut Exprs) -> Result<(), SqlRejection> {
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
    fn table(&self, name: &str) -> Result<Source, SqlRejection> {
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

    fn factor(
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

    fn join_list(
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

    fn select(
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

    fn select_in_scope(
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

    /// For each relation of the `SELECT` at `base`, the sets of relations whose rows fix
    /// it by its `id` (an equality `t.id = <expression over those relations>`).
    fn keys(
        &self,
        select: &Select,
        base: usize,
        factors: &[Factor],
    ) -> Result<Vec<Vec<Vec<usize>>>, SqlRejection> {
        let mut keys: Vec<Vec<Vec<usize>>> = factors.iter().map(|_| Vec::new()).collect();
        let mut shared: Vec<&Expr> = Vec::new();
        if let Some(selection) = &select.selection {
            conjuncts(selection, &mut shared);
        }
        for factor in factors {
            if let Some(JoinConstraint::On(on)) = &factor.constraint
                && !factor.outer_joined
            {
                conjuncts(on, &mut shared);
            }
        }
        for (i, factor) in factors.iter().enumerate() {
            // The right side of an outer join is never keyed: SQLite may materialise it
            // (e.g. under DISTINCT) and then scan it once per row, without an index.
            if factor.outer_joined {
                continue;
            }
            if let Some(JoinConstraint::Using(names)) = &factor.constraint {
                let by_id = names.iter().any(|n| {
                    n.0.last()
                        .and_then(|p| p.as_ident())
                        .is_some_and(|id| id.value.eq_ignore_ascii_case("id"))
                });
                let relation = &self.scopes[base].relations[i];
                if by_id && relation.logical && i > 0 {
                    keys[i].push((0..i).collect());
                }
            }
            let pool = shared.clone();
            for conjunct in pool {
                if let Some(deps) = self.key_of(conjunct, base, i)? {
                    keys[i].push(deps);
                }
            }
        }
        Ok(keys)
    }

    /// Whether `expr` is `r.id = e` for relation `i` of the scope `base` (a logical
    /// table), `e` reading neither `r` nor subqueries; the relations `e` reads.
    fn key_of(
        &self,
        expr: &Expr,
        base: usize,
        i: usize,
    ) -> Result<Option<Vec<usize>>, SqlRejection> {
        let Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } = strip(expr)
        else {
            return Ok(None);
        };
        if !self.scopes[base].relations[i].logical {
            return Ok(None);
        }
        for (side, other) in [(left, right), (right, left)] {
            let parts: Vec<String> = match strip(side) {
                Expr::Identifier(ident) => vec![lower(&ident.value)],
                Expr::CompoundIdentifier(parts) => parts.iter().map(|p| lower(&p.value)).collect(),
                _ => continue,
            };
            if parts.last().map(String::as_str) != Some("id") {
                continue;
            }
            if self.resolve(&parts)? != vec![(base, Some(i))] {
                continue;
            }
            let found = scan(other);
            if !found.subqueries.is_empty() || found.aggregate {
                continue;
            }
            let mut deps = Vec::new();
            let mut usable = true;
            for ident in &found.idents {
                for (k, relation) in self.resolve(ident)? {
                    if k == base {
                        match relation {
                            Some(j) if j != i => deps.push(j),
                            _ => usable = false,
                        }
                    }
                }
            }
            if usable {
                return Ok(Some(deps));
            }
        }
        Ok(None)
    }

    /// The result column names of a `SELECT` (whose scope is `base`).
    fn columns(&self, select: &Select, base: usize) -> Option<Vec<String>> {
        let scope = &self.scopes[base];
        let mut columns = Vec::new();
        for item in &select.projection {
            match item {
                SelectItem::ExprWithAlias { alias, .. } => columns.push(lower(&alias.value)),
                SelectItem::UnnamedExpr(Expr::Identifier(ident)) => {
                    columns.push(lower(&ident.value))
                }
                SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                    columns.push(lower(&parts.last()?.value));
                }
                SelectItem::UnnamedExpr(expr) => columns.push(lower(&expr.to_string())),
                SelectItem::Wildcard(_) => {
                    for relation in &scope.relations {
                        columns.extend(relation.columns.clone()?);
                    }
                }
                SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(name),
                    _,
                ) => {
                    let table = lower(&name.0.last()?.as_ident()?.value);
                    let relation = scope
                        .relations
                        .iter()
                        .find(|r| r.name.as_deref() == Some(table.as_str()))?;
                    columns.extend(relation.columns.clone()?);
                }
                _ => return None,
            }
        }
        Some(columns)
    }
}
