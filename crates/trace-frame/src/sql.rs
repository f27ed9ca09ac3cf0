//! polars SQL over the `events` table and its `kernels` and `launches` views.

use polars::prelude::*;
use polars::sql::SQLContext;

use crate::Error;

/// Runs `query` over `events` (every row of `df`), `kernels` (`cat = 'kernel'`) and
/// `launches` (`cat` is `cuda_runtime` or `cuda_driver`).
pub fn run_sql(df: &DataFrame, query: &str) -> Result<DataFrame, Error> {
    let mut ctx = SQLContext::new();
    let events = df.clone().lazy();
    ctx.register("events", events.clone());
    ctx.register(
        "kernels",
        events.clone().filter(col("cat").eq(lit("kernel"))),
    );
    ctx.register(
        "launches",
        events.filter(
            col("cat")
                .eq(lit("cuda_runtime"))
                .or(col("cat").eq(lit("cuda_driver"))),
        ),
    );
    ctx.execute(query)
        .and_then(|lf| lf.collect())
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
