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
//! Joins over a subquery or a CTE are counted as their larger side (not bounded).

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use polars::prelude::*;
use polars::sql::SQLContext;
use sqlparser::ast::{
    BinaryOperator, Expr, JoinConstraint, JoinOperator, Query, SetExpr, Statement, TableFactor,
    TableWithJoins, Visit, Visitor,
};

use crate::Error;

/// The default limit on the rows of a result, and of an unconstrained join.
pub const SQL_MAX_ROWS: usize = 10_000_000;

/// The tables a query may read.
const TABLES: [&str; 3] = ["events", "kernels", "launches"];

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
                self.ctes.insert(cte.alias.name.value.to_lowercase());
            }
        }
        if let SetExpr::Select(select) = query.body.as_ref() {
            self.equi_joins.extend(equi_joins(&select.from, &self.ctes));
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

/// The first equality of each join of `from` between columns of two of the trace's
/// tables (named, or by alias; not a CTE of the same name).
fn equi_joins(from: &[TableWithJoins], ctes: &BTreeSet<String>) -> Vec<EquiJoin> {
    let mut tables: std::collections::BTreeMap<String, String> = Default::default();
    let mut note = |factor: &TableFactor| {
        if let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        {
            let table = name.to_string().trim_matches('"').to_lowercase();
            if TABLES.contains(&table.as_str()) && !ctes.contains(&table) {
                let key = alias
                    .as_ref()
                    .map_or_else(|| table.clone(), |a| a.name.value.to_lowercase());
                tables.insert(key, table);
            }
        }
    };
    for item in from {
        note(&item.relation);
        for join in &item.joins {
            note(&join.relation);
        }
    }
    let side = |idents: &[sqlparser::ast::Ident]| match idents {
        [alias, column] => tables
            .get(&alias.value.to_lowercase())
            .map(|t| (t.clone(), column.value.clone())),
        _ => None,
    };
    let mut out = Vec::new();
    for item in from {
        for join in &item.joins {
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
