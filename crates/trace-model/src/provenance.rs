//! Provenance: every number that leaves the library says whether it was measured, read
//! (with its source) or inferred (with its assumptions) — the one label type of the
//! workspace (docs/ARCHITECTURE.md, "Invariants").

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

/// Where a number comes from. Serialized as `{"label": "measured"}`,
/// `{"label": "read", "source": …}` or `{"label": "inferred", "assumptions": …}`; flatten it
/// beside the value it labels.
///
/// The texts are `Cow`s so that fixed sentences (`&'static str`) and computed ones share
/// the type without allocating for the former.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "label", rename_all = "lowercase")]
#[non_exhaustive]
pub enum Provenance {
    /// Counted or summed from the capture's own records.
    Measured,
    /// Copied from metadata or a spec sheet, named by `source`.
    Read {
        /// The metadata field or document it was read from.
        source: Cow<'static, str>,
    },
    /// An estimate or a judgement resting on `assumptions`.
    Inferred {
        /// What the estimate rests on, in words.
        assumptions: Cow<'static, str>,
    },
}

impl Provenance {
    /// A `read` label naming its source.
    pub fn read(source: impl Into<Cow<'static, str>>) -> Provenance {
        Provenance::Read {
            source: source.into(),
        }
    }

    /// An `inferred` label stating its assumptions.
    pub fn inferred(assumptions: impl Into<Cow<'static, str>>) -> Provenance {
        Provenance::Inferred {
            assumptions: assumptions.into(),
        }
    }

    /// The bare word, as reports print it: `measured`, `read` or `inferred`.
    pub fn word(&self) -> &'static str {
        match self {
            Provenance::Measured => "measured",
            Provenance::Read { .. } => "read",
            Provenance::Inferred { .. } => "inferred",
        }
    }

    /// The source or the assumptions, if any.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Provenance::Measured => None,
            Provenance::Read { source } => Some(source),
            Provenance::Inferred { assumptions } => Some(assumptions),
        }
    }
}

/// A value with its provenance, serialized flat: `{"value": …, "label": …, …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Labelled<T> {
    /// The number (or text).
    pub value: T,
    /// Where it comes from.
    #[serde(flatten)]
    pub provenance: Provenance,
}

impl<T> Labelled<T> {
    /// A value with this provenance.
    pub fn new(value: T, provenance: Provenance) -> Labelled<T> {
        Labelled { value, provenance }
    }

    /// A value counted or summed from the capture.
    pub fn measured(value: T) -> Labelled<T> {
        Labelled::new(value, Provenance::Measured)
    }

    /// A value computed under `assumptions`.
    pub fn inferred(value: T, assumptions: impl Into<Cow<'static, str>>) -> Labelled<T> {
        Labelled::new(value, Provenance::inferred(assumptions))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_is_the_reports() {
        let check = |p: Provenance, expect: &str| {
            let text = serde_json::to_string(&Labelled::new(1, p.clone())).unwrap();
            assert_eq!(text, expect);
            let back: Labelled<i32> = serde_json::from_str(&text).unwrap();
            assert_eq!(back.provenance, p);
        };
        check(Provenance::Measured, r#"{"value":1,"label":"measured"}"#);
        check(
            Provenance::read("spec sheet"),
            r#"{"value":1,"label":"read","source":"spec sheet"}"#,
        );
        check(
            Provenance::inferred(String::from("a rule")),
            r#"{"value":1,"label":"inferred","assumptions":"a rule"}"#,
        );
    }
}
