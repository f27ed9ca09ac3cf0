//! [`SharedName`]: an immutable, reference-counted name that every [`KernelRow`] naming the
//! same text shares, and the per-capture cache that hands the same allocation out for the
//! same interned string (so 300k kernels with one 64 KiB name hold that name once).
//!
//! [`KernelRow`]: crate::KernelRow

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use trace_model::{Capture, StringId};

/// An immutable name shared between rows (an `Arc<str>`). Cloning it copies a pointer, not
/// the text. It reads as a `&str` ([`Deref`]), compares with strings and serializes as the
/// plain string.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedName(Arc<str>);

impl SharedName {
    /// A new name holding its own copy of `text`.
    pub fn new(text: &str) -> SharedName {
        SharedName(Arc::from(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` hold the same allocation (not merely equal text).
    pub fn ptr_eq(&self, other: &SharedName) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for SharedName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SharedName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SharedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for SharedName {
    fn from(text: &str) -> SharedName {
        SharedName::new(text)
    }
}

impl From<String> for SharedName {
    fn from(text: String) -> SharedName {
        SharedName(Arc::from(text))
    }
}

impl PartialEq<str> for SharedName {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedName {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedName {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<SharedName> for str {
    fn eq(&self, other: &SharedName) -> bool {
        self == &*other.0
    }
}

impl PartialEq<SharedName> for &str {
    fn eq(&self, other: &SharedName) -> bool {
        *self == &*other.0
    }
}

impl serde::Serialize for SharedName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Hands out one [`SharedName`] per distinct text of a capture: by interned id for the
/// capture's own strings, by text for strings from elsewhere (HLO metadata).
#[derive(Default)]
pub(crate) struct NameCache<'a> {
    by_id: HashMap<StringId, SharedName>,
    by_text: HashMap<&'a str, SharedName>,
}

impl<'a> NameCache<'a> {
    /// The shared name of the capture's interned string `id`.
    pub(crate) fn id(&mut self, capture: &Capture, id: StringId) -> SharedName {
        self.by_id
            .entry(id)
            .or_insert_with(|| SharedName::new(capture.name(id)))
            .clone()
    }

    /// The shared name of `text`, which outlives the cache.
    pub(crate) fn text(&mut self, text: &'a str) -> SharedName {
        if text.is_empty() {
            return SharedName::default();
        }
        self.by_text
            .entry(text)
            .or_insert_with(|| SharedName::new(text))
            .clone()
    }
}
