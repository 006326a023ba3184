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
}

mod exprs;
mod joins;
mod keys;
