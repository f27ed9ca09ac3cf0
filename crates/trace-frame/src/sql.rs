//! polars SQL over the `events` table and its `kernels` and `launches` views, confined to
//! them: the query is parsed first (with polars' own parser, `sqlparser`) and refused when
//! it is not one `SELECT`, reads anything but those tables and its own CTEs (no table
//! functions such as `read_parquet('...')`, which would read any file or URL), or has an
//! unconstrained join whose rows could exceed the limit; the result is cut at the limit
//! plus one row, and more than the limit is an error.
//!
//! A join counts as unconstrained unless its `ON` has an equality of two columns. An
//! equality between columns of two of the trace's tables (`a.cat = b.cat`) is counted
//! before the query runs, from the number of rows of each key on each side, and refused
//! over the limit: an equi-join on a key with few values is a cross join in all but name.
//! `USING (col)` counts as `ON a.col = b.col`. A join side that is a CTE or a subquery
//! which only filters and projects one of the trace's tables (no join, grouping or
//! `DISTINCT`) is counted as that table, for the columns it passes through under their own
//! names: a filtered side has at most the table's rows per key, so the count is an upper
//! bound. Other joins over a subquery or a CTE are counted as their larger side (not
//! bounded here: the tool's memory budget bounds them).
//!
//! Functions that make text of any length from a number (`lpad`, `rpad`, `repeat`, ...)
//! are refused: one call can ask for gigabytes.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use polars::prelude::*;
use polars::sql::SQLContext;
use sqlparser::ast::{
    BinaryOperator, Expr, GroupByExpr, JoinConstraint, JoinOperator, Query, SelectItem, SetExpr,
    Statement, TableFactor, TableWithJoins, Visit, Visitor,
};

use crate::Error;

/// The default limit on the rows of a result, and of an unconstrained join.
pub const SQL_MAX_ROWS: usize = 10_000_000;

/// The tables a query may read.
const TABLES: [&str; 3] = ["events", "kernels", "launches"];

/// Functions refused because they make a text of any length from a number.
const UNBOUNDED_TEXT: [&str; 5] = ["lpad", "rpad", "repeat", "replicate", "space"];

/// Checks that `query` is one `SELECT` over the trace's tables (and its own CTEs), without
/// table functions, whose unconstrained joins stay within `max_rows` rows for a table of
/// `rows` rows. The error says what was refused.
pub fn check_sql(query: &str, rows: usize, max_rows: usize) -> Result<(), Error> {
    confine(query, rows, max_rows).map(|_| ())
}

/// One equality of a join's `ON` between columns of two of the trace's tables: (table,
/// column) of each side, and the condition as written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct EquiJoin {
    left: (String, String),
    right: (String, String),
    shown: String,
}

/// [`check_sql`], giving the equi-joins between the trace's tables to count.
fn confine(query: &str, rows: usize, max_rows: usize) -> Result<Vec<EquiJoin>, Error> {
    let refuse = |what: String| Error::Sql {
        query: query.to_owned(),
        what,
    };
    let dialect = sqlparser::dialect::GenericDialect {};
    let statements = sqlparser::parser::Parser::parse_sql(&dialect, query)
        .map_err(|e| refuse(format!("cannot parse it: {e}")))?;
    let [statement] = statements.as_slice() else {
        return Err(refuse(format!(
            "one SELECT is run, not {} statements",
            statements.len()
        )));
    };
    if !matches!(statement, Statement::Query(_)) {
        return Err(refuse(
            "only SELECT queries are run (no CREATE, DROP, COPY, SET, ...)".into(),
        ));
    }
    let mut check = Confined {
        ctes: BTreeSet::new(),
        passthrough: BTreeMap::new(),
        rows,
        max_rows,
        equi_joins: Vec::new(),
    };
    match statement.visit(&mut check) {
        ControlFlow::Break(what) => Err(refuse(what)),
        ControlFlow::Continue(()) => Ok(check.equi_joins),
    }
}

/// The visitor behind [`check_sql`].
struct Confined {
    ctes: BTreeSet<String>,
    /// The CTEs that only filter and project one of the trace's tables.
    passthrough: BTreeMap<String, Passthrough>,
    rows: usize,
    max_rows: usize,
    equi_joins: Vec<EquiJoin>,
}

