//! Shares and percentages of a whole, with an empty whole giving 0 rather than NaN.

/// `part / whole`, or 0 when `whole` is not positive.
pub(crate) fn ratio(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        part as f64 / whole as f64
    } else {
        0.0
    }
}

/// `part` as a percentage of `whole`, or 0 when `whole` is not positive.
///
/// ```
/// assert_eq!(analysis::percent_of(1, 4), 25.0);
/// assert_eq!(analysis::percent_of(3, 0), 0.0);
/// ```
pub fn percent_of(part: i64, whole: i64) -> f64 {
    ratio(part, whole) * 100.0
}
