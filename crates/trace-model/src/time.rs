//! Integer-nanosecond time, the only time unit inside the library.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

use serde::{Deserialize, Serialize};

/// A time or duration in nanoseconds; serialized as the bare integer.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub i64);

impl Nanos {
    /// Zero: the axis origin, or no time.
    pub const ZERO: Nanos = Nanos(0);

    /// The representable range of a time or an event's end: ±2^62 ns (about 146 years
    /// either side of the axis origin, which is the Unix epoch for most captures). Readers
    /// leave out an event that ends outside it, so that any difference of two times fits.
    pub const LIMIT: Nanos = Nanos(1 << 62);

    /// How far an event may lie from its capture's median event time, and how long it may
    /// last, before readers call it absurd and leave it out: 7 days.
    pub const FAR: Nanos = Nanos(7 * 24 * 3600 * 1_000_000_000);

    /// Whether `self` lies within ±[`Nanos::LIMIT`].
    pub fn in_range(self) -> bool {
        (-Self::LIMIT.0..=Self::LIMIT.0).contains(&self.0)
    }

    /// Addition, `None` on i64 overflow.
    pub fn checked_add(self, rhs: Nanos) -> Option<Nanos> {
        self.0.checked_add(rhs.0).map(Nanos)
    }

    /// Subtraction, `None` on i64 overflow.
    pub fn checked_sub(self, rhs: Nanos) -> Option<Nanos> {
        self.0.checked_sub(rhs.0).map(Nanos)
    }

    /// In microseconds, as f64 (for display and ratios, not for arithmetic).
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

    /// In milliseconds, as f64 (for display and ratios, not for arithmetic).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// Formats a duration with a unit chosen for readability (`812 ns`, `3.21 µs`,
    /// `14.07 ms`, `2.50 s`).
    pub fn human(self) -> String {
        let v = self.0 as f64;
        let a = v.abs();
        if a < 1e3 {
            format!("{} ns", self.0)
        } else if a < 1e6 {
            format!("{:.2} µs", v / 1e3)
        } else if a < 1e9 {
            format!("{:.2} ms", v / 1e6)
        } else {
            format!("{:.2} s", v / 1e9)
        }
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

// Arithmetic saturates rather than panicking (debug) or wrapping (release): readers keep
// every time within ±`Nanos::LIMIT`, so saturation is a last guard, never a result.
impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
}

impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl SubAssign for Nanos {
    fn sub_assign(&mut self, rhs: Nanos) {
        self.0 = self.0.saturating_sub(rhs.0);
    }
}

impl std::iter::Sum for Nanos {
    fn sum<I: Iterator<Item = Nanos>>(iter: I) -> Nanos {
        Nanos(iter.fold(0i64, |acc, n| acc.saturating_add(n.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Nanos(i64::MAX) + Nanos(1), Nanos(i64::MAX));
        assert_eq!(Nanos(i64::MIN) - Nanos(1), Nanos(i64::MIN));
        assert_eq!(
            [Nanos(i64::MAX), Nanos(5)].into_iter().sum::<Nanos>(),
            Nanos(i64::MAX)
        );
        let mut n = Nanos(i64::MAX);
        n += Nanos(1);
        assert_eq!(n, Nanos(i64::MAX));
        assert_eq!(Nanos(1).checked_add(Nanos(i64::MAX)), None);
        assert!(Nanos::LIMIT.in_range() && !(Nanos::LIMIT + Nanos(1)).in_range());
    }
}