impl Confined {
    /// The most rows `from` can make: the product over its comma-separated items and
    /// unconstrained joins (a constrained join counts as its larger side).
    fn most_rows(&self, from: &[TableWithJoins]) -> u128 {
        let mut total: u128 = 1;
        for item in from {
            total = total.saturating_mul(self.rows as u128);
            for join in &item.joins {
                let unconstrained = match &join.join_operator {
                    JoinOperator::CrossJoin(_) => true,
                    JoinOperator::Join(c)
                    | JoinOperator::Inner(c)
                    | JoinOperator::Left(c)
                    | JoinOperator::LeftOuter(c)
                    | JoinOperator::Right(c)
                    | JoinOperator::RightOuter(c)
                    | JoinOperator::FullOuter(c) => match c {
                        JoinConstraint::None => true,
                        // `ON a.ts < b.ts` and the like keep most pairs.
                        JoinConstraint::On(on) => column_equalities(on).is_empty(),
                        _ => false,
                    },
                    _ => false,
                };
                if unconstrained {
                    total = total.saturating_mul(self.rows as u128);
                }
            }
        }
        total
    }
}

impl Visitor for Confined {
    type Break = String;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<String> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                let name = cte.alias.name.value.to_lowercase();
                match passthrough(&cte.query, &self.ctes, &self.passthrough) {
                    Some(p) => self.passthrough.insert(name.clone(), p),
                    None => self.passthrough.remove(&name),
                };
                self.ctes.insert(name);
            }
        }
        if let SetExpr::Select(select) = query.body.as_ref() {
            self.equi_joins
                .extend(equi_joins(&select.from, &self.ctes, &self.passthrough));
            let rows = self.most_rows(&select.from);
            if rows > self.max_rows as u128 {
                return ControlFlow::Break(format!(
                    "its joins without a condition (or with no equality of two columns) make up to {rows} rows, more than the limit of {} (--sql-max-rows); join ON an equality",
                    self.max_rows
                ));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<String> {
        if let Expr::Function(f) = expr {
            let name = f.name.to_string().trim_matches('"').to_lowercase();
            let last = name.rsplit('.').next().unwrap_or(&name);
            if UNBOUNDED_TEXT.contains(&last) {
                return ControlFlow::Break(format!(
                    "{last}(...) is not run: it makes a text of any length from a number \
                     (one call can ask for gigabytes); the functions {} are refused",
                    UNBOUNDED_TEXT.join(", ")
                ));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<String> {
        match factor {
            TableFactor::Table { name, args, .. } => {
                let shown = name.to_string();
                if args.is_some() {
                    return ControlFlow::Break(format!(
                        "table functions such as {shown}(...) are not run: the query reads only the tables {}",
                        TABLES.join(", ")
                    ));
                }
                let plain = shown.trim_matches('"').to_lowercase();
                if TABLES.contains(&plain.as_str()) || self.ctes.contains(&plain) {
                    ControlFlow::Continue(())
                } else {
                    ControlFlow::Break(format!(
                        "unknown table {shown}: the query reads only the tables {}",
                        TABLES.join(", ")
                    ))
                }
            }
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => {
                ControlFlow::Continue(())
            }
            other => ControlFlow::Break(format!(
                "{other} is not run: the query reads only the tables {}",
                TABLES.join(", ")
            )),
        }
    }
}

/// The equalities of two columns (`x.a = y.b`) in the `AND`s of a join condition.
fn column_equalities(on: &Expr) -> Vec<(&[sqlparser::ast::Ident], &[sqlparser::ast::Ident])> {
    match on {
        Expr::Nested(e) => column_equalities(e),
        Expr::BinaryOp {
            left,
            op: BinaryOperator::And,
            right,
        } => {
            let mut all = column_equalities(left);
            all.extend(column_equalities(right));
            all
        }
        Expr::BinaryOp {
            left,
            op: BinaryOperator::Eq,
            right,
        } => match (left.as_ref(), right.as_ref()) {
            (Expr::CompoundIdentifier(l), Expr::CompoundIdentifier(r)) => {
                vec![(l.as_slice(), r.as_slice())]
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// A query (a CTE's or a subquery's) that only filters and projects one of the trace's
/// tables: each row is a row of `table`, so a key has at most as many rows as in `table`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Passthrough {
    table: String,
    /// The columns it passes through under their own names; `None` for all (`*`).
    columns: Option<BTreeSet<String>>,
}

impl Passthrough {
    fn passes(&self, column: &str) -> bool {
        self.columns
            .as_ref()
            .is_none_or(|c| c.contains(&column.to_lowercase()))
    }
}

/// The table a plain table factor reads, as a [`Passthrough`]: one of the trace's tables
/// (all columns), or a CTE that is one (`ctes` are the CTEs in scope, `passthrough` those
/// of them that filter and project a trace table).
fn table_passthrough(
    name: &str,
    ctes: &BTreeSet<String>,
    passthrough: &BTreeMap<String, Passthrough>,
) -> Option<Passthrough> {
    let name = name.trim_matches('"').to_lowercase();
    if ctes.contains(&name) {
        passthrough.get(&name).cloned()
    } else if TABLES.contains(&name.as_str()) {
        Some(Passthrough {
            table: name,
            columns: None,
        })
    } else {
        None
    }
}

/// `query` as a [`Passthrough`] when it is one `SELECT` from one table (a trace table or
/// such a CTE) without joins, grouping, `HAVING`, `DISTINCT` or its own CTEs.
fn passthrough(
    query: &Query,
    ctes: &BTreeSet<String>,
    known: &BTreeMap<String, Passthrough>,
) -> Option<Passthrough> {
    if query.with.is_some() {
        return None;
    }
    let SetExpr::Select(select) = query.body.as_ref() else {
        return None;
    };
    let grouped = !matches!(&select.group_by, GroupByExpr::Expressions(e, _) if e.is_empty());
    if select.distinct.is_some() || grouped || select.having.is_some() {
        return None;
    }
    let [item] = select.from.as_slice() else {
        return None;
    };
    let TableFactor::Table {
        name, args: None, ..
    } = &item.relation
    else {
        return None;
    };
    if !item.joins.is_empty() {
        return None;
    }
    let base = table_passthrough(&name.to_string(), ctes, known)?;
    let mut columns = BTreeSet::new();
    let mut all = false;
    for projected in &select.projection {
        let (expr, shown) = match projected {
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                all = true;
                continue;
            }
            SelectItem::UnnamedExpr(e) => (e, None),
            SelectItem::ExprWithAlias { expr, alias } => (expr, Some(alias.value.to_lowercase())),
            _ => continue,
        };
        let column = match expr {
            Expr::Identifier(i) => i.value.to_lowercase(),
            Expr::CompoundIdentifier(parts) => match parts.last() {
                Some(i) => i.value.to_lowercase(),
                None => continue,
            },
            _ => continue,
        };
        // `SELECT name AS cat` passes `name`'s values as `cat`: not the base's `cat`.
        if shown.as_ref().is_none_or(|s| *s == column) && base.passes(&column) {
            columns.insert(column);
        }
    }
    Some(Passthrough {
        table: base.table.clone(),
        columns: if all { base.columns } else { Some(columns) },
    })
}

/// The first equality of each join of `from` between columns of two of the trace's
/// tables (named, or by alias, directly or through a CTE or subquery that only filters
/// and projects one), or the first column of its `USING`.
fn equi_joins(
    from: &[TableWithJoins],
    ctes: &BTreeSet<String>,
    passthrough: &BTreeMap<String, Passthrough>,
) -> Vec<EquiJoin> {
    let mut tables: BTreeMap<String, Passthrough> = BTreeMap::new();
    // The alias (or name) a factor is known by, and what it reads.
    let read = |factor: &TableFactor| -> Option<(String, Passthrough)> {
        match factor {
            TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => {
                let shown = name.to_string().trim_matches('"').to_lowercase();
                let p = table_passthrough(&shown, ctes, passthrough)?;
                let key = alias
                    .as_ref()
                    .map_or(shown, |a| a.name.value.to_lowercase());
                Some((key, p))
            }
            TableFactor::Derived {
                subquery,
                alias: Some(alias),
                ..
            } => Some((
                alias.name.value.to_lowercase(),
                self::passthrough(subquery, ctes, passthrough)?,
            )),
            _ => None,
        }
    };
    for item in from {
        tables.extend(read(&item.relation));
        for join in &item.joins {
            tables.extend(read(&join.relation));
        }
    }
    let side = |idents: &[sqlparser::ast::Ident]| match idents {
        [alias, column] => tables
            .get(&alias.value.to_lowercase())
            .filter(|p| p.passes(&column.value))
            .map(|p| (p.table.clone(), column.value.clone())),
        _ => None,
    };
    let mut out = Vec::new();
    for item in from {
        for join in &item.joins {
            if let Some(using) = using_columns(&join.join_operator)
                && let Some(column) = using.first()
                && let (Some((_, l)), Some((_, r))) = (read(&item.relation), read(&join.relation))
                && l.passes(column)
                && r.passes(column)
            {
                out.push(EquiJoin {
                    left: (l.table, column.clone()),
                    right: (r.table, column.clone()),
                    shown: format!("USING ({column})"),
                });
                continue;
            }
            let on = match &join.join_operator {
                JoinOperator::Join(JoinConstraint::On(on))
                | JoinOperator::Inner(JoinConstraint::On(on))
                | JoinOperator::Left(JoinConstraint::On(on))
                | JoinOperator::LeftOuter(JoinConstraint::On(on))
                | JoinOperator::Right(JoinConstraint::On(on))
                | JoinOperator::RightOuter(JoinConstraint::On(on))
                | JoinOperator::FullOuter(JoinConstraint::On(on)) => on,
                _ => continue,
            };
            let first = column_equalities(on)
                .into_iter()
                .find_map(|(l, r)| Some((side(l)?, side(r)?, l, r)));
            if let Some((left, right, l, r)) = first {
                let shown = |i: &[sqlparser::ast::Ident]| {
                    i.iter()
                        .map(|p| p.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".")
                };
                out.push(EquiJoin {
                    left,
                    right,
                    shown: format!("{} = {}", shown(l), shown(r)),
                });
            }
        }
    }
    out
}

/// The columns of a join's `USING (...)`, if it has one.
fn using_columns(op: &JoinOperator) -> Option<Vec<String>> {
    match op {
        JoinOperator::Join(JoinConstraint::Using(cols))
        | JoinOperator::Inner(JoinConstraint::Using(cols))
        | JoinOperator::Left(JoinConstraint::Using(cols))
        | JoinOperator::LeftOuter(JoinConstraint::Using(cols))
        | JoinOperator::Right(JoinConstraint::Using(cols))
        | JoinOperator::RightOuter(JoinConstraint::Using(cols))
        | JoinOperator::FullOuter(JoinConstraint::Using(cols)) => Some(
            cols.iter()
                .map(|c| c.to_string().trim_matches('"').to_lowercase())
                .collect(),
        ),
        _ => None,
    }
}

/// The rows of `left.0 JOIN right.0 ON left.1 = right.1`, counted from each side's rows
/// per key (null keys match nothing); `None` when it cannot be counted (a column that is
/// not there, keys of types that do not compare), which the query itself then reports.
fn equi_join_rows(df: &DataFrame, join: &EquiJoin) -> Option<f64> {
    let tables = views(df);
    let table = |name: &str| {
        tables
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, lf)| lf.clone())
    };
    let counts = |(name, column): &(String, String), n: &str| {
        Some(
            table(name)?
                .group_by([col(column.as_str()).alias("key")])
                .agg([len().cast(DataType::Float64).alias(n)]),
        )
    };
    let joined = counts(&join.left, "left_rows")?.join(
        counts(&join.right, "right_rows")?,
        [col("key")],
        [col("key")],
        JoinArgs::new(JoinType::Inner),
    );
    let total = joined
        .select([(col("left_rows") * col("right_rows")).sum().alias("rows")])
        .collect()
        .ok()?;
    total.column("rows").ok()?.f64().ok()?.get(0)
}

/// [`run_sql`] confined by [`check_sql`], with at most `max_rows` rows in the result (and
/// in any equi-join between the trace's tables).
pub fn run_sql_limited(df: &DataFrame, query: &str, max_rows: usize) -> Result<DataFrame, Error> {
    for join in confine(query, df.height(), max_rows)? {
        if let Some(rows) = equi_join_rows(df, &join)
            && rows > max_rows as f64
        {
            return Err(Error::Sql {
                query: query.to_owned(),
                what: format!(
                    "its join ON {} makes up to {rows:.0} rows, more than the limit of {max_rows} (--sql-max-rows): join on a key with fewer rows per value, or filter the tables first",
                    join.shown
                ),
            });
        }
    }
    let out = run_lazy(df, query)?
        .limit(max_rows.saturating_add(1).min(u32::MAX as usize) as IdxSize)
        .collect()
        .map_err(Error::polars(format!("SQL `{query}`")))?;
    if out.height() > max_rows {
        return Err(Error::Sql {
            query: query.to_owned(),
            what: format!("the result has more than {max_rows} rows (--sql-max-rows)"),
        });
    }
    Ok(out)
}

/// Runs `query` over `events` (every row of `df`), `kernels` (`cat` is `kernel`, or
/// `Kernel` in older Kineto traces) and
/// `launches` (`cat` is `cuda_runtime` or `cuda_driver`), confined to them by
/// [`check_sql`] with the default limit.
pub fn run_sql(df: &DataFrame, query: &str) -> Result<DataFrame, Error> {
    run_sql_limited(df, query, SQL_MAX_ROWS)
}

/// One of the trace's tables (`events`, `kernels` or `launches`) as a frame: the rows the
/// SQL view of that name reads; `None` for another name.
pub fn table(df: &DataFrame, name: &str) -> Result<Option<DataFrame>, Error> {
    let Some(lazy) = views(df).into_iter().find(|(n, _)| *n == name) else {
        return Ok(None);
    };
    lazy.1
        .collect()
        .map(Some)
        .map_err(Error::polars(format!("the {name} table")))
}

/// The three tables as lazy frames over `df`.
fn views(df: &DataFrame) -> [(&'static str, LazyFrame); 3] {
    let events = df.clone().lazy();
    [
        ("events", events.clone()),
        (
            "kernels",
            events.clone().filter(
                col("cat")
                    .eq(lit("kernel"))
                    .or(col("cat").eq(lit("Kernel"))),
            ),
        ),
        (
            "launches",
            events.filter(
                col("cat")
                    .eq(lit("cuda_runtime"))
                    .or(col("cat").eq(lit("cuda_driver"))),
            ),
        ),
    ]
}

/// The query as a lazy frame over the three tables (not checked).
fn run_lazy(df: &DataFrame, query: &str) -> Result<LazyFrame, Error> {
    let mut ctx = SQLContext::new();
    for (name, lazy) in views(df) {
        ctx.register(name, lazy);
    }
    ctx.execute(query)
        .map_err(Error::polars(format!("SQL `{query}`")))
}

/// A query result as JSON: an array of row objects (column → value).
pub fn frame_to_json(df: &DataFrame) -> serde_json::Value {
    let cols = df.columns();
    let rows = (0..df.height())
        .map(|i| {
            let mut row = serde_json::Map::new();
            for c in cols {
                let v = match c.get(i) {
                    Ok(AnyValue::Null) | Err(_) => serde_json::Value::Null,
                    Ok(AnyValue::Boolean(b)) => b.into(),
                    Ok(AnyValue::String(s)) => s.into(),
                    Ok(AnyValue::StringOwned(s)) => s.as_str().into(),
                    Ok(v) => match v.extract::<i64>() {
                        Some(n) if v.is_integer() => n.into(),
                        _ => v
                            .extract::<f64>()
                            .map_or_else(|| v.to_string().into(), Into::into),
                    },
                };
                row.insert(c.name().to_string(), v);
            }
            serde_json::Value::Object(row)
        })
        .collect();
    serde_json::Value::Array(rows)
}
