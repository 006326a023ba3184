//! Which relations fix another by its `id` (the index lookups the join order uses), and
//! the columns a `SELECT` yields.

use super::*;

impl Analyser<'_> {
    /// For each relation of the `SELECT` at `base`, the sets of relations whose rows fix
    /// it by its `id` (an equality `t.id = <expression over those relations>`).
    pub(super) fn keys(
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
    pub(super) fn key_of(
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
    pub(super) fn columns(&self, select: &Select, base: usize) -> Option<Vec<String>> {
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
