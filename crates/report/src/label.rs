//! Labelled figures: a value, its unit, and where it comes from (a
//! [`trace_model::Provenance`]).

use serde::{Deserialize, Serialize};
use trace_model::{Nanos, Provenance};

/// The value of a figure, with its unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "unit", content = "value", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Value {
    /// A duration in nanoseconds.
    Duration(i64),
    /// A percentage (0–100).
    Percent(f64),
    /// A count of things.
    Count(u64),
    /// A dimensionless ratio.
    Ratio(f64),
    /// Bytes.
    Bytes(u64),
    /// FLOP per second.
    FlopsPerSecond(f64),
    /// Floating-point operations.
    Flops(f64),
    /// A number in the unit the text around it names (µs in profile-model's tables).
    Number(f64),
}

/// How terminal text writes a figure when not in its unit's default way (a tool's fixed
/// output format). Durations are written as [`Nanos::human`] does but in [`NumberFormat::Millis`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "style", content = "decimals", rename_all = "snake_case")]
#[non_exhaustive]
pub enum NumberFormat {
    /// The bare number with this many decimals, no unit, no thousands separators.
    Fixed(u8),
    /// A percentage with this many decimals and a bare `%` (`12.5%`).
    PercentSign(u8),
    /// A duration in milliseconds with this many decimals (`12.500 ms`).
    Millis(u8),
}

/// A number in a report: its value and its label, and optionally its range over steps,
/// GPUs or ranks (`min`, `max` in the same unit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The number and its unit.
    pub value: Value,
    /// Where it comes from.
    #[serde(flatten)]
    pub label: Provenance,
    /// Its range over steps, GPUs or ranks (min, max), when it varies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(Value, Value)>,
}

impl Figure {
    /// A figure without a range.
    pub fn new(value: Value, label: Provenance) -> Figure {
        Figure {
            value,
            label,
            range: None,
        }
    }

    /// A duration.
    pub fn duration(ns: Nanos, label: Provenance) -> Figure {
        Figure::new(Value::Duration(ns.0), label)
    }

    /// A percentage (0–100).
    pub fn percent(p: f64, label: Provenance) -> Figure {
        Figure::new(Value::Percent(p), label)
    }

    /// A count.
    pub fn count(n: u64, label: Provenance) -> Figure {
        Figure::new(Value::Count(n), label)
    }

    /// A number in the unit the text around it names.
    pub fn number(x: f64, label: Provenance) -> Figure {
        Figure::new(Value::Number(x), label)
    }

    /// A dimensionless ratio.
    pub fn ratio(r: f64, label: Provenance) -> Figure {
        Figure::new(Value::Ratio(r), label)
    }

    /// The same figure with its range (min, max).
    pub fn with_range(mut self, min: Value, max: Value) -> Figure {
        self.range = Some((min, max));
        self
    }

    /// The value alone, as people read it (`12.50 ms`, `42.0 %`).
    pub fn value_text(&self) -> String {
        value_text(self.value)
    }

    /// The value with its range: `12.50 ms (11.9 ms – 13.1 ms)`.
    pub fn value_and_range(&self) -> String {
        match self.range {
            Some((lo, hi)) if lo != hi => format!(
                "{} (range {} – {})",
                value_text(self.value),
                value_text(lo),
                value_text(hi)
            ),
            _ => value_text(self.value),
        }
    }

    /// The value with its range and label: `12.50 ms (measured)`.
    pub fn text(&self) -> String {
        format!("{} ({})", self.value_and_range(), self.label.word())
    }
}

/// How a value reads.
pub fn value_text(v: Value) -> String {
    match v {
        Value::Duration(ns) => Nanos(ns).human(),
        Value::Percent(p) => format!("{p:.1} %"),
        Value::Count(n) => group_thousands(n),
        Value::Ratio(r) => format!("{r:.2}"),
        Value::Bytes(b) => bytes_text(b),
        Value::FlopsPerSecond(f) => format!("{}/s", flops_text(f)),
        Value::Flops(f) => flops_text(f),
        Value::Number(x) => format!("{x:.2}"),
    }
}

/// How a value reads in `format` (the unit's default without one).
pub fn formatted(v: Value, format: Option<NumberFormat>) -> String {
    let Some(format) = format else {
        return value_text(v);
    };
    let (x, integer) = match v {
        Value::Duration(ns) => {
            return match format {
                NumberFormat::Millis(d) => format!("{:.*} ms", usize::from(d), ns as f64 / 1e6),
                _ => Nanos(ns).human(),
            };
        }
        Value::Count(n) | Value::Bytes(n) => (n as f64, Some(n)),
        Value::Percent(x)
        | Value::Ratio(x)
        | Value::FlopsPerSecond(x)
        | Value::Flops(x)
        | Value::Number(x) => (x, None),
    };
    let fixed = |d: u8| match integer {
        Some(n) => n.to_string(),
        None => format!("{x:.*}", usize::from(d)),
    };
    match format {
        NumberFormat::Fixed(d) | NumberFormat::Millis(d) => fixed(d),
        NumberFormat::PercentSign(d) => format!("{}%", fixed(d)),
    }
}

fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn bytes_text(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", UNITS[unit])
    }
}

fn flops_text(f: f64) -> String {
    const UNITS: [(f64, &str); 4] = [
        (1e15, "PFLOP"),
        (1e12, "TFLOP"),
        (1e9, "GFLOP"),
        (1e6, "MFLOP"),
    ];
    for (scale, unit) in UNITS {
        if f >= scale {
            return format!("{:.2} {unit}", f / scale);
        }
    }
    format!("{f:.0} FLOP")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_well() {
        assert_eq!(value_text(Value::Count(1234567)), "1,234,567");
        assert_eq!(value_text(Value::Percent(12.345)), "12.3 %");
        assert_eq!(value_text(Value::Bytes(3 * 1024 * 1024)), "3.00 MiB");
        assert_eq!(value_text(Value::FlopsPerSecond(2.5e14)), "250.00 TFLOP/s");
        let f = Figure::duration(Nanos(1_500_000), Provenance::Measured)
            .with_range(Value::Duration(1_000_000), Value::Duration(2_000_000));
        assert_eq!(f.text(), "1.50 ms (range 1.00 ms – 2.00 ms) (measured)");
    }
}
