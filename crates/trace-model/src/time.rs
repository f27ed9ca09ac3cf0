//! Integer-nanosecond time, the only time unit inside the library.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// A time or duration in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub i64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);

    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

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

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 + rhs.0)
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 - rhs.0)
    }
}

impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}

impl SubAssign for Nanos {
    fn sub_assign(&mut self, rhs: Nanos) {
        self.0 -= rhs.0;
    }
}

impl std::iter::Sum for Nanos {
    fn sum<I: Iterator<Item = Nanos>>(iter: I) -> Nanos {
        Nanos(iter.map(|n| n.0).sum())
    }
}
