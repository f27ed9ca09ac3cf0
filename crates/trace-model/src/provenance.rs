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

/// One item of a trust list: something a result could not use or does not cover, by a
/// stable code, with how many it concerns and, where the result knows them, what the count
/// counts, their GPU time and their share of what they are counted among. The count, the
/// time and the share are counted in the capture ([`TrustItem::provenance`]). A note that
/// counts nothing (an analysis that failed, a file not read as a rank) is an item too
/// ([`TrustItem::note`]). The one trust type of the workspace: the analyses', the
/// roofline's, the readers' diagnostics and the investigation's notes as a trust list all
/// hold it, and a renderer labels its count and share by [`TrustItem::provenance`].
///
/// Serialized as `{"code", "message", "count"}`, with `"unit"`, `"time_ns"` and `"share"`
/// where known and `"counted": false` for a note.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrustItem {
    /// Stable short name of the item (`op-without-shapes`).
    pub code: Cow<'static, str>,
    /// What it means, in words.
    pub message: String,
    /// How many it concerns (see `unit`).
    pub count: u64,
    /// What `count` counts (`ops`, `activities`), where the list says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Cow<'static, str>>,
    /// The GPU time concerned, where the list measures it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ns: Option<crate::Nanos>,
    /// Their share (0–1) of what they are counted among (GPU time, activities, kernels, a
    /// stream's time), where the list knows the denominator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// Whether `count` counts anything: false for a note (`count` is then 0 and not shown).
    #[serde(default = "counts", skip_serializing_if = "is_counted")]
    pub counted: bool,
}

fn counts() -> bool {
    true
}

fn is_counted(counted: &bool) -> bool {
    *counted
}

impl TrustItem {
    /// An item counted `count` times.
    pub fn new(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
        count: u64,
    ) -> TrustItem {
        TrustItem {
            code: code.into(),
            message: message.into(),
            count,
            unit: None,
            time_ns: None,
            share: None,
            counted: true,
        }
    }

    /// A note that counts nothing: what a result could not do, in words.
    pub fn note(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> TrustItem {
        TrustItem {
            counted: false,
            ..TrustItem::new(code, message, 0)
        }
    }

    /// The item with its share (0–1) of what it is counted among, where known.
    pub fn with_share(mut self, share: Option<f64>) -> TrustItem {
        self.share = share;
        self
    }

    /// The count, where the item counts anything (labelled by [`TrustItem::provenance`]).
    pub fn shown_count(&self) -> Option<u64> {
        self.counted.then_some(self.count)
    }

    /// An item counted `count` times in `unit`s, of GPU time `time`.
    pub fn timed(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
        count: u64,
        unit: impl Into<Cow<'static, str>>,
        time: crate::Nanos,
    ) -> TrustItem {
        TrustItem {
            unit: Some(unit.into()),
            time_ns: Some(time),
            ..TrustItem::new(code, message, count)
        }
    }

    /// Where the count, the time and the share come from: counted and summed from the
    /// capture.
    pub fn provenance(&self) -> Provenance {
        Provenance::Measured
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trust_item_serializes_only_what_it_knows() {
        let bare = TrustItem::new("c", "m", 2);
        assert_eq!(
            serde_json::to_string(&bare).unwrap(),
            r#"{"code":"c","message":"m","count":2}"#
        );
        let timed = TrustItem::timed("c", "m", 2, "ops", crate::Nanos(5));
        let text = serde_json::to_string(&timed).unwrap();
        assert_eq!(
            text,
            r#"{"code":"c","message":"m","count":2,"unit":"ops","time_ns":5}"#
        );
        assert_eq!(serde_json::from_str::<TrustItem>(&text).unwrap(), timed);
        assert_eq!(timed.provenance().word(), "measured");
    }

    #[test]
    fn a_note_counts_nothing_and_a_share_travels() {
        let note = TrustItem::note("c", "m").with_share(Some(0.25));
        assert_eq!(note.shown_count(), None);
        let text = serde_json::to_string(&note).unwrap();
        assert_eq!(
            text,
            r#"{"code":"c","message":"m","count":0,"share":0.25,"counted":false}"#
        );
        assert_eq!(serde_json::from_str::<TrustItem>(&text).unwrap(), note);
        assert_eq!(TrustItem::new("c", "m", 3).shown_count(), Some(3));
    }

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
