//! Python number semantics the reference script relies on: `int` sums that turn into
//! `float` once a float is added, exact int/float comparison, `%.Nf` formatting,
//! `format_us`, `{:,}` grouping and `json.dumps` output (`repr` of floats, `ensure_ascii`).

use std::cmp::Ordering;
use std::fmt::Write;

/// A Python number as the reference script's accumulators hold it: an `int` until a `float`
/// is added.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PyNum {
    Int(i128),
    Float(f64),
}

impl Default for PyNum {
    fn default() -> Self {
        PyNum::Int(0)
    }
}

impl PyNum {
    /// Python's `a + b`.
    #[must_use]
    pub(crate) fn plus(self, other: PyNum) -> PyNum {
        match (self, other) {
            (PyNum::Int(a), PyNum::Int(b)) => match a.checked_add(b) {
                Some(sum) => PyNum::Int(sum),
                None => PyNum::Float(a as f64 + b as f64),
            },
            (a, b) => PyNum::Float(a.to_f64() + b.to_f64()),
        }
    }

    /// Python's `float(x)` (correctly rounded for ints).
    pub(crate) fn to_f64(self) -> f64 {
        match self {
            PyNum::Int(v) => v as f64,
            PyNum::Float(v) => v,
        }
    }

    /// Python's comparison of two numbers, exact across `int` and `float`
    /// (NaN compares equal to everything, which keeps sorts stable).
    pub(crate) fn py_cmp(self, other: PyNum) -> Ordering {
        match (self, other) {
            (PyNum::Int(a), PyNum::Int(b)) => a.cmp(&b),
            (PyNum::Float(a), PyNum::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
            (PyNum::Int(a), PyNum::Float(b)) => cmp_int_float(a, b),
            (PyNum::Float(a), PyNum::Int(b)) => cmp_int_float(b, a).reverse(),
        }
    }

    /// Python's `a / b` (true division) for the magnitudes found in traces: ints below
    /// 2^53 convert exactly, so dividing the floats is the correctly rounded quotient.
    pub(crate) fn true_div(self, other: PyNum) -> f64 {
        self.to_f64() / other.to_f64()
    }

    /// Python's `max(x, 1)`: `x` unless `1 > x`.
    #[must_use]
    pub(crate) fn max_with_one(self) -> PyNum {
        if PyNum::Int(1).py_cmp(self) == Ordering::Greater {
            PyNum::Int(1)
        } else {
            self
        }
    }
}

/// Exact comparison of an int with a float, as Python does it.
fn cmp_int_float(a: i128, b: f64) -> Ordering {
    if b.is_nan() {
        return Ordering::Equal;
    }
    if b == f64::INFINITY {
        return Ordering::Less;
    }
    if b == f64::NEG_INFINITY {
        return Ordering::Greater;
    }
    let floor = b.floor();
    // |floor| < 2^126 fits i128; beyond that the int (|a| < 2^127) is compared in f64,
    // which only matters for values no trace holds.
    if floor.abs() >= 2f64.powi(126) {
        return (a as f64).partial_cmp(&b).unwrap_or(Ordering::Equal);
    }
    let floor_int = floor as i128;
    match a.cmp(&floor_int) {
        Ordering::Equal if b > floor => Ordering::Less,
        other => other,
    }
}

/// The reference script's `format_us`: `1.23 s`, `4.56 ms` or `789 us`.
pub(crate) fn format_us(us: PyNum) -> String {
    if us.py_cmp(PyNum::Int(1_000_000)) == Ordering::Greater {
        format!("{:.2} s", us.to_f64() / 1e6)
    } else if us.py_cmp(PyNum::Int(1_000)) == Ordering::Greater {
        format!("{:.2} ms", us.to_f64() / 1e3)
    } else {
        format!("{:.0} us", us.to_f64())
    }
}

/// Python's `f'{n:,}'` for an int.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (idx, ch) in digits.chars().enumerate() {
        if idx > 0 && (digits.len() - idx).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Python's `len(name) < 80` / `name[:77] + '...'`, counting code points.
pub fn truncate_name(name: &str) -> String {
    if name.chars().count() < 80 {
        name.to_owned()
    } else {
        let mut out: String = name.chars().take(77).collect();
        out.push_str("...");
        out
    }
}

/// Python's `seq[:n]` length for a sequence of `len` items.
pub fn python_prefix_len(len: usize, n: i64) -> usize {
    if n >= 0 {
        usize::try_from(n).unwrap_or(usize::MAX).min(len)
    } else {
        let cut = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
        len.saturating_sub(cut)
    }
}

/// Appends a number as `json.dumps` writes it.
pub(crate) fn write_json_number(out: &mut String, value: PyNum) {
    match value {
        PyNum::Int(v) => {
            let _ = write!(out, "{v}");
        }
        PyNum::Float(v) => out.push_str(&float_repr(v)),
    }
}

/// Python's `repr(float)` as `json.dumps` uses it (`NaN`, `Infinity` for non-finite values).
pub(crate) fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "NaN".to_owned();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    // Shortest round-trip digits, as `d.ddde±x`.
    let sci = format!("{v:e}");
    let (mantissa, exponent) = sci
        .split_once('e')
        .expect("invariant: `{:e}` of a finite float has an exponent");
    let exponent: i32 = exponent
        .parse()
        .expect("invariant: `{:e}` writes a decimal exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&digits);
        } else if point as usize >= digits.len() {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(
            out,
            "e{}{:02}",
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        );
    }
    out
}

