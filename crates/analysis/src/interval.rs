//! The one interval union of the crate: sort `[start, end)` intervals and merge those
//! that overlap or touch, so no instant is counted twice.

/// The union of `intervals` as sorted, disjoint `[start, end)` pairs; empty and inverted
/// intervals are dropped.
pub(crate) fn merged(mut intervals: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    intervals.retain(|&(s, e)| e > s);
    // Callers' intervals mostly come in runs already in order (a stream's, a thread's),
    // which the stable sort merges; equal pairs are alike, so the result is the same.
    intervals.sort();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(intervals.len());
    for (s, e) in intervals {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Length of the union of `intervals` (overlaps count once).
pub(crate) fn union_len(intervals: Vec<(i64, i64)>) -> i64 {
    merged(intervals).iter().map(|&(s, e)| e - s).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &[(i64, i64)], expect: &[(i64, i64)]) {
        let got = merged(input.to_vec());
        assert_eq!(got, expect);
        let len: i64 = expect.iter().map(|&(s, e)| e - s).sum();
        assert_eq!(union_len(input.to_vec()), len);
    }

    #[test]
    fn unions() {
        check(&[], &[]);
        check(&[(3, 5), (0, 2)], &[(0, 2), (3, 5)]);
        check(&[(0, 4), (2, 6), (6, 7)], &[(0, 7)]);
        check(&[(0, 10), (2, 3)], &[(0, 10)]);
        // Empty and inverted intervals take no time.
        check(&[(5, 5), (4, 1)], &[]);
    }
}