/// Appends a string as `json.dumps` writes it (`ensure_ascii=True`).
pub(crate) fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_switch_to_float_like_python() {
        let s = PyNum::Int(2).plus(PyNum::Int(3));
        assert_eq!(s, PyNum::Int(5));
        assert_eq!(s.plus(PyNum::Float(0.5)), PyNum::Float(5.5));
        assert_eq!(PyNum::Float(0.0).plus(PyNum::Int(7)), PyNum::Float(7.0));
    }

    #[test]
    fn int_float_comparison_is_exact() {
        assert_eq!(PyNum::Int(3).py_cmp(PyNum::Float(3.0)), Ordering::Equal);
        assert_eq!(PyNum::Int(3).py_cmp(PyNum::Float(3.5)), Ordering::Less);
        assert_eq!(PyNum::Int(4).py_cmp(PyNum::Float(3.5)), Ordering::Greater);
        assert_eq!(PyNum::Int(-4).py_cmp(PyNum::Float(-3.5)), Ordering::Less);
        // 2^53 + 1 is not a float; Python still orders it above 2^53.
        let big = (1i128 << 53) + 1;
        assert_eq!(
            PyNum::Int(big).py_cmp(PyNum::Float(9007199254740992.0)),
            Ordering::Greater
        );
        assert_eq!(PyNum::Float(0.5).max_with_one(), PyNum::Int(1));
        assert_eq!(PyNum::Float(1.0).max_with_one(), PyNum::Float(1.0));
    }

    /// Expected strings are Python 3's output for the same values
    /// (`f'{v:.0f} {v:.1f} {v:.2f}'`): both round the exact binary value half to even.
    #[test]
    fn fixed_formatting_matches_python() {
        let cases: &[(f64, &str)] = &[
            (0.5, "0 0.5 0.50"),
            (1.5, "2 1.5 1.50"),
            (2.5, "2 2.5 2.50"),
            (0.25, "0 0.2 0.25"),
            (0.35, "0 0.3 0.35"),
            (0.125, "0 0.1 0.12"),
            (0.375, "0 0.4 0.38"),
            (1.005, "1 1.0 1.00"),
            (2.675, "3 2.7 2.67"),
            (1234.5, "1234 1234.5 1234.50"),
            (999.95, "1000 1000.0 999.95"),
            (4.45, "4 4.5 4.45"),
            (0.045, "0 0.0 0.04"),
        ];
        for &(v, expect) in cases {
            assert_eq!(format!("{v:.0} {v:.1} {v:.2}"), expect, "{v}");
        }
    }

    #[test]
    fn format_us_matches_the_reference_script() {
        assert_eq!(format_us(PyNum::Int(0)), "0 us");
        assert_eq!(format_us(PyNum::Int(1000)), "1000 us");
        assert_eq!(format_us(PyNum::Int(1001)), "1.00 ms");
        assert_eq!(format_us(PyNum::Float(999.5)), "1000 us");
        assert_eq!(format_us(PyNum::Int(1_000_000)), "1000.00 ms");
        assert_eq!(format_us(PyNum::Int(1_000_001)), "1.00 s");
        assert_eq!(format_us(PyNum::Float(2_525_000.5)), "2.53 s");
    }

    #[test]
    fn grouping_and_truncation() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(216_092), "216,092");
        assert_eq!(group_thousands(1_234_567), "1,234,567");
        let long: String = "é".repeat(80);
        assert_eq!(truncate_name(&long).chars().count(), 80);
        assert!(truncate_name(&long).ends_with("..."));
        assert_eq!(truncate_name(&"é".repeat(79)), "é".repeat(79));
    }

    /// Expected strings are Python's `repr` of the same floats.
    #[test]
    fn float_repr_matches_python() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (5.0, "5.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (123456.789, "123456.789"),
            (1e300, "1e+300"),
            (2525312.7139999997, "2525312.7139999997"),
        ];
        for &(v, expect) in cases {
            assert_eq!(float_repr(v), expect, "{v}");
        }
    }

    #[test]
    fn json_strings_are_ascii() {
        let mut out = String::new();
        write_json_string(&mut out, "a\"b\\c\n\u{1}é😀\u{7f}");
        assert_eq!(out, r#""a\"b\\c\n\u0001\u00e9\ud83d\ude00\u007f""#);
    }
}
